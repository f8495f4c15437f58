#!/usr/bin/env bash
# Guardrails (docs/context.md, "Guardrails"): an InputGuardrail hook in
# settings stops a run before the model sees the prompt; an OutputGuardrail
# hook stops it before a reply is shown — the reply never reaches the
# event stream, the result or the session file. Either way the run ends
# blocked_by_policy with stop reason guardrail, a structured error and a
# guardrail.tripped event naming the stage and the reason. A reply that
# passes is shown whole, as one delta.
source "$(dirname "$0")/_lib.sh"
mkdir -p "$T/proj"

# The guardrail: blocks (exit 2, reason on stderr) when the text holds $1.
cat > "$T/guard.sh" <<'SH'
#!/usr/bin/env bash
payload=$(cat)
printf '%s\n' "$payload" >> "$GUARD_LOG"
if jq -e --arg w "$WORD" '.text | contains($w)' <<<"$payload" >/dev/null; then
  echo "the $(jq -r .stage <<<"$payload") mentions $WORD" >&2
  exit 2
fi
exit 0
SH
chmod +x "$T/guard.sh"
export GUARD_LOG="$T/guard.log"
cat > "$LOOM_HOME/settings.json" <<JSON
{"permissions": {"defaultMode": "bypassPermissions"},
 "hooks": {"InputGuardrail": [{"hooks": [{"type": "command", "command": "$T/guard.sh"}]}],
           "OutputGuardrail": [{"hooks": [{"type": "command", "command": "$T/guard.sh"}]}]}}
JSON
run_loom() {
  set +e
  "$LOOM_BIN" -p "$1" --cwd "$T/proj" --output-format events > "$T/events" 2>"$T/err"
  RC=$?
  set -e
  END=$(tail -n 1 "$T/events")
}

# 1. Input: the model never sees the prompt.
jq -n '{turns: [{reply: {text: "never asked"}}]}' > "$T/input.json"
start_mock "$T/input.json"
use_provider anthropic
WORD=DROP-TABLES run_loom "please DROP-TABLES in production"
check "input: a failing exit status ($RC)" test "$RC" -ne 0
assert_eq "input: the model was never asked" "$(wc -l < "$MOCK_LOG" | tr -d ' ')" "0"
assert_eq "input: blocked by policy" "$(jq -r .payload.state <<<"$END")" "blocked_by_policy"
assert_eq "input: stop reason guardrail" "$(jq -r .payload.stop_reason <<<"$END")" "guardrail"
assert_eq "input: the error code" "$(jq -r .payload.error.code <<<"$END")" "run_blocked_by_policy"
assert_contains "input: the error names the stage and the reason" "$(jq -r .payload.error.message <<<"$END")" \
  "the input guardrail InputGuardrail stopped the run: the input mentions DROP-TABLES"
ev=$(jq -c 'select(.type == "guardrail.tripped") | .payload' "$T/events")
assert_eq "input: the event" "$ev" '{"stage":"input","guardrail":"InputGuardrail","reason":"the input mentions DROP-TABLES","source":"hook"}'
assert_eq "input: the hook saw the prompt" "$(head -n 1 "$GUARD_LOG" | jq -r '.hook_event_name + " " + .stage + " " + .text')" \
  "InputGuardrail input please DROP-TABLES in production"

# 2. Output: the reply is judged before it is shown, and withheld.
: > "$GUARD_LOG"
jq -n '{turns: [
  {reply: {tool_calls: [{name: "Bash", input: {command: "echo checking"}}]}},
  {reply: {text: "The password is hunter2."}, chunk_size: 4}]}' > "$T/output.json"
start_mock "$T/output.json"
WORD=hunter2 run_loom "what is the password?"
check "output: a failing exit status ($RC)" test "$RC" -ne 0
assert_eq "output: the model answered" "$(wc -l < "$MOCK_LOG" | tr -d ' ')" "2"
assert_eq "output: blocked by policy" "$(jq -r .payload.state <<<"$END")" "blocked_by_policy"
assert_eq "output: stop reason guardrail" "$(jq -r .payload.stop_reason <<<"$END")" "guardrail"
assert_eq "output: the event's stage and reason" \
  "$(jq -r 'select(.type == "guardrail.tripped") | .payload.stage + ": " + .payload.reason' "$T/events")" \
  "output: the output mentions hunter2"
check "output: the reply never reached the event stream" bash -c '! grep -q "password is" "$1"' _ "$T/events"
assert_eq "output: no text delta at all" "$(jq -r 'select(.type == "token.delta" and .payload.channel == "text")' "$T/events")" ""
file=$(session_file "$(jq -r .payload.session_id <<<"$END")")
check "output: nor the session file" bash -c '! grep -q "password is" "$1"' _ "$file"
assert_contains "output: the session says a reply was withheld" "$(cat "$file")" "withheld by an output guardrail"

# 3. A reply that passes is shown whole, once.
: > "$GUARD_LOG"
jq -n '{turns: [{reply: {text: "All clear here."}, chunk_size: 3}]}' > "$T/pass.json"
start_mock "$T/pass.json"
WORD=hunter2 run_loom "status?"
assert_eq "pass: the run completes" "$(jq -r .payload.state <<<"$END")" "completed"
assert_eq "pass: one text delta with the whole reply" \
  "$(jq -r 'select(.type == "token.delta" and .payload.channel == "text") | .payload.text' "$T/events")" "All clear here."
assert_eq "pass: the output guardrail judged it" "$(jq -r 'select(.stage == "output") | .text' "$GUARD_LOG")" "All clear here."
finish
