#!/usr/bin/env bash
# bench/turns.sh BUILD — how the harness's own CPU per turn grows with the
# history (issue 22, docs/context.md "The request kept"): one `loom -p` run
# of BENCH_TURNS (400) turns against mockllm, each turn one small Read, then
# a final answer. The loop logs each turn's user and system CPU (module
# "turn"); this prints turns 10, 100, 200 and the last, each the median of
# the 9 turns around it, and last/10 (CPU of the loom process, user and
# system: the request's bytes going to the socket are in it).
# BENCH_WRAP prefixes the loom command (perf record …). Figures only.
set -euo pipefail
build=$(cd "${1:-build}" && pwd)
turns=${BENCH_TURNS:-400}
t=$(mktemp -d /tmp/loom-bench-turns.XXXXXX)
pids=()
trap 'kill "${pids[@]}" 2>/dev/null; [ -n "${BENCH_KEEP:-}" ] || rm -rf "$t"' EXIT
unset http_proxy https_proxy HTTP_PROXY HTTPS_PROXY
export no_proxy='*' LOOM_HOME="$t/home"
mkdir -p "$t/proj" "$LOOM_HOME"
seq 1 $((turns + 10)) | sed 's/^/line /' > "$t/proj/small.txt"
# Each turn reads 3 lines further on (the same call again and again would
# have the loop detector add a reminder), then the answer.
jq -n --argjson n "$turns" --arg f "$t/proj/small.txt" '{turns: ([range(0; $n - 1) |
    {reply: {text: "Reading on.", tool_calls: [{name: "Read",
      input: {file_path: $f, offset: (. + 1), limit: 3}}]}}] + [{reply: {text: "done"}}])}' \
  > "$t/s.json"
"$build/mockllm" --scenario "$t/s.json" --port 0 --port-file "$t/port" --log /dev/null \
  >/dev/null 2>&1 &
pids+=($!)
for _ in $(seq 1 100); do [ -s "$t/port" ] && break; sleep 0.02; done
export ANTHROPIC_BASE_URL="http://127.0.0.1:$(cat "$t/port")" ANTHROPIC_API_KEY=bench
LOOM_LOG="$t/run.log" ${BENCH_WRAP:-} "$build/loom" -p "read small.txt again and again" --max-turns $((turns + 10)) \
  --permission-mode bypassPermissions --cwd "$t/proj" >/dev/null 2>"$t/err" || { cat "$t/err" >&2; exit 1; }
got=$(jq -s '[.[] | select(.module == "turn")] | length' "$t/run.log")
[ "$got" -ge "$turns" ] || { echo "bench: only $got of $turns turns ran" >&2; exit 1; }
# median of field f over the 9 turns around turn k (clamped to the run)
at() {
  jq -s --argjson k "$1" --argjson n "$turns" --arg f "$2" '
    [.[] | select(.module == "turn") | select(.turn >= ([$k - 4, 1] | max) and
       .turn <= ([$k + 4, $n] | min)) | .[$f]] | sort | .[length / 2 | floor] / 1000' "$t/run.log"
}
c10=$(at 10 cpu_us)
line="harness CPU per turn (ms), $turns-turn run of small Reads:"
for k in $(printf "10\n100\n200\n" | awk -v n="$turns" '$1 < n') "$turns"; do
  line="$line turn $k $(at "$k" cpu_us),"
done
ratio=$(awk -v a="$(at "$turns" cpu_us)" -v b="$c10" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }')
echo "$line turn $turns / turn 10 = ${ratio}x"
