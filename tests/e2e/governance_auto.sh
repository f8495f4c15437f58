#!/usr/bin/env bash
# auto mode: calls the rules cannot settle go to the model classifier, which
# allows or denies; an unusable answer fails closed (denied headless, never a
# silent allow); read-only and rule-forbidden calls never reach it.
source "$(dirname "$0")/_lib.sh"
mkdir -p "$T/proj"
cat > "$T/scenario.json" <<'JSON'
{"turns": [
  {"match": {"system_contains": "security monitor", "last_user_contains": "allowed.txt"},
   "reply": {"text": "{\"decision\": \"allow\", \"reason\": \"writes a file inside the project\"}"}},
  {"match": {"system_contains": "security monitor", "last_user_contains": "refused.txt"},
   "reply": {"text": "{\"decision\": \"deny\", \"reason\": \"not what the user asked for\"}"}},
  {"match": {"system_contains": "security monitor", "last_user_contains": "garbled.txt"},
   "reply": {"text": "I think it is probably fine?"}},
  {"reply": {"tool_calls": [{"id": "a1", "name": "Bash", "input": {"command": "echo yes > allowed.txt"}}]}},
  {"reply": {"tool_calls": [{"id": "a2", "name": "Bash", "input": {"command": "echo no > refused.txt"}}]}},
  {"reply": {"tool_calls": [{"id": "a3", "name": "Bash", "input": {"command": "echo ? > garbled.txt"}}]}},
  {"reply": {"tool_calls": [{"id": "a4", "name": "Bash", "input": {"command": "rm -rf /"}}]}},
  {"reply": {"tool_calls": [{"id": "a5", "name": "Bash", "input": {"command": "ls"}}]}},
  {"reply": {"text": "Auto mode observed."}}
]}
JSON
for provider in ${PROVIDERS:-anthropic openai}; do
  rm -f "$T/proj"/*.txt
  start_mock "$T/scenario.json"
  use_provider "$provider"
  json=$("$LOOM_BIN" -p "auto things" --permission-mode auto --cwd "$T/proj" --output-format json)
  file=$(session_file "$(jq -r .session_id <<<"$json")")
  result() { jq -r --arg id "$1" 'select(.type=="function_call_result" and .callId==$id) | .output' "$file"; }
  check "$provider: the classifier's allow ran the command" test -e "$T/proj/allowed.txt"
  check "$provider: the classifier's deny stopped it" test ! -e "$T/proj/refused.txt"
  assert_contains "$provider: the model is told the classifier's reason" "$(result a2)" "not what the user asked for"
  check "$provider: an unusable answer fails closed" test ! -e "$T/proj/garbled.txt"
  assert_contains "$provider: and says why" "$(result a3)" "classifier could not decide"
  assert_contains "$provider: a forbidden command is denied by the rules" "$(result a4)" "denied"
  classifier_calls=$(jq -r 'select(.body | tostring | contains("security monitor")) | .t' "$MOCK_LOG" | wc -l)
  assert_eq "$provider: three classifier calls (not for rm -rf / or ls)" "$classifier_calls" "3"
  audit="$LOOM_HOME/audit/$(jq -r .session_id <<<"$json").jsonl"
  assert_eq "$provider: the audit log records the classifier's verdicts" \
    "$(jq -r 'select(.call_id=="a1" or .call_id=="a2") | .model_classifier' "$audit" | tr -d '\n ' | grep -o 'allow\|deny' | paste -sd,)" "allow,deny"
  assert_eq "$provider: the run completed" "$(jq -r .result <<<"$json")" "Auto mode observed."
done
finish
