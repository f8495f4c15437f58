#!/usr/bin/env bash
# A SubagentStart hook's updatedInput that puts the agent in a worktree
# (isolation: "worktree") is applied: the agent runs in its own worktree,
# not in the parent's tree (the runner applied only prompt, model and type
# from a rewrite, so a hook's isolation was dropped without a word). A
# rewrite that leaves isolation out does not take a worktree away from a
# call that asked for one.
source "$(dirname "$0")/_lib.sh"

mkdir -p "$T/proj" "$LOOM_HOME"
git -C "$T/proj" init -q
git -C "$T/proj" config user.name t
git -C "$T/proj" config user.email t@t
echo base > "$T/proj/a.txt"
git -C "$T/proj" add a.txt
git -C "$T/proj" commit -qm base
cat > "$T/start.sh" <<'SH'
#!/usr/bin/env bash
input=$(cat)
p=$(jq -r .prompt <<<"$input")
case "$p" in
  ISOLATE*) jq -n --arg p "$p" '{hookSpecificOutput: {hookEventName: "SubagentStart",
              updatedInput: {description: "d", prompt: $p, isolation: "worktree"}}}' ;;
  *) jq -n --arg p "$p" '{hookSpecificOutput: {hookEventName: "SubagentStart",
              updatedInput: {description: "d", prompt: $p}}}' ;;
esac
SH
chmod +x "$T/start.sh"
jq -n --arg c "$T/start.sh" \
  '{agents: {enabled: true},
    hooks: {SubagentStart: [{matcher: "", hooks: [{type: "command", command: $c}]}]}}' \
  > "$LOOM_HOME/settings.json"
cat > "$T/scenario.json" <<'JSON'
{"turns": [
  {"match": {"system_contains": "You are Loom's general-purpose agent", "assistant_turns": 0},
   "reply": {"text": "Where am I?", "tool_calls": [{"name": "Bash", "input": {"command": "pwd"}}]}},
  {"match": {"system_contains": "You are Loom's general-purpose agent", "assistant_turns": 1},
   "reply": {"text": "CHILD-DONE"}},
  {"match": {"assistant_turns": 0},
   "reply": {"tool_calls": [
     {"id": "h1", "name": "Agent", "input": {"description": "d", "prompt": "ISOLATE me", "name": "by-hook"}}]}},
  {"match": {"assistant_turns": 1},
   "reply": {"tool_calls": [
     {"id": "h2", "name": "Agent", "input": {"description": "d", "prompt": "KEEP my worktree", "name": "by-model", "isolation": "worktree"}}]}},
  {"match": {"assistant_turns": 2}, "reply": {"text": "PARENT-DONE"}}
]}
JSON
start_mock "$T/scenario.json"
use_provider anthropic
"$LOOM_BIN" -p "go" --permission-mode bypassPermissions --cwd "$T/proj" \
  --output-format events > "$T/events" 2> "$T/err" || true
last=$(tail -n 1 "$T/events")
assert_eq "the run completed" "$(jq -r .payload.state <<<"$last")" "completed"
wt() { jq -r --arg n "$1" 'select(.type=="agent.spawned" and .payload.name==$n) | .payload.worktree.path // "none"' "$T/events"; }
assert_contains "the hook's isolation gave the agent a worktree" "$(wt by-hook)" "/.loom/worktrees/"
assert_contains "a rewrite without isolation kept the model's worktree" "$(wt by-model)" "/.loom/worktrees/"
pwds=$(jq -r 'select(.type=="tool.finished" and .payload.tool=="Bash" and .payload.agent_id != null) | .payload | tostring' "$T/events")
check "no child's command ran in the parent's tree" \
  bash -c '! grep -q "\"$1\\\\n\"\|\"$1\"" <<<"$0"' "$pwds" "$T/proj"
finish
