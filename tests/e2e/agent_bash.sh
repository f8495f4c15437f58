#!/usr/bin/env bash
# Bash through the agent: a timeout kills the whole process group (the
# grandchild too, checked by pid); a background shell is read with TaskOutput.
source "$(dirname "$0")/_lib.sh"

mkdir -p "$T/proj"
cat > "$T/scenario.json" <<'JSON'
{"turns": [
  {"reply": {"tool_calls": [{"id": "b1", "name": "Bash",
     "input": {"command": "sleep 60 & echo $! > grandchild.pid; wait", "timeout": 700}}]}},
  {"reply": {"tool_calls": [{"id": "b2", "name": "Bash",
     "input": {"command": "echo one; sleep 0.4; echo two", "run_in_background": true}}]}},
  {"reply": {"tool_calls": [{"id": "b3", "name": "TaskOutput", "input": {"task_id": "bash_1", "block": true, "timeout": 10000}}]}},
  {"reply": {"text": "Background output read."}}
]}
JSON
for provider in ${PROVIDERS:-anthropic openai}; do
  rm -f "$T/proj/grandchild.pid"
  start_mock "$T/scenario.json"
  use_provider "$provider"
  json=$("$LOOM_BIN" -p "shell things" --permission-mode bypassPermissions --cwd "$T/proj" --output-format json)
  file=$(session_file "$(jq -r .session_id <<<"$json")")
  result() { jq -r --arg id "$1" 'select(.type=="function_call_result" and .callId==$id) | .output' "$file"; }
  assert_contains "$provider: the timeout is reported" "$(result b1)" "timed out"
  check "$provider: the grandchild's pid was written" test -s "$T/proj/grandchild.pid"
  pid=$(cat "$T/proj/grandchild.pid")
  # Gone, or a zombie nobody reaps (PID 1 in some containers does not): not running.
  state=$(awk '{print $3}' "/proc/$pid/stat" 2>/dev/null || echo gone)
  check "$provider: the grandchild sleep is not running (state: $state)" test "$state" = gone -o "$state" = Z
  assert_contains "$provider: background start names the task" "$(result b2)" "bash_1"
  assert_contains "$provider: TaskOutput has the first line" "$(result b3)" "one"
  assert_contains "$provider: TaskOutput waited for the end" "$(result b3)" "two"
  assert_eq "$provider: final answer" "$(jq -r .result <<<"$json")" "Background output read."
done
finish
