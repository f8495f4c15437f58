#!/usr/bin/env bash
# MCP over HTTP against the reference server-everything: in its
# streamableHttp mode configured as {"type": "http", "url": …/mcp}, and in
# its legacy sse mode as {"type": "sse", "url": …/sse}, the model's tool
# call round-trips (the answer reaches the next request) and the server is
# reported connected over that transport. The http entry's url gets its
# port from ${EVERYTHING_PORT} in the environment.
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
    # (the port through ${VAR} expansion in the url)
    streamableHttp) entry='{"type":"http","url":"http://127.0.0.1:${EVERYTHING_PORT}/mcp"}'; kind=http ;;
    sse) entry="{\"type\":\"sse\",\"url\":\"http://127.0.0.1:$port/sse\"}"; kind=sse ;;
  esac
  start_mock "$T/scenario.json"
  use_provider anthropic
  json=$(EVERYTHING_PORT=$port "$LOOM_BIN" -p "call over $mode" --cwd "$T/proj" --output-format json \
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

# The HTTP server restarts mid-session, its sessions gone. server-everything
# answers the old Mcp-Session-Id with 400 "No valid session ID provided"
# (the spec says 404): either way Loom initializes a new session and sends
# the call again, so the next call works, and the one after.
port=$(free_port)
PORT=$port start_bg everything-first "$MCP_EVERYTHING" streamableHttp
wait_port "$port" 30 || not_ok "restart: server-everything did not listen on $port"
go="$T/go"
wait_cmd="for i in \$(seq 1 600); do [ -e '$go' ] && break; sleep 0.1; done; echo restarted"
jq -n --arg cmd "$wait_cmd" '{turns: [
  {reply: {tool_calls: [{id: "k1", name: "mcp__everything__echo", input: {message: "first server"}}]}},
  {reply: {tool_calls: [{id: "k2", name: "Bash", input: {command: $cmd}}]}},
  {reply: {tool_calls: [{id: "k3", name: "mcp__everything__echo", input: {message: "second server"}}]}},
  {reply: {tool_calls: [{id: "k4", name: "mcp__everything__echo", input: {message: "second server again"}}]}},
  {reply: {text: "Survived the restart."}}]}' > "$T/restart.json"
start_mock "$T/restart.json"
entry="{\"type\":\"http\",\"url\":\"http://127.0.0.1:$port/mcp\"}"
"$LOOM_BIN" -p "restart" --cwd "$T/proj" --permission-mode bypassPermissions --output-format json \
  --mcp-config "$(mcp_config everything "$entry")" > "$T/restart.out" 2> "$T/restart.err" &
loom_pid=$!
# Once the model has echo's first answer (its second request), the server
# is replaced by a new one on the same port.
for _ in $(seq 1 300); do [ "$(nreq)" -ge 2 ] && break; sleep 0.1; done
mcp_bg_kill; MCP_BG_PIDS=()
PORT=$port start_bg everything-second "$MCP_EVERYTHING" streamableHttp
wait_port "$port" 30 || not_ok "restart: the second server did not listen on $port"
touch "$go"
wait "$loom_pid" || true
assert_eq "restart: the run completed" "$(jq -r .result "$T/restart.out" 2>/dev/null)" "Survived the restart."
assert_eq "restart: the first server answered" "$(tool_result k1)" "Echo: first server"
assert_eq "restart: the call after the restart is answered by the new server" "$(tool_result k3)" "Echo: second server"
assert_eq "restart: that call is no error" "$(tool_is_error k3)" "false"
assert_eq "restart: the call after that works too" "$(tool_result k4)" "Echo: second server again"
assert_eq "restart: it is no error" "$(tool_is_error k4)" "false"
finish
