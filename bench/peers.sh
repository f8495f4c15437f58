#!/usr/bin/env bash
# bench/peers.sh [BUILD] — Loom, Codex CLI and Claude Code side by side on the
# same scripted tasks against mockllm (`make bench-peers`; docs/bench.md).
#
# 1. Installs the two peers from npm, at pinned versions, into a cache
#    ($LOOM_BENCH_CACHE, default ~/.cache/loom-bench/peers); skipped when the
#    cache already holds those versions.
# 2. Re-runs itself inside a network namespace with only loopback (unshare -n),
#    so no agent can reach anything but the mock, and starts mockllm there.
# 3. Runs each agent on three tasks: a 1-turn chat (the baseline), the 4-tool
#    fix-a-failing-test task (examples/demo, 5 model turns) and a 150-turn task
#    (149 reads of a file, then a final answer). Scenarios are per agent: Loom
#    and Claude Code call Read/Edit/Bash over Anthropic Messages, Codex calls
#    its exec_command tool over OpenAI Responses.
# 4. Measures the whole process tree of each run (bench_tree_rusage: CPU,
#    wall, peak RSS), the request bytes from mockllm's log, and checks the task
#    really completed (every scripted turn answered, the final answer printed,
#    the test fixed). A failed task is reported as failed, not timed.
#
# Harness CPU per turn = (CPU of the task − CPU of the 1-turn chat) / (turns − 1),
# medians over BENCH_PEERS_RUNS runs (default 3). Results: bench/results/peers.txt.
# Run as root (a plain network namespace) or with unprivileged user namespaces.
set -euo pipefail
codex_version=0.171.0
claude_version=2.1.332
build=${1:-build}
root=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "$build" && pwd)
cache=${LOOM_BENCH_CACHE:-$HOME/.cache/loom-bench/peers}
runs=${BENCH_PEERS_RUNS:-3}
# BENCH_PEERS_AGENTS / BENCH_PEERS_TASKS pick a subset (to debug one scenario;
# tests/e2e/bench_peers.sh runs Loom alone, which needs no npm).
agents=${BENCH_PEERS_AGENTS:-loom codex claude}
tasks=${BENCH_PEERS_TASKS:-chat fix long}
results=${BENCH_RESULTS:-$root/bench/results}
# The Loom binary under test ($BENCH_PEERS_LOOM: the e2e test swaps in an agent
# that fakes its answer, which must be reported as failed).
loom=${BENCH_PEERS_LOOM:-$build/loom}
wants() { case " $agents " in *" $1 "*) return 0 ;; esac; return 1; }

# --- outside the namespace: install the peers (the only step that needs the network)
if [ -z "${LOOM_PEERS_NETNS:-}" ]; then
  stamp="$cache/.installed-codex-$codex_version-claude-$claude_version"
  if { wants codex || wants claude; } && [ ! -e "$stamp" ]; then
    echo "peers: installing @openai/codex@$codex_version and @anthropic-ai/claude-code@$claude_version into $cache" >&2
    mkdir -p "$cache"
    npm install --no-save --no-audit --no-fund --loglevel=error --prefix "$cache" \
      "@openai/codex@$codex_version" "@anthropic-ai/claude-code@$claude_version" >&2
    touch "$stamp"
  fi
  for tool in unshare ip jq; do
    command -v "$tool" >/dev/null || { echo "peers: $tool is missing (make deps installs it)" >&2; exit 1; }
  done
  # Root gets a plain network namespace; anyone else maps themselves to root
  # in a user namespace first (-r), which needs unprivileged user namespaces.
  ns=(-n); [ "$(id -u)" -eq 0 ] || ns=(-r -n)
  exec unshare "${ns[@]}" env LOOM_PEERS_NETNS=1 LOOM_BENCH_CACHE="$cache" bash "$0" "$build"
fi

# --- inside the namespace --------------------------------------------------
ip link set lo up
# The native binaries, not the npm launchers: the node wrapper Codex ships
# would add a Node.js start-up to Codex's figures (Claude Code's bin is native).
codex=$(find "$cache/node_modules/@openai" -path '*/bin/codex' -type f -perm -u+x 2>/dev/null | head -n 1 || true)
claude="$cache/node_modules/@anthropic-ai/claude-code/bin/claude.exe"
if wants codex && [ ! -x "$codex" ]; then
  echo "peers: no Codex binary under $cache/node_modules/@openai (remove $cache to reinstall)" >&2; exit 1
fi
if wants claude && [ ! -x "$claude" ]; then
  echo "peers: no Claude Code binary at $claude (remove $cache to reinstall)" >&2; exit 1
