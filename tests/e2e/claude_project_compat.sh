#!/usr/bin/env bash
# A Claude Code project works unchanged (issue 15, the first "Done when").
# tests/e2e/fixtures/claude-project is laid out the way Claude Code's users
# lay out a repository — .claude/settings.json with a deny rule, allow
# rules and a PreToolUse hook written against $CLAUDE_PROJECT_DIR;
# .claude/settings.local.json approving the .mcp.json server; CLAUDE.md; a
# skill with a script; an agent; a command with $ARGUMENTS and
# !`git status`; .mcp.json on the MCP reference server — and is copied,
# unedited, into a fresh git repository.
#
# Trusted (the user's trustedWorkspaces names it), one scripted run: the
# Read of .env the deny rule forbids is refused and no secret reaches a
# request; the hook fires on the Bash call (its log, written through
# $CLAUDE_PROJECT_DIR, names the command); the MCP tool answers; CLAUDE.md
# and the skill's name and description are in the first request, the
# skill's body is not until the model calls Skill, then it is, and the
# skill's allowed-tools run its script without a prompt; the agent is
# spawned by its subagent_type and its prompt reaches the child's request.
# `-p "/fix-issue 1234"` sends the command's text with the argument and
# the real `git status` output in place.
#
# Untrusted (no trust), the same repository: the deny still holds, the hook
# is skipped with a notice and never runs, the project's skill, agent,
# command and MCP server are not used.
source "$(dirname "$0")/_lib.sh"
source "$LOOM_SRC/tests/e2e/_mcp_lib.sh"
need_reference_servers

export LOOM_MCP_STARTUP_WAIT_MS=30000
# .mcp.json names the server's script through ${MCP_SERVERS_DIR}, as a
# Claude Code user names a locally installed server.
export MCP_SERVERS_DIR="$MCP_NODE_MODULES"

R="$T/acme-widgets"
cp -a "$LOOM_SRC/tests/e2e/fixtures/claude-project" "$R"
git -C "$R" init -q -b main
git -C "$R" add -A
git -C "$R" -c user.name=Dev -c user.email=dev@acme.test commit -qm "initial import"
# Work in progress, so git status has something to say.
echo "scratch" > "$R/WIP-SCRATCH.txt"
printf '\n// TODO: refuse negative counts\n' >> "$R/src/inventory.js"
HOOK_LOG="$R/.claude/bash-commands.log"
SECRET='FIXTURE-SECRET'

user_settings() { # TRUSTED(yes|no)
  if [ "$1" = yes ]; then
    jq -n --arg r "$R" '{trustedWorkspaces: [$r], agents: {enabled: true}}' > "$LOOM_HOME/settings.json"
  else
    jq -n '{agents: {enabled: true}}' > "$LOOM_HOME/settings.json"
  fi
}
# bodies_with TEXT — how many logged requests hold TEXT anywhere.
bodies_with() { grep -cF -- "$1" "$MOCK_LOG" || true; }
# first_system — the first request's system text.
first_system() { req 1 | jq -r '.system | if type == "array" then map(.text) | join("\n") else (. // "") end'; }
# event_count TYPE
event_count() { jq -s --arg t "$1" '[.[] | select(.type == $t)] | length' "$T/events"; }

# --- trusted -------------------------------------------------------------------
user_settings yes
jq -n --arg env "$R/.env" '{turns: [
  {match: {assistant_turns: 0, system_contains: "CODE-REVIEWER-PROMPT"},
   reply: {text: "REVIEW-OK no findings"}},
  {match: {assistant_turns: 0, last_user_contains: "TRUSTED-TASK"},
   reply: {tool_calls: [{id: "env1", name: "Read", input: {file_path: $env}}]}},
  {match: {assistant_turns: 1, tool_results: 1},
   reply: {tool_calls: [{id: "sh1", name: "Bash", input: {command: "git status --short"}}]}},
  {match: {assistant_turns: 2, tool_results: 2},
   reply: {tool_calls: [{id: "mcp1", name: "mcp__everything__echo", input: {message: "hello from acme"}}]}},
  {match: {assistant_turns: 3, tool_results: 3},
   reply: {tool_calls: [{id: "sk1", name: "Skill", input: {name: "release-notes"}}]}},
  {match: {assistant_turns: 4, tool_results: 4},
   reply: {tool_calls: [{id: "sk2", name: "Bash", input: {command: "bash .claude/skills/release-notes/scripts/run.sh"}}]}},
  {match: {assistant_turns: 5, tool_results: 5},
   reply: {tool_calls: [{id: "ag1", name: "Agent", input: {description: "review", subagent_type: "code-reviewer",
                                                            prompt: "CHILD-REVIEW look at src/inventory.js"}}]}},
  {match: {assistant_turns: 6, tool_results: 6}, reply: {text: "TRUSTED-DONE"}}]}' > "$T/trusted.json"
