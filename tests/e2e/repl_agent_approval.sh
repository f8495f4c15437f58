#!/usr/bin/env bash
# A sub-agent's approval in the REPL (tmux), default mode: a
# general-purpose child asks to run `touch y`. The question is the main
# run's (one list of approvals) and says which agent asks — "[agent …]" —
# the answer y is given there, the child's command runs, the child and
# then the parent finish.
source "$(dirname "$0")/repl_lib.sh"

mkdir -p "$T/proj"
MARK="You are Loom's general-purpose agent"
cat > "$T/scenario.json" <<JSON
{"turns": [
  {"match": {"system_contains": "$MARK", "tool_results": 0},
   "reply": {"tool_calls": [{"id": "cb1", "name": "Bash", "input": {"command": "touch y"}}]}},
  {"match": {"system_contains": "$MARK", "tool_results": 1},
   "reply": {"text": "Touched y."}},
  {"reply": {"tool_calls": [{"id": "ag1", "name": "Agent", "input": {"description": "make y",
     "prompt": "Create the file y.", "subagent_type": "general-purpose", "name": "maker"}}]}},
  {"reply": {"text": "All done with y."}}
]}
JSON
start_mock "$T/scenario.json"
use_provider anthropic
repl_start "$T/proj" --agents on
wait_prompt

ASK='allow? ['
type_line "make y through a sub-agent"
wait_screen "the child's approval" "$ASK" 20
s=$(screen)
q=$(grep -F "? Allow this Bash call?" <<<"$s" | tail -n 1)
check "the approval is for Bash" test -n "$q"
assert_contains "the approval names the agent" "$q" "[agent maker]"
assert_contains "the approval shows the child's command" "$s" "    touch y"
check "nothing ran before the answer" test ! -e "$T/proj/y"
answer -l "y"
wait_screen "the parent's final answer" "All done with y." 20
wait_prompt
check "the child's command ran in the workspace" test -e "$T/proj/y"
assert_contains "the agent's completion line" "$(screen)" "maker (general-purpose) completed"
keys C-d
assert_eq "loom exits 0" "$(wait_exit)" "0"
finish
