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

# --- the agent: fix-a-failing-test (5 model turns, 4 tool calls) -----------
# Harness CPU per turn = (CPU of the 5-turn run − CPU of a 1-turn chat) / 4,
# both from loom's own getrusage (tools run as children and are not counted;
# waiting for the model costs no CPU). Medians over the runs.
kill $mock 2>/dev/null || true
"$build/mockllm" --scenario "$root/examples/cassettes/fix-test.json" --port 0 \
  --port-file "$t/port2" --log "$t/mock2.jsonl" >/dev/null 2>&1 &
mock=$!
for _ in $(seq 1 100); do [ -s "$t/port2" ] && break; sleep 0.02; done
export ANTHROPIC_BASE_URL="http://127.0.0.1:$(cat "$t/port2")"
"$build/mockllm" --scenario "$root/tests/scenarios/chat_two_turns.json" --port 0 \
  --port-file "$t/port3" --log "$t/mock3.jsonl" >/dev/null 2>&1 &
mock3=$!
for _ in $(seq 1 100); do [ -s "$t/port3" ] && break; sleep 0.02; done
trap 'kill $mock $mock3 2>/dev/null; rm -rf "$t"' EXIT
agent_runs=${BENCH_AGENT_RUNS:-15}
for i in $(seq 1 "$agent_runs"); do
  rm -rf "$t/proj" && cp -r "$root/examples/demo" "$t/proj"
  start=$(date +%s%N)
  LOOM_LOG="$t/agent.log" "$build/loom" -p "Fix the test" --cwd "$t/proj" \
    --permission-mode acceptEdits --allowedTools "Bash(bash test.sh)" >/dev/null
  echo $(( ($(date +%s%N) - start) / 1000 )) >> "$t/agent_wall_us"
  bash "$t/proj/test.sh" >/dev/null || { echo "bench: the agent did not fix the test" >&2; exit 1; }
  ANTHROPIC_BASE_URL="http://127.0.0.1:$(cat "$t/port3")" LOOM_LOG="$t/chat.log" \
    "$build/loom" -p "Say hello" --cwd "$t/proj" >/dev/null
