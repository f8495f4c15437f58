#!/usr/bin/env bash
# Plugins from a marketplace: a local marketplace folder (then the same as
# a git repository, cloned from a file:// URL) with a plugin bringing a
# command, an agent, a skill, a PreToolUse hook (it writes a marker file),
# an MCP server (the reference server-everything) and an output style.
# `loom plugin marketplace add`, `loom plugin install x@market`; `loom
# plugin list` shows it enabled with each part counted. In a trusted
# workspace /x:cmd expands, the skill x:tidy-notes is offered (the system
# prompt, the Skill tool), the agent x:helper is in the Agent tool's
# catalog, the style x:terse applies, the hook fires and the plugin's MCP
# tool is declared and callable. In an untrusted one the hook and the
# server are skipped with notices naming the plugin, while the command and
# the skill (the user's: they installed it) stay. `loom plugin disable x`
# removes every part. Installing refuses a plugin with a link leaving its
# folder.
source "$(dirname "$0")/_lib.sh"
source "$LOOM_SRC/tests/e2e/_mcp_lib.sh"
need_reference_servers
lacks() { [[ "$1" != *"$2"* ]]; }

export LOOM_MCP_STARTUP_WAIT_MS=30000
unset LOOM_TRUST_WORKSPACE
# The first request's system prompt, its last user message, the Skill tool's names.
system_of() { req 1 | jq -r '.system | if type == "string" then . else map(.text) | join("\n") end'; }
user_of() { req 1 | jq -r '.messages[-1].content | if type == "string" then . else map(.text // "") | join("\n") end'; }
skill_names() { req 1 | jq -r '[.tools[] | select(.name == "Skill") | .input_schema.properties.name.enum[]?] | join(",")'; }
echo '{"turns": [{"reply": {"text": "ok"}}]}' > "$T/one.json"
# one_run NAME GOAL [ENV=VALUE...] — a -p run against a one-reply model.
one_run() {
  local name=$1 goal=$2; shift 2
  start_mock "$T/one.json"
  env "$@" "$LOOM_BIN" -p "$goal" --cwd "$T/proj" --output-format events \
    > "$T/$name.jsonl" 2> "$T/$name.err" || true
}
mkdir -p "$T/proj"
M="$T/market"
P="$M/plugins/x"
mkdir -p "$M/.claude-plugin" "$P/.claude-plugin" "$P/commands" "$P/agents" \
  "$P/skills/tidy-notes" "$P/output-styles" "$P/hooks"
cat > "$M/.claude-plugin/marketplace.json" <<'JSON'
{"name": "market", "owner": {"name": "Tests"},
 "plugins": [{"name": "x", "source": "./plugins/x", "description": "The x plugin"},
             {"name": "leaky", "source": "./plugins/leaky"}]}
JSON
cat > "$P/.claude-plugin/plugin.json" <<'JSON'
{"name": "x", "version": "1.0.0", "description": "Everything a plugin can bring",
 "author": {"name": "Tests"}}
JSON
cat > "$P/commands/cmd.md" <<'MD'
---
description: the x plugin's command
---
PLUGIN-CMD-BODY with $ARGUMENTS
MD
cat > "$P/agents/helper.md" <<'MD'
---
name: helper
description: PLUGIN-AGENT-DESCRIPTION helps with x
---
You are the x plugin's helper.
MD
cat > "$P/skills/tidy-notes/SKILL.md" <<'MD'
---
name: tidy-notes
description: PLUGIN-SKILL-DESCRIPTION tidies notes
---
PLUGIN-SKILL-BODY
MD
cat > "$P/output-styles/terse.md" <<'MD'
---
description: short answers
---
Answer in one line.
MD
cat > "$P/hooks/mark.sh" <<SH
#!/bin/sh
echo fired >> "$T/marker"
SH
chmod +x "$P/hooks/mark.sh"
cat > "$P/hooks/hooks.json" <<'JSON'
{"hooks": {"PreToolUse": [{"matcher": "Bash",
  "hooks": [{"type": "command", "command": "${CLAUDE_PLUGIN_ROOT}/hooks/mark.sh"}]}]}}
JSON
jq -n --arg c "$MCP_EVERYTHING" '{mcpServers: {ev: {command: $c, args: ["stdio"]}}}' \
  > "$P/.mcp.json"
# A second plugin whose link leads out of its folder.
mkdir -p "$M/plugins/leaky/.claude-plugin"
echo '{"name": "leaky"}' > "$M/plugins/leaky/.claude-plugin/plugin.json"
echo secret > "$T/secret.txt"
ln -s "$T/secret.txt" "$M/plugins/leaky/stolen"

