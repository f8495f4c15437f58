#!/usr/bin/env bash
# Tool-call arguments streamed one byte per delta (split inside multi-byte
# characters and escapes) reassemble into exactly the scripted JSON, in each
# wire format, and are recorded as function_call records in call order.
source "$(dirname "$0")/_lib.sh"

start_mock "$SCENARIOS/tool_call_split.json"
want1=$(jq -cS '.turns[0].reply.tool_calls[0].input' "$SCENARIOS/tool_call_split.json")
want2=$(jq -cS '.turns[0].reply.tool_calls[1].input' "$SCENARIOS/tool_call_split.json")

for provider in ${PROVIDERS:-anthropic openai openai-responses}; do
  use_provider "$provider"
  json=$("$LOOM_BIN" -p "List the C files" --output-format json)
  file=$(session_file "$(jq -r .session_id <<<"$json")")
  assert_eq "$provider: the first reply stopped for tool use" \
    "$(jq -r 'select(.providerData.stopReason) | .providerData.stopReason' "$file" | head -n 1)" "tool_use"
  calls=$(jq -c 'select(.type=="function_call")' "$file")
  assert_eq "$provider: two function_call records" "$(wc -l <<<"$calls")" "2"
  got1=$(sed -n 1p <<<"$calls" | jq -r .arguments | jq -cS .)
  got2=$(sed -n 2p <<<"$calls" | jq -r .arguments | jq -cS .)
  assert_eq "$provider: first call arguments reassembled" "$got1" "$want1"
  assert_eq "$provider: second call arguments reassembled" "$got2" "$want2"
  assert_eq "$provider: call names in order" "$(jq -r .name <<<"$calls" | paste -sd,)" "Bash,Read"
  # Parallel calls form a chain (seed 001 §3.2), not siblings.
  first_id=$(sed -n 1p <<<"$calls" | jq -r .id)
  assert_eq "$provider: second call's parent is the first" "$(sed -n 2p <<<"$calls" | jq -r .parentId)" "$first_id"
done
finish
