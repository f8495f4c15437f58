#!/usr/bin/env bash
# /permissions and /plan in the REPL: the mode list, switching to plan (a
# Bash call is then denied without a question while a Read still runs),
# /plan off returning to the mode plan replaced, /status showing the mode,
# an unknown mode's error listing the modes, and the mode surviving /clear.
source "$(dirname "$0")/repl_lib.sh"

mkdir -p "$T/proj"
printf 'plan notes\n' > "$T/proj/notes.txt"
cat > "$T/scenario.json" <<'JSON'
{"turns": [
  {"reply": {"text": "Looking, then touching.", "tool_calls": [
    {"id": "r1", "name": "Read", "input": {"file_path": "notes.txt"}},
    {"id": "t1", "name": "Bash", "input": {"command": "touch x"}}]}},
  {"reply": {"text": "Plan mode kept me from touching x."}}
]}
JSON
start_mock "$T/scenario.json"
use_provider anthropic
repl_start "$T/proj"
id=$(header_session_id)
wait_prompt

type_line "/permissions"
wait_screen "the mode list" "Permissions managed by parent session"
wait_prompt
s=$(screen)
assert_contains "/permissions shows the current mode" "$s" "Permission mode: default"
assert_contains "the current mode is marked" "$s" "● default"
for m in acceptEdits plan auto dontAsk bypassPermissions fullAccess delegate; do
  assert_contains "the list has $m" "$s" "  $m "
done
assert_contains "modes are described (seed 001 §14.1)" "$s" "Can analyze but not modify files or execute commands"

type_line "/permissions plan"
wait_screen "the switch" "Permission mode: plan (was default)"
wait_prompt
# The line above the prompt keeps the mode in sight while it is on.
above_prompt() { screen | grep -v '^[[:space:]]*$' | tail -n 2 | head -n 1; }
assert_contains "plan mode is shown above the prompt" "$(above_prompt)" "plan mode: read-only"
type_line "/status"
wait_screen "/status in plan" "Mode      plan"
wait_prompt

type_line "touch x please"
wait_screen "the final answer" "Plan mode kept me from touching x." 15
wait_prompt
s=$(screen)
check "plan mode did not ask" lacks "$s" "allow? [y/a/N]"
check "x was not created" test ! -e "$T/proj/x"
file=$(session_file "$id")
result() { jq -r --arg id "$1" 'select(.type=="function_call_result" and .callId==$id) | .output' "$file"; }
assert_contains "the model is told plan mode denied it" "$(result t1)" "plan mode"
assert_contains "a read-only tool still runs in plan mode" "$(result r1)" "plan notes"
assert_eq "the audit names the mode as the source" \
  "$(jq -r 'select(.call_id=="t1") | "\(.mode) \(.source) \(.decision)"' "$LOOM_HOME/audit/$id.jsonl")" \
  "plan mode deny"

type_line "/plan off"
wait_screen "leaving plan" "Left plan mode · permission mode: default"
wait_prompt
check "default mode shows no mode line" lacks "$(above_prompt)" "plan mode: read-only"
type_line "/permissions bypassPermissions"
wait_screen "the switch to bypass" "Permission mode: bypassPermissions"
wait_prompt
assert_contains "bypassPermissions is shown above the prompt" "$(above_prompt)" \
  "bypassPermissions: tools run without asking"
type_line "/permissions default"
wait_screen "back to default" "Permission mode: default (was bypassPermissions)"
wait_prompt
check "default again: no mode line" lacks "$(above_prompt)" "bypassPermissions: tools run"
type_line "/status"
wait_screen "/status after /plan off" "Mode      default"
wait_prompt
type_line "/plan off"
wait_screen "leaving plan twice" "not in plan mode (the permission mode is default)"
wait_prompt

type_line "/permissions bogus"
wait_screen "the error" 'permission mode "bogus" is not one of'
wait_prompt
assert_contains "the error lists the modes" "$(screen)" \
  "default, acceptEdits, plan, auto, dontAsk, bypassPermissions, fullAccess, delegate"

# Plan returns to the mode it replaced, also across /clear.
type_line "/permissions acceptEdits"
wait_screen "acceptEdits" "Permission mode: acceptEdits (was default)"
wait_prompt
type_line "/plan"
wait_screen "/plan from acceptEdits" "Permission mode: plan (was acceptEdits)"
wait_prompt
type_line "/clear"
wait_screen "a new session" "New session"
wait_prompt
type_line "/status"
wait_screen "/status after /clear" "Mode      plan"
wait_prompt
type_line "/plan off"
wait_screen "back to acceptEdits" "Left plan mode · permission mode: acceptEdits"
wait_prompt

type_line "/help"
wait_screen "/help" "/rewind [N]"
wait_prompt
s=$(screen)
assert_contains "/help lists /permissions" "$s" "/permissions [MODE]"
assert_contains "/help lists /plan" "$s" "/plan [off]"

keys C-d
assert_eq "exit status 0" "$(wait_exit)" "0"
finish
