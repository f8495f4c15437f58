#!/usr/bin/env bash
# loom -p against mockllm in each wire format: the scripted text is printed
# exactly (streaming and not), json/events carry it, and the session
# records usage both normalized and raw.
source "$(dirname "$0")/_lib.sh"

expected='Hello from the mock model: ünïcødé ✓ and "quotes".'
start_mock "$SCENARIOS/chat_two_turns.json"

for provider in ${PROVIDERS:-anthropic openai openai-responses}; do
  use_provider "$provider"

  out=$("$LOOM_BIN" -p "Say hello")
  assert_eq "$provider: text output is the scripted text" "$out" "$expected"

  out=$("$LOOM_BIN" -p "Say hello" --no-stream)
  assert_eq "$provider: non-streaming text output" "$out" "$expected"

  json=$("$LOOM_BIN" -p "Say hello" --output-format json)
  assert_eq "$provider: json result" "$(jq -r .result <<<"$json")" "$expected"
  assert_eq "$provider: json is_error" "$(jq -r .is_error <<<"$json")" "false"
  id=$(jq -r .session_id <<<"$json")
  file=$(session_file "$id")
  check "$provider: session file exists" test -f "$file"

  # The assistant record holding usage: normalized and raw side by side.
  usage=$(jq -c 'select(.providerData.usage) | .providerData' "$file")
  assert_eq "$provider: normalized output tokens" "$(jq -r .usage.outputTokens <<<"$usage")" "13"
  assert_eq "$provider: normalized cache read" "$(jq -r .usage.cacheReadTokens <<<"$usage")" "5"
  case "$provider" in
    anthropic)
      assert_eq "$provider: normalized input tokens" "$(jq -r .usage.inputTokens <<<"$usage")" "21"
      assert_eq "$provider: raw usage kept" "$(jq -r .rawUsage.cache_creation_input_tokens <<<"$usage")" "2"
      assert_eq "$provider: thinking kept with signature" \
        "$(jq -r 'select(.type=="reasoning") | .signature' "$file")" "sig-mock-1" ;;
    openai)
      assert_eq "$provider: raw usage kept" "$(jq -r .rawUsage.completion_tokens <<<"$usage")" "13"
      assert_eq "$provider: reasoning tokens" "$(jq -r .usage.reasoningTokens <<<"$usage")" "4" ;;
    openai-responses)
      assert_eq "$provider: raw usage kept" "$(jq -r .rawUsage.output_tokens <<<"$usage")" "13"
      assert_eq "$provider: reasoning tokens" "$(jq -r .usage.reasoningTokens <<<"$usage")" "4" ;;
  esac
  check "$provider: request id attributed" \
    test -n "$(jq -r 'select(.providerData.conversationRequestId) | .providerData.conversationRequestId' "$file" | head -n1)"
  user_id=$(jq -r 'select(.type=="message" and .role=="user") | .id' "$file")
  assert_eq "$provider: the reply hangs off the user record" \
    "$(jq -r 'select(.type=="reasoning" or .role=="assistant") | .parentId' "$file" | head -n 1)" "$user_id"

  events=$("$LOOM_BIN" -p "Say hello" --output-format events)
  text=$(jq -rj 'select(.type=="token.delta" and .payload.channel=="text") | .payload.text' <<<"$events")
  assert_eq "$provider: events deltas concatenate" "$text" "$expected"
  assert_eq "$provider: events ends completed" \
    "$(tail -n 1 <<<"$events" | jq -r '.type + ":" + .payload.state')" "run.state_changed:completed"
  assert_eq "$provider: every event has the schema" \
    "$(jq -c 'select((has("event_id") and has("run_id") and has("type") and has("ts") and has("visibility") and has("payload")) | not)' <<<"$events" | wc -l)" "0"
done

# Every request really reached the mock in the format it was meant for.
assert_eq "mock saw anthropic requests" "$(jq -r 'select(.format=="anthropic") | .path' "$MOCK_LOG" | sort -u)" "/v1/messages"
assert_eq "mock saw chat requests" "$(jq -r 'select(.format=="chat") | .path' "$MOCK_LOG" | sort -u)" "/v1/chat/completions"
assert_eq "mock saw responses requests" "$(jq -r 'select(.format=="responses") | .path' "$MOCK_LOG" | sort -u)" "/v1/responses"
assert_eq "chat asks for usage in the stream" \
  "$(jq -r 'select(.format=="chat" and .stream) | .body.stream_options.include_usage' "$MOCK_LOG" | sort -u)" "true"
assert_eq "anthropic key sent as x-api-key" \
  "$(jq -r 'select(.format=="anthropic") | .headers["x-api-key"]' "$MOCK_LOG" | sort -u)" "test-key"
finish
