#!/usr/bin/env bash
# Approvals in the REPL, default mode: three Bash calls that each need a
# person. "y" runs the first; "n not now" denies the second and the model is
# told why; "a" runs the third and writes an allow rule to
# .loom/settings.local.json, which the next run's matching call then uses
# without asking. Every answer is in the audit log with source "user".
source "$(dirname "$0")/repl_lib.sh"

mkdir -p "$T/proj"
cat > "$T/scenario.json" <<'JSON'
{"turns": [
  {"reply": {"text": "Writing a.", "tool_calls": [{"id": "b1", "name": "Bash", "input": {"command": "echo approved > a.txt"}}]}},
  {"reply": {"tool_calls": [{"id": "b2", "name": "Bash", "input": {"command": "echo second > b.txt"}}]}},
  {"reply": {"tool_calls": [{"id": "b3", "name": "Bash", "input": {"command": "echo third > c.txt"}}]}},
  {"reply": {"text": "Three calls answered."}},
  {"match": {"last_user_contains": "once more"}, "reply": {"tool_calls": [{"id": "b4", "name": "Bash", "input": {"command": "echo third > d.txt"}}]}},
  {"match": {"assistant_turns": 5}, "reply": {"text": "Ran it without asking."}}
]}
JSON
start_mock "$T/scenario.json"
use_provider anthropic
repl_start "$T/proj"
id=$(header_session_id)
wait_prompt

ASK='allow? [y/a/n] ›'
# approval_waiting N — the Nth approval question is on screen, waiting.
approval_waiting() {
  local s
  s=$(screen)
  [ "$(grep -cF -- "$ASK" <<<"$s")" -eq "$1" ] &&
    [ "$(grep -v '^[[:space:]]*$' <<<"$s" | tail -n 1 | sed 's/[[:space:]]*$//')" == "$ASK" ]
}

type_line "write the three files"
wait_until "the first approval" 15 approval_waiting 1
s=$(screen)
assert_contains "the approval names the tool" "$s" "? Allow this Bash call?"
assert_contains "the approval shows the command" "$s" "    echo approved > a.txt"
assert_contains "the approval says why it asks" "$s" "no settings rule allows it"
assert_contains "the approval lists the answers" "$s" "y = allow once · a = allow always"
assert_contains "the approval shows the exact rule a saves" "$s" "a saves Bash(echo approved) in .loom/settings.local.json"
check "nothing ran before the answer" test ! -e "$T/proj/a.txt"

answer -l "y"
keys Enter
wait_until "the second approval" 15 approval_waiting 2
assert_eq "allowed once: the first command ran" "$(cat "$T/proj/a.txt" 2>/dev/null)" "approved"
assert_contains "the second approval shows its command" "$(screen)" "    echo second > b.txt"

answer -l "n not now"
keys Enter
wait_until "the third approval" 15 approval_waiting 3
check "denied: the second command did not run" test ! -e "$T/proj/b.txt"
assert_contains "the denial is shown under the call" "$(screen)" "denied by the user: not now"

answer -l "a"
wait_screen "the final answer" "Three calls answered." 15
wait_prompt
assert_eq "allowed always: the third command ran" "$(cat "$T/proj/c.txt" 2>/dev/null)" "third"
assert_contains "the REPL says the rule was saved" "$(screen)" "will not ask again"
local_settings="$T/proj/.loom/settings.local.json"
check "settings.local.json was written" test -s "$local_settings"
check "it holds an allow rule for the command" \
  jq -e '.permissions.allow | any(startswith("Bash(echo"))' "$local_settings"
assert_eq "it holds exactly the rule shown" "$(jq -c .permissions.allow "$local_settings")" '["Bash(echo third)"]'

file=$(session_file "$id")
result() { jq -r --arg id "$1" 'select(.type=="function_call_result" and .callId==$id) | .output' "$file"; }
assert_contains "the model is told the reason for the denial" "$(result b2)" "not now"
assert_eq "the denied call is an error result" \
  "$(jq -r 'select(.type=="function_call_result" and .callId=="b2") | .isError' "$file")" "true"

audit="$LOOM_HOME/audit/$id.jsonl"
check "the audit log exists" test -s "$audit"
assert_eq "the three answers are recorded with source user" \
  "$(jq -r 'select(.source=="user") | "\(.call_id)=\(.decision)"' "$audit" | paste -sd,)" \
  "b1=allow,b2=deny,b3=allow"
check "each answer names its approval" \
  jq -se '[.[] | select(.source=="user")] | length == 3 and all(.approval_id != null)' "$audit"

# The saved rule is live: the same kind of command runs without a question.
type_line "once more"
wait_screen "the run with the saved rule" "Ran it without asking." 15
wait_prompt
assert_eq "the matching command ran" "$(cat "$T/proj/d.txt" 2>/dev/null)" "third"
assert_eq "it was not asked about" "$(screen | grep -cF -- "$ASK")" "3"
assert_contains "the audit names the saved settings rule" \
  "$(jq -r 'select(.call_id=="b4") | "\(.source) \(.rule.text)"' "$audit")" "settings Bash(echo"

keys C-d
assert_eq "exit status 0" "$(wait_exit)" "0"
finish
