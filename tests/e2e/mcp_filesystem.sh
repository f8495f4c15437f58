#!/usr/bin/env bash
# The reference server-filesystem with the project as its allowed
# directory: the model reads a file through mcp__fs__read_text_file and
# the file's content reaches the next request; a file outside the allowed
# directory is refused by the server, and the refusal reaches the model as
# a tool error. Roots: started with another directory, the server takes
# Loom's roots (the workspace and --add-dir directories) in its place.
source "$(dirname "$0")/_lib.sh"
source "$LOOM_SRC/tests/e2e/_mcp_lib.sh"
need_reference_servers

export LOOM_MCP_STARTUP_WAIT_MS=30000
mkdir -p "$T/proj/notes"
printf 'The secret word is marmalade.\nSecond line.\n' > "$T/proj/notes/word.txt"
echo "outside the allowed directory" > "$T/outside.txt"

jq -n --arg in "$T/proj/notes/word.txt" --arg out "$T/outside.txt" '{turns: [
  {reply: {tool_calls: [{id: "r1", name: "mcp__fs__read_text_file", input: {path: $in}}]}},
  {reply: {tool_calls: [{id: "r2", name: "mcp__fs__read_text_file", input: {path: $out}}]}},
  {reply: {text: "Read it."}}]}' > "$T/scenario.json"
start_mock "$T/scenario.json"
use_provider anthropic
cfg=$(mcp_config fs "$(stdio_entry "$MCP_FILESYSTEM" "$T/proj")")
json=$("$LOOM_BIN" -p "read the note" --cwd "$T/proj" --mcp-config "$cfg" --output-format json)
assert_eq "the run completed" "$(jq -r .result <<<"$json")" "Read it."
declared=$(tool_names 1)
assert_contains "the server's read_text_file is declared" "$declared" "mcp__fs__read_text_file"
assert_contains "the server's write_file is declared" "$declared" "mcp__fs__write_file"
assert_eq "the file's content reaches the next request" "$(tool_result r1)" \
  "The secret word is marmalade.
Second line."
assert_eq "reading inside the allowed directory is no error" "$(tool_is_error r1)" "false"
assert_eq "reading outside it is a tool error" "$(tool_is_error r2)" "true"
assert_contains "the server's refusal reaches the model" "$(tool_result r2)" "denied"
check "the outside file's content did not reach the model" \
  bash -c "! grep -q 'outside the allowed directory' '$MOCK_LOG'"
assert_eq "fs is connected" "$(jq -r '.mcp_servers[0].state' <<<"$json")" "connected"
log=$(find "$LOOM_HOME/projects" -name mcp-fs.log | head -n 1)
check "the server's stderr is kept in the session's mcp-fs.log" test -n "$log"
assert_contains "the log has what the server said" "$(cat "$log" 2>/dev/null)" "Secure MCP Filesystem Server running on stdio"

# Roots replace the directory the server was started with.
mkdir -p "$T/elsewhere" "$T/extra"
# The server asks for the roots once initialized, on its own time: the
# model's first call (Bash) waits until the server's stderr, kept in the
# session's mcp-fs.log, says it took them.
wait_cmd="for i in \$(seq 1 300); do grep -rqs 'Updated allowed directories from MCP roots' '$LOOM_HOME/projects' && break; sleep 0.1; done; echo roots taken"
jq -n --arg cmd "$wait_cmd" '{turns: [
  {reply: {tool_calls: [{id: "w1", name: "Bash", input: {command: $cmd}}]}},
  {reply: {tool_calls: [{id: "d1", name: "mcp__fs__list_allowed_directories", input: {}}]}},
  {reply: {text: "Listed."}}]}' > "$T/roots.json"
start_mock "$T/roots.json"
cfg=$(mcp_config fs "$(stdio_entry "$MCP_FILESYSTEM" "$T/elsewhere")")
json=$("$LOOM_BIN" -p "where may you go" --cwd "$T/proj" --add-dir "$T/extra" --mcp-config "$cfg" \
        --permission-mode bypassPermissions --output-format json 2> /dev/null)
assert_eq "roots: the run completed" "$(jq -r .result <<<"$json")" "Listed."
d1=$(tool_result d1)
assert_contains "roots: the workspace is an allowed directory" "$d1" "$T/proj"
assert_contains "roots: the added directory is one" "$d1" "$T/extra"
check_not "roots: the start-up directory was replaced" grep -q "$T/elsewhere" <<<"$d1"
finish
