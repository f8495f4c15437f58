#!/usr/bin/env bash
# Text mode prints the answer exactly once (issue #10, class 15): whatever
# cut, corrupted or failed model calls came before the one that succeeded,
# `loom -p` stdout is byte for byte the final answer and a newline, exit 0.
# events shows every restart as a stream.restarted event, and the
# deltas after the last one are the answer.
source "$(dirname "$0")/_lib.sh"
export LOOM_RETRY_BASE_MS=20

# Multi-byte text, so some cuts land inside a character.
ANSWER='Grüße aus Köln — 東京の天気は晴れ、気温は二十度です 🌤️ and then plain ASCII to the end.'
printf '%s\n' "$ANSWER" > "$T/want"

# scenario NAME FAULTS_JSON [CHUNK] — one turn answering ANSWER with those faults.
scenario() {
  jq -n --arg text "$ANSWER" --argjson faults "$2" --argjson chunk "${3:-3}" \
    '{turns: [{reply: {text: $text, usage: {input_tokens: 5, output_tokens: 30}},
               chunk_size: $chunk, faults: $faults}]}' > "$T/$1.json"
  echo "$T/$1.json"
}

# run_once WHAT SCENARIO MIN_ATTEMPTS [loom args...] — text mode, stdout byte-compared.
run_once() {
  local what=$1 file=$2 attempts=$3; shift 3
  start_mock "$file"
  set +e
  "$LOOM_BIN" -p "weather?" "$@" >"$T/out" 2>"$T/err"
  local status=$?
  set -e
  if [ "$status" -eq 0 ] && cmp -s "$T/out" "$T/want"; then
    ok "$what: stdout is the answer exactly once"
  else
    not_ok "$what: exit $status, stdout [$(head -c 600 "$T/out")], stderr [$(head -c 600 "$T/err")]"
  fi
  local n; n=$(wc -l < "$MOCK_LOG")
  check "$what: the fault happened ($n requests, want >= $attempts)" test "$n" -ge "$attempts"
}

