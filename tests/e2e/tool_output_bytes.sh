#!/usr/bin/env bash
# Tool output that is not UTF-8 (a binary file, an escape sequence cut in
# half, a raw 8-bit CSI) still reaches every surface: the tool.finished
# event keeps its payload with the bad bytes as U+FFFD, the session record
# keeps the result, and the model's next request carries it.
source "$(dirname "$0")/_lib.sh"

mkdir -p "$T/proj"
cat > "$T/scenario.json" <<'JSON'
{"turns": [
  {"reply": {"tool_calls": [{"id": "b1", "name": "Bash", "input": {"command": "printf 'head \\233\\377\\300 tail\\n'"}}]}},
  {"reply": {"text": "Seen."}}
]}
JSON
for provider in ${PROVIDERS:-anthropic openai}; do
  start_mock "$T/scenario.json"
  use_provider "$provider"
  out=$("$LOOM_BIN" -p "show the bytes" --cwd "$T/proj" --permission-mode bypassPermissions \
        --output-format events)
  ev=$(jq -c 'select(.type=="tool.finished" or .type=="tool.failed") | select(.payload.call_id=="b1")' <<<"$out")
  check "$provider: the tool event was emitted" test -n "$ev"
  output=$(jq -r '.payload.output' <<<"$ev")
  assert_contains "$provider: the event keeps the text around the bad bytes" "$output" "head "
  assert_contains "$provider: …and after them" "$output" " tail"
  assert_contains "$provider: bad bytes read as U+FFFD" "$output" $'\xef\xbf\xbd'
  id=$(jq -r 'select(.type=="run.state_changed") | .payload.session_id // empty' <<<"$out" | tail -n 1)
  file=$(session_file "$id")
  assert_contains "$provider: the session record keeps the result" \
    "$(jq -r 'select(.type=="function_call_result" and .callId=="b1") | .output' "$file")" " tail"
  assert_contains "$provider: the model was shown it" "$(sed -n 2p "$MOCK_LOG")" " tail"
  assert_eq "$provider: the run completed" \
    "$(jq -r 'select(.type=="run.state_changed") | .payload.state' <<<"$out" | tail -n 1)" "completed"
done
finish
