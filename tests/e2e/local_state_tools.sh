#!/usr/bin/env bash
# Class 17 of issue #10: tools that change only Loom's own state (TodoWrite,
# AcknowledgeEvent, Renew) never ask — headless they run in every mode,
# plan and dontAsk included — while a settings deny still denies them and a
# settings ask still asks (denied headless). The flag opens nothing else:
# Write stays denied in plan mode, AskUserQuestion still needs a user.
source "$(dirname "$0")/_lib.sh"

PROJ="$T/proj"
mkdir -p "$PROJ"
cat > "$T/scenario.json" <<'JSON'
{"sequence": true,
 "comment": "Renew rewrites the conversation: turns are taken in order",
 "turns": [
  {"match": {"system_contains": "security monitor"}, "reply": {"text": "I cannot tell."}},
  {"reply": {"tool_calls": [{"id": "t1", "name": "TodoWrite", "input": {"todos": [
     {"content": "alpha-task-one", "status": "in_progress", "activeForm": "Doing alpha"}]}}]}},
  {"reply": {"tool_calls": [{"id": "t2", "name": "TodoWrite", "input": {"todos": [
     {"content": "alpha-task-one", "status": "completed", "activeForm": "Doing alpha"},
     {"content": "beta-task-two", "status": "pending", "activeForm": "Doing beta"}]}}]}},
  {"reply": {"tool_calls": [{"id": "t3", "name": "TodoWrite", "input": {"todos": []}}]}},
  {"reply": {"tool_calls": [{"id": "a1", "name": "AcknowledgeEvent", "input": {"event_id": "ev_01a22c13-8705-743c-b566-5fe6b797b8c9", "disposition": "ignore"}}]}},
  {"reply": {"tool_calls": [{"id": "n1", "name": "Renew", "input": {"reason": "context is long", "progress": "half done"}}]}},
  {"reply": {"tool_calls": [{"id": "w1", "name": "Write", "input": {"file_path": "written.txt", "content": "x"}}]}},
  {"reply": {"tool_calls": [{"id": "q1", "name": "AskUserQuestion", "input": {"questions": [{"question": "Which?", "header": "Pick", "multiSelect": false, "options": [{"label": "A", "description": "a"}, {"label": "B", "description": "b"}]}]}}]}},
  {"reply": {"text": "Local tools done."}}
]}
JSON

run_mode() { # $1: mode; sets file and json
  start_mock "$T/scenario.json"
  use_provider anthropic
  json=$("$LOOM_BIN" -p "plan the work" --permission-mode "$1" --cwd "$PROJ" --output-format json) || true
  file=$(session_file "$(jq -r .session_id <<<"$json")")
}
result() { jq -r --arg id "$1" 'select(.type=="function_call_result" and .callId==$id) | .output' "$file"; }
is_error() { jq -r --arg id "$1" 'select(.type=="function_call_result" and .callId==$id) | (.isError // .is_error // false)' "$file"; }

for mode in default plan dontAsk acceptEdits auto bypassPermissions; do
  rm -f "$PROJ/written.txt"
  run_mode "$mode"
  assert_eq "$mode: the run completed" "$(jq -r .result <<<"$json")" "Local tools done."
  for id in t1 t2 t3; do
    assert_contains "$mode: TodoWrite $id runs headless" "$(result $id)" "Todos have been modified"
  done
  # The plan really changed: the result shows the new list.
  assert_contains "$mode: the plan holds what was written" "$(result t2)" "☐ beta-task-two"
  out=$(result a1)
  case "$out" in
    *"Permission to use"*) not_ok "$mode: AcknowledgeEvent is not a permission question: [$out]" ;;
    *) ok "$mode: AcknowledgeEvent is not a permission question" ;;
  esac
  assert_contains "$mode: Renew runs headless" "$(result n1)" "Renew scheduled"
  assert_contains "$mode: AskUserQuestion still needs a user" "$(result q1)" "user"
  case "$mode" in
    plan|dontAsk|default|auto)
      assert_contains "$mode: Write is still not free" "$(result w1)" "denied"
      check "$mode: and nothing was written" test ! -e "$PROJ/written.txt" ;;
  esac
done

# A settings deny still denies; a settings ask still asks (denied headless);
# the deny of one tool leaves the others alone.
mkdir -p "$PROJ/.loom"
for list in deny ask; do
  echo "{\"permissions\": {\"$list\": [\"TodoWrite\", \"Renew\"]}}" > "$PROJ/.loom/settings.json"
  for mode in default plan dontAsk bypassPermissions; do
    run_mode "$mode"
    assert_contains "$list rule, $mode: TodoWrite is denied" "$(result t1)" "denied"
    assert_contains "$list rule, $mode: naming the rule" "$(result t1)" "TodoWrite"
    assert_contains "$list rule, $mode: Renew is denied too" "$(result n1)" "denied"
    out=$(result a1)
    case "$out" in
      *"Permission to use"*) not_ok "$list rule, $mode: AcknowledgeEvent still free: [$out]" ;;
      *) ok "$list rule, $mode: AcknowledgeEvent still free" ;;
    esac
  done
done
rm -rf "$PROJ/.loom"
finish
