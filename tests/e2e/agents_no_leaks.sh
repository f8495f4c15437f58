#!/usr/bin/env bash
# Done when 3 (seed 000 M3, no leaks; rows 4.8–4.9 cleanup with an owner):
# one -p run makes 50 spawn/finish cycles — 20 foreground (every other one
# in a worktree), 20 background read with TaskOutput, 10 background stopped
# with TaskStop mid-command — and every child has its own connection to the
# fake MCP server (it calls one of its tools) and a background shell
# (`Bash run_in_background`). A Bash probe on the first and the last turn
# counts, for the loom process (the probe's parent, $PPID): open fds,
# threads, child processes, and the repository's worktrees. The counts must
# be equal; after the run no fake server and no child shell is left.
source "$(dirname "$0")/_lib.sh"
source "$LOOM_SRC/tests/e2e/_mcp_lib.sh"
# The children connect to the MCP server too; on a loaded machine the
# default 2 s wait can pass before it answers initialize.
export LOOM_MCP_STARTUP_WAIT_MS=30000
need_fake_server

mkdir -p "$T/proj" "$LOOM_HOME"
git -C "$T/proj" init -q -b main
git -C "$T/proj" config user.email p@example.invalid && git -C "$T/proj" config user.name p
echo seed > "$T/proj/seed.txt" && printf '.loom/\n' > "$T/proj/.gitignore"
git -C "$T/proj" add -A && git -C "$T/proj" commit -q -m base
echo '{"agents": {"enabled": true}, "permissions": {"allow": ["mcp__fake__echo"]}}' > "$LOOM_HOME/settings.json"
TAG="leakcheck-$$"
BG_SLEEP="sleep 31.$$"     # each child's background shell
STOP_SLEEP="sleep 32.$$"   # what the stopped children are in the middle of
PROBE='echo "PROBE fds=$(ls /proc/$PPID/fd | wc -l) threads=$(ls /proc/$PPID/task | wc -l) children=$(pgrep -P $PPID | grep -vx $$ | wc -l) worktrees=$(git worktree list | wc -l) parent=$(cat /proc/$PPID/comm)"'
G="You are Loom's general-purpose agent"
jq -n --arg g "$G" --arg probe "$PROBE" --arg bgs "$BG_SLEEP" --arg stop "$STOP_SLEEP" '
def child_start: [{name: "Bash", input: {command: $bgs, run_in_background: true}},
                  {name: "mcp__fake__echo", input: {text: "child-mcp"}}];
def agent(p; extra): {name: "Agent", input: ({description: "cycle", prompt: p} + extra)};
def last_id: "$last:agentId: (agent_[0-9]+)";
{sequence: true, turns: (
  [ {match: {system_contains: $g, body_contains: "CYCLE-STOP", assistant_turns: 0},
     reply: {tool_calls: child_start}},
    {match: {system_contains: $g, body_contains: "CYCLE-STOP", assistant_turns: 1},
     reply: {tool_calls: [{name: "Bash", input: {command: $stop}}]}},
    {match: {system_contains: $g, assistant_turns: 0}, reply: {tool_calls: child_start}},
    {match: {system_contains: $g}, reply: {text: "CYCLE-DONE"}},
    {reply: {tool_calls: [{id: "probe1", name: "Bash", input: {command: $probe}}]}} ]
  + [range(0; 20) | . as $i | {reply: {tool_calls: [agent("CYCLE-FG \($i)";
        if $i % 2 == 0 then {isolation: "worktree"} else {} end)]}}]
  + [range(0; 20) | . as $i |
       {reply: {tool_calls: [agent("CYCLE-BG \($i)"; {run_in_background: true})]}},
       {reply: {tool_calls: [{name: "TaskOutput", input: {task_id: last_id, block: true}}]}}]
  + [range(0; 10) | . as $i |
       {reply: {tool_calls: [agent("CYCLE-STOP \($i)"; {run_in_background: true}),
                             {name: "Bash", input: {command: "sleep 0.5"}}]}},
       {reply: {tool_calls: [{name: "TaskStop", input: {task_id: last_id}}]}}]
  + [ {reply: {tool_calls: [{name: "Bash", input: {command: "sleep 1"}}]}},
      {reply: {tool_calls: [{id: "probe2", name: "Bash", input: {command: $probe}}]}},
      {repeat: 20, reply: {text: "LEAKS-DONE"}} ])}' > "$T/scenario.json"
start_mock "$T/scenario.json"
use_provider anthropic
cfg=$(mcp_config fake "$(fake_entry --instructions "$TAG" --log "$T/mcp.log")")
"$LOOM_BIN" -p "LEAK-GOAL" --permission-mode bypassPermissions --cwd "$T/proj" --mcp-config "$cfg" \
  --output-format events > "$T/events" 2> "$T/err" || true
last=$(tail -n 1 "$T/events")
assert_eq "the run completed" "$(jq -r .payload.state <<<"$last")" "completed"
assert_eq "the run's answer" "$(jq -r .payload.result <<<"$last")" "LEAKS-DONE"

probe() { # CALL_ID — the probe's output line
  jq -r --arg id "$1" '.body.messages[]?.content | arrays | .[] | select(.type=="tool_result" and .tool_use_id==$id)
                       | .content | if type=="array" then map(.text // "") | join("") else . end' "$MOCK_LOG" \
    | grep -o 'PROBE .*' | head -n 1 || true
}
p1=$(probe probe1); p2=$(probe probe2)
echo "# before: $p1"
echo "# after:  $p2"
check "the probe ran in a shell whose parent is loom ($p1)" grep -q 'parent=loom' <<<"$p1"
field() { sed -n "s/.*$1=\([0-9]*\).*/\1/p" <<<"$2"; }
for f in fds threads children worktrees; do
  a=$(field "$f" "$p1"); b=$(field "$f" "$p2")
  check "$f counted before and after ($a, $b)" test -n "$a" -a -n "$b"
  assert_eq "no $f left behind by 50 cycles" "$b" "$a"
done

# The cycles happened as scripted.
spawned=$(jq -s '[.[] | select(.type=="agent.spawned")] | length' "$T/events")
assert_eq "50 agents spawned" "$spawned" "50"
assert_eq "40 completed, 10 cancelled" \
  "$(jq -s -c '[.[] | select(.type=="agent.completed") | .payload.state] | group_by(.) | map({(.[0]): length}) | add' "$T/events")" \
  '{"cancelled":10,"completed":40}'
assert_eq "every child started a background shell" \
  "$(jq -s --arg s "$BG_SLEEP" '[.[] | select(.type=="tool.started" and .payload.tool=="Bash" and .payload.agent_id != null and ((.payload.input.command // "") == $s))] | length' "$T/events")" "50"
inits=$(grep -c 'recv initialize' "$T/mcp.log" || true)
check "every child had its own MCP connection ($inits initialize, 51 wanted: the run's + 50)" test "${inits:-0}" -ge 51
echo "# worktree children: $(jq -s '[.[] | select(.type=="agent.spawned" and .payload.worktree != null)] | length' "$T/events")"
# After loom exited: nothing of ours is left running.
check "no fake MCP server left" bash -c "! pgrep -f '[f]ake_server.py.*$TAG' >/dev/null"
check "no background shell left" bash -c "! pgrep -f '[s]${BG_SLEEP#s}' >/dev/null"
check "no stopped child's command left" bash -c "! pgrep -f '[s]${STOP_SLEEP#s}' >/dev/null"
assert_eq "no worktree left" "$(git -C "$T/proj" worktree list | wc -l | tr -d ' ')" "1"
finish
