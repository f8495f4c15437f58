#!/usr/bin/env bash
# Claude Code's settings files count in Loom (docs/compat.md): a project's
# .claude/settings.json denying Read(./secret.txt) denies it — in an
# untrusted workspace and in a trusted one — while a Read of another file
# goes through; its allow rule lets a command run only once the workspace
# is trusted; its PreToolUse hook fires trusted and is skipped with a
# notice untrusted; the model of ~/.claude/settings.json is the one asked
# for. With "compat": {"claude": false} (or LOOM_COMPAT_CLAUDE=0) the allow,
# the hook and the model are gone, and the deny still holds.
source "$(dirname "$0")/_lib.sh"

P="$T/proj"
mkdir -p "$P/.claude/hooks" "$HOME/.claude"
echo "SECRET-CONTENT" > "$P/secret.txt"
echo "OTHER-CONTENT" > "$P/other.txt"
# As Claude Code users write them: the hook through $CLAUDE_PROJECT_DIR.
cat > "$P/.claude/hooks/mark.sh" <<'SH'
#!/usr/bin/env bash
cat > /dev/null
echo fired >> "$CLAUDE_PROJECT_DIR/hook-ran"
SH
chmod +x "$P/.claude/hooks/mark.sh"
cat > "$P/.claude/settings.json" <<'JSON'
{"permissions": {"deny": ["Read(./secret.txt)"], "allow": ["Bash(touch claude-allowed.txt)"]},
 "hooks": {"PreToolUse": [{"matcher": "Read",
   "hooks": [{"type": "command", "command": "\"$CLAUDE_PROJECT_DIR\"/.claude/hooks/mark.sh"}]}]}}
JSON
echo '{"model": "claude-from-dot-claude"}' > "$HOME/.claude/settings.json"

jq -n --arg s "$P/secret.txt" --arg o "$P/other.txt" '{turns: [
  {reply: {tool_calls: [{id: "r0", name: "Read", input: {file_path: $o}}]}},
  {reply: {tool_calls: [{id: "r1", name: "Read", input: {file_path: $s}}]}},
  {reply: {tool_calls: [{id: "b1", name: "Bash", input: {command: "touch claude-allowed.txt"}}]}},
  {reply: {text: "Done."}}]}' > "$T/scenario.json"

# run NAME — one headless run in the project; sets file (the session), err, model.
run() {
  rm -f "$P/hook-ran" "$P/claude-allowed.txt"
  start_mock "$T/scenario.json"
  use_provider anthropic
  local json
  json=$("$LOOM_BIN" -p "read the files" --cwd "$P" --output-format json 2> "$T/$1.err")
  file=$(session_file "$(jq -r .session_id <<<"$json")")
  err=$(cat "$T/$1.err")
  model=$(head -n 1 "$MOCK_LOG" | jq -r .body.model)
  assert_eq "$1: the run completed" "$(jq -r .result <<<"$json")" "Done."
}
result() { jq -r --arg id "$1" 'select(.type=="function_call_result" and .callId==$id) | .output' "$file"; }
lacks() { [[ "$1" != *"$2"* ]]; }

# The checks every run makes: the deny holds, the control Read goes through.
deny_holds() {
  local r1
  r1=$(result r1)
  assert_contains "$1: the Read of secret.txt is denied" "$r1" "denied"
  assert_contains "$1: the model is told the .claude rule" "$r1" "Read(./secret.txt)"
  check "$1: the secret never reached the model" lacks "$(jq -r .raw_body "$MOCK_LOG")" "SECRET-CONTENT"
  assert_contains "$1: a Read of another file goes through" "$(result r0)" "OTHER-CONTENT"
}

# ---- 1. untrusted: the deny holds; the allow and the hook do not count -------------
run untrusted
deny_holds untrusted
assert_contains "untrusted: the .claude allow is set aside with a notice naming the file" "$err" \
  'ignored .claude/settings.json: permissions.allow[0] "Bash(touch claude-allowed.txt)"'
check "untrusted: the command the allow names is not run" test ! -e "$P/claude-allowed.txt"
assert_contains "untrusted: ... it is refused" "$(result b1)" "denied"
check "untrusted: the .claude hook did not run" test ! -e "$P/hook-ran"
assert_contains "untrusted: the skipped hook is a notice" "$err" \
  "skipped 1 PreToolUse hook(s) from untrusted project settings"
assert_eq "untrusted: the model of ~/.claude/settings.json is asked for" "$model" "claude-from-dot-claude"

# ---- 2. trusted: the deny still holds; the allow and the hook count ----------------
echo "{\"trustedWorkspaces\": [\"$P\"]}" > "$LOOM_HOME/settings.json"
run trusted
deny_holds trusted
check "trusted: the allowed command ran without a prompt" test -e "$P/claude-allowed.txt"
check "trusted: the .claude PreToolUse hook fired" test -s "$P/hook-ran"
assert_eq "trusted: it fired for both Reads (the denied one too)" "$(wc -l < "$P/hook-ran")" "2"
assert_eq "trusted: the model of ~/.claude/settings.json is asked for" "$model" "claude-from-dot-claude"

# ---- 3. compat off in the user settings: only the deny (and ask) rules remain --------
echo "{\"trustedWorkspaces\": [\"$P\"], \"compat\": {\"claude\": false}}" > "$LOOM_HOME/settings.json"
run compat-off
deny_holds compat-off
assert_contains "compat off: the .claude allow is gone: the command is refused" "$(result b1)" "denied"
check "compat off: ... and did not run" test ! -e "$P/claude-allowed.txt"
check "compat off: the .claude hook did not run" test ! -e "$P/hook-ran"
check "compat off: the model of ~/.claude/settings.json is not asked for" \
  test "$model" != "claude-from-dot-claude"

# ---- 4. the same from the environment; a repository cannot turn compat off ---------
echo "{\"trustedWorkspaces\": [\"$P\"]}" > "$LOOM_HOME/settings.json"
LOOM_COMPAT_CLAUDE=0 run compat-env
deny_holds compat-env
assert_contains "LOOM_COMPAT_CLAUDE=0: the allow is gone" "$(result b1)" "denied"
check "LOOM_COMPAT_CLAUDE=0: the model is not the .claude one" test "$model" != "claude-from-dot-claude"

mkdir -p "$P/.loom"
echo '{"compat": {"claude": false}}' > "$P/.loom/settings.json"
run project-says-off
assert_contains "a project's compat key is ignored, with a warning" "$err" \
  "\"compat\" is read from Loom's user settings only"
check "... and the .claude allow still counts" test -e "$P/claude-allowed.txt"
rm "$P/.loom/settings.json"

# ---- 5. a malformed .claude/settings.json stops the run, naming the file --------------
cp "$P/.claude/settings.json" "$T/good.json"
echo '{"permissions": {"deny": [' > "$P/.claude/settings.json"
start_mock "$T/scenario.json"
set +e
out=$("$LOOM_BIN" -p "read the files" --cwd "$P" 2>&1)
status=$?
set -e
check "a malformed .claude/settings.json is an error" test "$status" -ne 0
assert_contains "... naming the file" "$out" "$P/.claude/settings.json"
assert_eq "... and no model request is made" "$(wc -l < "$MOCK_LOG")" "0"
cp "$T/good.json" "$P/.claude/settings.json"
finish