# stream_json WHAT SCENARIO REASON [loom args...] — the restart is an event,
# and the text after the last restart is the answer.
stream_json() {
  local what=$1 file=$2 reason=$3; shift 3
  start_mock "$file"
  "$LOOM_BIN" -p "weather?" --output-format events "$@" >"$T/sj" 2>"$T/err" || true
  local n; n=$(jq -s --arg r "$reason" '[.[] | select(.type=="stream.restarted" and .payload.reason==$r)] | length' "$T/sj")
  check "$what: events has stream.restarted reason $reason ($n)" test "$n" -ge 1
  local after
  after=$(jq -rsj '(map(.type=="stream.restarted") | rindex(true)) as $i
                   | .[($i // -1) + 1:][] | select(.type=="token.delta" and .payload.channel=="text")
                   | .payload.text' "$T/sj")
  assert_eq "$what: deltas after the last restart are the answer" "$after" "$ANSWER"
}

for provider in ${PROVIDERS:-anthropic openai openai-responses}; do
  CURRENT_PROVIDER=$provider # start_mock points loom at each new mock
  case $provider in
    anthropic) overloaded='event: error\ndata: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}' ;;
    openai) overloaded='data: {"error":{"message":"The engine is currently overloaded","type":"overloaded_error","code":"overloaded"}}' ;;
    *) overloaded='event: error\ndata: {"type":"error","code":"overloaded_error","message":"The engine is currently overloaded","sequence_number":99}' ;;
  esac
  overloaded=$(printf "$overloaded")

  # 1. The connection drops after some text, at many offsets (some inside a
  #    multi-byte character, some between events).
  for cut in 400 431 457 502 533 611 689 777; do
    run_once "$provider drop after $cut bytes" "$(scenario drop "[{\"drop_after_bytes\": $cut}]")" 2
  done
  # 2. Chunks of one byte: every character its own delta, cut in the middle.
  run_once "$provider drop, one-char deltas" "$(scenario drop1 '[{"drop_after_bytes": 1500}]' 1)" 2
  # 3. A malformed SSE event after text has streamed.
  for after in 6 9 14; do
    run_once "$provider malformed SSE after $after events" \
      "$(scenario malformed "[{\"malformed\": \"data: {\\\"type\\\": broken\", \"after_events\": $after}]")" 2
    check "$provider malformed after $after: retried as a protocol error" grep -q "model_protocol_error" "$T/err"
  done
  # 4. An in-stream overloaded error (529 in the stream) after partial text.
  run_once "$provider overloaded in the stream after text" \
    "$(scenario over "$(jq -n --arg m "$overloaded" '[{malformed: $m, after_events: 8}]')")" 2
  check "$provider overloaded in the stream: retried as overloaded" grep -q "model_overloaded" "$T/err"
  # 5. Two cuts in a row, then a third kind of fault, then the answer.
  run_once "$provider two cuts then malformed" \
    "$(scenario two '[{"drop_after_bytes": 520}, {"drop_after_bytes": 700}, {"malformed": "data: {oops", "after_events": 7}]')" 4
  # 6. Every retry fails after partial text, the fallback model answers.
  run_once "$provider cuts until the fallback model" \
    "$(scenario fb '[{"drop_after_bytes": 600, "times": 4}]')" 5 --fallback-model mock-fallback
  check "$provider fallback: stderr names the switch" grep -q "fallback model mock-fallback" "$T/err"
  # 7. A 529 status (before any byte) then a cut after text.
  run_once "$provider 529 then cut" "$(scenario s529 '[{"status": 529}, {"drop_after_bytes": 640}]')" 3

  # 8. No streaming: the whole body is cut, then sent whole.
  run_once "$provider --no-stream, body cut" "$(scenario ns '[{"drop_after_bytes": 200}]')" 2 --no-stream

  # events: the restarts are visible and the consumer can recover the answer.
  stream_json "$provider drop" "$(scenario sjd '[{"drop_after_bytes": 600}]')" retry
  stream_json "$provider two cuts" "$(scenario sj2 '[{"drop_after_bytes": 500}, {"drop_after_bytes": 650}]')" retry
  stream_json "$provider fallback" "$(scenario sjf '[{"drop_after_bytes": 600, "times": 4}]')" fallback_model \
    --fallback-model mock-fallback

  # Several turns: each turn's text once, in order, on its own line, with a
  # cut in the final one.
  jq -n --arg text "$ANSWER" '{sequence: true, turns: [
      {reply: {text: "Looking first.", tool_calls: [{name: "Bash", input: {command: "true"}}]},
       faults: [{drop_after_bytes: 450}]},
      {reply: {text: $text}, chunk_size: 2, faults: [{drop_after_bytes: 500}, {malformed: "data: {x", after_events: 5}]}]}' \
    > "$T/multi.json"
  start_mock "$T/multi.json"
  set +e
  "$LOOM_BIN" -p "weather?" --permission-mode bypassPermissions >"$T/out" 2>"$T/err"
  status=$?
  set -e
  printf 'Looking first.\n%s\n' "$ANSWER" > "$T/want2"
  if [ "$status" -eq 0 ] && cmp -s "$T/out" "$T/want2"; then
    ok "$provider two turns, cuts in both: each turn's text once"
  else
    not_ok "$provider two turns: exit $status, stdout [$(cat "$T/out")], stderr [$(head -c 600 "$T/err")]"
  fi

  # A run whose every attempt is cut prints none of the partial text.
  start_mock "$(scenario dead '[{"drop_after_bytes": 600, "times": 10}]')"
  set +e
  "$LOOM_BIN" -p "weather?" >"$T/out" 2>"$T/err"
  status=$?
  set -e
  check "$provider all attempts cut: non-zero exit" test "$status" -ne 0
  assert_eq "$provider all attempts cut: nothing partial on stdout" "$(cat "$T/out")" ""
done

# On a terminal the reply streams live: the cut-off part was shown, stderr
# says the reply starts over, and the whole answer follows on its own line.
CURRENT_PROVIDER=anthropic
start_mock "$(scenario tty '[{"drop_after_bytes": 900}]')"
script -qec "$(printf '%q ' "$LOOM_BIN" -p "weather?")" /dev/null > "$T/tty" 2>&1 || true
tr -d '\r' < "$T/tty" > "$T/tty.txt"
check "terminal: stderr says the reply starts over" grep -q "the reply starts over" "$T/tty.txt"
check "terminal: the whole answer is on a line of its own" grep -qxF "$ANSWER" "$T/tty.txt"
check "terminal: the cut-off part was shown live" \
  test "$(grep -c "^Grüße" "$T/tty.txt")" -ge 2
finish