start_mock "$T/trusted.json"
use_provider anthropic
set +e
"$LOOM_BIN" -p "TRUSTED-TASK: look around the project" --cwd "$R" \
  --output-format events > "$T/events" 2> "$T/err"
rc=$?
set -e
last=$(tail -n 1 "$T/events")
assert_eq "trusted: loom exits 0" "$rc" "0"
assert_eq "trusted: the run completed" "$(jq -r .payload.state <<<"$last")" "completed"
assert_eq "trusted: the scripted model reached its answer" "$(jq -r .payload.result <<<"$last")" "TRUSTED-DONE"
err=$(cat "$T/err")

# The deny rule of .claude/settings.json.
assert_eq "trusted: the Read of .env is an error" "$(tool_is_error env1)" "true"
assert_contains "trusted: the Read of .env is denied" "$(tool_result env1 | tr 'A-Z' 'a-z')" "denied"
assert_eq "trusted: no secret of .env reached any request" "$(bodies_with "$SECRET")" "0"

# The PreToolUse hook, through $CLAUDE_PROJECT_DIR.
assert_eq "trusted: the allowed Bash call ran" "$(tool_is_error sh1)" "false"
assert_contains "trusted: git status ran in the project" "$(tool_result sh1)" "WIP-SCRATCH.txt"
check "trusted: the hook wrote its log under \$CLAUDE_PROJECT_DIR" test -s "$HOOK_LOG"
assert_contains "trusted: the hook's log names the command" "$(cat "$HOOK_LOG" 2>/dev/null)" "git status --short"
check_not "trusted: no hook was skipped" grep -qi "skipped.*hook" <<<"$err"

# .mcp.json, approved by .claude/settings.local.json.
assert_eq "trusted: the MCP tool is declared" \
  "$(tool_names 1 | tr ',' '\n' | grep -cx mcp__everything__echo)" "1"
assert_eq "trusted: the MCP tool answered" "$(tool_result mcp1)" "Echo: hello from acme"

# CLAUDE.md and the skill's catalog line.
sys1=$(first_system)
assert_contains "trusted: CLAUDE.md reaches the first request" "$(req 1)" "ACME-WIDGETS-CLAUDE-MD"
assert_contains "trusted: the skill's name is offered" "$sys1" "release-notes"
assert_contains "trusted: the skill's description is offered" "$sys1" "Drafts release notes for Acme Widgets"
check_not "trusted: the skill's body is not in the first request" grep -qF "RELEASE-NOTES-SKILL-BODY" <<<"$(req 1)"
assert_eq "trusted: the Skill tool is declared" "$(tool_names 1 | tr ',' '\n' | grep -cx Skill)" "1"
check "trusted: a skill.offered event names the skill" \
  jq -se '[.[] | select(.type == "skill.offered") | .payload.skills[]?] | index("release-notes") != null' "$T/events"
# The model calls Skill: the body comes back, and allowed-tools runs the script.
assert_eq "trusted: Skill(release-notes) is no error" "$(tool_is_error sk1)" "false"
assert_contains "trusted: the skill's body is in the request after the call" "$(tool_result sk1)" "RELEASE-NOTES-SKILL-BODY"
assert_contains "trusted: the skill's bundled script is listed" "$(tool_result sk1)" "scripts/run.sh"
assert_eq "trusted: one skill.activated event" "$(event_count skill.activated)" "1"
assert_eq "trusted: the skill's script ran without a prompt (allowed-tools)" "$(tool_is_error sk2)" "false"
assert_contains "trusted: the script's output came back" "$(tool_result sk2)" "RELEASE-NOTES-SCRIPT-RAN"

# The agent of .claude/agents, by its subagent_type.
child=$(jq -c 'select((.body.system | tostring) | contains("CODE-REVIEWER-PROMPT"))' "$MOCK_LOG" | head -n 1)
check "trusted: the agent's prompt reached a request" test -n "$child"
assert_contains "trusted: that request is the child's (it has the task)" "$child" "CHILD-REVIEW"
assert_contains "trusted: the agent's answer came back to the parent" "$(tool_result ag1)" "REVIEW-OK no findings"
assert_eq "trusted: one agent.spawned event" "$(event_count agent.spawned)" "1"
# The agent file's tools: Read, Grep, Glob — nothing that writes.
child_tools=$(jq -r '[.tools[]?.name] | join(",")' <<<"$(jq -c .body <<<"$child")")
check "trusted: the child declares Read ($child_tools)" grep -qw Read <<<"$child_tools"
check_not "trusted: the child does not declare Bash" grep -qw Bash <<<"$child_tools"

