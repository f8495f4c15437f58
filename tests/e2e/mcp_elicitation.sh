#!/usr/bin/env bash
# Elicitation: headless, with nobody to ask, server-everything's
# trigger-elicitation-request gets {"action": "decline"} (its result says
# declined); an Elicitation hook answering accept makes it accept, the
# fields the hook left out taking the schema's defaults, and the hook sees
# the server's name and schema; in the REPL the form is shown and answered
# by keystrokes, and the answer reaches the server (the fake's ask tool
# returns what it got).
source "$(dirname "$0")/repl_lib.sh"
source "$LOOM_SRC/tests/e2e/_mcp_lib.sh"
need_reference_servers
need_fake_server

export LOOM_MCP_STARTUP_WAIT_MS=30000
mkdir -p "$T/proj"
cfg=$(mcp_config everything "$(everything_entry)" fake "$(fake_entry --elicit)")
allow='"permissions": {"allow": ["mcp__everything__trigger-elicitation-request", "mcp__fake__ask"]}'
echo "{$allow}" > "$LOOM_HOME/settings.json"

cat > "$T/scenario.json" <<'JSON'
{"turns": [
  {"reply": {"tool_calls": [{"id": "el1", "name": "mcp__everything__trigger-elicitation-request", "input": {}}]}},
  {"reply": {"text": "Asked."}}
]}
JSON
start_mock "$T/scenario.json"
use_provider anthropic

# 1. Headless, no hook: declined.
json=$("$LOOM_BIN" -p "ask me" --cwd "$T/proj" --mcp-config "$cfg" --output-format json)
assert_eq "headless: the run completed" "$(jq -r .result <<<"$json")" "Asked."
r=$(tool_result el1)
assert_contains "headless: the server was told the user declined" "$r" "User declined"
assert_contains "headless: the raw answer is a decline" "$r" '"action": "decline"'

# 2. An Elicitation hook accepts; omitted fields take the schema's defaults.
cat > "$T/hook.sh" <<EOF
#!/bin/sh
cat > "$T/hook.in"
echo '{"hookSpecificOutput": {"hookEventName": "Elicitation", "action": "accept", "content": {"name": "Ada Lovelace", "check": true}}}'
EOF
chmod +x "$T/hook.sh"
cat > "$LOOM_HOME/settings.json" <<EOF
{$allow,
 "hooks": {"Elicitation": [{"matcher": "everything", "hooks": [{"type": "command", "command": "$T/hook.sh"}]}]}}
EOF
start_mock "$T/scenario.json"
json=$("$LOOM_BIN" -p "ask me" --cwd "$T/proj" --mcp-config "$cfg" --output-format json)
assert_eq "hook: the run completed" "$(jq -r .result <<<"$json")" "Asked."
r=$(tool_result el1)
assert_contains "hook: the server got an accept" "$r" "User provided the requested information"
assert_contains "hook: the hook's field reached the server" "$r" "Name: Ada Lovelace"
assert_contains "hook: an omitted integer took its default (42)" "$r" "Favorite Integer: 42"
assert_contains "hook: an omitted string took its default" "$r" "It was a dark and stormy night."
assert_contains "hook: an omitted enum took its default" "$r" '"untitledSingleSelectEnum": "Monica"'
check "hook: the hook ran" test -s "$T/hook.in"
assert_eq "hook: the hook was told the server" "$(jq -r .mcp_server_name "$T/hook.in")" "everything"
assert_eq "hook: the hook got the event name" "$(jq -r .hook_event_name "$T/hook.in")" "Elicitation"
assert_eq "hook: the hook got the requested schema" \
  "$(jq -r '.requested_schema.properties.integer.default' "$T/hook.in")" "42"

# 3. The REPL: the fake's ask tool; the form is answered at the keyboard.
echo "{$allow}" > "$LOOM_HOME/settings.json"
cat > "$T/repl.json" <<'JSON'
{"turns": [
  {"reply": {"tool_calls": [{"id": "el2", "name": "mcp__fake__ask", "input": {"question": "What should I call you?"}}]}},
  {"reply": {"text": "Nice to meet you."}}
]}
JSON
start_mock "$T/repl.json"
repl_launch "$T/proj" --mcp-config "$cfg"
# (LOOM_MCP_STARTUP_WAIT_MS is not passed by repl_launch: the first
# request waits the default 2 s, plenty for the fake.)
wait_screen "the header" "loom 0.1.0" 15
wait_prompt
type_line "ask me my name"
wait_screen "the elicitation" "MCP server fake asks: What should I call you?" 15
wait_screen "the question whether to answer" "Answer it? [Y/n]"
answer -l "y"; keys Enter
wait_screen "the form's field" "name *"
answer -l "Grace Hopper"; keys Enter
wait_screen "the final answer" "Nice to meet you." 15
wait_prompt
r=$(tool_result el2)
assert_eq "repl: the server got an accept with the typed name" \
  "$(jq -c . <<<"$r" 2>/dev/null)" '{"action":"accept","content":{"name":"Grace Hopper"}}'
keys C-d
assert_eq "repl: exit status 0" "$(wait_exit 15)" "0"
finish
