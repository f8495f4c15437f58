#!/usr/bin/env bash
# No record is lost when calls that started while the reply streamed
# (docs/tools.md "Streaming tool execution") belong to an attempt that is
# retried. One reply holds two concurrency-safe calls, TaskList then
# TaskGet (the pair whose TaskGet result e2e.task_list_shared once missed on
# the Chat format). On each wire format, the first attempt fails after
# TaskList's block is whole (so it started early) and before TaskGet's is:
# a malformed event (the stream unreadable, retried); or the
# first attempt is a 500 and nothing started. Every time the session has
# one function_call and one function_call_result per call, in call order,
# with the right output; one tool.started / tool.finished per call; and the
# model gets both results. A PreToolUse hook shows that the cut attempt's
# TaskList did run early (the hook saw it twice), so the discarded early
# call is what is checked.
source "$(dirname "$0")/_lib.sh"

mkdir -p "$T/proj"
cat > "$T/pre.sh" <<SH
#!/usr/bin/env bash
jq -r .tool_use_id >> "\$HOOK_LOG"
echo '{}'
SH
chmod +x "$T/pre.sh"
cat > "$LOOM_HOME/settings.json" <<JSON
{"hooks": {"PreToolUse": [{"matcher": "TaskList|TaskGet", "hooks": [{"type": "command", "command": "$T/pre.sh"}]}]}}
JSON

# The events each format sends up to and including the end of TaskList's
# block (chunk_size 3): Anthropic message_start, content_block_start, ping,
# two input_json_deltas, content_block_stop; Responses created,
# in_progress, output_item.added, arguments delta and done, output_item.done;
# Chat has no block end: TaskList is whole when TaskGet's first chunk comes
# (role, TaskList's name and arguments, TaskGet's name). Two more events:
# TaskGet has begun but is not whole.
cut_after() { case "$1" in anthropic | openai-responses) echo 8 ;; openai) echo 6 ;; esac; }

# The call ids of the tool results the model got in the last request.
results_sent() {
  case "$provider" in
    anthropic) tail -n 1 "$MOCK_LOG" | jq -r '[.body.messages[-1].content[] | select(.type=="tool_result") | .tool_use_id] | join(",")' ;;
    openai-responses) tail -n 1 "$MOCK_LOG" | jq -r '[.body.input[] | select(.type=="function_call_output") | .call_id] | join(",")' ;;
    openai) tail -n 1 "$MOCK_LOG" | jq -r '[.body.messages[] | select(.role=="tool") | .tool_call_id] | join(",")' ;;
  esac
}

for provider in anthropic openai-responses openai; do
  for fault in malformed 500; do
    p="$provider $fault"
    case $fault in
      malformed) faults="[{\"malformed\": \"data: {not json\", \"after_events\": $(cut_after "$provider")}]" ;;
      500) faults='[{"status": 500}]' ;;
    esac
    cat > "$T/s.json" <<JSON
{"turns": [
  {"match": {"assistant_turns": 0}, "chunk_size": 3, "faults": $faults,
   "reply": {"tool_calls": [{"id": "l1", "name": "TaskList", "input": {}},
                            {"id": "g1", "name": "TaskGet", "input": {"taskId": "7"}}]}},
  {"match": {"assistant_turns": 1}, "reply": {"text": "DONE"}}
]}
JSON
    export HOOK_LOG="$T/hook.$provider.$fault"
    : > "$HOOK_LOG"
    start_mock "$T/s.json"
    use_provider "$provider"
    "$LOOM_BIN" -p "list" --permission-mode bypassPermissions --cwd "$T/proj" \
      --output-format events > "$T/events" 2> "$T/err"
    file=$(session_file "$(tail -n 1 "$T/events" | jq -r .payload.session_id)")
    assert_eq "$p: the run completed" "$(tail -n 1 "$T/events" | jq -r .payload.result)" "DONE"
    assert_eq "$p: the model was asked twice for the reply, then once more" "$(wc -l < "$MOCK_LOG")" "3"
    if [ "$fault" = 500 ]; then
      # (The two run side by side: the hook's log is in any order.)
      assert_eq "$p: nothing ran before the retry" "$(sort "$HOOK_LOG" | paste -sd,)" "g1,l1"
    else
      check "$p: the failed attempt's TaskList had started early ($(paste -sd, "$HOOK_LOG"))" \
        test "$(grep -c '^l1$' "$HOOK_LOG")" -eq 2
    fi
    assert_eq "$p: one function_call per call, in call order" \
      "$(jq -r 'select(.type=="function_call") | .callId' "$file" | paste -sd,)" "l1,g1"
    assert_eq "$p: one function_call_result per call, in call order" \
      "$(jq -r 'select(.type=="function_call_result") | .callId' "$file" | paste -sd,)" "l1,g1"
    assert_eq "$p: TaskList's result" \
      "$(jq -r 'select(.type=="function_call_result" and .callId=="l1") | .output' "$file")" "No tasks found"
    assert_eq "$p: TaskGet's result" \
      "$(jq -r 'select(.type=="function_call_result" and .callId=="g1") | .output' "$file")" "Task not found"
    assert_eq "$p: one tool.started per call" \
      "$(jq -r 'select(.type=="tool.started") | .payload.call_id' "$T/events" | paste -sd,)" "l1,g1"
    assert_eq "$p: one tool.finished per call" \
      "$(jq -r 'select(.type=="tool.finished") | .payload.call_id' "$T/events" | paste -sd,)" "l1,g1"
    assert_eq "$p: the model got both results" "$(results_sent)" "l1,g1"
    stop_mock
  done
done
finish
