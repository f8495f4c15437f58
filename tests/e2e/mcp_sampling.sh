#!/usr/bin/env bash
# sampling/createMessage served by the agent's own model, only when the
# user's settings say "mcpSampling": true. Off, Loom does not offer
# sampling, so server-everything does not even list its
# trigger-sampling-request tool. On, the tool's request reaches the model
# endpoint (its system prompt, the message, max_tokens as the server asked),
# the model's reply comes back to the server (the tool's result shows it),
# and the audit log records it; the settings key draws no warning.
source "$(dirname "$0")/_lib.sh"
source "$LOOM_SRC/tests/e2e/_mcp_lib.sh"
need_reference_servers

export LOOM_MCP_STARTUP_WAIT_MS=30000
mkdir -p "$T/proj"
cfg=$(mcp_config everything "$(everything_entry)")
cat > "$T/scenario.json" <<'JSON'
{"turns": [
  {"match": {"system_contains": "You are a helpful test server."},
   "reply": {"text": "Cheese from the sampled model!", "usage": {"input_tokens": 1000, "output_tokens": 500}}},
  {"reply": {"tool_calls": [{"id": "sm1", "name": "mcp__everything__trigger-sampling-request", "input": {"prompt": "say cheese", "maxTokens": 77}}],
             "usage": {"input_tokens": 10, "output_tokens": 5}}},
  {"reply": {"text": "Sampled.", "usage": {"input_tokens": 10, "output_tokens": 5}}}
]}
JSON
start_mock "$T/scenario.json"
use_provider anthropic

# Off: no sampling capability, no sampling tool.
echo '{"permissions": {"allow": ["mcp__everything__trigger-sampling-request"]}}' > "$LOOM_HOME/settings.json"
cat > "$T/one.json" <<'JSON'
{"turns": [{"reply": {"text": "Nothing."}}]}
JSON
start_mock "$T/one.json"
"$LOOM_BIN" -p "list" --cwd "$T/proj" --mcp-config "$cfg" --output-format json > /dev/null
declared=$(tool_names 1)
assert_contains "off: server-everything is connected (echo declared)" "$declared" "mcp__everything__echo"
check_not "off: trigger-sampling-request is not offered" grep -q "trigger-sampling-request" <<<"$declared"

# On.
echo '{"mcpSampling": true, "permissions": {"allow": ["mcp__everything__trigger-sampling-request"]}}' > "$LOOM_HOME/settings.json"
start_mock "$T/scenario.json"
json=$("$LOOM_BIN" -p "sample something" --cwd "$T/proj" --mcp-config "$cfg" --output-format json 2> "$T/stderr")
check_not "on: mcpSampling is a known settings key" grep -q 'unknown key "mcpSampling"' "$T/stderr"
assert_eq "on: the run completed" "$(jq -r .result <<<"$json")" "Sampled."
assert_contains "on: trigger-sampling-request is offered" "$(tool_names 1)" "mcp__everything__trigger-sampling-request"
sample=$(jq -c 'select(.body.system != null) | select((.body.system | tostring) | contains("You are a helpful test server.")) | .body' "$MOCK_LOG" | head -n 1)
check "on: the sampling request reached the model endpoint" test -n "$sample"
assert_contains "on: it carries the server's message" "$(jq -c .messages <<<"$sample")" "Resource trigger-sampling-request context: say cheese"
assert_eq "on: max_tokens is the server's" "$(jq -r .max_tokens <<<"$sample")" "77"
check_not "on: the sampling request declares no tools" bash -c "jq -e '.tools | length > 0' <<<'$sample' >/dev/null"
r=$(tool_result sm1)
assert_contains "on: the model's reply came back to the server" "$r" "Cheese from the sampled model!"
assert_eq "on: the tool's result is no error" "$(tool_is_error sm1)" "false"
id=$(jq -r .session_id <<<"$json")
check "on: the audit log records the sampling" \
  grep -q '"mcp__everything__sampling"' "$LOOM_HOME/audit/$id.jsonl"
finish
