#!/usr/bin/env bash
# Hooks with real scripts: exit 2 blocks and its stderr reaches the model;
# updatedInput changes the command that actually runs; PostToolUse
# additionalContext reaches the next request; a hanging hook times out
# without blocking; a hook from an untrusted project is skipped with a notice.
source "$(dirname "$0")/_lib.sh"
mkdir -p "$T/proj/.loom" "$LOOM_HOME"

cat > "$T/pre.sh" <<'SH'
#!/usr/bin/env bash
input=$(cat)
cmd=$(jq -r .tool_input.command <<<"$input")
case "$cmd" in
  *forbidden*) echo "policy: no forbidden things here" >&2; exit 2 ;;
  *rewrite-me*) jq -n '{hookSpecificOutput: {hookEventName: "PreToolUse", permissionDecision: "allow",
                        updatedInput: {command: "echo rewritten by hook > rewritten.txt"}}}' ;;
  *hang*) sleep 30 ;;
  *) exit 0 ;;
esac
SH
cat > "$T/post.sh" <<'SH'
#!/usr/bin/env bash
cat > /dev/null
jq -n '{hookSpecificOutput: {hookEventName: "PostToolUse", additionalContext: "NOTE FROM POST HOOK"}}'
SH
echo 'touch "$LOOM_PROJECT_DIR/untrusted-hook-ran"' > "$T/untrusted.sh"
chmod +x "$T"/*.sh
cat > "$LOOM_HOME/settings.json" <<JSON
{"permissions": {"defaultMode": "bypassPermissions"},
 "hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "$T/pre.sh", "timeout": 2}]}],
           "PostToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "$T/post.sh"}]}]}}
JSON
cat > "$T/proj/.loom/settings.json" <<JSON
{"hooks": {"PreToolUse": [{"matcher": "", "hooks": [{"type": "command", "command": "bash $T/untrusted.sh"}]}]}}
JSON
cat > "$T/scenario.json" <<'JSON'
{"turns": [
  {"reply": {"tool_calls": [{"id": "h1", "name": "Bash", "input": {"command": "echo forbidden > blocked.txt"}}]}},
  {"reply": {"tool_calls": [{"id": "h2", "name": "Bash", "input": {"command": "echo rewrite-me > original.txt"}}]}},
  {"reply": {"tool_calls": [{"id": "h3", "name": "Bash", "input": {"command": "echo hang > hang.txt"}}]}},
  {"reply": {"text": "Hooks observed."}}
]}
JSON
for provider in ${PROVIDERS:-anthropic openai}; do
  rm -f "$T/proj"/*.txt "$T/proj/untrusted-hook-ran"
  start_mock "$T/scenario.json"
  use_provider "$provider"
  json=$("$LOOM_BIN" -p "hooks" --cwd "$T/proj" --output-format json 2>"$T/err")
  file=$(session_file "$(jq -r .session_id <<<"$json")")
  result() { jq -r --arg id "$1" 'select(.type=="function_call_result" and .callId==$id) | .output' "$file"; }
  assert_contains "$provider: exit 2 blocks with the hook's stderr" "$(result h1)" "policy: no forbidden things here"
  check "$provider: the blocked command did not run" test ! -e "$T/proj/blocked.txt"
  check "$provider: updatedInput ran instead of the original" test -e "$T/proj/rewritten.txt"
  check "$provider: the original command did not run" test ! -e "$T/proj/original.txt"
  check "$provider: the hanging hook did not block the call" test -e "$T/proj/hang.txt"
  assert_contains "$provider: the timeout is reported" "$(cat "$T/err")" "timed out"
  req=$(sed -n 3p "$MOCK_LOG")
  assert_contains "$provider: PostToolUse context reached the next request" "$req" "NOTE FROM POST HOOK"
  check "$provider: the untrusted project hook never ran" test ! -e "$T/proj/untrusted-hook-ran"
  assert_contains "$provider: the skip is announced" "$(cat "$T/err")" "untrusted"
done
finish
