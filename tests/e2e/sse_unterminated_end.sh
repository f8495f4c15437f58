#!/usr/bin/env bash
# Issue 12: a stream whose last event lacks its blank line (the body ends
# cleanly right after `data: {…}\n`) is a whole reply. Loom accepts it: one
# request, the answer printed once, one assistant record — never a second,
# paid-for request for the same reply. See docs/http.md "SSE at end of stream".
source "$(dirname "$0")/_lib.sh"
cat > "$T/scenario.json" <<'JSON'
{"turns": [
  {"reply": {"text": "The whole answer.", "usage": {"input_tokens": 10, "output_tokens": 4}},
   "faults": [{"unterminated_end": true}]}
]}
JSON
for provider in ${PROVIDERS:-anthropic openai openai-responses}; do
  start_mock "$T/scenario.json"
  use_provider "$provider"
  json=$("$LOOM_BIN" -p "hi" --output-format json 2>"$T/err")
  assert_eq "$provider: the reply is accepted" "$(jq -r .result <<<"$json")" "The whole answer."
  assert_eq "$provider: one request, no retry" "$(wc -l < "$MOCK_LOG")" "1"
  assert_eq "$provider: the mock sent the unterminated end" \
    "$(jq -r '.fault // ""' "$MOCK_LOG")" "unterminated_end"
  assert_eq "$provider: the usage is the one reply's" "$(jq -r .usage.output_tokens <<<"$json")" "4"
  file=$(session_file "$(jq -r .session_id <<<"$json")")
  assert_eq "$provider: one assistant record" \
    "$(jq -r 'select(.type=="message" and .role=="assistant") | .content[0].text' "$file")" \
    "The whole answer."

  start_mock "$T/scenario.json"
  out=$("$LOOM_BIN" -p "hi" 2>"$T/err")
  assert_eq "$provider: text mode prints it once" "$out" "The whole answer."
  check "$provider: nothing starts over" bash -c "! grep -q 'starts over' '$T/err'"
done
finish