cd "$T/proj"
out=$("$LOOM_BIN" plugin marketplace add "$M")
assert_contains "marketplace add names the marketplace" "$out" "Added marketplace market"
out=$("$LOOM_BIN" plugin marketplace list)
assert_contains "marketplace list shows its plugins" "$out" "x — The x plugin"
"$LOOM_BIN" plugin install x@market > "$T/install.out"
assert_contains "install says so" "$(cat "$T/install.out")" "Installed x@market"
check "the copy is under LOOM_HOME/plugins/market/x" test -x "$LOOM_HOME/plugins/market/x/hooks/mark.sh"
assert_eq "install enabled it in the user settings" \
  "$(jq -r '.enabledPlugins["x@market"]' "$LOOM_HOME/settings.json")" "true"
list=$("$LOOM_BIN" plugin list --json)
assert_eq "plugin list: x is enabled" "$(jq -r '.plugins[] | select(.id == "x@market") | .enabled' <<<"$list")" "true"
assert_eq "plugin list counts every part" \
  "$(jq -r '.plugins[0] | "\(.commands) \(.agents) \(.skills) \(.hooks) \(.mcp_servers) \(.output_styles)"' <<<"$list")" \
  "1 1 1 1 1 1"
assert_contains "plugin list (text) says enabled" "$("$LOOM_BIN" plugin list)" "x@market  enabled  1.0.0"
if "$LOOM_BIN" plugin install leaky@market > /dev/null 2> "$T/leaky.err"; then
  not_ok "a plugin with a link out of its folder must not install"
else
  assert_contains "the refusal names the link" "$(cat "$T/leaky.err")" "plugins/leaky/stolen"
fi
check "nothing of the refused plugin is left" test ! -e "$LOOM_HOME/plugins/market/leaky"

# Sub-agents on, so the Agent tool lists the plugin's agent.
jq '. + {agents: {enabled: true}}' "$LOOM_HOME/settings.json" > "$T/s.json" && mv "$T/s.json" "$LOOM_HOME/settings.json"

cat > "$T/scenario.json" <<'JSON'
{"turns": [
  {"match": {"assistant_turns": 0},
   "reply": {"tool_calls": [
     {"id": "b1", "name": "Bash", "input": {"command": "echo from-bash"}},
     {"id": "e1", "name": "mcp__plugin_x_ev__echo", "input": {"message": "via the plugin"}}]}},
  {"match": {"assistant_turns": 1}, "reply": {"text": "Done."}}
]}
JSON

# Trusted: the hook fires, the server's tool is declared and answers.
start_mock "$T/scenario.json"
use_provider anthropic
LOOM_TRUST_WORKSPACE=1 "$LOOM_BIN" -p "use the plugin" --cwd "$T/proj" \
  --permission-mode bypassPermissions --output-format events > "$T/trusted.jsonl" 2> "$T/trusted.err" || true
assert_eq "trusted: the run completed" "$(tail -n 1 "$T/trusted.jsonl" | jq -r .payload.state)" "completed"
assert_contains "trusted: the plugin's MCP tool is declared" "$(tool_names 1)" "mcp__plugin_x_ev__echo"
assert_eq "trusted: the plugin's MCP tool answered" "$(tool_result e1)" "Echo: via the plugin"
assert_eq "trusted: the plugin's PreToolUse hook fired once (for Bash)" "$(cat "$T/marker" 2>/dev/null)" "fired"
agent_desc=$(req 1 | jq -r '.tools[] | select(.name == "Agent") | .description')
assert_contains "trusted: the plugin's agent is in the Agent tool's catalog, namespaced" \
  "$agent_desc" "x:helper"
assert_contains "trusted: with its description" "$agent_desc" "PLUGIN-AGENT-DESCRIPTION"

# The command expands, the skill is offered, the style applies.
jq '. + {outputStyle: "x:terse"}' "$LOOM_HOME/settings.json" > "$T/s.json" && mv "$T/s.json" "$LOOM_HOME/settings.json"
one_run cmd "/x:cmd hello" LOOM_TRUST_WORKSPACE=1
assert_contains "trusted: /x:cmd expands to the plugin's command" "$(user_of)" "PLUGIN-CMD-BODY with hello"
sys=$(system_of)
assert_contains "trusted: the plugin's skill is offered, namespaced" "$sys" "x:tidy-notes"
assert_contains "trusted: with its description" "$sys" "PLUGIN-SKILL-DESCRIPTION"
assert_contains "trusted: the Skill tool names it" "$(skill_names)" "x:tidy-notes"
assert_contains "trusted: the plugin's output style x:terse is the style" "$sys" "Answer in one line."
mcp=$("$LOOM_BIN" mcp list --json 2>/dev/null)
assert_eq "loom mcp list shows the server in the plugin scope" \
  "$(jq -r '.[] | select(.name == "plugin:x:ev") | .scope' <<<"$mcp")" "plugin"

