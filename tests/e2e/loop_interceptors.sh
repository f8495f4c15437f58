#!/usr/bin/env bash
# The interceptor pipeline around each model call (docs/context.md,
# "Interceptors"), seen through the documented debug interceptor
# (LOOM_DEBUG_INTERCEPTOR_LOG / _NOTE): it sees every request the run sends
# for its turns — a resend after a too-long refusal too — and every reply,
# in order; the text it adds reaches the model, after the loop's own tail
# (the first interceptor); compaction's own call does not pass the chain.
source "$(dirname "$0")/_lib.sh"
mkdir -p "$T/proj"
export LOOM_DEBUG_INTERCEPTOR_LOG="$T/icpt.jsonl" LOOM_DEBUG_INTERCEPTOR_NOTE="NOTE-FROM-THE-INTERCEPTOR"

jq -n '{turns: [
  {match: {no_tools: true}, reply: {text: "<summary>ran echo once</summary>"}},
  {match: {no_tools: false, body_contains: "ran echo once"}, reply: {text: "Done after the resend."}},
  {match: {tool_results: 1}, faults: [{status: 413, times: 1}], reply: {text: "never"}},
  {reply: {tool_calls: [{name: "Bash", input: {command: "echo one"}}]}}]}' > "$T/s.json"
start_mock "$T/s.json"
use_provider anthropic
json=$("$LOOM_BIN" -p "run echo" --permission-mode bypassPermissions --cwd "$T/proj" \
  --output-format json 2>"$T/err")
assert_eq "the run completes" "$(jq -r .result <<<"$json")" "Done after the resend."
assert_eq "the interceptor saw every call and reply, in order" \
  "$(jq -r '"\(.stage) \(.turn).\(.attempt)"' "$T/icpt.jsonl" | paste -sd, -)" \
  "request 1.1,reply 1.1,request 2.1,request 2.2,reply 2.2"
turn_requests=$(jq -s '[.[] | select((.body.tools | length) > 0)] | length' "$MOCK_LOG")
assert_eq "as many requests as the model got for the turns" "$(jq -s '[.[] | select(.stage == "request")] | length' "$T/icpt.jsonl")" "$turn_requests"
assert_eq "the replies it saw are the model's" \
  "$(jq -r 'select(.stage == "reply") | .stop_reason + ":" + .text' "$T/icpt.jsonl" | paste -sd, -)" \
  "tool_use:,end_turn:Done after the resend."
assert_eq "the compaction's own call did not pass the chain" \
  "$(jq -s '[.[] | select(.body.tools == null)] | length' "$MOCK_LOG")" "1"
for i in $(seq 1 "$(wc -l < "$MOCK_LOG")"); do
  line=$(sed -n "${i}p" "$MOCK_LOG")
  [ "$(jq '.body.tools | length' <<<"$line")" -gt 0 ] || continue
  texts=$(jq -r '.body.messages[-1].content | map(.text // "") | join("\u0001")' <<<"$line")
  assert_contains "request $i: carries the interceptor's note as a data-role block" "$texts" \
    '<system-reminder data-role="interceptor">
NOTE-FROM-THE-INTERCEPTOR'
  check "request $i: after the loop's own tail (the first interceptor)" \
    bash -c '[[ "$1" == *"</working-memory>"*"NOTE-FROM-THE-INTERCEPTOR"* ]]' _ "$texts"
done
assert_contains "the last text it saw was the working memory, before its own note" \
  "$(jq -r 'select(.stage == "request") | .last_text' "$T/icpt.jsonl" | head -n 3)" "<working-memory>"
finish
