#!/usr/bin/env bash
# WebSearch through an MCP server's tool (docs/tools.md): the user's
# "webSearch": {"mcp": "SERVER__TOOL"} sends each query to that tool of the
# session's MCP server (tests/mcp/fake_server.py --search) instead of a
# URL; its answer — JSON in its text, or structuredContent — is read as
# the HTTP backend's is, numbered, and filtered by the settings' and the
# call's domain lists. The tool's error, an answer that is not results,
# and a server the session does not have are clear error results the run
# goes on from; url and mcp together, or a bad mcp name, stop loom naming
# the key.
source "$(dirname "$0")/_lib.sh"
source "$LOOM_SRC/tests/e2e/_mcp_lib.sh"
need_fake_server
export LOOM_MCP_STARTUP_WAIT_MS=30000

mkdir -p "$T/proj"
cfg=$(mcp_config search "$(fake_entry --search --log "$T/mcp.log")")
cat > "$T/scenario.json" <<'JSON'
{"turns": [
  {"reply": {"tool_calls": [
    {"id": "m1", "name": "WebSearch", "input": {"query": "loom harness"}},
    {"id": "m2", "name": "WebSearch", "input": {"query": "loom docs", "allowed_domains": ["docs.example.org"]}},
    {"id": "m3", "name": "WebSearch", "input": {"query": "error"}},
    {"id": "m4", "name": "WebSearch", "input": {"query": "broken"}}]}},
  {"reply": {"text": "Searched."}}
]}
JSON
settings() { # settings MCP_JSON — the user's settings with an MCP search backend
  echo "{\"permissions\": {\"allow\": [\"WebSearch\"]}, \"webSearch\": {$1, \"blockedDomains\": [\"blocked.example.net\"]}}" > "$LOOM_HOME/settings.json"
}
settings '"mcp": "search__web_search"'
start_mock "$T/scenario.json"
use_provider anthropic
json=$("$LOOM_BIN" -p "search" --cwd "$T/proj" --mcp-config "$cfg" --output-format json)
assert_eq "the run completed" "$(jq -r .subtype <<<"$json")" "success"
file=$(session_file "$(jq -r .session_id <<<"$json")")
result() { jq -r --arg id "$1" 'select(.type=="function_call_result" and .callId==$id) | .output' "$file"; }
is_error() { jq -r --arg id "$1" 'select(.type=="function_call_result" and .callId==$id) | .isError' "$file"; }
check "the MCP tool got the query" grep -qx "search web_search loom harness" "$T/mcp.log"
r=$(result m1)
assert_contains "the tool's results, numbered with title, URL and snippet" "$r" \
  $'1. Result for loom harness\n   https://docs.example.org/loom\n   The Loom harness documentation.'
assert_contains "  the next kept one" "$r" $'2. Hit 2\n   https://www.example.com/b'
check "  the settings' blocked domain is left out" bash -c '! grep -q blocked.example.net <<<"$1"' _ "$r"
check "  the raw result counts the one filtered" jq -se 'any(.[]; .type=="function_call_result" and .callId=="m1" and .providerData.toolResult.rawResponse.filtered == 1)' "$file"
r=$(result m2)
assert_contains "allowed_domains keeps docs.example.org" "$r" "docs.example.org/loom"
check "  and only it" bash -c '! grep -q example.com/b <<<"$1"' _ "$r"
assert_contains "the tool's own error is named" "$(result m3)" "The MCP search tool search__web_search answered with an error: the search index is down"
assert_eq "  as an error" "$(is_error m3)" "true"
assert_contains "an answer that is not results is explained" "$(result m4)" "search__web_search's answer could not be read: the answer is not JSON"
assert_eq "final answer" "$(jq -r .result <<<"$json")" "Searched."
stop_mock

# structuredContent, and the query under another argument name.
cat > "$T/one.json" <<'JSON'
{"turns": [
  {"reply": {"tool_calls": [{"id": "s1", "name": "WebSearch", "input": {"query": "structured loom"}}]}},
  {"reply": {"text": "Done."}}
]}
JSON
settings '"mcp": "search__web_search_structured", "queryArgument": "q"'
start_mock "$T/one.json"
json=$("$LOOM_BIN" -p "search" --cwd "$T/proj" --mcp-config "$cfg" --output-format json)
file=$(session_file "$(jq -r .session_id <<<"$json")")
check "queryArgument names the argument the query goes in" grep -qx "search web_search_structured structured loom" "$T/mcp.log"
assert_contains "structuredContent is read as the results" "$(result s1)" \
  $'1. Result for structured loom\n   https://docs.example.org/loom'
stop_mock

# A server the session does not have: an error result, the run goes on.
start_mock "$T/one.json"
json=$("$LOOM_BIN" -p "search" --cwd "$T/proj" --output-format json)
file=$(session_file "$(jq -r .session_id <<<"$json")")
assert_contains "without the server, the error says to add it" "$(result s1)" \
  'WebSearch searches through MCP server "search", which this session does not have'
assert_eq "  and the run completes" "$(jq -r .subtype <<<"$json")" "success"
stop_mock

cat > "$T/chat.json" <<'JSON'
{"turns": [{"reply": {"text": "Hi."}}]}
JSON
start_mock "$T/chat.json"
echo '{"webSearch": {"mcp": "search__web_search", "url": "https://s.example/?q={query}"}}' > "$LOOM_HOME/settings.json"
if err=$("$LOOM_BIN" -p "hi" --cwd "$T/proj" 2>&1 >/dev/null); then not_ok "url and mcp together are refused"; else
  assert_contains "url and mcp together are refused" "$err" "webSearch.mcp and url cannot both be given"; fi
echo '{"webSearch": {"mcp": "web_search"}}' > "$LOOM_HOME/settings.json"
if err=$("$LOOM_BIN" -p "hi" --cwd "$T/proj" 2>&1 >/dev/null); then not_ok "an mcp name without a server is refused"; else
  assert_contains "an mcp name without a server is refused" "$err" 'webSearch.mcp must name an MCP server'"'"'s tool as "SERVER__TOOL"'; fi
stop_mock
finish
