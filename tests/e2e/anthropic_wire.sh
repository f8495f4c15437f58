#!/usr/bin/env bash
# Issue 12, the Anthropic side of wire fidelity. mockllm refuses what the
# real API refuses (a whitespace-only text block; a thinking budget not
# under max_tokens; a temperature beside thinking), so each part is checked
# twice: in the request bytes (mockllm --log) and by the mock's answer.
#  1. A reply of only whitespace is recorded as it came, and the next turn
#     continues without a 400: the blank block is not sent back.
#  2. A message_delta whose counts are null (the mock sends them so) leaves
#     message_start's input and cache counts; thinking tokens
#     (output_tokens_details) reach the session's usage.
#  3. --thinking [BUDGET]: the thinking config, the interleaved-thinking
#     beta, no temperature; thinking deltas are token.delta channel
#     "reasoning"; the signature comes back before the tool_use it preceded.
source "$(dirname "$0")/_lib.sh"

# --- 1. whitespace-only reply ------------------------------------------------
cat > "$T/blank.json" <<'JSON'
{"sequence": true, "turns": [
  {"reply": {"text": "   \n"}},
  {"reply": {"text": "Back again."}}
]}
JSON
start_mock "$T/blank.json"
use_provider anthropic
json=$("$LOOM_BIN" -p "hello" --output-format json)
sid=$(jq -r .session_id <<<"$json")
assert_eq "blank: the first run completes" "$(jq -r .subtype <<<"$json")" "success"
f=$(session_file "$sid")
check "blank: the session keeps the reply as it came" \
  jq -se 'any(.[]; .role == "assistant" and (.content | any(.type == "text" and .text == "   \n")))' "$f"
json=$("$LOOM_BIN" -p -r "$sid" "and now?" --output-format json) && rc=0 || rc=$?
assert_eq "blank: the next turn succeeds" "$rc/$(jq -r .result <<<"$json")" "0/Back again."
assert_eq "blank: no request was refused" "$(jq -r .status "$MOCK_LOG" | paste -sd,)" "200,200"
assert_eq "blank: no whitespace-only text block was sent" \
  "$(jq -r '[.body.messages[].content[] | select(.type == "text" and (.text | test("^\\s*$")))] | length' "$MOCK_LOG" | paste -sd,)" "0,0"
assert_eq "blank: the second request has both prompts, no empty assistant turn" \
  "$(jq -r 'select(.request_id == "req_mock_2") | [.body.messages[].role] | join(",")' "$MOCK_LOG")" "user,user"

# --- 2 and 3. thinking, usage, signatures -------------------------------------
cat > "$T/think.json" <<'JSON'
{"sequence": true, "turns": [
  {"reply": {"thinking": "I should list the files.", "thinking_signature": "EqQBCkgIARAB_sig_1",
             "tool_calls": [{"id": "toolu_t1", "name": "Bash", "input": {"command": "echo listed"}}],
             "usage": {"input_tokens": 400, "output_tokens": 90, "cache_read_input_tokens": 1200,
                       "cache_creation_input_tokens": 30, "reasoning_tokens": 60}}},
  {"reply": {"text": "Listed.",
             "usage": {"input_tokens": 500, "output_tokens": 10, "cache_read_input_tokens": 1300}}}
]}
JSON
start_mock "$T/think.json"
"$LOOM_BIN" -p "list" --thinking 2048 --permission-mode bypassPermissions \
  --output-format events > "$T/events.jsonl" && rc=0 || rc=$?
assert_eq "thinking: the run completes" "$rc" "0"
assert_eq "thinking: both requests accepted" "$(jq -r .status "$MOCK_LOG" | paste -sd,)" "200,200"
r1='select(.request_id == "req_mock_1")'
assert_eq "thinking: the config is sent" \
  "$(jq -c "$r1 | .body.thinking" "$MOCK_LOG")" '{"type":"enabled","budget_tokens":2048}'
assert_eq "thinking: budget under max_tokens" \
  "$(jq -r "$r1 | .body.max_tokens > .body.thinking.budget_tokens" "$MOCK_LOG")" "true"
