#!/usr/bin/env bash
# bench/streaming_tools.sh BUILD — streaming tool execution (docs/tools.md):
# the wall time of a `loom -p` run against mockllm whose first reply has
# three Reads of large files (23 MB each, BENCH_STREAMING_LINES lines) and
# then a text that streams on slowly, with
# the feature on and with LOOM_STREAMING_TOOLS=0 (median of N runs each).
# On, the Reads run while the text streams; off, after it. Figures only.
set -euo pipefail
build=$(cd "${1:-build}" && pwd)
runs=${BENCH_STREAMING_RUNS:-5}
t=$(mktemp -d /tmp/loom-bench-stream.XXXXXX)
pids=()
trap 'kill "${pids[@]}" 2>/dev/null; rm -rf "$t"' EXIT
unset http_proxy https_proxy HTTP_PROXY HTTPS_PROXY
export no_proxy='*' LOOM_HOME="$t/home"
mkdir -p "$t/proj" "$LOOM_HOME"
for f in a b c; do
  awk -v f="$f" -v n="${BENCH_STREAMING_LINES:-200000}" 'BEGIN { for (i = 0; i < n; i++) { printf "%s line %d ", f, i; for (j = 0; j < 10; j++) printf "xxxxxxxxxx"; print "" } }' > "$t/proj/$f.txt"
done
tail_text=$(printf 'the model goes on talking after its calls. %.0s' $(seq 1 8))
cat > "$t/s.json" <<JSON
{"turns": [
  {"reply": {"text": "Reading.", "tool_calls": [
    {"id": "r1", "name": "Read", "input": {"file_path": "$t/proj/a.txt"}},
    {"id": "r2", "name": "Read", "input": {"file_path": "$t/proj/b.txt"}},
    {"id": "r3", "name": "Read", "input": {"file_path": "$t/proj/c.txt"}}],
    "text_after": "$tail_text"},
   "chunk_size": 8, "drip_ms": ${BENCH_STREAMING_DRIP_MS:-5}},
  {"reply": {"text": "Done."}}
]}
JSON
"$build/mockllm" --scenario "$t/s.json" --port 0 --port-file "$t/port" --log /dev/null \
  >/dev/null 2>&1 &
pids+=($!)
for _ in $(seq 1 100); do [ -s "$t/port" ] && break; sleep 0.02; done
export ANTHROPIC_BASE_URL="http://127.0.0.1:$(cat "$t/port")" ANTHROPIC_API_KEY=bench
wall() { # wall ms of one run, with the env given
  local a b
  a=$(date +%s%N)
  env "$@" "$build/loom" -p "read" --permission-mode bypassPermissions --cwd "$t/proj" \
    >/dev/null 2>&1 || true
  b=$(date +%s%N)
  echo $(((b - a) / 1000000))
}
median() { sort -n | awk '{v[NR]=$1} END{print v[int((NR+1)/2)]}'; }
on=$(for _ in $(seq 1 "$runs"); do wall LOOM_STREAMING_TOOLS=1; done | median)
off=$(for _ in $(seq 1 "$runs"); do wall LOOM_STREAMING_TOOLS=0; done | median)
echo "streaming tools: 3 Reads + slow text, median of $runs runs: on ${on} ms, off ${off} ms (saved $((off - on)) ms)"
