#!/usr/bin/env bash
# Failures the model must see and route around: an unknown tool, invalid
# input, Write of an unread file, a non-unique Edit, a file changed on disk
# after Read. Every one is an error result; the run goes on to its answer.
source "$(dirname "$0")/_lib.sh"

mkdir -p "$T/proj"
printf 'dup\ndup\nkeep\n' > "$T/proj/existing.txt"
cat > "$T/scenario.json" <<'JSON'
{"turns": [
  {"reply": {"tool_calls": [{"id": "c1", "name": "Frobnicate", "input": {}},
                            {"id": "c2", "name": "Read", "input": {"file_path": 42}}]}},
  {"reply": {"tool_calls": [{"id": "c3", "name": "Write", "input": {"file_path": "existing.txt", "content": "overwritten"}}]}},
  {"reply": {"tool_calls": [{"id": "c4", "name": "Read", "input": {"file_path": "existing.txt"}}]}},
  {"reply": {"tool_calls": [{"id": "c5", "name": "Edit", "input": {"file_path": "existing.txt", "old_string": "dup", "new_string": "one"}}]}},
  {"reply": {"tool_calls": [{"id": "c6", "name": "Bash", "input": {"command": "sleep 1.1; echo changed >> existing.txt"}}]}},
  {"reply": {"tool_calls": [{"id": "c7", "name": "Edit", "input": {"file_path": "existing.txt", "old_string": "keep", "new_string": "kept"}}]}},
  {"reply": {"text": "I could not make the change safely."}}
]}
JSON
for provider in ${PROVIDERS:-anthropic openai}; do
  printf 'dup\ndup\nkeep\n' > "$T/proj/existing.txt"
  start_mock "$T/scenario.json"
  use_provider "$provider"
  json=$("$LOOM_BIN" -p "try things" --permission-mode bypassPermissions --cwd "$T/proj" --output-format json)
  assert_eq "$provider: the run completed" "$(jq -r .subtype <<<"$json")" "success"
  file=$(session_file "$(jq -r .session_id <<<"$json")")
  result() { jq -r --arg id "$1" 'select(.type=="function_call_result" and .callId==$id) | .output' "$file"; }
  is_error() { jq -r --arg id "$1" 'select(.type=="function_call_result" and .callId==$id) | .isError' "$file"; }
  assert_contains "$provider: unknown tool named" "$(result c1)" "No such tool available: Frobnicate"
  assert_eq "$provider: unknown tool is an error" "$(is_error c1)" "true"
  assert_contains "$provider: invalid input explained" "$(result c2)" "file_path"
  assert_eq "$provider: invalid input is an error" "$(is_error c2)" "true"
  assert_contains "$provider: write of an unread file refused" "$(result c3)" "has not been read"
  assert_eq "$provider: the unread file is untouched" "$(head -n 1 "$T/proj/existing.txt")" "dup"
  assert_contains "$provider: non-unique edit asks for context" "$(result c5)" "more context"
  assert_contains "$provider: changed-on-disk edit refused" "$(result c7)" "modified since read"
  assert_eq "$provider: file keeps the outside change" "$(tail -n 1 "$T/proj/existing.txt")" "changed"
  assert_eq "$provider: final answer" "$(jq -r .result <<<"$json")" "I could not make the change safely."
done
finish
