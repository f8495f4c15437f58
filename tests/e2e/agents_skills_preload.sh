#!/usr/bin/env bash
# An agent file's "skills" list (Claude Code's field): the sub-agent's
# system prompt starts with each listed skill as an activation would put it
# (body, folder, files), without a Skill call; a listed skill that is not
# installed is said, not dropped; the parent's own requests never carry
# the body (progressive disclosure holds for the parent).
source "$(dirname "$0")/_lib.sh"
source "$LOOM_SRC/tests/e2e/_mcp_lib.sh"

mkdir -p "$T/proj/.loom/agents" "$T/proj/.loom/skills/deploy-check/scripts" "$LOOM_HOME"
echo '{"agents": {"enabled": true}, "trustedWorkspaces": ["'"$T/proj"'"]}' > "$LOOM_HOME/settings.json"
cat > "$T/proj/.loom/skills/deploy-check/SKILL.md" <<'MD'
---
name: deploy-check
description: Checks a deployment before it ships.
---
PRELOADED-SKILL-BODY: run scripts/check.sh first.
MD
echo 'echo ok' > "$T/proj/.loom/skills/deploy-check/scripts/check.sh"
cat > "$T/proj/.loom/agents/deployer.md" <<'MD'
---
name: deployer
description: Deploys things.
skills: [deploy-check, no-such-skill]
---
You are the deployer.
MD
cat > "$T/scenario.json" <<'JSON'
{"turns": [
  {"match": {"assistant_turns": 0, "last_user_contains": "PARENT-GOAL"},
   "reply": {"tool_calls": [{"id": "ag1", "name": "Agent", "input": {"description": "deploy", "prompt": "CHILD-TASK deploy it", "subagent_type": "deployer"}}]}},
  {"match": {"assistant_turns": 0, "last_user_contains": "CHILD-TASK"},
   "reply": {"text": "CHILD-DONE"}},
  {"match": {"assistant_turns": 1, "tool_results": 1},
   "reply": {"text": "PARENT-DONE"}}
]}
JSON
start_mock "$T/scenario.json"
use_provider anthropic
out=$("$LOOM_BIN" -p "PARENT-GOAL" --permission-mode bypassPermissions --cwd "$T/proj" \
      --output-format json 2>"$T/err")
assert_eq "the run completed" "$(jq -r .result <<<"$out")" "PARENT-DONE"
child=""
parent=""
n=$(wc -l < "$MOCK_LOG")
for i in $(seq 1 "$n"); do
  body=$(raw_req "$i")
  if grep -q "CHILD-TASK deploy it" <<<"$body" && grep -q "You are the deployer" <<<"$body"; then
    child=$body
  elif grep -q "PARENT-GOAL" <<<"$body"; then
    parent+=$body
  fi
done
check "the sub-agent's request was made" test -n "$child"
assert_contains "the sub-agent starts with the listed skill's body" "$child" "PRELOADED-SKILL-BODY"
assert_contains "…under its own heading" "$child" "# Skills loaded for this agent"
assert_contains "…with the skill's folder and files" "$child" "scripts/check.sh"
assert_contains "a listed skill that is not installed is said" "$child" "The skill no-such-skill this agent lists is not installed"
check "the parent's requests never carry the body" bash -c '! grep -q PRELOADED-SKILL-BODY <<<"$1"' _ "$parent"
assert_contains "the parent is offered the skill by name" "$parent" "deploy-check"
finish
