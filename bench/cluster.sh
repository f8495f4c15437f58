#!/usr/bin/env bash
# bench/cluster.sh [BUILD] [RUNS] — `loom serve` workers sharing PostgreSQL
# (issue 20; docs/deploy.md#bench): the same batch of RUNS runs (default
# 200; each one tiny Bash call, `true`, against mockllm's pg_cluster
# scenario) on 1, 2 and 3 `--cluster` workers of one PostgreSQL (its own,
# tests/pg/start.sh, stopped at the end), and on one server on SQLite,
# every node with 8 slots, the tenant's concurrent_runs 64. Prints a table:
# runs per second (first run made to last run ended), the queue wait
# (created → started) p50/p95 from the runs' documents, and on PostgreSQL
# the mean claim latency (queued → claimed) from the workers' /metrics.
# Figures only; nothing is asserted. Reuses the e2e harness (mockllm, the
# config folder) from tests/e2e/_lib.sh and _serve_lib.sh.
set -euo pipefail
build=$(cd "${1:-build}" && pwd)
RUNS=${2:-200}
export LOOM_BIN=$build/loom LOOM_SERVE_BIN=$build/loom-serve MOCKLLM_BIN=$build/mockllm
export LOOM_SRC=$(cd "$(dirname "$0")/.." && pwd)
source "$LOOM_SRC/tests/e2e/_lib.sh"
source "$LOOM_SRC/tests/e2e/_serve_lib.sh"

NODE_PIDS=()
stop_nodes() {
  for p in "${NODE_PIDS[@]}"; do [ -n "$p" ] && kill -TERM "$p" 2>/dev/null; done
  for p in "${NODE_PIDS[@]}"; do [ -n "$p" ] && { wait "$p" 2>/dev/null || true; }; done
  NODE_PIDS=()
}
trap 'stop_nodes; serve_cleanup' EXIT

start_mock "$(serve_scenario pg_cluster)"
use_provider anthropic
SERVE_QUOTA_RUNS=64 serve_config
export SERVE_MOCK_KEY=test-key
LOOM_TEST_STORE=postgres test_store_use "$SERVE_STORE"
PG_URL=$TEST_STORE_SPEC

# start_node I STORE [ARGS…] — prints the node's URL.
start_node() {
  local i=$1 st=$2; shift 2
  rm -f "$T/node$i.port"
  "$SERVE_BIN" --listen 127.0.0.1:0 --port-file "$T/node$i.port" --store "$st" \
    --config "$SERVE_CONF" --workspace "$SERVE_WORKSPACE" --slots 8 "$@" >> "$T/node$i.log" 2>&1 &
  NODE_PIDS+=($!)
  for _ in $(seq 1 500); do [ -s "$T/node$i.port" ] && break; sleep 0.02; done
  [ -s "$T/node$i.port" ] || { echo "node $i did not start:" >&2; tail -n 20 "$T/node$i.log" >&2; exit 1; }
}
url() { echo "http://127.0.0.1:$(cat "$T/node$1.port")"; }

# The mean claim latency over the workers' /metrics (sum / count), ms.
claim_ms() {
  local s=0 c=0 m
  for u in "$@"; do
    m=$(curl -fsS -H "Authorization: Bearer $TOKEN_A" "$u/metrics")
    s=$(awk -v s="$s" '/^loom_claim_latency_seconds_sum/ {s += $2} END {print s}' <<< "$m")
    c=$(awk -v c="$c" '/^loom_claim_latency_seconds_count/ {c += $2} END {print c}' <<< "$m")
  done
  awk -v s="$s" -v c="$c" 'BEGIN { if (c > 0) printf "%.1f", 1000 * s / c; else print "-" }'
}

row() { # LABEL JSON CLAIM
  node -e '
    const [label, j, claim] = process.argv.slice(1); const r = JSON.parse(j);
    console.log(`| ${label} | ${r.completed}/${r.runs} | ${r.seconds.toFixed(1)} | ${r.runs_per_s.toFixed(1)} | ${r.wait_p50_ms} | ${r.wait_p95_ms} | ${claim} |`);
  ' "$@"
}

echo "| store, workers | completed | seconds | runs/s | queue wait p50 ms | p95 ms | claim latency mean ms |"
echo "|---|---|---|---|---|---|---|"
for W in 1 2 3; do
  psql "$PG_URL" -qc "DROP SCHEMA public CASCADE; CREATE SCHEMA public" >/dev/null 2>&1
  urls=()
  for i in $(seq 1 "$W"); do
    start_node "$i" "$PG_URL" --cluster --worker-id "bench$i"
    urls+=("$(url "$i")")
  done
  out=$(node "$LOOM_SRC/bench/cluster_load.mjs" "$RUNS" "${urls[@]}")
  row "PostgreSQL, $W" "$out" "$(claim_ms "${urls[@]}")"
  stop_nodes
done
rm -f "$T/bench.db"
start_node 9 "sqlite:$T/bench.db"
out=$(node "$LOOM_SRC/bench/cluster_load.mjs" "$RUNS" "$(url 9)")
row "SQLite, 1 (no --cluster)" "$out" "-"
stop_nodes
