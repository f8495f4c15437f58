#!/usr/bin/env bash
# make bench: `loom -p` on a short chat against mockllm, with curl sending
# the same request as the baseline. Results also go to bench/results/.
set -euo pipefail
build=${1:-build}
root=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "$build" && pwd)
runs=${BENCH_RUNS:-30}
t=$(mktemp -d /tmp/loom-bench.XXXXXX)
trap 'kill $mock 2>/dev/null; rm -rf "$t"' EXIT
unset http_proxy https_proxy HTTP_PROXY HTTPS_PROXY
export no_proxy='*' LOOM_HOME="$t/home"

"$build/mockllm" --scenario "$root/tests/scenarios/chat_two_turns.json" --port 0 \
  --port-file "$t/port" --log "$t/mock.jsonl" >/dev/null 2>&1 &
mock=$!
for _ in $(seq 1 100); do [ -s "$t/port" ] && break; sleep 0.02; done
export ANTHROPIC_BASE_URL="http://127.0.0.1:$(cat "$t/port")" ANTHROPIC_API_KEY=bench

# One warm-up run; its request body is what curl will send.
"$build/loom" -p "Say hello" >/dev/null
head -n 1 "$t/mock.jsonl" | jq -c .body > "$t/body.json"

mkdir -p "$root/bench/results"
"$build/bench_print" "$build/loom" "$t/body.json" "$ANTHROPIC_BASE_URL" "$t/mock.jsonl" "$runs" \
  | tee "$root/bench/results/print.txt"
echo "binary size: $(stat -c %s "$build/loom") bytes ($(basename "$build")/loom)"
