#!/usr/bin/env bash
# /plugin in the REPL (tmux): with a plugin installed from a local
# marketplace, /plugin lists it enabled with its parts counted; /plugin
# disable x says so and reopens the session in a new agent, so /agents no
# longer offers the plugin's agent; /plugin enable x brings it back in the
# same conversation; /plugin marketplace list shows the marketplace.
source "$(dirname "$0")/repl_lib.sh"

M="$T/market"
mkdir -p "$M/.claude-plugin" "$M/plugins/x/.claude-plugin" "$M/plugins/x/agents" "$T/proj"
echo '{"name": "market", "owner": {"name": "t"}, "plugins": [{"name": "x", "source": "./plugins/x", "description": "The x plugin"}]}' \
  > "$M/.claude-plugin/marketplace.json"
echo '{"name": "x", "version": "2.0.0"}' > "$M/plugins/x/.claude-plugin/plugin.json"
cat > "$M/plugins/x/agents/helper.md" <<'MD'
---
name: helper
description: XPLUGIN-HELPER helps
---
You help.
MD
"$LOOM_BIN" plugin marketplace add "$M" > /dev/null
"$LOOM_BIN" plugin install x@market > /dev/null
jq --arg w "$T/proj" '. + {trustedWorkspaces: [$w]}' "$LOOM_HOME/settings.json" > "$T/s" \
  && mv "$T/s" "$LOOM_HOME/settings.json"

echo '{"turns": [{"reply": {"text": "hello"}}]}' > "$T/scenario.json"
start_mock "$T/scenario.json"
use_provider anthropic
repl_start "$T/proj" --agents on
wait_prompt

type_line "/plugin"
wait_screen "the plugin list" "x@market  enabled  2.0.0"
assert_contains "/plugin counts the agent" "$(screen)" "1 agent"
wait_prompt
type_line "/agents"
wait_screen "the catalog" "XPLUGIN-HELPER"
assert_contains "the plugin's agent is offered as x:helper" "$(screen)" "x:helper"
wait_prompt

tm clear-history -t repl
type_line "/plugin disable x"
wait_screen "the change applied" "Applied: this session now has the plugins as they are."
assert_contains "/plugin disable says so" "$(screen)" "Disabled x"
wait_prompt
# What the last /agents printed (the pane still shows the earlier one above),
# once the Nth listing is complete (the prompt back under it).
last_agents() { screen | tac | sed '/Agents the Agent tool can spawn/q' | tac; }
listings() { screen | grep -c "Agents the Agent tool can spawn" || true; }
agents_again() {
  local before want
  before=$(listings)
  want=$((before + 1))
  type_line "/agents"
  listed() { [ "$(listings)" -ge "$want" ] && prompt_ready; }
  wait_until "/agents listed again" 10 listed
}
agents_again
check "a disabled plugin's agent is no longer offered" lacks "$(last_agents)" "XPLUGIN-HELPER"

tm clear-history -t repl
type_line "/plugin enable x"
wait_screen "enabled again" "Enabled x"
wait_prompt
agents_again
assert_contains "the agent is back in the same session" "$(last_agents)" "XPLUGIN-HELPER"
type_line "/plugin marketplace list"
wait_screen "the marketplace" "x — The x plugin"
wait_prompt
type_line "/plugin frobnicate"
wait_screen "the usage" "usage: plugin list | install SPEC"
wait_prompt
keys C-d
wait_exit
finish
