#!/usr/bin/env bash
# Streaming tool execution (docs/tools.md): a concurrency-safe call starts
# as soon as its block is complete in the stream. One turn with three Reads
# and then a text that streams on slowly: the Reads finish before the
# message ends (the tool.finished trace times against the model.completed
# event's time), their results come in call order, and the events and
# records are the same as with LOOM_STREAMING_TOOLS=0. Then a stream cut
# after the Read blocks and retried: the first attempt's calls ran (a
# PreToolUse hook saw them) but are never shown — one tool.started /
# tool.finished per call, one result record each, and the model sees the
# retried message's results only.
source "$(dirname "$0")/_lib.sh"

mkdir -p "$T/proj"
for f in a b c; do
  seq 1 200 | sed "s/^/$f line /" > "$T/proj/$f.txt"
done
tail_text=$(printf 'and then the model goes on talking for a while after its calls. %.0s' $(seq 1 6))
cat > "$T/slow.json" <<JSON
{"turns": [
  {"reply": {"text": "Reading three files.", "tool_calls": [
    {"id": "r1", "name": "Read", "input": {"file_path": "$T/proj/a.txt"}},
    {"id": "r2", "name": "Read", "input": {"file_path": "$T/proj/b.txt"}},
    {"id": "r3", "name": "Read", "input": {"file_path": "$T/proj/c.txt"}}],
    "text_after": "$tail_text"},
   "chunk_size": 6, "drip_ms": 12},
  {"reply": {"text": "Done reading."}}
]}
JSON

# Milliseconds since the epoch of an event's envelope time.
ts_ms='(.ts | sub("\\.[0-9]+Z$"; "Z") | fromdate) * 1000 + ((.ts | capture("\\.(?<f>[0-9]+)Z$").f // "0") + "000" | .[0:3] | tonumber)'

# run_slow LABEL [ENV...] — the slow scenario on $provider; events in
# $T/events.LABEL, the session file in $T/session.LABEL.
run_slow() {
  local label=$1; shift
  start_mock "$T/slow.json"
  use_provider "$provider"
  env "$@" "$LOOM_BIN" -p "read" --permission-mode bypassPermissions --cwd "$T/proj" \
    --output-format events > "$T/events.$label"
  cp "$(session_file "$(tail -n 1 "$T/events.$label" | jq -r .payload.session_id)")" "$T/session.$label"
  cp "$MOCK_LOG" "$T/mock.$label"
}
# The call ids of the tool results the model got in the last request.
results_sent() {
  case "$provider" in
    anthropic) tail -n 1 "$1" | jq -r '[.body.messages[-1].content[] | select(.type=="tool_result") | .tool_use_id] | join(",")' ;;
    openai-responses) tail -n 1 "$1" | jq -r '[.body.input[] | select(.type=="function_call_output") | .call_id] | join(",")' ;;
    openai) tail -n 1 "$1" | jq -r '[.body.messages[] | select(.role=="tool") | .tool_call_id] | join(",")' ;;
  esac
}

# The first model.completed is the end of the three-Read message.
msg_end() { jq -s "[.[] | select(.type==\"model.completed\")][0] | $ts_ms" "$T/events.$1"; }
last_read() { jq -s '[.[] | select(.type=="tool.finished") | .payload.finished_us] | max / 1000 | floor' "$T/events.$1"; }
r1_done() { jq -s '[.[] | select(.type=="tool.finished" and .payload.call_id=="r1") | .payload.finished_us][0] / 1000 | floor' "$T/events.$1"; }
first_read() { jq -s '[.[] | select(.type=="tool.finished") | .payload.started_us] | min / 1000 | floor' "$T/events.$1"; }

# The same records and the same events, on or off: records without their
# ids and times; events without their times, the tool events of a parallel
# group compared as a set (off, they come in finishing order).
records() { jq -c 'del(.id, .parentId, .timestamp, .sessionId, .cwd, .createdAt)' "$1"; }
events() {
  jq -c 'select(.type != "token.delta")
         | if (.type | startswith("tool.")) then "tool" else [.type, .correlation_id] end' "$1" | uniq
}
tool_events() { jq -c 'select(.type | startswith("tool.")) | [.type, .payload.call_id]' "$1" | sort; }

