#!/usr/bin/env bash
# Every lifecycle hook Loom has a point for fires, in order, with Claude
# Code's payload fields; a UserPromptSubmit hook that exits 2 stops the prompt
# before any model call; a Stop hook that blocks sends the agent back to work.
source "$(dirname "$0")/_lib.sh"
mkdir -p "$T/proj" "$LOOM_HOME"
echo "Project rules." > "$T/proj/AGENTS.md"

cat > "$T/log.sh" <<'SH'
#!/usr/bin/env bash
input=$(cat)
jq -c '{e: .hook_event_name, tool: .tool_name, prompt: .prompt, source: .source, reason: .reason,
        file: .file_path, active: .stop_hook_active, state: .state}' <<<"$input" >> "$HOOK_LOG"
case "$(jq -r .prompt <<<"$input")" in *forbidden-prompt*) echo "prompts like that are not allowed" >&2; exit 2 ;; esac
SH
chmod +x "$T/log.sh"
export HOOK_LOG="$T/hooks.jsonl"
hooks='{}'
for ev in SessionStart UserPromptSubmit InstructionsLoaded PreToolUse PostToolUse PostToolUseFailure \
          PermissionDenied Stop FinalStop SessionEnd; do
  hooks=$(jq --arg ev "$ev" --arg cmd "$T/log.sh" '.[$ev] = [{matcher: "", hooks: [{type: "command", command: $cmd}]}]' <<<"$hooks")
done
jq -n --argjson h "$hooks" '{hooks: $h}' > "$LOOM_HOME/settings.json"

cat > "$T/scenario.json" <<'JSON'
{"turns": [
  {"reply": {"tool_calls": [{"id": "ok1", "name": "Bash", "input": {"command": "echo fine"}}]}},
  {"reply": {"tool_calls": [{"id": "bad1", "name": "Bash", "input": {"command": "exit 3"}}]}},
  {"reply": {"text": "Finished."}}
]}
JSON
start_mock "$T/scenario.json"
use_provider anthropic
"$LOOM_BIN" -p "work" --permission-mode bypassPermissions --cwd "$T/proj" >/dev/null
assert_eq "events fire in lifecycle order" "$(jq -r .e "$HOOK_LOG" | paste -sd,)" \
  "SessionStart,InstructionsLoaded,UserPromptSubmit,PreToolUse,PostToolUse,PreToolUse,PostToolUseFailure,Stop,FinalStop,SessionEnd"
assert_eq "SessionStart says startup" "$(jq -r 'select(.e=="SessionStart") | .source' "$HOOK_LOG")" "startup"
assert_eq "UserPromptSubmit carries the prompt" "$(jq -r 'select(.e=="UserPromptSubmit") | .prompt' "$HOOK_LOG")" "work"
assert_eq "InstructionsLoaded names AGENTS.md" "$(jq -r 'select(.e=="InstructionsLoaded") | .file' "$HOOK_LOG")" "$T/proj/AGENTS.md"
assert_eq "PreToolUse carries the tool" "$(jq -r 'select(.e=="PreToolUse") | .tool' "$HOOK_LOG" | head -n 1)" "Bash"
assert_eq "FinalStop carries the state" "$(jq -r 'select(.e=="FinalStop") | .state' "$HOOK_LOG")" "completed"

# Headless default mode: the Bash call is denied → PermissionDenied.
: > "$HOOK_LOG"
start_mock "$T/scenario.json"
"$LOOM_BIN" -p "work" --cwd "$T/proj" >/dev/null
check "PermissionDenied fired for the denied call" grep -q '"e":"PermissionDenied"' "$HOOK_LOG"

# A prompt the UserPromptSubmit hook refuses never reaches the model.
: > "$HOOK_LOG"
start_mock "$T/scenario.json"
set +e
json=$("$LOOM_BIN" -p "a forbidden-prompt" --cwd "$T/proj" --output-format json 2>"$T/err")
status=$?
set -e
check "blocked prompt: non-zero exit" test "$status" -ne 0
assert_eq "blocked prompt: state" "$(jq -r .state <<<"$json")" "blocked_by_policy"
assert_contains "blocked prompt: the hook's reason is shown" "$(cat "$T/err")" "prompts like that are not allowed"
assert_eq "blocked prompt: no model request" "$(wc -l < "$MOCK_LOG")" "0"

# A Stop hook that blocks once sends the agent back to work with its reason.
cat > "$T/stop.sh" <<'SH'
#!/usr/bin/env bash
if jq -e '.stop_hook_active' >/dev/null; then exit 0; fi
echo "Run the tests before you stop." >&2
exit 2
SH
chmod +x "$T/stop.sh"
jq -n --arg cmd "$T/stop.sh" '{hooks: {Stop: [{matcher: "", hooks: [{type: "command", command: $cmd}]}]}}' \
  > "$LOOM_HOME/settings.json"
cat > "$T/stop_scenario.json" <<'JSON'
{"turns": [
  {"reply": {"text": "I am done."}},
  {"reply": {"text": "Tests run; now I am done."}}
]}
JSON
start_mock "$T/stop_scenario.json"
out=$("$LOOM_BIN" -p "work" --cwd "$T/proj")
assert_contains "Stop block: the agent went on" "$out" "Tests run; now I am done."
assert_contains "Stop block: the reason reached the model" "$(tail -n 1 "$MOCK_LOG")" "Run the tests before you stop."
finish
