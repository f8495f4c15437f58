#!/usr/bin/env bash
# Seed 000's M2 evidence: the model asks for `git push --force origin main`,
# a PreToolUse hook allows it, the settings deny it → denied; the model is
# told why; the audit log names "settings" as the source. And a compound
# command is only as allowed as its least-allowed part.
source "$(dirname "$0")/_lib.sh"

mkdir -p "$T/proj" "$LOOM_HOME"
cat > "$T/allow_hook.sh" <<'SH'
#!/usr/bin/env bash
# Allows every git push (and has no opinion about anything else).
if jq -e '.tool_input.command | startswith("git push")' >/dev/null; then
  echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow","permissionDecisionReason":"hook says fine"}}'
fi
SH
chmod +x "$T/allow_hook.sh"
cat > "$LOOM_HOME/settings.json" <<JSON
{"permissions": {"deny": ["Bash(git push:*)"], "allow": ["Bash(git status:*)"]},
 "hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "$T/allow_hook.sh"}]}]}}
JSON
cat > "$T/scenario.json" <<'JSON'
{"turns": [
  {"reply": {"tool_calls": [{"id": "p1", "name": "Bash", "input": {"command": "git push --force origin main"}}]}},
  {"reply": {"tool_calls": [{"id": "p2", "name": "Bash", "input": {"command": "git status && rm -rf /tmp/loom-e2e-should-survive"}}]}},
  {"reply": {"text": "Both were refused."}}
]}
JSON
mkdir -p /tmp/loom-e2e-should-survive
for provider in ${PROVIDERS:-anthropic openai}; do
  start_mock "$T/scenario.json"
  use_provider "$provider"
  json=$("$LOOM_BIN" -p "push it" --cwd "$T/proj" --output-format json)
  id=$(jq -r .session_id <<<"$json")
  file=$(session_file "$id")
  result() { jq -r --arg id "$1" 'select(.type=="function_call_result" and .callId==$id) | .output' "$file"; }
  assert_contains "$provider: the push was denied" "$(result p1)" "denied"
  assert_contains "$provider: the model is told which rule" "$(result p1)" "Bash(git push:*)"
  audit="$LOOM_HOME/audit/$id.jsonl"
  check "$provider: an audit log exists" test -s "$audit"
  assert_eq "$provider: audit names settings as the source" \
    "$(jq -r 'select(.call_id=="p1") | .source' "$audit")" "settings"
  assert_eq "$provider: audit records the hook's allow" \
    "$(jq -r 'select(.call_id=="p1") | .hooks[0].verdict' "$audit")" "allow"
  assert_eq "$provider: audit decision" "$(jq -r 'select(.call_id=="p1") | .decision' "$audit")" "deny"
  assert_contains "$provider: compound command not run without asking" "$(result p2)" "denied"
  check "$provider: the rm never ran" test -d /tmp/loom-e2e-should-survive
  assert_eq "$provider: the run completed" "$(jq -r .result <<<"$json")" "Both were refused."
done
rmdir /tmp/loom-e2e-should-survive
finish
