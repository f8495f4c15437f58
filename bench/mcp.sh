#!/usr/bin/env bash
# bench/mcp.sh BUILD — the MCP client's figures (called by bench/run.sh):
# connect + tools/list and the harness's overhead per call against the
# reference server-everything (stdio, Streamable HTTP), and the first
# request's size with 200 MCP tools declared in full and deferred.
set -euo pipefail
build=$(cd "${1:-build}" && pwd)
root=$(cd "$(dirname "$0")/.." && pwd)
ev="$root/tests/mcp/node_modules/.bin/mcp-server-everything"
[ -x "$ev" ] || { echo "bench/mcp.sh: $ev missing (run scripts/deps.sh)" >&2; exit 1; }
t=$(mktemp -d /tmp/loom-bench-mcp.XXXXXX)
pids=()
trap 'kill "${pids[@]}" 2>/dev/null; rm -rf "$t"' EXIT
unset http_proxy https_proxy HTTP_PROXY HTTPS_PROXY
export no_proxy='*' LOOM_HOME="$t/home"

"$build/bench_mcp" stdio "${BENCH_MCP_CALLS:-500}" "$ev" 2>/dev/null
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
PORT=$port "$ev" streamableHttp >/dev/null 2>&1 &
pids+=($!)
for _ in $(seq 1 200); do (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break; sleep 0.05; done
"$build/bench_mcp" http "${BENCH_MCP_CALLS:-300}" "http://127.0.0.1:$port/mcp" 2>/dev/null

# The first request with 200 tools from a test server: declared in full
# (ENABLE_TOOL_SEARCH=false) and deferred behind ToolSearch (=true; by default
# they defer past 10 % of the window).
echo '{"turns": [{"reply": {"text": "ok"}}]}' > "$t/s.json"
"$build/mockllm" --scenario "$t/s.json" --port 0 --port-file "$t/port" --log "$t/mock.jsonl" \
  >/dev/null 2>&1 &
pids+=($!)
for _ in $(seq 1 100); do [ -s "$t/port" ] && break; sleep 0.02; done
export ANTHROPIC_BASE_URL="http://127.0.0.1:$(cat "$t/port")" ANTHROPIC_API_KEY=bench
cfg="{\"mcpServers\":{\"big\":{\"command\":\"python3\",\"args\":[\"$root/tests/mcp/fake_server.py\",\"--tools\",\"200\"]}}}"
size() {
  : > "$t/mock.jsonl"
  LOOM_MCP_STARTUP_WAIT_MS=20000 ENABLE_TOOL_SEARCH=$1 "$build/loom" -p hi --mcp-config "$cfg" >/dev/null
  head -n 1 "$t/mock.jsonl" | jq -c .body | wc -c
}
full=$(size false)
deferred=$(size true)
printf 'mcp: first request with 200 tools  %d bytes declared, %d bytes deferred (%.1f%%)\n' \
  "$full" "$deferred" "$(awk -v a="$deferred" -v b="$full" 'BEGIN{print 100*a/b}')"