assert_eq "thinking: no temperature" "$(jq -r "$r1 | .body | has(\"temperature\")" "$MOCK_LOG")" "false"
assert_eq "thinking: the interleaved-thinking beta" \
  "$(jq -r "$r1 | .headers | to_entries[] | select(.key | ascii_downcase == \"anthropic-beta\") | .value" "$MOCK_LOG")" \
  "interleaved-thinking-2025-05-14"
assert_eq "thinking: deltas are token.delta channel reasoning" \
  "$(jq -r 'select(.type == "token.delta" and .payload.channel == "reasoning") | .payload.text' "$T/events.jsonl" | tr -d '\n')" \
  "I should list the files."
assert_eq "thinking: text deltas keep channel text" \
  "$(jq -r 'select(.type == "token.delta" and .payload.channel == "text") | .payload.text' "$T/events.jsonl" | tr -d '\n')" \
  "Listed."
assert_eq "thinking: the signature comes back before the tool_use" \
  "$(jq -c 'select(.request_id == "req_mock_2") | .body.messages[1].content | map(.type + ":" + (.signature // .id))' "$MOCK_LOG")" \
  '["thinking:EqQBCkgIARAB_sig_1","tool_use:toolu_t1"]'
assert_eq "thinking: its text comes back with it" \
  "$(jq -r 'select(.request_id == "req_mock_2") | .body.messages[1].content[0].thinking' "$MOCK_LOG")" \
  "I should list the files."
usage=$(jq -c 'select(.type == "run.state_changed" and .payload.state == "completed") | .payload.usage' "$T/events.jsonl")
assert_eq "usage: null delta counts erase nothing; thinking tokens recorded" \
  "$(jq -r '"\(.inputTokens) \(.cacheReadTokens) \(.cacheCreationTokens) \(.outputTokens) \(.reasoningTokens)"' <<<"$usage")" \
  "900 2500 30 100 60"
sid=$(jq -r 'select(.payload.session_id != null) | .payload.session_id' "$T/events.jsonl" | head -n 1)
f=$(session_file "$sid")
check "usage: the session's record has the thinking tokens" \
  jq -se 'any(.[]; .providerData.usage.reasoningTokens == 60)' "$f"

# --thinking with no number: the default budget (Claude Code's 31999), kept
# under the model's output cap; the word after it stays the prompt.
start_mock "$T/think.json"
"$LOOM_BIN" -p --thinking "list" --permission-mode bypassPermissions --output-format json > /dev/null
assert_eq "thinking: default budget sent, under max_tokens" \
  "$(jq -r "$r1 | .body.thinking.budget_tokens >= 1024 and .body.thinking.budget_tokens < .body.max_tokens" "$MOCK_LOG")" "true"
assert_eq "thinking: the prompt was the prompt" "$(jq -r "$r1 | .body.messages[0].content[0].text" "$MOCK_LOG" | head -c 4)" "list"

# Settings: "thinking": {"budget_tokens": N}; false turns it off; a bad value names the key.
echo '{"thinking": {"budget_tokens": 4096}}' > "$LOOM_HOME/settings.json"
start_mock "$T/think.json"
"$LOOM_BIN" -p "list" --permission-mode bypassPermissions --output-format json > /dev/null
assert_eq "settings: thinking from the settings file" "$(jq -r "$r1 | .body.thinking.budget_tokens" "$MOCK_LOG")" "4096"
echo '{"thinking": false}' > "$LOOM_HOME/settings.json"
start_mock "$T/think.json"
"$LOOM_BIN" -p "list" --permission-mode bypassPermissions --output-format json > /dev/null
assert_eq "settings: false is off" "$(jq -r "$r1 | .body | has(\"thinking\")" "$MOCK_LOG")" "false"
echo '{"thinking": 500}' > "$LOOM_HOME/settings.json"
err=$("$LOOM_BIN" -p "list" 2>&1) && rc=0 || rc=$?
assert_eq "settings: a budget under 1024 is a configuration error" "$rc" "2"
assert_contains "settings: the error names the key" "$err" "thinking"
rm -f "$LOOM_HOME/settings.json"
err=$("$LOOM_BIN" -p --thinking=12 "list" 2>&1) && rc=0 || rc=$?
assert_eq "cli: --thinking=12 is refused" "$rc" "2"
finish
