#!/usr/bin/env bash
# run.sh — the load bench of loom serve (a bench, not a test): RUNS
# concurrent streaming runs against a slow model, p50/p99 latency from the
# model's emit to the SSE client's receipt, loom-serve's memory per
# streaming run, errors. See README.md.
#   bench/serve_load/run.sh [--runs 1000] [--mode stamp|mockllm]
#                           [--deltas 50] [--drip 100]
# Uses build/loom-serve and build/mockllm (LOOM_SERVE_BIN, MOCKLLM_BIN).
# Everything listens on 127.0.0.1 only; a temp folder holds the store.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
SRC=$(cd "$HERE/../.." && pwd)
SERVE_BIN=${LOOM_SERVE_BIN:-$SRC/build/loom-serve}
MOCKLLM_BIN=${MOCKLLM_BIN:-$SRC/build/mockllm}
RUNS=1000 MODE=stamp DELTAS=50 DRIP=100
while [ $# -gt 0 ]; do
  case "$1" in
    --runs) RUNS=$2; shift 2 ;;
    --mode) MODE=$2; shift 2 ;;
    --deltas) DELTAS=$2; shift 2 ;;
    --drip) DRIP=$2; shift 2 ;;
    *) echo "usage: $0 [--runs N] [--mode stamp|mockllm] [--deltas N] [--drip MS]" >&2; exit 2 ;;
  esac
done
ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)" || true
unset http_proxy https_proxy HTTP_PROXY HTTPS_PROXY all_proxy ALL_PROXY
export no_proxy='*' NO_PROXY='*'
T=$(mktemp -d /tmp/loom-serve-load.XXXXXX)
export LOOM_HOME="$T/home" HOME="$T/userhome"
mkdir -p "$LOOM_HOME" "$HOME" "$T/ws" "$T/conf"
PIDS=()
done_() { for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done; rm -rf "$T"; }
trap done_ EXIT
waitfile() { for _ in $(seq 1 1500); do [ -s "$1" ] && return 0; sleep 0.02; done; echo "$2 did not start" >&2; exit 1; }

if [ "$MODE" = stamp ]; then
  node "$HERE/stamp_model.mjs" "$T/model.port" "$DELTAS" "$DRIP" > "$T/model.out" 2>&1 &
  PIDS+=($!)
else
  # mockllm: DELTAS characters of text, one per delta, drip_ms apart.
  TEXT=$(head -c "$DELTAS" < /dev/zero | tr '\0' 'x')
  cat > "$T/scenario.json" <<J
{"turns": [{"match": {"no_tools": true}, "reply": {"text": "ok"}},
           {"match": {"body_contains": "LOAD-"}, "reply": {"text": "$TEXT"}, "chunk_size": 1, "drip_ms": $DRIP}]}
J
  "$MOCKLLM_BIN" --scenario "$T/scenario.json" --port 0 --port-file "$T/model.port" --log "$T/mock.jsonl" > "$T/model.out" 2>&1 &
  PIDS+=($!)
fi
waitfile "$T/model.port" "the model"
MODEL_URL="http://127.0.0.1:$(cat "$T/model.port")"
cat > "$T/conf/profiles.yaml" <<Y
profiles:
  bench:
    provider: anthropic
    base_url: $MODEL_URL
    api_key_env: BENCH_KEY
    tools:
      allow: [file_read]
    runtime:
      max_depth: 0
      max_turns: 2
Y
cat > "$T/conf/tenants.yaml" <<Y
tenants:
  bench:
    projects:
      main: {workspace: $T/ws}
    quotas:
      concurrent_runs: $((RUNS + 100))
tokens:
  - {token: bench-token, tenant: bench, role: admin}
Y
export BENCH_KEY=bench
"$SERVE_BIN" --listen 127.0.0.1:0 --port-file "$T/serve.port" --store "sqlite:$T/serve.db" \
  --config "$T/conf" --workspace "$T/ws" > "$T/serve.log" 2>&1 &
SERVE=$!
PIDS+=("$SERVE")
waitfile "$T/serve.port" "loom-serve"
sleep 0.5
node "$HERE/load.mjs" --url "http://127.0.0.1:$(cat "$T/serve.port")" --token bench-token --runs "$RUNS" \
  --mode "$MODE" --pid "$SERVE" --drip "$DRIP" --mock-log "$T/mock.jsonl" --json "${BENCH_OUT:-/tmp/loom-serve-load-$MODE.json}"
tail -n 5 "$T/serve.log" >&2 || true
