#!/usr/bin/env bash
# Ctrl-C in the REPL: the first one stops the running tool and ends the run
# as interrupted — back to the prompt in seconds, "Interrupted by user"
# recorded last in the session — and the REPL goes on; two within 2 s
# leave the program (status 130).
source "$(dirname "$0")/repl_lib.sh"

mkdir -p "$T/proj"
cat > "$T/scenario.json" <<'JSON'
{"turns": [
  {"reply": {"text": "Starting a long job.", "tool_calls": [{"id": "s1", "name": "Bash", "input": {"command": "sleep 37"}}]}},
  {"reply": {"text": "Another long job.", "tool_calls": [{"id": "s2", "name": "Bash", "input": {"command": "sleep 38"}}]}}
]}
JSON
start_mock "$T/scenario.json"
use_provider anthropic
repl_start "$T/proj"
id=$(header_session_id)
file=$(session_file "$id")
wait_prompt
type_line "run the long job"
wait_screen "the tool call" "● Bash(sleep 37)"
wait_screen "its spinner" "Running Bash…"
t0=$SECONDS
keys C-c
wait_prompt "the prompt after Ctrl-C" 8
check "back within a few seconds" test $((SECONDS - t0)) -le 8
s=$(screen)
assert_contains "the screen says it was interrupted" "$s" "Interrupted by user"
check "the sleep is gone" bash -c '! pgrep -f "^sleep 37$" >/dev/null'
check "the session is whole JSONL" valid_jsonl "$file"
assert_eq "the call has an error result" \
  "$(jq -r 'select(.type=="function_call_result" and .callId=="s1") | .isError' "$file")" "true"
assert_eq "the interruption is recorded last" \
  "$(tail -n 1 "$file" | jq -r '[.role, .content[0].text, .providerData.skipRun] | join("|")')" \
  "user|Interrupted by user|true"

# The REPL is still alive: the next run starts; two quick Ctrl-C leave.
type_line "again"
wait_screen "the second tool call" "● Bash(sleep 38)"
keys C-c
sleep 0.2
keys C-c
assert_eq "a second Ctrl-C within 2 s exits with 130" "$(wait_exit 8)" "130"
gone() { ! pgrep -f "^sleep 38$" >/dev/null; }
wait_until "the second sleep to be stopped too" 5 gone && ok "no tool process outlives loom"
finish
