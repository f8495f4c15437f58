#!/usr/bin/env bash
# Resources and prompts of an MCP server in a goal: `@fake:<uri>` in -p puts
# the resource's text in a <resource> block of the first request;
# `/mcp__fake__greet Bob` sends the prompt's text, with Bob, as the user's
# message; the model's ListMcpResources and ReadMcpResource calls work; an
# unknown prompt command fails the run with a clear error.
source "$(dirname "$0")/_lib.sh"
source "$LOOM_SRC/tests/e2e/_mcp_lib.sh"
need_fake_server

export LOOM_MCP_STARTUP_WAIT_MS=30000
mkdir -p "$T/proj"
cfg=$(mcp_config fake "$(fake_entry --resources --prompts)")
# The user's words: the last user message's text, without the working memory.
user_text() {
  req "$1" | jq -r '[.messages[] | select(.role == "user")] | last | .content
    | if type == "string" then . else map(select(.type == "text") | .text
      | select(startswith("<working-memory>") | not)) | join("\n") end'
}

cat > "$T/one.json" <<'JSON'
{"turns": [{"reply": {"text": "Looked."}}]}
JSON
start_mock "$T/one.json"
use_provider anthropic

# @server:uri
json=$("$LOOM_BIN" -p "look at @fake:test://readme please" --cwd "$T/proj" --mcp-config "$cfg" --output-format json)
assert_eq "mention: the run completed" "$(jq -r .result <<<"$json")" "Looked."
u=$(user_text 1)
assert_contains "mention: the goal's words are kept" "$u" "look at @fake:test://readme please"
assert_contains "mention: the resource comes in a <resource> block" "$u" \
  '<resource server="fake" uri="test://readme">
Hello from readme.
</resource>'
# a templated uri is read too; an unknown one is named in the goal, not fatal
json=$("$LOOM_BIN" -p "compare @fake:test://item/7 with @fake:test://nothing" --cwd "$T/proj" --mcp-config "$cfg" --output-format json)
u=$(user_text 2)
assert_contains "mention: a template's uri is read" "$u" "item 7"
assert_contains "mention: an unreadable one is named" "$u" "@fake:test://nothing could not be read"

# /mcp__fake__greet Bob
json=$("$LOOM_BIN" -p "/mcp__fake__greet Bob" --cwd "$T/proj" --mcp-config "$cfg" --output-format json)
assert_eq "prompt: the run completed" "$(jq -r .result <<<"$json")" "Looked."
assert_eq "prompt: the user's message is the prompt's text with Bob" "$(user_text 3)" "Say hello to Bob."
n=$(nreq)
json=$("$LOOM_BIN" -p "/mcp__fake__nosuch x" --cwd "$T/proj" --mcp-config "$cfg" --output-format json 2> "$T/err") || true
assert_contains "prompt: stderr says no server offers it" "$(cat "$T/err")" "no MCP server offers that prompt"
assert_eq "prompt: an unknown prompt fails the run" "$(jq -r .is_error <<<"$json")" "true"
assert_contains "prompt: the error names the command" "$(jq -r '.error.message // .result' <<<"$json")" "mcp__fake__nosuch"
assert_eq "prompt: no model request was made for it" "$(nreq)" "$n"

# ListMcpResources / ReadMcpResource called by the model
cat > "$T/tools.json" <<'JSON'
{"turns": [
  {"reply": {"tool_calls": [{"id": "l1", "name": "ListMcpResources", "input": {}}]}},
  {"reply": {"tool_calls": [{"id": "r1", "name": "ReadMcpResource", "input": {"server": "fake", "uri": "test://readme"}}]}},
  {"reply": {"tool_calls": [{"id": "r2", "name": "ReadMcpResource", "input": {"server": "fake", "uri": "test://missing"}}]}},
  {"reply": {"text": "Resources seen."}}
]}
JSON
start_mock "$T/tools.json"
json=$("$LOOM_BIN" -p "what resources are there" --cwd "$T/proj" --mcp-config "$cfg" --output-format json)
assert_eq "tools: the run completed" "$(jq -r .result <<<"$json")" "Resources seen."
declared=$(tool_names 1)
assert_contains "tools: ListMcpResources is declared" "$declared" "ListMcpResources"
assert_contains "tools: ReadMcpResource is declared" "$declared" "ReadMcpResource"
l1=$(tool_result l1)
assert_contains "tools: the list names the readme" "$l1" "test://readme"
assert_contains "tools: the list names the logo" "$l1" "test://logo"
assert_contains "tools: the list names the server" "$l1" "fake"
assert_eq "tools: the list is no error" "$(tool_is_error l1)" "false"
assert_contains "tools: the read has the text" "$(tool_result r1)" "Hello from readme."
assert_eq "tools: reading a missing resource is a tool error" "$(tool_is_error r2)" "true"
assert_contains "tools: the error names the server" "$(tool_result r2)" "fake"
finish
