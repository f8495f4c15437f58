#!/usr/bin/env bash
# Self-evolution E4 (issue 24, seed 000 row 5.7d, docs/evolve.md): a task
# class that keeps stopping early yields a proposed agent definition.
#  1. Three runs of one task class ("migrate schema …", worded three ways)
#     end at max_turns: after the third, .loom/agents/proposed/ holds an
#     agent file in Claude Code's format (name, description, maxTurns, a
#     prompt naming the stops); it is not offered to the model.
#  2. Accepted, it moves to .loom/agents/ and the Agent tool offers it.
#  3. Runs of another class that stop early are not counted with these.
source "$(dirname "$0")/_lib.sh"
source "$LOOM_SRC/tests/e2e/_mcp_lib.sh"

mkdir -p "$T/proj"
git -C "$T/proj" init -q
cat > "$LOOM_HOME/settings.json" <<JSON
{"permissions": {"allow": ["Bash"]}, "evolve": {"enabled": true},
 "trustedWorkspaces": ["$T/proj"]}
JSON
# The model never finishes: every reply is one more command.
jq -n '{turns: [{match: {}, reply: {tool_calls: [{id: "m1", name: "Bash", input: {command: "echo step"}}]}}]}' \
  > "$T/endless.json"
start_mock "$T/endless.json"
use_provider anthropic

last_payload() { tail -n 1 "$T/events" | jq -c .payload; }
run() {
  "$LOOM_BIN" -p "$1" --max-turns 2 --cwd "$T/proj" --output-format events >"$T/events" 2>"$T/err" || true
}
agent="$T/proj/.loom/agents/proposed/migrate-schema-specialist.md"

for goal in "migrate schema of the orders table" "Migrate schema: users to v2" "migrate the schema for billing"; do
  run "$goal"
  assert_eq "\"$goal\": stopped at max_turns" "$(last_payload | jq -r .stop_reason)" "max_turns"
done
assert_eq "the third early stop proposes a specialist" "$(last_payload | jq -r '.evolve.proposed[0]')" \
  "agent/migrate-schema-specialist"
check "the proposal is an agent file" test -f "$agent"
check "with Claude Code's frontmatter" grep -qx "name: migrate-schema-specialist" "$agent"
check "and a larger turn budget" grep -qx "maxTurns: 20" "$agent"
assert_contains "its prompt names the stops" "$(cat "$agent")" "max_turns after 2 turns"
check "the runs are in runs.jsonl with their class" \
  jq -se '[.[] | select(.class == "migrate-schema" and .early)] | length == 3' "$T/proj/.loom/mf/runs.jsonl"

: > "$MOCK_LOG"
run "list the tables"
check_not "a proposed agent is not offered" grep -q "migrate-schema-specialist" <<<"$(raw_req 1)"

out=$("$LOOM_BIN" evolve review accept agent/migrate-schema-specialist --cwd "$T/proj" --json)
check "accepted, it is in .loom/agents ($out)" test -f "$T/proj/.loom/agents/migrate-schema-specialist.md"
: > "$MOCK_LOG"
run "list the tables"
assert_contains "the Agent tool offers it" "$(req 1 | jq -r '.tools[] | select(.name == "Agent") | .description')" \
  "migrate-schema-specialist"
check "another class is not counted with it (two early stops of list-tables so far)" \
  test ! -e "$T/proj/.loom/agents/proposed/list-tables-specialist.md"

finish
