#!/usr/bin/env bash
# Deferred MCP tools (seed 001 §9): a server with 200 tools is too much to
# declare. The first request stays under 32 KB, declares no mcp__ tool but
# ToolSearch, whose description lists the deferred names; the model's
# ToolSearch {"query": "select:mcp__fake__tool_123"} makes the next request
# declare mcp__fake__tool_123 after every tool of the previous request (its
# tools array JSON a byte prefix of the new one, the system prompt byte for
# byte the same), and the model's call of it runs. The fake's tools have
# descriptions of a real server's size (~400 bytes), so together they pass
# the default share of the window (10 %); ENABLE_TOOL_SEARCH=false turns
# deferral off and all 200 are declared.
source "$(dirname "$0")/_lib.sh"
source "$LOOM_SRC/tests/e2e/_mcp_lib.sh"
need_fake_server

export LOOM_MCP_STARTUP_WAIT_MS=30000
mkdir -p "$T/proj"
echo '{"permissions": {"allow": ["mcp__fake__tool_123"]}}' > "$LOOM_HOME/settings.json"
cat > "$T/scenario.json" <<'JSON'
{"turns": [
  {"reply": {"tool_calls": [{"id": "s1", "name": "ToolSearch", "input": {"query": "select:mcp__fake__tool_123"}}]}},
  {"reply": {"tool_calls": [{"id": "u1", "name": "mcp__fake__tool_123", "input": {"text": "found and called"}}]}},
  {"reply": {"text": "Found it."}}
]}
JSON
start_mock "$T/scenario.json"
use_provider anthropic
json=$("$LOOM_BIN" -p "find tool 123" --cwd "$T/proj" --output-format json \
        --mcp-config "$(mcp_config fake "$(fake_entry --tools 200 --tool-desc-bytes 400)")")
assert_eq "the run completed" "$(jq -r .result <<<"$json")" "Found it."
assert_eq "the server is connected with 200 tools" \
  "$(jq -r '.mcp_servers[0] | "\(.state) \(.tools)"' <<<"$json")" "connected 200"

size=$(raw_req 1 | wc -c)
# The built-in tools' declarations are ~25 KB; the 200 tools, declared,
# would add ~80 KB more: 32 KB tells the two apart with room to grow.
check "the first request is under 32 KB ($size bytes)" test "$size" -lt 32768
first=$(tool_names 1)
check "the first request declares no mcp__ tool" bash -c "[[ ',$first' != *',mcp__'* ]]"
assert_contains "the first request declares ToolSearch" "$first" "ToolSearch"
desc=$(req 1 | jq -r '.tools[] | select(.name == "ToolSearch") | .description')
assert_contains "ToolSearch's description lists tool_000" "$desc" "mcp__fake__tool_000"
assert_contains "ToolSearch's description lists tool_123" "$desc" "mcp__fake__tool_123"
assert_contains "ToolSearch's description lists tool_199" "$desc" "mcp__fake__tool_199"

s1=$(tool_result s1)
assert_contains "ToolSearch's result names the tool it loaded" "$s1" "mcp__fake__tool_123"
assert_eq "ToolSearch is no error" "$(tool_is_error s1)" "false"
second=$(tool_names 2)
assert_eq "the next request declares tool_123 after every tool of the previous one" \
  "$second" "$first,mcp__fake__tool_123"
check "the previous tools array is a byte prefix of the new one" tools_prefix_kept 1 2
sys1=$(raw_part 1 system)
check "the first request has a system prompt" test -n "$sys1"
assert_eq "the system prompt is byte for byte the same" "$(raw_part 2 system)" "$sys1"
assert_eq "the model's call of tool_123 ran" "$(tool_result u1)" "found and called"
assert_eq "the tool set stays put after the call" "$(tool_names 3)" "$second"
check "the third request's tools are the second's, byte for byte" \
  test "$(raw_part 3 tools)" == "$(raw_part 2 tools)"

# ENABLE_TOOL_SEARCH=false: nothing is deferred.
cat > "$T/plain.json" <<'JSON'
{"turns": [{"reply": {"text": "Plain."}}]}
JSON
start_mock "$T/plain.json"
ENABLE_TOOL_SEARCH=false "$LOOM_BIN" -p "no search" --cwd "$T/proj" --output-format json \
  --mcp-config "$(mcp_config fake "$(fake_entry --tools 200 --tool-desc-bytes 400)")" > /dev/null
names=$(tool_names 1)
assert_eq "ENABLE_TOOL_SEARCH=false: all 200 tools are declared" \
  "$(tr ',' '\n' <<<"$names" | grep -c '^mcp__fake__tool_')" "200"
check "ENABLE_TOOL_SEARCH=false: no ToolSearch" bash -c "[[ ',$names,' != *',ToolSearch,'* ]]"
finish
