#!/usr/bin/env bash
# Responses API reasoning across turns under store:false (issue 12): with a
# reasoning model the request asks for reasoning.encrypted_content (as Codex
# does: openai/codex @001cb8e2 codex-rs/core/src/client.rs), sends the
# configured effort and the session id as prompt_cache_key, and the next
# request sends the reply's reasoning item back, encrypted content and all,
# before the call it led to; assistant text goes back as an EasyInputMessage
# (openai-node 6.49.0 resources/responses/responses.d.ts).
source "$(dirname "$0")/_lib.sh"

mkdir -p "$T/proj"
start_mock "$SCENARIOS/responses_reasoning_carry.json"
use_provider openai-responses
json=$("$LOOM_BIN" -p "What is here?" --model gpt-5 --reasoning-effort high \
  --permission-mode bypassPermissions --cwd "$T/proj" --output-format json)
sid=$(jq -r .session_id <<<"$json")
assert_eq "the run ends with the second reply" "$(jq -r .result <<<"$json")" \
  "The directory holds what I expected."
assert_eq "two requests" "$(wc -l < "$MOCK_LOG")" "2"
req1=$(sed -n 1p "$MOCK_LOG" | jq -c '.raw_body | fromjson')
req2=$(sed -n 2p "$MOCK_LOG" | jq -c '.raw_body | fromjson')
for n in 1 2; do
  r=$([ "$n" = 1 ] && echo "$req1" || echo "$req2")
  assert_eq "request $n: store false" "$(jq -c .store <<<"$r")" "false"
  assert_eq "request $n: include" "$(jq -c .include <<<"$r")" '["reasoning.encrypted_content"]'
  assert_eq "request $n: reasoning" "$(jq -c .reasoning <<<"$r")" '{"effort":"high","summary":"auto"}'
  assert_eq "request $n: prompt_cache_key is the session id" "$(jq -r .prompt_cache_key <<<"$r")" "$sid"
done
# The second request's input, in order, after the user's message: the
# reasoning item with its encrypted content, the text, the call, its output.
kinds=$(jq -r '[.input[] | (.type // ("easy:" + .role))] | join(",")' <<<"$req2")
assert_contains "request 2: reasoning before text and call" "$kinds" \
  "reasoning,easy:assistant,function_call,function_call_output"
reasoning=$(jq -c '[.input[] | select(.type == "reasoning")]' <<<"$req2")
assert_eq "request 2: one reasoning item" "$(jq length <<<"$reasoning")" "1"
assert_eq "request 2: its encrypted content" "$(jq -r '.[0].encrypted_content' <<<"$reasoning")" \
  "gAAAAB-mock-encrypted-reasoning-1"
assert_eq "request 2: its id is the reply's" "$(jq -r '.[0].id' <<<"$reasoning")" "rs_mock_1_0"
assert_eq "request 2: its summary" "$(jq -r '.[0].summary[0].text' <<<"$reasoning")" \
  "List the directory first."
assert_eq "request 2: assistant text as an EasyInputMessage" \
  "$(jq -c '[.input[] | select(.role == "assistant")][0]' <<<"$req2")" \
  '{"role":"assistant","content":"Let me look."}'
finish
