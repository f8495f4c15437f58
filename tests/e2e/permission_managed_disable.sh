#!/usr/bin/env bash
# disableBypassPermissionsMode / disableAutoMode in the managed settings
# file (issue 25, item 6): an administrator's "disable" holds against every
# other source — the CLI flags, the user's and the project's settings
# (defaultMode, or the same key set to something else), a switch at run
# time — and a start that asks for the mode fails with a message naming
# the managed file. The test's managed file is $LOOM_MANAGED_SETTINGS (an
# extra managed file: it can only switch more off; /etc/loom is the
# system's). Default mode still runs, and still asks.
source "$(dirname "$0")/_lib.sh"

mkdir -p "$T/proj/.loom"
echo '{"permissions": {"disableBypassPermissionsMode": "disable"}}' > "$T/managed.json"
export LOOM_MANAGED_SETTINGS="$T/managed.json"
jq -n '{sequence: true, turns: [
  {reply: {tool_calls: [{id: "b1", name: "Bash", input: {command: "touch ran.txt"}}]}},
  {reply: {text: "Done."}}]}' > "$T/scenario.json"
start_mock "$T/scenario.json"
use_provider anthropic

attempt() { # $1 label, rest: flags — expects exit 2 naming the managed file
  local label=$1; shift
  set +e
  "$LOOM_BIN" -p "go" --cwd "$T/proj" "$@" > "$T/out" 2> "$T/err"
  local status=$?
  set -e
  assert_eq "$label: refused at start (exit 2)" "$status" "2"
  assert_contains "$label: the error names the managed file" "$(cat "$T/err")" "$T/managed.json"
  check "$label: nothing ran" test ! -e "$T/proj/ran.txt"
}

attempt "--dangerously-skip-permissions" --dangerously-skip-permissions
attempt "--permission-mode bypassPermissions" --permission-mode bypassPermissions
attempt "--permission-mode fullAccess (skips even more)" --permission-mode fullAccess

echo '{"permissions": {"defaultMode": "bypassPermissions"}}' > "$LOOM_HOME/settings.json"
attempt "user settings defaultMode"
echo '{"permissions": {"defaultMode": "bypassPermissions", "disableBypassPermissionsMode": "enable"}}' \
  > "$LOOM_HOME/settings.json"
set +e
"$LOOM_BIN" -p "go" --cwd "$T/proj" 2> "$T/err" > /dev/null; status=$?
set -e
assert_eq "a user file cannot re-enable it (any other value is an error)" "$status" "2"
assert_contains "the error names the key" "$(cat "$T/err")" "disableBypassPermissionsMode"
rm -f "$LOOM_HOME/settings.json"

# A trusted project asking for bypass is refused just the same.
echo "{\"trustedWorkspaces\": [\"$T/proj\"]}" > "$LOOM_HOME/settings.json"
echo '{"permissions": {"defaultMode": "bypassPermissions"}}' > "$T/proj/.loom/settings.json"
attempt "trusted project settings defaultMode"
rm -f "$T/proj/.loom/settings.json"

# Default mode runs; the Bash call still needs a person (denied headless).
start_mock "$T/scenario.json"
json=$("$LOOM_BIN" -p "go" --cwd "$T/proj" --output-format json 2>/dev/null)
assert_eq "default mode still runs" "$(jq -r .subtype <<<"$json")" "success"
check "default mode: the command was not run without a person" test ! -e "$T/proj/ran.txt"

# Without the managed file, the same flag works (the test's file is what refused).
unset LOOM_MANAGED_SETTINGS
start_mock "$T/scenario.json"
"$LOOM_BIN" -p "go" --cwd "$T/proj" --dangerously-skip-permissions > /dev/null 2>&1
check "control: without the managed file bypass runs the command" test -e "$T/proj/ran.txt"
rm -f "$T/proj/ran.txt"

# disableAutoMode, and a managed file that cannot be read as JSON.
echo '{"disableAutoMode": "disable"}' > "$T/managed.json"
export LOOM_MANAGED_SETTINGS="$T/managed.json"
attempt "disableAutoMode: --permission-mode auto" --permission-mode auto
echo '{"permissions": ' > "$T/managed.json"
attempt "a malformed managed file fails closed" --permission-mode default
finish
