#!/usr/bin/env bash
# Structured output: an Agent call with an output_schema gives the child a
# StructuredOutput tool with that schema. Its first value is invalid (the
# error names the field), the second is accepted; the parent's tool result
# is the JSON, and raw.structured holds it.
source "$(dirname "$0")/_lib.sh"

mkdir -p "$T/proj" "$LOOM_HOME"
echo '{"agents": {"enabled": true}}' > "$LOOM_HOME/settings.json"
cat > "$T/scenario.json" <<JSON
{"turns": [
  {"match": {"assistant_turns": 0, "last_user_contains": "PARENT-GOAL"},
   "reply": {"text": "Asking for a verdict.", "tool_calls": [
     {"id": "v1", "name": "Agent", "input": {"description": "verdict", "prompt": "CHILD give a verdict",
       "output_schema": {"type": "object", "properties": {"verdict": {"type": "string", "enum": ["PASS", "FAIL"]},
                         "count": {"type": "integer"}}, "required": ["verdict"]}}}]}},
  {"match": {"assistant_turns": 0, "last_user_contains": "CHILD"},
   "reply": {"text": "Trying.", "tool_calls": [
     {"id": "so1", "name": "StructuredOutput", "input": {"verdict": "MAYBE"}},
     {"id": "gl1", "name": "Glob", "input": {"pattern": "*.none"}}]}},
  {"match": {"assistant_turns": 1, "tool_results": 2},
   "reply": {"text": "Again.", "tool_calls": [{"id": "so2", "name": "StructuredOutput", "input": {"verdict": "PASS", "count": 2}}]}},
  {"match": {"assistant_turns": 2, "tool_results": 3}, "reply": {"text": "Done."}},
  {"match": {"assistant_turns": 1, "tool_results": 1}, "reply": {"text": "PARENT-DONE"}}
]}
JSON
for provider in ${PROVIDERS:-anthropic openai}; do
  start_mock "$T/scenario.json"
  use_provider "$provider"
  "$LOOM_BIN" -p "PARENT-GOAL" --permission-mode bypassPermissions --cwd "$T/proj" \
    --output-format events >"$T/events" 2>"$T/err" || true
  last=$(tail -n 1 "$T/events")
  assert_eq "$provider: the run completed" "$(jq -r .payload.result <<<"$last")" "PARENT-DONE"
  file=$(session_file "$(jq -r .payload.session_id <<<"$last")")
  res=$(jq -c 'select(.type=="function_call_result" and .callId=="v1")' "$file")
  assert_eq "$provider: the parent's result is the JSON" "$(jq -c '.output | fromjson' <<<"$res")" '{"verdict":"PASS","count":2}'
  assert_eq "$provider: raw.structured" "$(jq -c .providerData.toolResult.rawResponse.structured <<<"$res")" '{"verdict":"PASS","count":2}'
  side=$(jq -r .providerData.toolResult.rawResponse.transcriptPath <<<"$res")
  bad=$(jq -r 'select(.type=="function_call_result" and .callId=="so1") | .output' "$side")
  assert_contains "$provider: the invalid value's error names the field" "$bad" "verdict"
  check "$provider: the invalid call is an error" \
    jq -se '[.[] | select(.type=="function_call_result" and .callId=="so1")][0].isError == true' "$side"
  first=$(jq -c 'select((.body|tostring)|contains("CHILD give")) | [.body.tools[] | (.name // .function.name)]' "$MOCK_LOG" | head -n 1)
  assert_contains "$provider: the child declares StructuredOutput" "$first" "StructuredOutput"
done
finish
