#!/usr/bin/env bash
# MCP resource subscriptions: a resource the model read is subscribed to
# (the server offers resources.subscribe), and the server's
# notifications/resources/updated reaches the model as a reminder in the
# next request. tests/mcp/fake_server.py answers a subscribe with an update.
source "$(dirname "$0")/_lib.sh"

cat > "$T/scenario.json" <<'JSON'
{"turns": [
  {"match": {"assistant_turns": 0}, "reply": {"tool_calls": [{"id": "r1", "name": "ReadMcpResource",
     "input": {"server": "fake", "uri": "test://readme"}}]}},
  {"match": {"assistant_turns": 1}, "reply": {"text": "read it"}}
]}
JSON
cfg=$(jq -nc --arg s "$LOOM_SRC/tests/mcp/fake_server.py" \
  '{mcpServers: {fake: {command: "python3", args: [$s, "--resources"]}}}')
export LOOM_MCP_STARTUP_WAIT_MS=20000
for provider in ${PROVIDERS:-anthropic openai}; do
  start_mock "$T/scenario.json"
  use_provider "$provider"
  json=$("$LOOM_BIN" -p "read the readme" --mcp-config "$cfg" --output-format json)
  assert_eq "$provider: the run completes" "$(jq -r .result <<<"$json")" "read it"
  second=$(sed -n 2p "$MOCK_LOG" | jq -c .body)
  assert_contains "$provider: the resource's text reached the model" "$second" "Hello from readme."
  assert_contains "$provider: the change of the subscribed resource is a reminder in the next request" \
    "$second" "The resource test://readme of MCP server fake changed"
  first=$(sed -n 1p "$MOCK_LOG" | jq -c .body)
  if grep -q "of MCP server fake changed" <<<"$first"; then
    not_ok "$provider: no change note before anything was read"
  else
    ok "$provider: no change note before anything was read"
  fi
done
finish