fi

t=$(mktemp -d /tmp/loom-peers.XXXXXX)
mock=
trap '[ -n "$mock" ] && kill $mock 2>/dev/null; rm -rf "$t"' EXIT
unset http_proxy https_proxy HTTP_PROXY HTTPS_PROXY ALL_PROXY all_proxy
export no_proxy='*' NO_PROXY='*'
long_turns=150
final_long="FINAL: read notes.txt $((long_turns - 1)) times, it says hello."
final_fix="Fixed: add in calc.sh subtracted instead of adding; bash test.sh passes."
final_chat="Hello from the mock."

# --- scenarios --------------------------------------------------------------
# Turn 0 of every scenario answers side requests without tools (titles,
# summaries, quota probes) so they never take a scripted turn; turns 1… are
# the task, chosen by the number of assistant turns in the conversation.
side='{"match": {"no_tools": true}, "reply": {"text": "ok"}}'
# scenario KIND FLAVOUR PROJ: KIND chat|fix|long, FLAVOUR anthropic|codex.
scenario() {
  local kind=$1 flavour=$2 proj=$3
  case "$kind/$flavour" in
    chat/*) jq -n --arg f "$final_chat" '[{reply: {text: $f}}]' ;;
    fix/anthropic)
      # Claude Code wants absolute paths in Read/Edit; Loom takes them too.
      jq --arg p "$proj" --arg f "$final_fix" '.turns
          | map(if .reply.tool_calls then .reply.tool_calls |= map(
                  if .input.file_path then .input.file_path = ($p + "/" + .input.file_path) else . end)
                else .reply.text = $f end)' "$root/examples/cassettes/fix-test.json" ;;
    fix/codex)
      # The same steps through Codex's exec_command tool (the edit is a sed: this
      # Codex offers no apply_patch tool for a model it has no metadata for).
      jq -n --arg f "$final_fix" '[
        ["I will run the test.", "bash test.sh"],
        ["add 2 3 gives -1; reading calc.sh.", "cat calc.sh"],
        ["add subtracts. Fixing it.", "sed -i \"s/\\$1 - \\$2/\\$1 + \\$2/\" calc.sh"],
        ["The test again.", "bash test.sh"]]
        | to_entries | map({reply: {text: .value[0], tool_calls: [{id: "call_\(.key)",
            name: "exec_command", input: {cmd: .value[1], workdir: env.PROJ}}]}})
        + [{reply: {text: $f}}]' ;;
    long/anthropic)
      jq -n --arg p "$proj/notes.txt" --arg f "$final_long" --argjson n "$long_turns" '
        [range(0; $n - 1) | {reply: {text: "read \(.)", tool_calls: [{id: "toolu_r\(.)",
           name: "Read", input: {file_path: $p}}]}}] + [{reply: {text: $f}}]' ;;
    long/codex)
      jq -n --arg f "$final_long" --argjson n "$long_turns" '
        [range(0; $n - 1) | {reply: {text: "read \(.)", tool_calls: [{id: "call_r\(.)",
           name: "exec_command", input: {cmd: "cat notes.txt", workdir: env.PROJ}}]}}]
        + [{reply: {text: $f}}]' ;;
  esac | jq --argjson side "$side" '{turns: ([$side] + .)}'
}

# --- one run ----------------------------------------------------------------
# run_one AGENT KIND I: prints one JSON line with the measurements and status.
run_one() {
  local agent=$1 kind=$2 i=$3 d="$t/$1-$2-$3"
  mkdir -p "$d/home"
  local proj="$d/proj"
  case $kind in
    fix) cp -r "$root/examples/demo" "$proj" ;;
    *) mkdir -p "$proj"; printf 'hello\n' > "$proj/notes.txt" ;;
  esac
  local flavour=anthropic prompt
  [ "$agent" = codex ] && flavour=codex
  case $kind in
    chat) prompt="Say hello" ;; fix) prompt="Fix the test" ;; long) prompt="Read notes.txt until told to stop" ;;
  esac
  PROJ="$proj" scenario "$kind" "$flavour" "$proj" > "$d/scenario.json"
  "$build/mockllm" --scenario "$d/scenario.json" --port 0 --port-file "$d/port" \
    --log "$d/mock.jsonl" >/dev/null 2>"$d/mock.err" &
  mock=$!
  for _ in $(seq 1 200); do [ -s "$d/port" ] && break; sleep 0.02; done
  local url="http://127.0.0.1:$(cat "$d/port")"
  local cmd
  case $agent in
    loom)
      cmd=(env HOME="$d/home" LOOM_HOME="$d/home/.loom" ANTHROPIC_BASE_URL="$url" ANTHROPIC_API_KEY=bench
           "$loom" -p "$prompt" --cwd "$proj" --permission-mode acceptEdits
           --allowedTools "Bash(bash test.sh)") ;;
    claude)
      cmd=(env HOME="$d/home" CLAUDE_CONFIG_DIR="$d/home/.claude" ANTHROPIC_BASE_URL="$url"
           ANTHROPIC_API_KEY=bench DISABLE_TELEMETRY=1 DISABLE_AUTOUPDATER=1 DISABLE_ERROR_REPORTING=1
           CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1
           bash -c 'cd "$1" && shift && exec "$@"' _ "$proj"
           "$claude" -p "$prompt" --permission-mode acceptEdits --allowedTools "Bash(bash test.sh)" Read Edit) ;;
    codex)
      mkdir -p "$d/home/.codex"
      cat > "$d/home/.codex/config.toml" <<EOF
model = "gpt-5-codex"
model_provider = "mock"
[model_providers.mock]
name = "mockllm"
base_url = "$url/v1"
env_key = "OPENAI_API_KEY"
wire_api = "responses"
EOF
      cmd=(env HOME="$d/home" CODEX_HOME="$d/home/.codex" OPENAI_API_KEY=bench
           "$codex" exec --skip-git-repo-check --dangerously-bypass-approvals-and-sandbox
           --ephemeral -C "$proj" "$prompt") ;;
  esac
  local code=0
  "$build/bench_tree_rusage" "$d/rusage.json" -- "${cmd[@]}" </dev/null >"$d/out" 2>"$d/err" || code=$?
  kill $mock 2>/dev/null || true
  wait $mock 2>/dev/null || true
  mock=
  # Completion: every scripted turn answered once, the final answer printed,
  # and for the fix task the test passing.
  local want final ok=true why=""
  case $kind in chat) want=1 final=$final_chat ;; fix) want=5 final=$final_fix ;; long) want=$long_turns final=$final_long ;; esac
  local turns
  turns=$(jq -s '[.[] | select(.status == 200 and (.turn // 0) >= 1) | .turn] | unique | length' "$d/mock.jsonl")
  [ "$code" -eq 0 ] || { ok=false; why="exit $code"; }
  [ "$turns" -eq "$want" ] || { ok=false; why="${why:+$why, }$turns of $want turns"; }
  grep -qF "$final" "$d/out" || { ok=false; why="${why:+$why, }final answer not printed"; }
  if [ "$kind" = fix ] && ! bash "$proj/test.sh" >/dev/null 2>&1; then ok=false; why="${why:+$why, }test still fails"; fi
  if [ "$ok" = false ]; then
    mkdir -p "$results/peers-failed"
    rm -rf "$results/peers-failed/${d##*/}"
    cp -r "$d" "$results/peers-failed/" 2>/dev/null || true
  fi
  jq -c --arg agent "$agent" --arg kind "$kind" --argjson ok "$ok" --arg why "$why" --argjson turns "$turns" \
     --argjson bytes "$(jq -s '[.[] | .raw_body // "" | utf8bytelength] | add // 0' "$d/mock.jsonl")" \
     --argjson requests "$(wc -l < "$d/mock.jsonl")" \
     '. + {agent: $agent, kind: $kind, ok: $ok, why: $why, turns: $turns, request_bytes: $bytes, requests: $requests}' \
     "$d/rusage.json"
  [ -n "${BENCH_PEERS_KEEP:-}" ] && cp -r "$d" "$BENCH_PEERS_KEEP/"; rm -rf "$d"
}

for agent in $agents; do
  for kind in $tasks; do
    for i in $(seq 1 "$runs"); do
      echo "peers: $agent $kind run $i/$runs" >&2
      run_one "$agent" "$kind" "$i" >> "$t/results.jsonl"
    done
  done
done

# --- the table --------------------------------------------------------------
mkdir -p "$results"
cp "$t/results.jsonl" "$results/peers.jsonl"
jq -rs --argjson runs "$runs" --arg cv "$codex_version" --arg clv "$claude_version" \
  -f "$root/bench/peers_table.jq" "$t/results.jsonl" | tee "$results/peers.txt"
# A failed task fails the bench (after the table, so the other figures stay).
jq -se 'all(.ok)' "$t/results.jsonl" >/dev/null || {
  echo "peers: some tasks failed; their files are in $results/peers-failed/" >&2; exit 1; }
