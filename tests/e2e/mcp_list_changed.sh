#!/usr/bin/env bash
# notifications/tools/list_changed: after the fake's add_tool the next
# model request declares mcp__fake__extra, appended after the tools
# declared before, whose JSON is unchanged (the tools array of the earlier
# request is a byte prefix of the new one: the prompt cache survives), and
# the model's call of the new tool runs.
source "$(dirname "$0")/_lib.sh"
source "$LOOM_SRC/tests/e2e/_mcp_lib.sh"
need_fake_server

export LOOM_MCP_STARTUP_WAIT_MS=30000
mkdir -p "$T/proj"
echo '{"permissions": {"allow": ["mcp__fake__add_tool", "mcp__fake__extra"]}}' > "$LOOM_HOME/settings.json"
cat > "$T/scenario.json" <<'JSON'
{"turns": [
  {"reply": {"tool_calls": [{"id": "a1", "name": "mcp__fake__add_tool", "input": {}}]}},
  {"reply": {"tool_calls": [{"id": "x1", "name": "mcp__fake__extra", "input": {}}]}},
  {"reply": {"text": "Used the new tool."}}
]}
JSON
start_mock "$T/scenario.json"
use_provider anthropic
json=$("$LOOM_BIN" -p "grow the tool list" --cwd "$T/proj" --output-format events \
        --mcp-config "$(mcp_config fake "$(fake_entry --list-changed)")")
assert_eq "the run completed" "$(tail -n 1 <<<"$json" | jq -r .payload.result)" "Used the new tool."
first=$(tool_names 1)
assert_contains "the first request declares add_tool" "$first" "mcp__fake__add_tool"
check "the first request does not declare extra" bash -c "[[ ',$first,' != *',mcp__fake__extra,'* ]]"
assert_eq "add_tool ran" "$(tool_result a1)" "added"
second=$(tool_names 2)
assert_contains "the next request declares mcp__fake__extra" "$second" "mcp__fake__extra"
assert_eq "extra comes after every tool declared before" "$second" "$first,mcp__fake__extra"
check "the earlier tools' JSON is a byte prefix of the new tools array" tools_prefix_kept 1 2
sys1=$(raw_part 1 system)
check "the first request has a system prompt" test -n "$sys1"
assert_eq "the system prompt did not change" "$(raw_part 2 system)" "$sys1"
assert_eq "the model's call of extra ran" "$(tool_result x1)" "extra here"
assert_eq "the last request declares the same tools as the second" "$(tool_names 3)" "$second"
assert_eq "the last mcp.server_changed event counts the new tool" \
  "$(jq -r 'select(.type == "mcp.server_changed" and .payload.server == "fake") | .payload.tools' <<<"$json" | tail -n 1)" \
  "$(tr ',' '\n' <<<"$second" | grep -c '^mcp__fake__')"
# The prefix check fails when a byte of the earlier tools changes.
check "the prefix check catches a changed tool" bash -c '
  a=$(printf "[{\"name\":\"a\"},{\"name\":\"b\"}]"); b=$(printf "[{\"name\":\"a\"},{\"name\":\"B\"},{\"name\":\"c\"}]")
  a=${a%]}; [ "${b:0:${#a}}" != "$a" ]'
finish
