#!/usr/bin/env bash
# A server in the repository's .mcp.json is the repository's word: headless
# it is not started (mcp_servers says needs-approval, and its process never
# ran: its --pid-file is absent) until the user's enabledMcpjsonServers in
# .loom/settings.local.json names it in a workspace the user trusts; then it
# connects and its tools are declared. In an untrusted workspace neither the
# repository's .loom/settings.json nor its .loom/settings.local.json (either
# may be committed) can approve it; the user's own settings can.
# disabledMcpjsonServers keeps it off even when enabled. In the REPL the
# start-up question asks; "y" starts it, /mcp shows it connected, and the
# answer is remembered in .loom/settings.local.json for the next session.
source "$(dirname "$0")/repl_lib.sh"
source "$LOOM_SRC/tests/e2e/_mcp_lib.sh"
need_fake_server

export LOOM_MCP_STARTUP_WAIT_MS=30000
mkdir -p "$T/proj/.loom"
jq -n --arg fake "$MCP_FAKE" --arg pid "$T/proj.pid" \
  '{mcpServers: {proj: {command: "python3", args: [$fake, "--pid-file", $pid]}}}' > "$T/proj/.mcp.json"
cat > "$T/scenario.json" <<'JSON'
{"turns": [{"reply": {"text": "Checked."}}]}
JSON
start_mock "$T/scenario.json"
use_provider anthropic
run() { # LABEL
  rm -f "$T/proj.pid"
  json=$("$LOOM_BIN" -p "status" --cwd "$T/proj" --output-format json 2> "$T/stderr-$1")
  assert_eq "$1: the run completed" "$(jq -r .result <<<"$json")" "Checked."
  srv=$(jq -c '.mcp_servers[]? | select(.name == "proj")' <<<"$json")
}

run "not approved"
assert_eq "not approved: the server is listed" "$(jq -r .name <<<"$srv")" "proj"
assert_eq "not approved: its state is needs-approval" "$(jq -r .state <<<"$srv")" "needs-approval"
assert_eq "not approved: its scope is project" "$(jq -r .scope <<<"$srv")" "project"
check "not approved: no process was started (no pid file)" test ! -e "$T/proj.pid"
check_not "not approved: none of its tools is declared" bash -c "grep -q mcp__proj__ '$MOCK_LOG'"

# The repository approving itself does not count.
echo '{"enabledMcpjsonServers": ["proj"], "enableAllProjectMcpServers": true}' > "$T/proj/.loom/settings.json"
: > "$MOCK_LOG"
run "self-approved"
assert_eq "self-approved: still needs-approval" "$(jq -r .state <<<"$srv")" "needs-approval"
check "self-approved: no process was started" test ! -e "$T/proj.pid"
rm "$T/proj/.loom/settings.json"

# Untrusted, the local settings file cannot approve it either.
echo '{"enabledMcpjsonServers": ["proj"]}' > "$T/proj/.loom/settings.local.json"
: > "$MOCK_LOG"
run "local, untrusted"
assert_eq "local, untrusted: still needs-approval" "$(jq -r .state <<<"$srv")" "needs-approval"
check "local, untrusted: no process was started" test ! -e "$T/proj.pid"

# Keeping it off only tightens: an untrusted folder's own file may say so,
# and that wins over the user's approval.
echo '{"enabledMcpjsonServers": ["proj"]}' > "$LOOM_HOME/settings.json"
echo '{"disabledMcpjsonServers": ["proj"]}' > "$T/proj/.loom/settings.json"
: > "$MOCK_LOG"
run "disabled, untrusted"
assert_eq "disabled, untrusted: its state is disabled" "$(jq -r .state <<<"$srv")" "disabled"
check "disabled, untrusted: no process was started" test ! -e "$T/proj.pid"
rm "$T/proj/.loom/settings.json"

# The user's own settings approve it.
: > "$MOCK_LOG"
run "user-approved"
assert_eq "user-approved: connected" "$(jq -r .state <<<"$srv")" "connected"
check "user-approved: its process ran (pid file written)" test -s "$T/proj.pid"

# A trusted workspace: the local settings' approval counts.
echo "{\"trustedWorkspaces\": [\"$T/proj\"]}" > "$LOOM_HOME/settings.json"
: > "$MOCK_LOG"
run "approved"
assert_eq "approved: connected" "$(jq -r .state <<<"$srv")" "connected"
check "approved: its process ran (pid file written)" test -s "$T/proj.pid"
assert_contains "approved: its tools are declared" "$(tool_names 1)" "mcp__proj__echo"

# disabledMcpjsonServers wins.
echo '{"enabledMcpjsonServers": ["proj"], "disabledMcpjsonServers": ["proj"]}' > "$T/proj/.loom/settings.local.json"
: > "$MOCK_LOG"
run "disabled"
assert_eq "disabled: its state is disabled" "$(jq -r .state <<<"$srv")" "disabled"
check "disabled: no process was started" test ! -e "$T/proj.pid"

# The REPL asks at start-up; the answer is remembered.
rm -f "$T/proj/.loom/settings.local.json" "$T/proj.pid"
repl_launch "$T/proj"
wait_screen "the start-up question" 'names the MCP server "proj"' 15
wait_screen "the question shows what the server runs" 'fake_server.py' 5
check "nothing started before the answer" test ! -e "$T/proj.pid"
answer -l "y"; keys Enter
wait_prompt "the prompt after the question" 15
wait_until "the server to start" 15 test -s "$T/proj.pid"
type_line "/mcp"
wait_screen "/mcp's list" "MCP servers" 10
wait_until "/mcp to show proj connected" 15 bash -c "tmux -L '$TMUX_SOCKET' capture-pane -p -J -t repl | grep -q 'proj *connected'"
keys C-d
assert_eq "repl: exit status 0" "$(wait_exit 15)" "0"
assert_eq "repl: the answer is remembered in the local settings" \
  "$(jq -c .enabledMcpjsonServers "$T/proj/.loom/settings.local.json" 2>/dev/null)" '["proj"]'
: > "$MOCK_LOG"
run "remembered"
assert_eq "remembered: the next session starts it without asking" "$(jq -r .state <<<"$srv")" "connected"
finish