# Anthropic reports a tool block's end (content_block_stop), the Responses
# API a function_call item's (response.output_item.done). Chat Completions
# says nothing: a call is whole when the next one begins, so r1 runs while
# r2's and r3's arguments stream, and r3 only starts at the finish_reason.
for provider in anthropic openai-responses openai; do
  p=$provider
  run_slow on
  run_slow off LOOM_STREAMING_TOOLS=0
  end_on=$(msg_end on); read_on=$(last_read on)
  if [ "$p" = openai ]; then
    r1_on=$(r1_done on)
    check "$p on: r1 finished ($r1_on ms) while the later calls streamed, before the message ended ($end_on ms)" \
      test "$r1_on" -lt "$end_on"
  else
    check "$p on: the three Reads finished ($read_on ms) before the message ended ($end_on ms)" \
      test "$read_on" -lt "$end_on"
  fi
  end_off=$(msg_end off); read_off=$(first_read off)
  check "$p off: the Reads started ($read_off ms) only after the message ended ($end_off ms)" \
    test "$read_off" -ge "$((end_off - 1))"
  assert_eq "$p on: three Reads finished, shown in call order" \
    "$(jq -r 'select(.type=="tool.finished") | .payload.call_id' "$T/events.on" | paste -sd,)" "r1,r2,r3"
  for label in on off; do
    assert_eq "$p $label: results recorded in call order" \
      "$(jq -r 'select(.type=="function_call_result") | .callId' "$T/session.$label" | paste -sd,)" "r1,r2,r3"
    assert_contains "$p $label: r2's result is b.txt" \
      "$(jq -r 'select(.type=="function_call_result" and .callId=="r2") | .output' "$T/session.$label")" "b line 200"
    assert_eq "$p $label: the model got the results in call order" "$(results_sent "$T/mock.$label")" "r1,r2,r3"
  done
  assert_eq "$p: the records are the same on and off" "$(records "$T/session.on")" "$(records "$T/session.off")"
  assert_eq "$p: the events are the same on and off" "$(events "$T/events.on")" "$(events "$T/events.off")"
  assert_eq "$p: the tool events are the same on and off" "$(tool_events "$T/events.on")" "$(tool_events "$T/events.off")"
  assert_eq "$p: the requests to the model are the same on and off" \
    "$(jq -c '.body.messages // .body.input' "$T/mock.on")" "$(jq -c '.body.messages // .body.input' "$T/mock.off")"
done

# --- a message cut after its Read blocks completed, and retried ------------
long_text=$(printf 'a long tail the stream is cut in the middle of. %.0s' $(seq 1 150))
cat > "$T/cut.json" <<JSON
{"turns": [
  {"reply": {"text": "Reading.", "tool_calls": [
    {"id": "r1", "name": "Read", "input": {"file_path": "$T/proj/a.txt"}},
    {"id": "r2", "name": "Read", "input": {"file_path": "$T/proj/b.txt"}}],
    "text_after": "$long_text"},
   "chunk_size": 4, "faults": [{"drop_after_bytes": 20000, "times": 1}]},
  {"reply": {"text": "Done."}}
]}
JSON
# A PreToolUse hook logs every call it governs: the first attempt's Reads
# went through the pipeline too.
# Its systemMessage is a warning the run shows: the first attempt's are
# held back with their calls and dropped.
cat > "$T/pre.sh" <<SH
#!/usr/bin/env bash
id=\$(jq -r .tool_use_id)
echo "\$id" >> "$T/hook.log"
printf '{"systemMessage": "hook saw %s"}' "\$id"
SH
chmod +x "$T/pre.sh"
cat > "$LOOM_HOME/settings.json" <<JSON
{"hooks": {"PreToolUse": [{"matcher": "Read", "hooks": [{"type": "command", "command": "$T/pre.sh"}]}]}}
JSON
start_mock "$T/cut.json"
use_provider anthropic
"$LOOM_BIN" -p "read" --permission-mode bypassPermissions --cwd "$T/proj" \
  --output-format events > "$T/events.cut"
file=$(session_file "$(tail -n 1 "$T/events.cut" | jq -r .payload.session_id)")
assert_eq "cut: the stream was retried once" \
  "$(jq -r 'select(.type=="stream.restarted") | .payload.reason' "$T/events.cut" | paste -sd,)" "retry"
assert_eq "cut: the first attempt's calls ran (the hook saw each twice)" \
  "$(sort "$T/hook.log" | paste -sd,)" "r1,r1,r2,r2"
assert_eq "cut: one tool.started per call" \
  "$(jq -r 'select(.type=="tool.started") | .payload.call_id' "$T/events.cut" | paste -sd,)" "r1,r2"
assert_eq "cut: one tool.finished per call" \
  "$(jq -r 'select(.type=="tool.finished") | .payload.call_id' "$T/events.cut" | paste -sd,)" "r1,r2"
check "cut: no tool event before the restart" \
  jq -se '([.[] | .type] | index("stream.restarted")) < ([.[] | .type] | index("tool.started"))' "$T/events.cut"
assert_eq "cut: each call's hook warning shown once, between its tool.started and tool.finished" \
  "$(jq -r 'if .type=="tool.started" or .type=="tool.finished" then "\(.type):\(.payload.call_id)"
            elif .type=="warning.emitted" and (.payload | tostring | test("hook saw")) then
              "warning:" + (.payload | tostring | capture("hook saw (?<id>r[0-9])").id)
            else empty end' "$T/events.cut" | paste -sd,)" \
  "tool.started:r1,warning:r1,tool.finished:r1,tool.started:r2,warning:r2,tool.finished:r2"
assert_eq "cut: one result record per call" \
  "$(jq -r 'select(.type=="function_call_result") | .callId' "$file" | paste -sd,)" "r1,r2"
assert_eq "cut: the model saw two results" \
  "$(tail -n 1 "$MOCK_LOG" | jq -r '[.body.messages[-1].content[] | select(.type=="tool_result") | .tool_use_id] | join(",")')" "r1,r2"
finish
