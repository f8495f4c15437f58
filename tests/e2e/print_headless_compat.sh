#!/usr/bin/env bash
# loom -p as Claude Code's scripts drive it (docs/cli.md): user messages as
# JSON lines on stdin (--input-format stream-json), each a run on one
# session; piped stdin appended to the prompt; a denied call named on
# stderr in text mode; and no -1 anywhere in the event stream when prices
# are unknown.
source "$(dirname "$0")/_lib.sh"

mkdir -p "$T/proj"
cd "$T/proj"
first_user_text() { # the prompt: the first text block of request $1's first message
  jq -rs --argjson n "$1" '.[$n - 1].body.messages[0].content
    | if type == "string" then . else .[0].text end' "$MOCK_LOG"
}

# --- --input-format stream-json: two messages, two results, one session ---
cat > "$T/two.json" <<'JSON'
{"turns": [{"reply": {"text": "First answer."}}, {"reply": {"text": "Second answer."}}]}
JSON
start_mock "$T/two.json"
use_provider anthropic
printf '%s\n' \
  '{"type":"user","message":{"role":"user","content":"first question"}}' \
  'not json at all' \
  '' \
  '{"type":"user","message":{"role":"user","content":[{"type":"text","text":"second question"}]}}' \
  | "$LOOM_BIN" -p --input-format stream-json --output-format stream-json \
      > "$T/two.out" 2> "$T/two.err"
assert_eq "input stream-json: the run succeeds" "$?" "0"
check "input stream-json: every line out is JSON" valid_jsonl "$T/two.out"
assert_eq "input stream-json: one system init" "$(jq -r 'select(.type=="system") | .subtype' "$T/two.out")" "init"
assert_eq "input stream-json: two results, one per message" \
  "$(jq -r 'select(.type=="result") | .result' "$T/two.out" | paste -sd,)" "First answer.,Second answer."
assert_eq "input stream-json: both on one session" \
  "$(jq -r 'select(.type=="result") | .session_id' "$T/two.out" | sort -u | wc -l)" "1"
assert_eq "input stream-json: the session is the init's" \
  "$(jq -r 'select(.type=="result") | .session_id' "$T/two.out" | head -n1)" \
  "$(jq -r 'select(.type=="system") | .session_id' "$T/two.out")"
assert_eq "input stream-json: two requests" "$(wc -l < "$MOCK_LOG")" "2"
check "input stream-json: the second request carries the first exchange" \
  jq -se '.[1].body.messages | tostring | contains("first question") and contains("First answer.") and contains("second question")' "$MOCK_LOG"
assert_contains "input stream-json: a bad line is named and skipped" "$(cat "$T/two.err")" \
  "loom: warning: stdin line 2: not JSON ("
start_mock "$T/two.json"
{ head -c $((11 * 1024 * 1024)) /dev/zero | tr '\0' x; echo
  echo '{"type":"user","message":{"role":"user","content":"after the long line"}}'; } \
  | "$LOOM_BIN" -p --input-format stream-json --output-format json > "$T/long.out" 2> "$T/long.err"
assert_contains "input stream-json: a line over the cap is named and skipped" "$(cat "$T/long.err")" \
  "loom: warning: stdin line 1: the line is longer than 10 MB; skipped"
assert_eq "input stream-json: the next line still runs" "$(jq -r .result "$T/long.out")" "First answer."
printf '%s\n' '{"type":"control_request"}' | "$LOOM_BIN" -p --input-format stream-json \
  > /dev/null 2> "$T/none.err" && rc=0 || rc=$?
assert_eq "input stream-json: no user message is a usage error" "$rc" "2"
assert_contains "input stream-json: and says so" "$(cat "$T/none.err")" "stdin held no user message"

# --- piped stdin after the prompt ---
start_mock "$T/two.json"
echo PIPED | "$LOOM_BIN" -p "summarize" > "$T/piped.out"
assert_eq "piped stdin: appended after a blank line" "$(first_user_text 1)" $'summarize\n\nPIPED'
echo "ONLY STDIN" | "$LOOM_BIN" -p > /dev/null
assert_eq "piped stdin: without a prompt it is the prompt" "$(first_user_text 2)" "ONLY STDIN"
"$LOOM_BIN" -p "just the argument" < /dev/null > /dev/null 2>&1 || true
head -c $((11 * 1024 * 1024)) /dev/zero | tr '\0' a | "$LOOM_BIN" -p "summarize" \
  > /dev/null 2> "$T/big.err" && rc=0 || rc=$?
