#!/usr/bin/env bash
# MCP over HTTP against the reference server-everything: in its
# streamableHttp mode configured as {"type": "http", "url": …/mcp}, and in
# its legacy sse mode as {"type": "sse", "url": …/sse}, the model's tool
# call round-trips (the answer reaches the next request) and the server is
# reported connected over that transport.
source "$(dirname "$0")/_lib.sh"
source "$LOOM_SRC/tests/e2e/_mcp_lib.sh"
need_reference_servers

export LOOM_MCP_STARTUP_WAIT_MS=30000
mkdir -p "$T/proj"
cat > "$T/scenario.json" <<'JSON'
{"turns": [
  {"reply": {"tool_calls": [{"id": "h1", "name": "mcp__everything__echo", "input": {"message": "over the wire"}}]}},
  {"reply": {"tool_calls": [{"id": "h2", "name": "mcp__everything__get-sum", "input": {"a": 40, "b": 2}}]}},
  {"reply": {"text": "Round trip done."}}
]}
JSON

for mode in streamableHttp sse; do
  port=$(free_port)
  PORT=$port start_bg "everything-$mode" "$MCP_EVERYTHING" "$mode"
  if ! wait_port "$port" 30; then
    not_ok "$mode: server-everything did not listen on $port: $(cat "$T/everything-$mode.out")"
    continue
  fi
  case $mode in
    streamableHttp) entry="{\"type\":\"http\",\"url\":\"http://127.0.0.1:$port/mcp\"}"; kind=http ;;
    sse) entry="{\"type\":\"sse\",\"url\":\"http://127.0.0.1:$port/sse\"}"; kind=sse ;;
  esac
  start_mock "$T/scenario.json"
  use_provider anthropic
  json=$("$LOOM_BIN" -p "call over $mode" --cwd "$T/proj" --output-format json \
           --mcp-config "$(mcp_config everything "$entry")" 2> "$T/stderr-$mode") || true
  assert_eq "$mode: the run completed" "$(jq -r .result <<<"$json" 2>/dev/null)" "Round trip done."
  assert_contains "$mode: the first request declares the server's tools" "$(tool_names 1)" "mcp__everything__echo"
  assert_eq "$mode: echo's answer reaches the next request" "$(tool_result h1)" "Echo: over the wire"
  assert_eq "$mode: get-sum's answer reaches the next request" "$(tool_result h2)" "The sum of 40 and 2 is 42."
  srv=$(jq -c '.mcp_servers[0]' <<<"$json" 2>/dev/null)
  assert_eq "$mode: reported connected" "$(jq -r .state <<<"$srv")" "connected"
  assert_eq "$mode: reported over $kind" "$(jq -r .transport <<<"$srv")" "$kind"
  check "$mode: loom said nothing on stderr" test ! -s "$T/stderr-$mode"
  [ -s "$T/stderr-$mode" ] && head -c 2000 "$T/stderr-$mode" >&2
  mcp_bg_kill; MCP_BG_PIDS=()
done
finish
