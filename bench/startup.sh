#!/usr/bin/env bash
# bench/startup.sh [BUILD] [BASELINE_BUILD] — the interactive loom's two
# latencies a person feels (bench/bench_startup.c says how each is taken):
# start to first prompt, and a typed line to its request at the model
# (mockllm). Median of BENCH_RUNS runs (default 20) after one warm-up.
# With BASELINE_BUILD (a build folder of another commit, e.g. the main
# branch before a change: `git worktree add /tmp/base main` and
# `cmake -S /tmp/base -B /tmp/base/build && cmake --build /tmp/base/build
# --target loom`), its loom runs in turn with this one against the same mock
# and settings, and the ratio this/baseline is printed: 1.10 is 10% slower.
# BENCH_LOOM=PATH measures that loom instead of BUILD's (another branch's
# build, which may have no bench_startup). Only public tools: bash, and
# what BUILD holds (loom, mockllm, bench_startup). Results also go to
# bench/results/startup.txt.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-build}" && pwd)
baseline=
if [ -n "${2:-}" ]; then
  baseline=$(cd "$2" && pwd)/loom
  [ -x "$baseline" ] || { echo "bench/startup.sh: no loom in $2" >&2; exit 2; }
fi
runs=${BENCH_RUNS:-20}
for f in mockllm bench_startup; do
  [ -x "$build/$f" ] || { echo "bench/startup.sh: $build/$f is missing (make all)" >&2; exit 2; }
done
loom=$(realpath -- "${BENCH_LOOM:-$build/loom}")
[ -x "$loom" ] || { echo "bench/startup.sh: no loom at $loom" >&2; exit 2; }
t=$(mktemp -d /tmp/loom-startup.XXXXXX)
mock=
trap '[ -n "$mock" ] && kill $mock 2>/dev/null; rm -rf "$t"' EXIT
unset http_proxy https_proxy HTTP_PROXY HTTPS_PROXY all_proxy ALL_PROXY \
      OPENAI_API_KEY OPENAI_BASE_URL LOOM_PROVIDER LOOM_MODEL LOOM_BASE_URL LOOM_API_KEY
export no_proxy='*' NO_PROXY='*' LOOM_HOME="$t/home" HOME="$t/userhome"
export TERM=xterm-256color LANG=C.UTF-8
mkdir -p "$LOOM_HOME" "$HOME" "$t/proj"

# Every run is a new session, so every request is the scenario's first turn.
cat > "$t/scenario.json" <<'JSON'
{"turns": [{"reply": {"text": "Hello from the bench.", "usage": {"input_tokens": 20, "output_tokens": 5}}}]}
JSON
"$build/mockllm" --scenario "$t/scenario.json" --port 0 --port-file "$t/port" \
  --log "$t/mock.jsonl" >"$t/mock.out" 2>&1 &
mock=$!
for _ in $(seq 1 200); do [ -s "$t/port" ] && break; sleep 0.02; done
[ -s "$t/port" ] || { cat "$t/mock.out" >&2; echo "bench/startup.sh: mockllm did not start" >&2; exit 1; }
export ANTHROPIC_BASE_URL="http://127.0.0.1:$(cat "$t/port")" ANTHROPIC_API_KEY=bench

mkdir -p "$root/bench/results"
cd "$t/proj"
{
  echo "loom: $loom${baseline:+   baseline: $baseline}"
  "$build/bench_startup" "$t/mock.jsonl" "$runs" "$loom" ${baseline:+"$baseline"}
} | tee "$root/bench/results/startup.txt"
