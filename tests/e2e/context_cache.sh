#!/usr/bin/env bash
# Cache discipline (seed 001 §7.1, §9): over a 20-turn run without
# compaction, each request's bytes up to its dynamic tail (the working-memory
# block at the end) are a prefix of the next request, so a provider's prompt
# cache hits every turn. OpenAI Chat is compared byte for byte. Anthropic's
# cache_control markers move to the newest block each turn by design and are
# not part of the cached content, so they are removed before comparing.
source "$(dirname "$0")/_lib.sh"

mkdir -p "$T/proj"
jq -n '{turns: ([range(0; 19) | {reply: {text: "step \(.)", tool_calls: [{id: "c\(.)", name: "Bash", input: {command: "echo turn \(.)"}}]}}]
                + [{reply: {text: "Twenty turns done."}}])}' > "$T/cache.json"

compare_prefixes() { # provider
  local dir="$T/bodies-$1" n i prev off
  mkdir -p "$dir"
  n=$(wc -l < "$MOCK_LOG")
  assert_eq "$1: 20 requests" "$n" "20"
  for i in $(seq 1 "$n"); do
    sed -n "${i}p" "$MOCK_LOG" | jq -j .raw_body | sed 's/,"cache_control":{"type":"ephemeral"}//g' > "$dir/$i"
  done
  local bad=0
  for i in $(seq 2 "$n"); do
    prev="$dir/$((i - 1))"
    # The tail is the JSON element that opens with the working-memory text
    # (a block on Anthropic, a message of its own on the OpenAI formats),
    # from the comma before it.
    off=$(grep -b -o '{"type":"text","text":"<working-memory>\|{"role":"user","content":"<working-memory>\|{"role":"user","content":\[{"type":"input_text","text":"<working-memory>' "$prev" | tail -n 1 | cut -d: -f1)
    if [ -z "$off" ]; then
      not_ok "$1: request $((i - 1)) has no working-memory tail"; bad=1; continue
    fi
    off=$((off - 1))
    if ! out=$(cmp -n "$off" "$prev" "$dir/$i" 2>&1); then
      local at=${out##*byte }; at=${at%%,*}
      not_ok "$1: request $i differs from request $((i - 1)) before its tail (offset $off): $out"
      echo "  request $((i - 1)) at byte $at: $(tail -c +$((at > 40 ? at - 40 : 1)) "$prev" | head -c 100)" >&2
      echo "  request $i at byte $at: $(tail -c +$((at > 40 ? at - 40 : 1)) "$dir/$i" | head -c 100)" >&2
      bad=1
    fi
  done
  [ "$bad" = 0 ] && ok "$1: each request extends the previous one byte for byte up to the tail"
  # The check can fail: a changed byte in the history is caught.
  cp "$dir/2" "$dir/2x" && printf 'X' | dd of="$dir/2x" bs=1 seek=100 conv=notrunc 2>/dev/null
  check "$1: the comparison catches a changed byte" bash -c "! cmp -s -n 200 '$dir/1' '$dir/2x'"
}

for provider in openai openai-responses anthropic; do
  start_mock "$T/cache.json"
  use_provider "$provider"
  "$LOOM_BIN" -p "go" --permission-mode bypassPermissions --cwd "$T/proj" --output-format json > "$T/out-$provider"
  assert_eq "$provider: completed" "$(jq -r .subtype "$T/out-$provider")" "success"
  compare_prefixes "$provider"
  stop_mock
done
finish