# --- the command -----------------------------------------------------------------
cat > "$T/command.json" <<'JSON'
{"turns": [{"reply": {"text": "COMMAND-DONE"}}]}
JSON
start_mock "$T/command.json"
set +e
json=$("$LOOM_BIN" -p "/fix-issue 1234" --cwd "$R" --output-format json 2> "$T/err")
rc=$?
set -e
assert_eq "command: loom exits 0" "$rc" "0"
assert_eq "command: the run completed" "$(jq -r .result <<<"$json")" "COMMAND-DONE"
user1=$(req 1 | jq -r '[.messages[] | select(.role == "user") | .content
         | if type == "string" then . else map(.text // "") | join("\n") end] | join("\n")')
assert_contains "command: \$ARGUMENTS became the argument" "$user1" "Fix issue #1234 following our coding standards"
assert_contains "command: !\`git status\` became its output" "$user1" "WIP-SCRATCH.txt"
assert_contains "command: the output is git status's own" "$user1" "On branch main"
check_not "command: no \$ARGUMENTS is left" grep -qF '$ARGUMENTS' <<<"$user1"
check_not "command: no !\`git status\` is left" grep -qF '!`git status`' <<<"$user1"
check_not "command: the frontmatter is not sent" grep -qF 'argument-hint' <<<"$user1"

# --- untrusted -------------------------------------------------------------------
user_settings no
rm -f "$HOOK_LOG"
jq -n --arg env "$R/.env" '{turns: [
  {match: {assistant_turns: 0}, reply: {tool_calls: [{id: "env1", name: "Read", input: {file_path: $env}}]}},
  {match: {assistant_turns: 1}, reply: {tool_calls: [{id: "sh1", name: "Bash", input: {command: "git status --short"}}]}},
  {match: {assistant_turns: 2}, reply: {text: "UNTRUSTED-DONE"}}]}' > "$T/untrusted.json"
start_mock "$T/untrusted.json"
set +e
# The user's own flag lets the Bash call run (so PreToolUse is reached);
# the repository's deny rule must hold even so.
json=$("$LOOM_BIN" -p "UNTRUSTED-TASK" --cwd "$R" --permission-mode bypassPermissions \
        --output-format json 2> "$T/err")
rc=$?
set -e
err=$(cat "$T/err")
assert_eq "untrusted: loom exits 0" "$rc" "0"
assert_eq "untrusted: the run completed" "$(jq -r .result <<<"$json")" "UNTRUSTED-DONE"
assert_eq "untrusted: the Read of .env is still an error" "$(tool_is_error env1)" "true"
assert_contains "untrusted: the Read of .env is still denied" "$(tool_result env1 | tr 'A-Z' 'a-z')" "denied"
assert_eq "untrusted: no secret of .env reached any request" "$(bodies_with "$SECRET")" "0"
assert_eq "untrusted: the Bash call ran" "$(tool_is_error sh1)" "false"
check "untrusted: the hook did not run" test ! -e "$HOOK_LOG"
assert_contains "untrusted: the skipped hook is announced" "$err" "skipped 1 PreToolUse hook(s) from untrusted"
assert_contains "untrusted: a notice names .claude/skills" "$err" ".claude/skills"
check_not "untrusted: the project's skill is not offered" grep -qF "release-notes" <<<"$(req 1)"
check_not "untrusted: the project's agent is not offered" grep -qF "code-reviewer" <<<"$(req 1)"
check_not "untrusted: the MCP server's tools are not declared" grep -qF "mcp__everything__" <<<"$(tool_names 1)"
assert_eq "untrusted: the MCP server needs approval" \
  "$(jq -r '.mcp_servers[]? | select(.name == "everything") | .state' <<<"$json")" "needs-approval"

start_mock "$T/command.json"
set +e
"$LOOM_BIN" -p "/fix-issue 1234" --cwd "$R" --output-format json > "$T/out" 2> "$T/err"
set -e
check_not "untrusted: the project's command is not expanded" grep -qF "Fix issue #1234" "$MOCK_LOG"
finish