done
median() { sort -n | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
cpu() { jq -r 'select(.module=="process") | .cpu_user_ms + .cpu_sys_ms' "$1" | median; }
rss() { jq -r 'select(.module=="process") | .max_rss_kb' "$1" | median; }
agent_cpu=$(cpu "$t/agent.log"); chat_cpu=$(cpu "$t/chat.log")
{
  echo
  echo "agent: fix-a-failing-test against mockllm (5 turns, 4 tools), median of $agent_runs runs"
  printf '%-34s %10.2f ms\n' "total wall" "$(median < "$t/agent_wall_us" | awk '{print $1/1000}')"
  printf '%-34s %10.2f ms\n' "loom CPU, 5-turn agent run" "$agent_cpu"
  printf '%-34s %10.2f ms   (baseline)\n' "loom CPU, 1-turn chat" "$chat_cpu"
  printf '%-34s %10.3f ms\n' "harness CPU per turn" "$(awk -v a="$agent_cpu" -v c="$chat_cpu" 'BEGIN{print (a-c)/4}')"
  printf '%-34s %10d KiB  (chat: %d KiB)\n' "peak RSS, agent run" "$(rss "$t/agent.log")" "$(rss "$t/chat.log")"
} | tee -a "$root/bench/results/print.txt"

# --- MCP: connect + list, overhead per call, request size with deferral ----
bash "$root/bench/mcp.sh" "$build" | tee -a "$root/bench/results/print.txt"

# --- sub-agents: spawn cost, memory per idle agent, one Agent call in a run ---
bash "$root/bench/agents.sh" "$build" | tee -a "$root/bench/results/print.txt"

# --- external knowledge: the FTS5 index over 10,000 files ------------------
bash "$root/bench/knowledge.sh" "$build" | tee -a "$root/bench/results/print.txt"
# --- telemetry: CPU and max RSS of a run with tracing off / on / receiver down
bash "$root/bench/telemetry.sh" "$build" | tee -a "$root/bench/results/print.txt"
# --- extensions: agent creation with 0 / 30 / 300 skills, the per-turn catalog
"$build/bench_ext" "${BENCH_EXT_RUNS:-21}" 2000 | tee -a "$root/bench/results/print.txt"

# --- governance: pipeline cost per tool call, decision, sandbox setup -------
{
  echo
  "$build/bench_pipeline" 20000
  "$build/bench_secret_scan" 4
  "$build/bench_decision" 2>/dev/null | tail -n 3 || true
  (cd "$t" && "$build/bench_rules" 2000 | head -n 2)
  "$build/bench_sandbox" 2>/dev/null | tail -n 8 || true
} | tee -a "$root/bench/results/print.txt"

# --- context engineering: assembly per turn on a ~150k-token history, and
# what each ladder step saves on it (bench/bench_context.c) ---------------
{
  echo
  "$build/bench_context" 270 50
} | tee -a "$root/bench/results/print.txt"

# --- heartbeat: its thread's CPU while nothing changes, watching src/ -------
{
  echo
  (cd "$root" && "$build/bench_heartbeat" src 3)
} | tee -a "$root/bench/results/print.txt"

# --- long runs: peak RSS and CPU of a 10-turn vs a 100-turn agent run -------
# (each turn one Bash call; shows how memory and per-turn cost grow with the
# session, which is kept in memory and re-sent whole every turn)
for turns in 10 100; do
  jq -n --argjson n "$turns" '{turns: ([range(0; $n - 1) | {reply: {text: "step \(.)",
        tool_calls: [{id: "t\(.)", name: "Bash", input: {command: "echo turn \(.)"}}]}}]
        + [{reply: {text: "done"}}])}' > "$t/long$turns.json"
  "$build/mockllm" --scenario "$t/long$turns.json" --port 0 --port-file "$t/lport$turns" \
    --log /dev/null >/dev/null 2>&1 &
  lmock=$!
  for _ in $(seq 1 100); do [ -s "$t/lport$turns" ] && break; sleep 0.02; done
  mkdir -p "$t/lproj"
  ANTHROPIC_BASE_URL="http://127.0.0.1:$(cat "$t/lport$turns")" LOOM_LOG="$t/long$turns.log" \
    "$build/loom" -p "go" --permission-mode bypassPermissions --cwd "$t/lproj" >/dev/null
  kill $lmock 2>/dev/null || true
  jq -r --arg n "$turns" 'select(.module=="process") |
    "\($n)-turn run: loom CPU \(.cpu_user_ms + .cpu_sys_ms | floor) ms (\((.cpu_user_ms + .cpu_sys_ms) / ($n | tonumber) * 100 | floor / 100) ms/turn), peak RSS \(.max_rss_kb) KiB"' \
    "$t/long$turns.log"
done | tee -a "$root/bench/results/print.txt"

# --- the interactive loom: start to first prompt, line to first request -----
# (bench/startup.sh; give it a second build folder to compare two commits)
echo | tee -a "$root/bench/results/print.txt"
bash "$root/bench/startup.sh" "$build" | tee -a "$root/bench/results/print.txt"

# --- streaming tool execution: 3 Reads + slow text, on vs off ---------------
echo | tee -a "$root/bench/results/print.txt"
bash "$root/bench/streaming_tools.sh" "$build" | tee -a "$root/bench/results/print.txt"

# --- per-turn harness CPU as the history grows: a 400-turn run of Reads -----
echo | tee -a "$root/bench/results/print.txt"
bash "$root/bench/turns.sh" "$build" | tee -a "$root/bench/results/print.txt"

# --- resume of a 100,000-record session: CPU and peak RSS to the first request
echo | tee -a "$root/bench/results/print.txt"
bash "$root/bench/resume.sh" "$build" | tee -a "$root/bench/results/print.txt"
