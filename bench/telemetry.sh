#!/usr/bin/env bash
# bench/telemetry.sh BUILD — what tracing costs a run (docs/telemetry.md):
# the same scripted `loom -p` run against mockllm (a sub-agent, 20 Bash
# calls, 24 model replies) with telemetry off, exporting to a local OTLP
# receiver (tests/otel/receiver.mjs), and exporting to a port nobody
# listens on. Reports the median CPU time (user+sys) and the median max RSS
# of the loom process over BENCH_TELEMETRY_RUNS runs. Figures only; nothing
# is asserted.
set -euo pipefail
build=$(cd "${1:-build}" && pwd)
root=$(cd "$(dirname "$0")/.." && pwd)
runs=${BENCH_TELEMETRY_RUNS:-9}
t=$(mktemp -d /tmp/loom-bench-otel.XXXXXX)
pids=()
trap 'kill "${pids[@]}" 2>/dev/null; rm -rf "$t"' EXIT
unset http_proxy https_proxy HTTP_PROXY HTTPS_PROXY
export no_proxy='*' LOOM_HOME="$t/home"

calls=$(jq -n '[range(0; 20) | {match: {assistant_turns: ., tool_results: .},
  reply: {tool_calls: [{id: "b\(.)", name: "Bash", input: {command: "true"}}]}}]')
jq -n --argjson calls "$calls" '{turns: ([
  {match: {system_contains: "You are Loom'"'"'s general-purpose agent", assistant_turns: 0},
   reply: {tool_calls: [{id: "c1", name: "Bash", input: {command: "true"}}]}},
  {match: {system_contains: "You are Loom'"'"'s general-purpose agent"}, reply: {text: "child done"}},
  {match: {assistant_turns: 20}, reply: {tool_calls: [{id: "a1", name: "Agent", input: {description: "d",
     prompt: "Say done.", subagent_type: "general-purpose"}}]}},
  {match: {assistant_turns: 21}, reply: {text: "done"}}] + $calls)}' > "$t/s.json"
"$build/mockllm" --scenario "$t/s.json" --port 0 --port-file "$t/port" --log /dev/null \
  >/dev/null 2>&1 &
pids+=($!)
node "$root/tests/otel/receiver.mjs" "$t/otlp.port" "$t/otlp.jsonl" >/dev/null 2>&1 &
pids+=($!)
for _ in $(seq 1 200); do [ -s "$t/port" ] && [ -s "$t/otlp.port" ] && break; sleep 0.02; done
export ANTHROPIC_BASE_URL="http://127.0.0.1:$(cat "$t/port")" ANTHROPIC_API_KEY=bench
mkdir -p "$t/proj"

one() { # one run; prints "cpu_ms rss_kb"
  env "$@" /usr/bin/time -f "%U %S %M" -o "$t/time" "$build/loom" -p "go" --cwd "$t/proj" \
    --agents on --permission-mode bypassPermissions >/dev/null 2>&1 || true
  awk '{printf "%d %d\n", ($1 + $2) * 1000, $3}' "$t/time"
}
median() { sort -n | awk '{v[NR]=$1} END{print v[int((NR+1)/2)]}'; }
measure() { # label, env...
  local label=$1; shift
  : > "$t/m"
  for _ in $(seq 1 "$runs"); do one "$@" >> "$t/m"; done
  printf '%-28s cpu %5s ms   max RSS %6s KiB\n' "$label" \
    "$(cut -d' ' -f1 "$t/m" | median)" "$(cut -d' ' -f2 "$t/m" | median)"
}
on=(OTEL_TRACES_EXPORTER=otlp OTEL_METRICS_EXPORTER=otlp)
echo "telemetry: one run, 1 sub-agent, 21 Bash calls, 24 replies; median of $runs"
measure "off" OTEL_TRACES_EXPORTER=none
measure "on, receiver up" "${on[@]}" OTEL_EXPORTER_OTLP_ENDPOINT="http://127.0.0.1:$(cat "$t/otlp.port")"
measure "on, receiver down" "${on[@]}" OTEL_EXPORTER_OTLP_ENDPOINT="http://127.0.0.1:1"
echo "spans received: $(jq -s '[.[] | select(.signal=="traces")] | length' "$t/otlp.jsonl")"
