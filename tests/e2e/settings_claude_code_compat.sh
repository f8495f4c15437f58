#!/usr/bin/env bash
# A Claude Code user's settings work in Loom: a full ~/.claude/settings.json
# (fixtures/claude_code_settings.json — Claude Code's documented keys and
# shapes: sandbox with its network/filesystem objects, permissions with ask
# and disableBypassPermissionsMode, env, hooks for events Loom has and has
# not, statusLine, plugins, MCP lists, login and cleanup keys) copied into
# each of Loom's three settings files never stops a run: no type error, no
# warning for any documented key, the reply comes back, and what Loom does
# read from it is in effect (its deny rule denies, its model is asked for).
# `loom sandbox` reads the same file without complaint. Of an untrusted
# project's copy, what widens is set aside, as for any project settings, and
# the run goes on.
source "$(dirname "$0")/_lib.sh"

FIXTURE="$LOOM_SRC/tests/e2e/fixtures/claude_code_settings.json"
mkdir -p "$T/proj/.loom"
cat > "$T/s.json" <<'JSON'
{"turns": [
  {"reply": {"tool_calls": [{"id": "c1", "name": "Bash", "input": {"command": "curl -s http://127.0.0.1:9/"}}]}},
  {"reply": {"text": "Settings read."}}
]}
JSON
start_mock "$T/s.json"
use_provider anthropic

# run NAME — loom -p in the project, events; sets status, out, err.
run() {
  start_mock "$T/s.json"
  set +e
  out=$("$LOOM_BIN" -p "hello" --cwd "$T/proj" --output-format events --verbose 2> "$T/$1.err")
  status=$?
  set -e
  err=$(cat "$T/$1.err")
}

lacks() { [[ "$1" != *"$2"* ]]; }

# layer NAME — the checks every layer's run must pass.
layer() {
  local name=$1
  run "$name"
  assert_eq "$name: the run completed" "$status" "0"
  check "$name: no warning for any documented Claude Code key" lacks "$err" "unknown key"
  check "$name: no type error" lacks "$err" "must be"
  local result denied model
  result=$(jq -r 'select(.type == "run.state_changed" and .payload.state == "completed") | .payload.result' <<<"$out")
  assert_eq "$name: the model's reply came back" "$result" "Settings read."
  denied=$(jq -r 'select(.type == "tool.failed") | .payload.output' <<<"$out")
  assert_contains "$name: the file's deny rule Bash(curl:*) denies curl" "$denied" "Bash(curl:*)"
  model=$(head -1 "$MOCK_LOG" | jq -r .body.model)
  assert_eq "$name: the file's model is the one asked for" "$model" "claude-sonnet-4-5-20250929"
}

# ---- 1. the user file ----------------------------------------------------------
cp "$FIXTURE" "$LOOM_HOME/settings.json"
layer user

# ---- 2. the project file, then the local file, of a trusted workspace -----------
echo "{\"trustedWorkspaces\": [\"$T/proj\"]}" > "$LOOM_HOME/settings.json"
cp "$FIXTURE" "$T/proj/.loom/settings.json"
layer project
rm "$T/proj/.loom/settings.json"
cp "$FIXTURE" "$T/proj/.loom/settings.local.json"
layer local

# `loom sandbox` reads the files itself: the same file is no error there.
set +e
sb=$(cd "$T/proj" && "$LOOM_BIN" sandbox -- true 2>&1)
sb_status=$?
set -e
if [[ "$sb" == *"not supported here"* ]]; then
  ok "loom sandbox: skipped ($sb)"
else
  assert_eq "loom sandbox: the command ran" "$sb_status" "0"
  check "loom sandbox: no warning for any documented Claude Code key" lacks "$sb" "unknown key"
  check "loom sandbox: no type error" lacks "$sb" "must be"
fi

# ---- 3. an untrusted project's copy: set aside, the run goes on ------------------
rm -f "$LOOM_HOME/settings.json" "$T/proj/.loom/settings.local.json"
cp "$FIXTURE" "$T/proj/.loom/settings.json"
run untrusted
assert_eq "untrusted: the run completed" "$status" "0"
check "untrusted: no warning for any documented Claude Code key" lacks "$err" "unknown key"
check "untrusted: no type error" lacks "$err" "must be"
assert_contains "untrusted: the project's widening settings are set aside, as always" "$err" \
  "ignored .loom/settings.json: permissions.allow[0] \"Bash(npm run lint)\""
assert_contains "untrusted: its deny rule, which only narrows, still denies" \
  "$(jq -r 'select(.type == "tool.failed") | .payload.output' <<<"$out")" "Bash(curl:*)"

finish
