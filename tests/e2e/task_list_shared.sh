#!/usr/bin/env bash
# The task list (docs/tools.md, TaskCreate/TaskGet/TaskUpdate/TaskList): the
# main agent creates two tasks, one blocked by the other; two sub-agents,
# running at once, each claim one (owner), work it (in_progress) and finish
# it (completed) in the same list; the main agent's TaskList then shows both
# done with their owners. The list is kept beside the session file and a
# resumed session reads it back. Bad calls (an unknown task, a task
# blocking itself) are error results that change nothing. A sub-agent is
# offered the task tools but not the session's own ExitPlanMode and
# worktree tools.
source "$(dirname "$0")/_lib.sh"

mkdir -p "$T/proj" "$LOOM_HOME"
echo '{"agents": {"enabled": true}}' > "$LOOM_HOME/settings.json"
cat > "$T/scenario.json" <<'JSON'
{"turns": [
  {"match": {"assistant_turns": 0, "body_contains": "PARENT-GOAL-7"},
   "reply": {"text": "Planning.", "tool_calls": [
     {"id": "c1", "name": "TaskCreate", "input": {"subject": "Write the parser", "description": "Parse the config file", "activeForm": "Writing the parser"}},
     {"id": "c2", "name": "TaskCreate", "input": {"subject": "Write the tests", "description": "Cover the parser"}},
     {"id": "u0", "name": "TaskUpdate", "input": {"taskId": "2", "addBlockedBy": ["1"]}},
     {"id": "bad1", "name": "TaskUpdate", "input": {"taskId": "9", "status": "completed"}},
     {"id": "bad2", "name": "TaskUpdate", "input": {"taskId": "1", "addBlocks": ["1"]}},
     {"id": "l0", "name": "TaskList", "input": {}}]}},
  {"match": {"assistant_turns": 1, "body_contains": "PARENT-GOAL-7"},
   "reply": {"text": "Delegating.", "tool_calls": [
     {"id": "ag1", "name": "Agent", "input": {"description": "parser", "prompt": "CHILD-ALICE take task 1", "subagent_type": "general-purpose", "name": "alice"}},
     {"id": "ag2", "name": "Agent", "input": {"description": "tests", "prompt": "CHILD-BOB take task 2", "subagent_type": "general-purpose", "name": "bob"}}]}},
  {"match": {"assistant_turns": 2, "body_contains": "PARENT-GOAL-7"},
   "reply": {"tool_calls": [{"id": "l1", "name": "TaskList", "input": {}}]}},
  {"match": {"assistant_turns": 3, "body_contains": "PARENT-GOAL-7"},
   "reply": {"tool_calls": [{"id": "g1", "name": "TaskGet", "input": {"taskId": "1"}}]}},
  {"match": {"assistant_turns": 4, "body_contains": "PARENT-GOAL-7"},
   "reply": {"text": "PARENT-DONE"}},

  {"match": {"assistant_turns": 0, "body_contains": "CHILD-ALICE"},
   "reply": {"tool_calls": [{"name": "TaskUpdate", "input": {"taskId": "1", "owner": "alice", "status": "in_progress"}}]}},
  {"match": {"assistant_turns": 1, "body_contains": "CHILD-ALICE"},
   "reply": {"tool_calls": [{"name": "TaskUpdate", "input": {"taskId": "1", "status": "completed", "metadata": {"files": 3}}}]}},
  {"match": {"assistant_turns": 2, "body_contains": "CHILD-ALICE"},
   "reply": {"text": "ALICE-DONE"}},

  {"match": {"assistant_turns": 0, "body_contains": "CHILD-BOB"},
   "reply": {"tool_calls": [{"name": "TaskGet", "input": {"taskId": "2"}}, {"name": "TaskUpdate", "input": {"taskId": "2", "owner": "bob", "status": "in_progress"}}]}},
  {"match": {"assistant_turns": 1, "body_contains": "CHILD-BOB"},
   "reply": {"tool_calls": [{"name": "TaskUpdate", "input": {"taskId": "2", "status": "completed"}}]}},
  {"match": {"assistant_turns": 2, "body_contains": "CHILD-BOB"},
   "reply": {"text": "BOB-DONE"}}
]}
JSON
cat > "$T/resume.json" <<'JSON'
{"turns": [
  {"match": {"body_contains": "RESUME-GOAL-7", "assistant_turns": 5},
   "reply": {"tool_calls": [{"id": "r1", "name": "TaskList", "input": {}}, {"id": "r2", "name": "TaskGet", "input": {"taskId": "2"}},
     {"id": "r3", "name": "TaskUpdate", "input": {"taskId": "1", "status": "deleted"}}, {"id": "r4", "name": "TaskCreate", "input": {"subject": "Release", "description": "Tag it"}}]}},
  {"match": {"body_contains": "RESUME-GOAL-7", "assistant_turns": 6}, "reply": {"text": "RESUMED"}}
]}
JSON
for provider in ${PROVIDERS:-anthropic openai}; do
  rm -rf "$LOOM_HOME/projects"
  start_mock "$T/scenario.json"
  use_provider "$provider"
  json=$("$LOOM_BIN" -p "PARENT-GOAL-7" --permission-mode bypassPermissions --cwd "$T/proj" --output-format json)
  assert_eq "$provider: the run completed" "$(jq -r .result <<<"$json")" "PARENT-DONE"
  sid=$(jq -r .session_id <<<"$json")
  file=$(session_file "$sid")
  result() { jq -r --arg id "$1" 'select(.type=="function_call_result" and .callId==$id) | .output' "$file"; }
  is_error() { jq -r --arg id "$1" 'select(.type=="function_call_result" and .callId==$id) | .isError' "$file"; }

  assert_eq "$provider: TaskCreate numbers the tasks in call order" "$(result c1)" "Task #1 created successfully: Write the parser"
  assert_eq "$provider:   the second" "$(result c2)" "Task #2 created successfully: Write the tests"
  assert_eq "$provider: a dependency is recorded" "$(result u0)" "Updated task #2 blockedBy"
  assert_contains "$provider: an unknown task is refused" "$(result bad1)" "Task not found: there is no task #9"
  assert_eq "$provider:   as an error" "$(is_error bad1)" "true"
  assert_contains "$provider: a task cannot block itself" "$(result bad2)" "Task #1 cannot block itself"
  assert_eq "$provider: the list before the agents" "$(result l0)" \
    $'#1 [pending] Write the parser\n#2 [pending] Write the tests [blocked by #1]'

  for who in alice bob; do
    assert_eq "$provider: agent $who answered" \
      "$(jq -r --arg id "ag$([ $who = alice ] && echo 1 || echo 2)" 'select(.type=="function_call_result" and .callId==$id) | .output' "$file")" \
      "$(tr a-z A-Z <<<"$who")-DONE"
  done
  check "$provider: bob's TaskGet saw the main agent's task and its blocker" \
    grep -q 'Task #2: Write the tests\\nStatus: pending\\nDescription: Cover the parser\\nBlocked by: #1' "$MOCK_LOG"
  assert_eq "$provider: the main agent sees both tasks done by their owners" "$(result l1)" \
    $'#1 [completed] Write the parser (alice)\n#2 [completed] Write the tests (bob)'
  assert_contains "$provider: TaskGet shows the owner and what it blocks" "$(result g1)" \
    $'Task #1: Write the parser\nStatus: completed\nDescription: Parse the config file\nOwner: alice\nBlocks: #2'
  child_tools=$(jq -r 'select((.body|tostring)|contains("CHILD-ALICE")) | [.body.tools[] | (.name // .function.name)] | join(",")' "$MOCK_LOG" | head -n 1)
  check "$provider: a sub-agent is offered the task tools ($child_tools)" grep -qw TaskUpdate <<<"$child_tools"
  for t in ExitPlanMode EnterWorktree ExitWorktree; do
    check "$provider:   but not the session's own $t" bash -c "! grep -qw $t <<<'$child_tools'"
  done
  tasks=${file%.jsonl}.tasks.json
  check "$provider: the list is kept beside the session file" \
    jq -e '.nextId == 3 and ([.tasks[].status] == ["completed","completed"]) and .tasks[0].metadata.files == 3 and .tasks[0].activeForm == "Writing the parser"' "$tasks"

  stop_mock
  start_mock "$T/resume.json"
  use_provider "$provider"
  json=$("$LOOM_BIN" --resume "$sid" -p "RESUME-GOAL-7" --permission-mode bypassPermissions --cwd "$T/proj" --output-format json --max-turns 5)
  assert_eq "$provider: the resumed run completed" "$(jq -r .result <<<"$json")" "RESUMED"
  assert_eq "$provider: a resumed session reads its list back" "$(result r1)" \
    $'#1 [completed] Write the parser (alice)\n#2 [completed] Write the tests (bob)'
  assert_contains "$provider:   with the dependencies" "$(result r2)" "Blocked by: #1"
  assert_eq "$provider: deleting a task" "$(result r3)" "Updated task #1 deleted"
  assert_eq "$provider: ids are never reused" "$(result r4)" "Task #3 created successfully: Release"
  check "$provider: a deleted task leaves the other's lists" \
    jq -e '[.tasks[].id] == ["2","3"] and .tasks[0].blockedBy == []' "$tasks"
  stop_mock
done
finish
