#!/usr/bin/env bash
# auto mode's two stages with a breaker (issue 25, item 6): the rules settle
# what they can (a plain read never reaches the model), the model classifier
# gets the rest — and when it keeps failing (here: answers that are not a
# decision), its circuit breaker opens after 3 failures in a row: the next
# calls fall back to asking (denied headless) without a classifier request,
# say so, and the main run goes on to its end.
source "$(dirname "$0")/_lib.sh"
mkdir -p "$T/proj"
turns='[{"match": {"system_contains": "security monitor"}, "reply": {"text": "hmm, not sure"}}]'
for i in 1 2 3 4 5 6; do
  turns=$(jq --arg id "c$i" --arg c "echo $i > f$i.txt" \
    '. + [{reply: {tool_calls: [{id: $id, name: "Bash", input: {command: $c}}]}}]' <<<"$turns")
done
turns=$(jq '. + [{reply: {tool_calls: [{id: "read", name: "Bash", input: {command: "ls"}}]}},
                 {reply: {text: "Finished despite the classifier."}}]' <<<"$turns")
jq -n --argjson t "$turns" '{turns: $t}' > "$T/scenario.json"

start_mock "$T/scenario.json"
use_provider anthropic
json=$("$LOOM_BIN" -p "auto things" --permission-mode auto --cwd "$T/proj" --output-format json)
file=$(session_file "$(jq -r .session_id <<<"$json")")
result() { jq -r --arg id "$1" 'select(.type=="function_call_result" and .callId==$id) | .output' "$file"; }

classifier_calls=$(jq -r 'select(.body | tostring | contains("security monitor")) | .t' "$MOCK_LOG" | wc -l)
assert_eq "the classifier is asked until its breaker opens (3 failures), then not" "$classifier_calls" "3"
for i in 1 2 3 4 5 6; do
  check "c$i: nothing ran without a decision" test ! -e "$T/proj/f$i.txt"
done
assert_contains "c1: fails closed with the classifier's failure" "$(result c1)" "not usable"
assert_contains "c3: the third failure opens the breaker" "$(result c3)" "not asked for now"
for i in 4 5 6; do
  assert_contains "c$i: falls back to asking (breaker open)" "$(result c$i)" "circuit breaker is open"
  assert_contains "c$i: denied because nobody can approve" "$(result c$i)" "nobody can approve"
done
check "a plain read is settled by the rules (ran)" test -n "$(result read)"
assert_eq "the main run continued to its end" "$(jq -r .result <<<"$json")" "Finished despite the classifier."
finish
