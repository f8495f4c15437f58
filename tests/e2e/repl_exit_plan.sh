#!/usr/bin/env bash
# ExitPlanMode in the REPL (tmux; docs/tools.md, docs/repl.md): in plan
# mode (entered with /plan from acceptEdits) the model presents its plan;
# the question shows the plan's lines and the mode approval restores.
# Rejected: the session stays in plan mode (the footer, /status), nothing
# was changed, and the model is told it is still planning. Approved: plan
# mode ends, back to acceptEdits, and the plan's Write runs without asking.
# Outside plan mode the tool is refused without a question.
source "$(dirname "$0")/repl_lib.sh"

mkdir -p "$T/proj"
cat > "$T/scenario.json" <<'JSON'
{"turns": [
  {"match": {"last_user_contains": "PLAN-ONE"},
   "reply": {"tool_calls": [{"id": "p1", "name": "ExitPlanMode", "input": {"plan": "1. Write notes.txt with the summary\n2. Run the tests"}}]}},
  {"match": {"tool_results": 1, "assistant_turns": 1},
   "reply": {"text": "Revising the plan."}},
  {"match": {"last_user_contains": "PLAN-TWO"},
   "reply": {"tool_calls": [{"id": "p2", "name": "ExitPlanMode", "input": {"plan": "1. Write notes.txt (revised)"}}]}},
  {"match": {"tool_results": 2, "assistant_turns": 3},
   "reply": {"tool_calls": [{"id": "w1", "name": "Write", "input": {"file_path": "notes.txt", "content": "summary\n"}}]}},
  {"match": {"tool_results": 3, "assistant_turns": 4},
   "reply": {"text": "Plan carried out."}},
  {"match": {"last_user_contains": "PLAN-THREE"},
   "reply": {"tool_calls": [{"id": "p3", "name": "ExitPlanMode", "input": {"plan": "again"}}]}},
  {"match": {"tool_results": 4},
   "reply": {"text": "Not planning."}}
]}
JSON
start_mock "$T/scenario.json"
use_provider anthropic
repl_start "$T/proj" --permission-mode acceptEdits
wait_prompt
type_line "/plan"
footer_has() { [[ "$(footer)" == *"$1"* ]]; }
asking() { screen | grep -v '^[[:space:]]*$' | tail -n 1 | grep -qF "$ASK"; }
ASK='allow? ['
wait_until "the plan badge" 10 footer_has "⏸ plan"

type_line "PLAN-ONE plan the change"
wait_screen "the plan's approval" "$ASK" 20
s=$(screen)
assert_contains "the question is ExitPlanMode's" "$s" "? Allow this ExitPlanMode call?"
assert_contains "it shows the plan's first line" "$s" "    1. Write notes.txt with the summary"
assert_contains "  and its second" "$s" "    2. Run the tests"
assert_contains "it names the mode approval restores" "$s" "approving leaves plan mode for acceptEdits"
answer -l "n"
wait_screen "the reason question" "reason for the model" 10
answer Enter
wait_screen "the model's answer to the rejection" "Revising the plan." 20
wait_prompt
assert_contains "after a rejection the footer still says plan" "$(footer)" "⏸ plan"
file=$(session_file "$(header_session_id)")
rejected=$(jq -r 'select(.type=="function_call_result" and .callId=="p1") | .output' "$file")
assert_contains "the model is told the plan was rejected" "$rejected" "Permission to use ExitPlanMode was denied"
assert_contains "  and that it is still in plan mode" "$rejected" "you are still in plan mode"
check "nothing was written" test ! -e "$T/proj/notes.txt"

type_line "PLAN-TWO revised"
wait_screen "the second approval" "1. Write notes.txt (revised)" 20
wait_until "the question" 10 asking
answer -l "y"
wait_screen "the plan carried out" "Plan carried out." 20
wait_prompt
check "the plan's Write ran without asking (acceptEdits again)" test -s "$T/proj/notes.txt"
approved=$(jq -r 'select(.type=="function_call_result" and .callId=="p2") | .output' "$file")
assert_contains "the model is told the mode it is in now" "$approved" "the permission mode is now acceptEdits"
assert_contains "the footer shows the restored mode" "$(footer)" "⏵⏵ acceptEdits"
type_line "/status"
wait_screen "the status" "acceptEdits" 10
wait_prompt

type_line "PLAN-THREE"
wait_screen "the model's answer" "Not planning." 20
wait_prompt
outside=$(jq -r 'select(.type=="function_call_result" and .callId=="p3") | .output' "$file")
assert_contains "outside plan mode ExitPlanMode is refused unasked" "$outside" "You are not in plan mode (the permission mode is acceptEdits)"
assert_eq "  no question was asked for it" "$(screen_all | grep -c 'ExitPlanMode call?')" "2"
keys C-d
assert_eq "loom exits 0" "$(wait_exit)" "0"
finish