# Untrusted: the hook and the server are skipped, each with a notice naming the plugin.
rm -f "$T/marker"
start_mock "$T/scenario.json"
"$LOOM_BIN" -p "use the plugin" --cwd "$T/proj" --permission-mode bypassPermissions \
  --output-format events > "$T/untrusted.jsonl" 2> "$T/untrusted.err" || true
warnings=$(jq -r 'select(.type == "warning.emitted") | .payload.message' "$T/untrusted.jsonl"; cat "$T/untrusted.err")
assert_contains "untrusted: a notice says the plugin's hooks will not run" "$warnings" \
  "plugin x: its hooks will not run: the workspace is not trusted"
assert_contains "untrusted: a notice says the plugin's servers wait" "$warnings" \
  "plugin x: its MCP servers wait for approval: the workspace is not trusted (plugin:x:ev"
check "untrusted: the hook did not run" test ! -e "$T/marker"
if [[ "$(tool_names 1)" == *mcp__plugin_x_ev__* ]]; then
  not_ok "untrusted: the plugin's MCP tools must not be declared"
else
  ok "untrusted: the plugin's MCP tools are not declared"
fi

one_run cmd-untrusted "/x:cmd again"
assert_contains "untrusted: the plugin's command still expands (it is the user's)" "$(user_of)" \
  "PLUGIN-CMD-BODY with again"
assert_contains "untrusted: the plugin's skill is still offered" "$(system_of)" "x:tidy-notes"

# Disabled: every part is gone at the next start.
assert_contains "disable says so" "$("$LOOM_BIN" plugin disable x)" "Disabled x"
assert_eq "plugin list: x is disabled" \
  "$("$LOOM_BIN" plugin list --json | jq -r '.plugins[0].enabled')" "false"
start_mock "$T/scenario.json"
LOOM_TRUST_WORKSPACE=1 "$LOOM_BIN" -p "use the plugin" --cwd "$T/proj" \
  --permission-mode bypassPermissions --output-format events > "$T/disabled.jsonl" 2> "$T/disabled.err" || true
if [[ "$(tool_names 1)" == *mcp__plugin_x_ev__* ]]; then
  not_ok "disabled: the plugin's MCP tools must be gone"
else
  ok "disabled: the plugin's MCP tools are gone"
fi
check "disabled: the hook did not run" test ! -e "$T/marker"
if [[ "$(req 1 | jq -r '.tools[] | select(.name == "Agent") | .description')" == *x:helper* ]]; then
  not_ok "disabled: the plugin's agent must be gone"
else
  ok "disabled: the plugin's agent is gone"
fi
check "disabled: the MCP call is an unknown tool now" \
  jq -se 'map(select(.type == "tool.failed" and .correlation_id == "e1" and .payload.failed_step == "find_tool")) | length == 1' "$T/disabled.jsonl"

one_run cmd-disabled "/x:cmd gone" LOOM_TRUST_WORKSPACE=1
if [[ "$(user_of)" == *PLUGIN-CMD-BODY* ]]; then
  not_ok "disabled: /x:cmd must no longer expand"
else
  ok "disabled: /x:cmd no longer expands"
fi
sys=$(system_of)
check "disabled: the skill is no longer offered" lacks "$sys" "x:tidy-notes"
check "disabled: the style is gone with it" lacks "$sys" "Answer in one line."

# The same marketplace as a git repository.
"$LOOM_BIN" plugin remove x > /dev/null
check "remove deletes the copy" test ! -e "$LOOM_HOME/plugins/market/x"
"$LOOM_BIN" plugin marketplace remove market > /dev/null
cp -r "$M" "$T/gitmarket"
rm -rf "$T/gitmarket/plugins/leaky"
git -C "$T/gitmarket" init -q
git -C "$T/gitmarket" add -A
git -C "$T/gitmarket" -c user.name=t -c user.email=t@t commit -qm market
out=$("$LOOM_BIN" plugin marketplace add "file://$T/gitmarket")
assert_contains "a git marketplace is added by its file:// URL" "$out" "Added marketplace market"
check "its clone is under LOOM_HOME" test -f "$LOOM_HOME/plugins/_marketplaces/market/.claude-plugin/marketplace.json"
"$LOOM_BIN" plugin install x > /dev/null
assert_eq "x installs from the git marketplace, enabled" \
  "$("$LOOM_BIN" plugin list --json | jq -r '.plugins[] | select(.id == "x@market") | .enabled')" "true"
finish
