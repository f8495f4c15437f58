#!/usr/bin/env bash
# Prompt and agent hooks (issue 25 item 2, seed 001 §6.2; Claude Code's
# `type: "prompt"` / `type: "agent"`):
#
# 1. An agent hook runs a read-only sub-agent that reads a file to check the
#    condition, then answers {"ok": false, …}: the Write it guards does not
#    run, the model is told why, and the sub-agent's requests carry only
#    reading tools.
# 2. A prompt hook blocks a Bash call with its judge's reason.
# 3. Neither can allow what settings deny: a judge and an agent that answer
#    with every allowing field Claude Code knows leave a settings deny a
#    deny (and a headless settings ask a denial), and their rewrite of the
#    input is never applied.
source "$(dirname "$0")/_lib.sh"
export LOOM_MAX_RETRIES=0
mkdir -p "$T/proj"
echo "secret.cfg" > "$T/proj/PROTECTED.txt"

# --- 1 + 2 ------------------------------------------------------------------------
cat > "$LOOM_HOME/settings.json" <<'JSON'
{"hooks": {"PreToolUse": [
  {"matcher": "Write", "hooks": [{"type": "agent", "timeout": 60,
    "prompt": "Check that the file this call writes is not listed in PROTECTED.txt. The call: $ARGUMENTS"}]},
  {"matcher": "Bash", "hooks": [{"type": "prompt",
    "prompt": "Refuse commands that delete files. The call: $ARGUMENTS"}]}]}}
JSON
cat > "$T/block.json" <<'JSON'
{"turns": [
  {"match": {"system_contains": "Explore agent", "tool_results": 0},
   "reply": {"tool_calls": [{"id": "x1", "name": "Read", "input": {"file_path": "PROTECTED.txt"}}],
             "usage": {"input_tokens": 30, "output_tokens": 3}}},
  {"match": {"system_contains": "Explore agent", "tool_results": 1},
   "reply": {"text": "{\"ok\": false, \"reason\": \"secret.cfg is listed in PROTECTED.txt\"}",
             "usage": {"input_tokens": 40, "output_tokens": 4}}},
  {"match": {"system_contains": "hook judge"},
   "reply": {"text": "{\"ok\": false, \"reason\": \"rm deletes notes.txt\"}"}},
  {"reply": {"tool_calls": [{"id": "w1", "name": "Write",
                             "input": {"file_path": "secret.cfg", "content": "token=1"}}]}},
  {"reply": {"tool_calls": [{"id": "b1", "name": "Bash", "input": {"command": "rm notes.txt"}}]}},
  {"reply": {"text": "Both were blocked."}}
]}
JSON
for provider in ${PROVIDERS:-anthropic openai}; do
  echo notes > "$T/proj/notes.txt"
  rm -f "$T/proj/secret.cfg"
  start_mock "$T/block.json"
  use_provider "$provider"
  json=$("$LOOM_BIN" -p "save the token" --model mock-main --permission-mode bypassPermissions \
           --cwd "$T/proj" --output-format json)
  assert_eq "$provider: the run completed" "$(jq -r .result <<<"$json")" "Both were blocked."
  check "$provider: the agent hook's block kept the Write from running" test ! -e "$T/proj/secret.cfg"
  check "$provider: the prompt hook's block kept the file" test -e "$T/proj/notes.txt"
  file=$(session_file "$(jq -r .session_id <<<"$json")")
  result() { jq -r --arg id "$1" 'select(.type=="function_call_result" and .callId==$id) | .output' "$file"; }
  assert_contains "$provider: the model is told the agent's reason" "$(result w1)" "secret.cfg is listed in PROTECTED.txt"
  assert_contains "$provider: and the judge's" "$(result b1)" "rm deletes notes.txt"
  read_back=$(jq -r 'select(.body | tostring | contains("Explore agent")) | select(.turn == 1) | .body | tostring' "$MOCK_LOG")
  assert_contains "$provider: the sub-agent read the file to check" "$read_back" "secret.cfg"
  tools=$(jq -r 'select(.body | tostring | contains("Explore agent")) | .body.tools[]? | (.name // .function.name)' "$MOCK_LOG" | sort -u | paste -sd,)
  check "$provider: the sub-agent was offered Read" grep -q "Read" <<<"$tools"
  check "$provider: and no writing tool (got $tools)" bash -c '! grep -qE "(^|,)(Write|Edit|Bash|NotebookEdit)(,|$)" <<<"$1"' _ "$tools"
  assert_eq "$provider: both hooks are helper calls in the session" \
    "$(jq -r 'select(.type=="helper-call") | "\(.purpose):\(.status)"' "$file" | paste -sd,)" \
    "hook_agent:ok,hook_prompt:ok"
  check "$provider: the run's tokens include the sub-agent's 70" test "$(jq -r .usage.input_tokens <<<"$json")" -ge 70
done

# --- 3: never looser than settings -------------------------------------------------
ALLOWING='{\"ok\": true, \"decision\": \"approve\", \"hookSpecificOutput\": {\"hookEventName\": \"PreToolUse\", \"permissionDecision\": \"allow\", \"updatedInput\": {\"command\": \"touch rewritten.txt\"}}}'
cat > "$LOOM_HOME/settings.json" <<'JSON'
{"permissions": {"deny": ["Bash(rm:*)"], "ask": ["Bash(touch:*)"]},
 "hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
   {"type": "prompt", "prompt": "Approve everything. $ARGUMENTS"},
   {"type": "agent", "prompt": "Approve everything. $ARGUMENTS"}]}]}}
JSON
cat > "$T/loosen.json" <<JSON
{"turns": [
  {"match": {"system_contains": "hook judge"}, "reply": {"text": "$ALLOWING"}},
  {"match": {"system_contains": "Explore agent"}, "reply": {"text": "$ALLOWING"}},
  {"reply": {"tool_calls": [{"id": "d1", "name": "Bash", "input": {"command": "rm notes.txt"}}]}},
  {"reply": {"tool_calls": [{"id": "d2", "name": "Bash", "input": {"command": "touch asked.txt"}}]}},
  {"reply": {"text": "Refused."}}
]}
JSON
for provider in ${PROVIDERS:-anthropic openai}; do
  echo notes > "$T/proj/notes.txt"
  rm -f "$T/proj/asked.txt" "$T/proj/rewritten.txt"
  start_mock "$T/loosen.json"
  use_provider "$provider"
  json=$("$LOOM_BIN" -p "clean" --model mock-main --cwd "$T/proj" --output-format json)
  file=$(session_file "$(jq -r .session_id <<<"$json")")
  result() { jq -r --arg id "$1" 'select(.type=="function_call_result" and .callId==$id) | .output' "$file"; }
  check "$provider: the settings deny held" test -e "$T/proj/notes.txt"
  assert_contains "$provider: denied by the settings rule" "$(result d1)" "Bash(rm:*)"
  check "$provider: the settings ask held (headless: denied)" test ! -e "$T/proj/asked.txt"
  check "$provider: the hooks' rewrite never ran" test ! -e "$T/proj/rewritten.txt"
  assert_contains "$provider: the ask was not skipped" "$(result d2)" "denied"
  asked=$(jq -r 'select(.body | tostring | contains("hook judge") or contains("Explore agent")) | .t' "$MOCK_LOG" | wc -l)
  check "$provider: both hook types were asked (got $asked requests)" test "$asked" -ge 4
done
rm -f "$LOOM_HOME/settings.json"
finish
