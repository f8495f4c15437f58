#!/usr/bin/env bash
# bench/agents.sh BUILD — the sub-agents' figures (called by bench/run.sh):
# spawn → the child's first model call and memory per idle background agent
# (bench/bench_agents.c, a fake model, no MCP), then what one Agent call
# adds to a whole `loom -p` run against mockllm (median wall time of a run
# whose model delegates to a general-purpose child, against the same run
# answering itself). Figures only; nothing is asserted.
set -euo pipefail
build=$(cd "${1:-build}" && pwd)
t=$(mktemp -d /tmp/loom-bench-agents.XXXXXX)
pids=()
trap 'kill "${pids[@]}" 2>/dev/null; rm -rf "$t"' EXIT
unset http_proxy https_proxy HTTP_PROXY HTTPS_PROXY
export no_proxy='*' LOOM_HOME="$t/home"

"$build/bench_agents" "${BENCH_AGENT_SPAWNS:-1000}" "${BENCH_AGENT_IDLE:-100}"

cat > "$t/s.json" <<'JSON'
{"turns": [
  {"match": {"system_contains": "You are Loom's general-purpose agent"}, "reply": {"text": "child done"}},
  {"match": {"last_user_contains": "plain"}, "reply": {"text": "done"}},
  {"reply": {"tool_calls": [{"id": "a1", "name": "Agent", "input": {"description": "d",
     "prompt": "Say done.", "subagent_type": "general-purpose"}}]}},
  {"reply": {"text": "done"}}
]}
JSON
"$build/mockllm" --scenario "$t/s.json" --port 0 --port-file "$t/port" --log /dev/null \
  >/dev/null 2>&1 &
pids+=($!)
for _ in $(seq 1 100); do [ -s "$t/port" ] && break; sleep 0.02; done
export ANTHROPIC_BASE_URL="http://127.0.0.1:$(cat "$t/port")" ANTHROPIC_API_KEY=bench
mkdir -p "$t/proj"
wall() { # wall ms of one run of "$@"
  local a b
  a=$(date +%s%N)
  "$build/loom" -p "$@" --cwd "$t/proj" --agents on >/dev/null 2>&1 || true
  b=$(date +%s%N)
  echo $(((b - a) / 1000))
}
median() { sort -n | awk '{v[NR]=$1} END{print v[int((NR+1)/2)]}'; }
runs=${BENCH_AGENT_RUNS:-10}
for _ in $(seq 1 "$runs"); do wall "plain answer"; done > "$t/plain"
for _ in $(seq 1 "$runs"); do wall "delegate"; done > "$t/agent"
printf 'agents  loom -p: plain run %.2f ms, with one Agent call %.2f ms (median of %d)\n' \
  "$(median < "$t/plain" | awk '{print $1/1000}')" "$(median < "$t/agent" | awk '{print $1/1000}')" "$runs"
