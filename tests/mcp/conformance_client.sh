#!/usr/bin/env bash
# conformance_client.sh URL — the client command the MCP conformance suite
# runs (tests/mcp/conformance.sh): the real `loom` binary, connected to the
# suite's server at URL as the MCP server "test", with a scripted model
# (build/mockllm) that calls the tool the scenario ($MCP_CONFORMANCE_SCENARIO)
# is about:
#   initialize                           no tool (connecting is the test)
#   tools_call                           mcp__test__add_numbers {"a": 2, "b": 3}
#   elicitation-sep1034-client-defaults  mcp__test__test_client_elicitation_defaults,
#                                        the elicitation accepted by an
#                                        Elicitation hook with empty content
#                                        (the client fills the schema's defaults)
#   sse-retry                            mcp__test__test_reconnection
# Everything lives in a temp dir (LOOM_HOME, HOME, the work dir), removed at
# exit. LOOM_BIN and MOCKLLM_BIN name the binaries (default: build/).
set -euo pipefail
url=${1:?usage: conformance_client.sh URL}
src=$(cd "$(dirname "$0")/../.." && pwd)
LOOM_BIN=${LOOM_BIN:-$src/build/loom}
MOCKLLM_BIN=${MOCKLLM_BIN:-$(dirname "$LOOM_BIN")/mockllm}
scenario=${MCP_CONFORMANCE_SCENARIO:-initialize}

T=$(mktemp -d /tmp/loom-mcp-conf.XXXXXX)
mock_pid=
cleanup() {
  if [ -n "$mock_pid" ]; then kill "$mock_pid" 2>/dev/null || true; wait "$mock_pid" 2>/dev/null || true; fi
  rm -rf "$T"
}
trap cleanup EXIT
export LOOM_HOME="$T/home" HOME="$T/userhome"
mkdir -p "$LOOM_HOME" "$HOME" "$T/work"
cd "$T/work"
unset http_proxy https_proxy HTTP_PROXY HTTPS_PROXY all_proxy ALL_PROXY \
      ANTHROPIC_API_KEY ANTHROPIC_BASE_URL OPENAI_API_KEY OPENAI_BASE_URL LOOM_PROVIDER \
      LOOM_MODEL LOOM_BASE_URL LOOM_API_KEY LOOM_CASSETTE
export no_proxy='*' NO_PROXY='*'

# want: what the tool's result must show the model (its next request), so the
# suite's server-side checks are not the only ones.
case "$scenario" in
  initialize) tool= input='{}' want= ;;
  tools_call) tool=mcp__test__add_numbers input='{"a": 2, "b": 3}' want='The sum of 2 and 3 is 5' ;;
  elicitation-sep1034-client-defaults)
    tool=mcp__test__test_client_elicitation_defaults input='{}' want='John Doe' ;;
  sse-retry) tool=mcp__test__test_reconnection input='{}' want='Reconnection test completed successfully' ;;
  # Every other scenario (the auth/* ones): connect and list, as a session
  # does, with no tool call.
  *) tool= input='{}' want= ;;
esac

# The model: the scenario's tool first (when there is one), then a final answer.
if [ -n "$tool" ]; then
  cat > "$T/model.json" <<JSON
{ "turns": [
    { "match": { "tool_results": 0 },
      "reply": { "tool_calls": [ { "id": "toolu_conf_1", "name": "$tool", "input": $input } ] } },
    { "match": { "tool_results": 1 }, "reply": { "text": "done" } } ] }
JSON
else
  echo '{ "turns": [ { "reply": { "text": "done" } } ] }' > "$T/model.json"
fi

# Elicitations are accepted with nothing filled in: the client applies the
# requested schema's defaults (SEP-1034), which is what the scenario checks.
cat > "$LOOM_HOME/settings.json" <<'JSON'
{ "hooks": { "Elicitation": [ { "hooks": [ { "type": "command",
    "command": "echo '{\"hookSpecificOutput\":{\"hookEventName\":\"Elicitation\",\"action\":\"accept\",\"content\":{}}}'" } ] } ] } }
JSON

"$MOCKLLM_BIN" --scenario "$T/model.json" --port 0 --port-file "$T/port" --log "$T/mock.jsonl" \
  > "$T/mock.out" 2>&1 &
mock_pid=$!
for _ in $(seq 1 250); do [ -s "$T/port" ] && break; sleep 0.02; done
[ -s "$T/port" ] || { cat "$T/mock.out" >&2; echo "mockllm did not start" >&2; exit 1; }
export ANTHROPIC_BASE_URL="http://127.0.0.1:$(cat "$T/port")" ANTHROPIC_API_KEY=test-key

config=$(printf '{"mcpServers":{"test":{"type":"http","url":"%s"}}}' "$url")
exec_status=0
"$LOOM_BIN" -p go --mcp-config "$config" --permission-mode bypassPermissions || exec_status=$?
if [ "$exec_status" -eq 0 ] && [ -n "$want" ] && ! grep -qF "$want" "$T/mock.jsonl"; then
  echo "conformance_client.sh: the model never saw \"$want\" in a tool result" >&2
  exit 1
fi
exit "$exec_status"
