#!/usr/bin/env bash
# loom serve's OpenAPI document is the contract its answers keep: loom-serve
# with an empty config on port 0 (--port-file) serves /openapi.json without
# a token, the document is valid OpenAPI 3.1, and /healthz, a 401, a 404
# and a 405 are answers the document allows (tests/validate/openapi_check.mjs).
# Also the program's own edges: the listening line, --help/--version, a bad
# flag exits 2, a non-loopback address without a token file exits 2 before
# listening, a PostgreSQL store that cannot be reached exits 1 naming it
# without its password, SIGTERM stops it with status 0.
source "$(dirname "$0")/_lib.sh"
source "$(dirname "$0")/_store_lib.sh"

LOOM_SERVE_BIN=${LOOM_SERVE_BIN:-$(dirname "$LOOM_BIN")/loom-serve}
CHECK="$LOOM_SRC/tests/validate/openapi_check.mjs"
SERVE_PID=
stop_serve() {
  if [ -n "$SERVE_PID" ]; then
    kill "$SERVE_PID" 2>/dev/null || true
    wait "$SERVE_PID" 2>/dev/null || true
    SERVE_PID=
  fi
}
trap 'stop_serve; test_store_stop; cleanup' EXIT

mkdir -p "$T/config"
test_store_use "$T/store/loom.db"
"$LOOM_SERVE_BIN" --listen 127.0.0.1:0 --store "$TEST_STORE_SPEC" --config "$T/config" \
  --workspace "$T/work" --port-file "$T/serve.port" --keepalive-ms 200 \
  > "$T/serve.out" 2> "$T/serve.err" &
SERVE_PID=$!
for _ in $(seq 1 250); do
  [ -s "$T/serve.port" ] && break
  kill -0 "$SERVE_PID" 2>/dev/null || break
  sleep 0.02
done
[ -s "$T/serve.port" ] || { cat "$T/serve.err" >&2; echo "loom-serve did not start" >&2; exit 1; }
PORT=$(cat "$T/serve.port")
BASE="http://127.0.0.1:$PORT"
check "the port file holds a port" test "$PORT" -gt 0
for _ in $(seq 1 50); do [ -s "$T/serve.out" ] && break; sleep 0.02; done
assert_eq "the listening line" "$(head -n 1 "$T/serve.out")" "loom serve: listening on $BASE"

# fetch NAME METHOD PATH [CURL ARGS…] — the answer into $T/NAME.{body,headers};
# sets STATUS and CTYPE.
fetch() {
  local name=$1 method=$2 path=$3
  shift 3
  STATUS=$(curl -sS --noproxy '*' -X "$method" -o "$T/$name.body" -D "$T/$name.headers" \
    -w '%{http_code}' "$@" "$BASE$path")
  CTYPE=$(grep -i '^content-type:' "$T/$name.headers" | head -n 1 | cut -d' ' -f2- | tr -d '\r')
}

# valid NAME METHOD PATH — the last answer is one the document allows.
valid() {
  node "$CHECK" response "$T/openapi.body" "$2" "$3" "$STATUS" "$T/$1.body" "$CTYPE" 2> "$T/check.err"
  local rc=$?
  [ $rc -eq 0 ] || cat "$T/check.err" >&2
  return $rc
}

fetch openapi GET /openapi.json
assert_eq "GET /openapi.json needs no token" "$STATUS" "200"
assert_eq "its content type" "$CTYPE" "application/json; charset=utf-8"
check "the served document is valid OpenAPI 3.1" node "$CHECK" doc "$T/openapi.body"
check "it is the document in the repository" \
  cmp -s "$T/openapi.body" "$LOOM_SRC/src/surfaces/server/http/openapi.json"

fetch health GET /healthz
assert_eq "GET /healthz" "$STATUS" "200"
check "/healthz matches the document" valid health GET /healthz
assert_contains "/healthz says ok" "$(cat "$T/health.body")" '"status":"ok"'
check "X-Request-Id" grep -qi '^x-request-id: req_[0-9]' "$T/health.headers"
check "Cache-Control: no-store" grep -qi '^cache-control: no-store' "$T/health.headers"

fetch noauth GET /runs/run_x
assert_eq "no token: 401" "$STATUS" "401"
check "the 401 envelope matches the document" valid noauth GET /runs/run_x
assert_contains "the 401 code" "$(cat "$T/noauth.body")" '"code":"unauthenticated"'

fetch badauth POST /sessions -H 'Authorization: Bearer not-a-token' -d '{}'
assert_eq "an unknown token: 401" "$STATUS" "401"
check "that 401 matches the document" valid badauth POST /sessions

fetch nope GET /nope
assert_eq "no route: 404" "$STATUS" "404"
check "the 404 envelope is an Error" \
  node -e 'const e=JSON.parse(require("fs").readFileSync(process.argv[1])).error;
           process.exit(e && e.code==="resource_not_found" && e.details && "run_id" in e ? 0 : 1)' \
  "$T/nope.body"

fetch wrong DELETE /runs
assert_eq "a wrong method: 405" "$STATUS" "405"
check "the 405 matches the document" valid wrong DELETE /runs
check "the 405 has Allow" grep -qi '^allow: POST, GET' "$T/wrong.headers"

# The program's edges.
assert_contains "--version" "$("$LOOM_SERVE_BIN" --version)" "loom-serve "
assert_contains "--help" "$("$LOOM_SERVE_BIN" --help)" "--listen HOST:PORT"
set +e
"$LOOM_SERVE_BIN" --frobnicate 2> "$T/flag.err"; status=$?
"$LOOM_SERVE_BIN" --listen nowhere 2> "$T/listen.err"; lstatus=$?
# 192.0.2.1 is TEST-NET-1: not an address of this machine, so even a broken
# guard could not listen there; the guard must refuse before trying.
"$LOOM_SERVE_BIN" --listen 192.0.2.1:0 --config "$T/config" --store "sqlite:$T/never.db" \
  2> "$T/remote.err"; rstatus=$?
# A PostgreSQL store whose server is not there (a socket folder with no
# server in it): exit 1, the URL named without its password.
"$LOOM_SERVE_BIN" --listen 127.0.0.1:0 --config "$T/config" \
  --store "postgresql://loom:pw-s3cret@/loom?host=$T/no-server" 2> "$T/pg.err"; pstatus=$?
set -e
assert_eq "a bad flag exits 2" "$status" "2"
assert_contains "a bad flag prints the usage" "$(cat "$T/flag.err")" "usage: loom-serve"
assert_eq "a bad --listen exits 2" "$lstatus" "2"
assert_eq "non-loopback without tokens exits 2" "$rstatus" "2"
assert_contains "it says a token file is required" "$(cat "$T/remote.err")" "token"
check "and it opened no store" test ! -e "$T/never.db"
assert_eq "a PostgreSQL store that cannot be reached exits 1" "$pstatus" "1"
assert_contains "it names the store without the password" "$(cat "$T/pg.err")" \
  "store postgresql://loom@/loom?host=$T/no-server: open: cannot connect"
check "the password is not in the message" bash -c "! grep -q s3cret '$T/pg.err'"

kill -TERM "$SERVE_PID"
set +e
for _ in $(seq 1 250); do kill -0 "$SERVE_PID" 2>/dev/null || break; sleep 0.02; done
wait "$SERVE_PID"; status=$?
set -e
SERVE_PID=
assert_eq "SIGTERM stops it with status 0" "$status" "0"

finish