assert_eq "piped stdin: over the cap is a usage error" "$rc" "2"
assert_contains "piped stdin: the error says why" "$(cat "$T/big.err")" "stdin holds more than 10 MB"

# --- denials on stderr in text mode ---
cat > "$T/deny.json" <<'JSON'
{"turns": [
  {"reply": {"tool_calls": [{"id": "d1", "name": "Bash", "input": {"command": "rm -rf build"}}]}},
  {"reply": {"text": "I could not remove it."}}
]}
JSON
mkdir -p "$T/proj/.loom"
echo '{"permissions": {"deny": ["Bash(rm:*)"]}}' > "$LOOM_HOME/settings.json"
start_mock "$T/deny.json"
"$LOOM_BIN" -p "clean" > "$T/deny.out" 2> "$T/deny.err"
assert_eq "denial: the reply is on stdout" "$(cat "$T/deny.out")" "I could not remove it."
assert_eq "denial: one stderr line names the call and the rule" \
  "$(grep '^loom: denied' "$T/deny.err")" \
  "loom: denied Bash(rm -rf build): settings rule Bash(rm:*) (user settings)"
start_mock "$T/deny.json"
# A model the price table does not know: no prices, so no cost.
"$LOOM_BIN" -p "clean" --model mock-unpriced --output-format json > "$T/deny.json.out" \
  2> "$T/deny.json.err"
check "denial: json mode keeps stderr for warnings" bash -c '! grep -q "^loom: denied" "$1"' _ "$T/deny.json.err"
assert_eq "denial: json lists it in permission_denials" \
  "$(jq -c '.permission_denials' "$T/deny.json.out")" \
  '[{"tool_name":"Bash","tool_use_id":"d1","tool_input":{"command":"rm -rf build"}}]'
assert_eq "denial: no prices, so total_cost_usd is null" "$(jq -c .total_cost_usd "$T/deny.json.out")" "null"

# A PreToolUse hook's deny is named by its own reason.
cat > "$T/deny_hook.sh" <<'SH'
#!/usr/bin/env bash
echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"no deletions on Fridays"}}'
SH
chmod +x "$T/deny_hook.sh"
cat > "$LOOM_HOME/settings.json" <<JSON
{"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "$T/deny_hook.sh"}]}]}}
JSON
start_mock "$T/deny.json"
"$LOOM_BIN" -p "clean" > /dev/null 2> "$T/hook.err"
assert_contains "denial: a hook's deny names the hook's reason" \
  "$(grep '^loom: denied' "$T/hook.err")" "loom: denied Bash(rm -rf build): "
assert_contains "denial: with the hook's words" "$(grep '^loom: denied' "$T/hook.err")" \
  "no deletions on Fridays"

# --- no -1 sentinel anywhere in the event stream (prices unknown) ---
rm -f "$LOOM_HOME/settings.json"
cat > "$T/tools.json" <<'JSON'
{"turns": [
  {"reply": {"text": "Looking.", "tool_calls": [{"id": "t1", "name": "Bash", "input": {"command": "echo one"}},
                                                 {"id": "t2", "name": "Read", "input": {"file_path": "/nonexistent/x"}}]}},
  {"reply": {"text": "Done."}}
]}
JSON
start_mock "$T/tools.json"
"$LOOM_BIN" -p "look" --model mock-unpriced --output-format events --allowedTools "Bash(echo:*)" \
  > "$T/events.jsonl"
check "events: the stream is JSON lines" valid_jsonl "$T/events.jsonl"
check "events: the run completed" \
  jq -se 'map(select(.type=="run.state_changed")) | last | .payload.state == "completed"' "$T/events.jsonl"
assert_eq "events: no -1 in any event" \
  "$(jq -s '[.[] | .. | numbers | select(. == -1)] | length' "$T/events.jsonl")" "0"
assert_eq "events: no cost_usd when prices are unknown" \
  "$(jq -s '[.[] | .. | objects | select(has("cost_usd"))] | length' "$T/events.jsonl")" "0"
check "events: model.completed came, without a cost" \
  jq -se 'any(.[]; .type == "model.completed" and (.payload | has("usage")))' "$T/events.jsonl"
finish
