#!/usr/bin/env bash
# Fault handling against mockllm: 429 + Retry-After, 529 until the retries
# run out, a connection dropped mid-stream, a malformed SSE line.
source "$(dirname "$0")/_lib.sh"

for provider in ${PROVIDERS:-anthropic openai}; do
  # 429 with Retry-After: 1, then success: one retry, at least 1 s later.
  start_mock "$SCENARIOS/retry_429.json"
  use_provider "$provider"
  out=$("$LOOM_BIN" -p "hi" 2>"$T/err")
  assert_eq "$provider 429: answer printed after the retry" "$out" "Answer after a rate limit."
  assert_eq "$provider 429: two requests" "$(wc -l < "$MOCK_LOG")" "2"
  gap=$(jq -s '.[1].t - .[0].t' "$MOCK_LOG")
  check "$provider 429: retry waited >= 1 s (waited ${gap}s)" awk -v g="$gap" 'BEGIN{exit !(g >= 1.0)}'
  assert_contains "$provider 429: the retry is reported" "$(cat "$T/err")" "retry 1"

  # 529 four times: three retries, then a clear error and a non-zero exit.
  start_mock "$SCENARIOS/overloaded_529.json"
  set +e
  "$LOOM_BIN" -p "hi" --output-format json >"$T/out" 2>"$T/err"
  status=$?
  set -e
  check "$provider 529: non-zero exit" test "$status" -ne 0
  assert_contains "$provider 529: clear error" "$(cat "$T/err")" "overloaded after 3 retries"
  assert_eq "$provider 529: four attempts" "$(wc -l < "$MOCK_LOG")" "4"
  assert_eq "$provider 529: error code" "$(jq -r .error.code "$T/out")" "model_overloaded"
  file=$(session_file "$(jq -r .session_id "$T/out")")
  check "$provider 529: session file is valid JSONL" valid_jsonl "$file"
  assert_eq "$provider 529: prompt kept, no reply recorded" \
    "$(jq -r 'select(.type=="message") | .role' "$file" | paste -sd,)" "user"

  # Connection dropped mid-stream: retried from the start, one whole reply on disk.
  start_mock "$SCENARIOS/drop_midstream.json"
  json=$("$LOOM_BIN" -p "hi" --output-format json 2>"$T/err")
  want=$(jq -r '.turns[0].reply.text' "$SCENARIOS/drop_midstream.json")
  assert_eq "$provider drop: full answer after retry" "$(jq -r .result <<<"$json")" "$want"
  assert_eq "$provider drop: two attempts" "$(wc -l < "$MOCK_LOG")" "2"
  file=$(session_file "$(jq -r .session_id <<<"$json")")
  assert_eq "$provider drop: exactly one assistant message on disk" \
    "$(jq -r 'select(.type=="message" and .role=="assistant") | .content[0].text' "$file")" "$want"
  # In text mode the cut-off attempt is visible, so the user is told it starts over.
  start_mock "$SCENARIOS/drop_midstream.json"
  "$LOOM_BIN" -p "hi" >"$T/out" 2>"$T/err"
  assert_contains "$provider drop: text mode says the reply starts over" "$(cat "$T/err")" "starts over"
  assert_eq "$provider drop: text mode ends with the whole answer" "$(tail -n 1 "$T/out")" "$want"

  # A malformed SSE line: a clear error that names it, non-zero exit, no half record.
  start_mock "$SCENARIOS/malformed_sse.json"
  set +e
  "$LOOM_BIN" -p "hi" --output-format json >"$T/out" 2>"$T/err"
  status=$?
  set -e
  check "$provider malformed: non-zero exit" test "$status" -ne 0
  assert_contains "$provider malformed: error names the stream line" "$(cat "$T/err")" "malformed stream event at line"
  assert_contains "$provider malformed: error quotes the data" "$(cat "$T/err")" "broken-json"
  file=$(session_file "$(jq -r .session_id "$T/out")")
  assert_eq "$provider malformed: no assistant record" \
    "$(jq -r 'select(.type=="message") | .role' "$file" | paste -sd,)" "user"
done
finish
