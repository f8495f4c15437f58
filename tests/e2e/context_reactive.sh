#!/usr/bin/env bash
# Reactive compaction (seed 001 §8): a provider that refuses the prompt as
# too long gets exactly one compaction and one retry per request; a second
# refusal is met by the 9-dimension recovery summary (context_recovery.sh
# has the whole story), and a third one fails with a clear error. A server whose limit
# Loom was never told teaches it the window by refusing. A "+N" token budget
# in the prompt nudges near its end and stops the run cleanly at the cap.
source "$(dirname "$0")/_lib.sh"

mkdir -p "$T/proj"
head -c 6000 < <(yes 'lorem ipsum dolor sit amet consectetur') > "$T/proj/big.txt"
SUMMARY='<analysis>ok</analysis><summary>1. Primary Request and Intent: read big.txt.</summary>'
summaries() { jq -s '[.[] | select(.body.tools == null or (.body.tools | length) == 0)] | length' "$MOCK_LOG"; }

# 1. One 413: one compaction, the retry succeeds. It comes on the second
#    prompt of the session — the user's correction — which the summarization
#    request must carry verbatim.
CORRECTION='No, wait: never modify big.txt, only read it.'
jq -n --arg s "$SUMMARY" --arg c "$CORRECTION" '{turns: [
  {match: {no_tools: true}, reply: {text: $s}},
  {match: {last_user_contains: $c}, faults: [{status: 413, times: 1}], reply: {text: "Recovered after compaction."}},
  {reply: {tool_calls: [{name: "Bash", input: {command: "cat big.txt"}}]}},
  {reply: {text: "Read it."}}]}' > "$T/once.json"
start_mock "$T/once.json"
use_provider anthropic
json=$("$LOOM_BIN" -p "read big.txt" --permission-mode bypassPermissions --cwd "$T/proj" --output-format json 2>"$T/err1")
id=$(jq -r .session_id <<<"$json")
json=$("$LOOM_BIN" -p "$CORRECTION" --resume "$id" --permission-mode bypassPermissions --cwd "$T/proj" --output-format json 2>>"$T/err1")
assert_eq "413 once: the run completes" "$(jq -r .subtype <<<"$json")" "success"
assert_eq "413 once: the retried answer" "$(jq -r .result <<<"$json")" "Recovered after compaction."
assert_eq "413 once: one refusal" "$(jq -s '[.[] | select(.status == 413)] | length' "$MOCK_LOG")" "1"
assert_eq "413 once: exactly one compaction request" "$(summaries)" "1"
sum_text=$(jq -r 'select(.body.tools == null) | .body.messages[-1].content | map(.text) | join("")' "$MOCK_LOG")
assert_contains "413 once: the summarization request has the correction verbatim" "$sum_text" "<user_message>
$CORRECTION
</user_message>"
assert_contains "413 once: and the first prompt" "$sum_text" "<user_message>
read big.txt
</user_message>"
file=$(session_file "$id")
assert_eq "413 once: one reactive summary in the session" \
  "$(jq -r 'select(.type=="summary") | .providerData.compactType' "$file")" "reactive"
assert_contains "413 once: the retry still carries the unanswered correction" \
  "$(tail -n 1 "$MOCK_LOG" | jq -r '.body.messages[-1].content | map(.text) | join("")')" "$CORRECTION"
assert_contains "413 once: the retry carries the summary" \
  "$(tail -n 1 "$MOCK_LOG" | jq -r '.body.messages[0].content[0].text')" "Primary Request and Intent: read big.txt"

# 2. Three 413s on the same request: one compaction, one recovery summary,
#    then a clear failure.
jq -n --arg s "$SUMMARY" '{sequence: true, turns: [
  {match: {no_tools: true}, reply: {text: $s}},
  {reply: {tool_calls: [{name: "Bash", input: {command: "cat big.txt"}}]}},
  {faults: [{status: 413, times: 3}], reply: {text: "never"}}]}' > "$T/twice.json"
start_mock "$T/twice.json"
set +e
json=$("$LOOM_BIN" -p "read big.txt" --permission-mode bypassPermissions --cwd "$T/proj" --output-format json 2>"$T/err2")
status=$?
set -e
check "413 thrice: a failing exit status ($status)" test "$status" -ne 0
assert_eq "413 thrice: three refusals" "$(jq -s '[.[] | select(.status == 413)] | length' "$MOCK_LOG")" "3"
assert_eq "413 thrice: one compaction and one recovery summary" "$(summaries)" "2"
assert_contains "413 thrice: the second is the 9-dimension one" \
  "$(jq -s -r '[.[] | select(.body.tools == null)][1].body.messages[-1].content | map(.text) | join("")' "$MOCK_LOG")" "9. Optional Next Step"
assert_contains "413 thrice: the error says why" "$(cat "$T/err2")" "refused the prompt as too long again after the context was compacted and summarized"

# 3. A server with a 10,000-token limit Loom was never told (it assumes the
#    model table's window): the refusal names the limit, Loom learns it,
#    compacts, and the rest of the run stays under it. (The built-in tools'
#    definitions alone are about 6,600 of the mock's tokens: a smaller
#    window leaves no room after compaction for the reads the run makes.)
jq -n --arg s "$SUMMARY" '{sequence: true, context_window: 10000, turns: [
  {match: {no_tools: true}, reply: {text: $s}},
  {repeat: 8, reply: {tool_calls: [{name: "Bash", input: {command: "head -c 3000 big.txt"}}]}},
  {reply: {text: "Done within the window."}}]}' > "$T/learn.json"
start_mock "$T/learn.json"
"$LOOM_BIN" -p "read big.txt in pieces" --permission-mode bypassPermissions --cwd "$T/proj" \
  --output-format events > "$T/events3" 2>"$T/err3"
assert_eq "unknown limit: the run completes" "$(tail -n 1 "$T/events3" | jq -r .payload.state)" "completed"
assert_eq "unknown limit: refused once" "$(jq -s '[.[] | select(.window_exceeded)] | length' "$MOCK_LOG")" "1"
assert_eq "unknown limit: the window was learned from the refusal" \
  "$(jq -r 'select(.type=="warning.emitted" and .payload.kind=="prompt_too_long") | .payload.context_window' "$T/events3")" "10000"

# 4. Token budget: "+N" in the prompt; a nudge near the end, a clean stop.
jq -n '{sequence: true, turns: [
  {repeat: 20, reply: {tool_calls: [{name: "Bash", input: {command: "echo working"}}], usage: {input_tokens: 1000, output_tokens: 50}}},
  {reply: {text: "never reached"}}]}' > "$T/budget.json"
start_mock "$T/budget.json"
set +e
json=$("$LOOM_BIN" -p "keep working +5k" --permission-mode bypassPermissions --cwd "$T/proj" --output-format json 2>"$T/err4")
status=$?
set -e
assert_eq "budget: stopped at the budget" "$(jq -r .stop_reason <<<"$json")" "token_budget"
assert_eq "budget: five calls of 1,050 tokens reach 5k" "$(wc -l < "$MOCK_LOG")" "5"
assert_contains "budget: the reason" "$(cat "$T/err4")" "stopped at the token budget"
assert_contains "budget: the model was nudged before the end" \
  "$(sed -n 5p "$MOCK_LOG" | jq -r '.body.messages[-1].content | map(.text // "") | join("")')" "Token budget: 4200 of 5000 tokens used"
check "budget: the dashboard shows it" \
  grep -q 'budget 4,200 of 5,000' <(sed -n 5p "$MOCK_LOG" | jq -r '.body.messages[-1].content[-1].text')

# The same budget from --token-budget; a bad amount is refused up front.
start_mock "$T/budget.json"
set +e
json=$("$LOOM_BIN" -p "keep working" --token-budget 3k --permission-mode bypassPermissions --cwd "$T/proj" --output-format json 2>/dev/null)
set -e
assert_eq "--token-budget: stopped at the budget" "$(jq -r .stop_reason <<<"$json")" "token_budget"
assert_eq "--token-budget: three calls reach 3k" "$(wc -l < "$MOCK_LOG")" "3"
set +e
"$LOOM_BIN" -p "x" --token-budget lots --cwd "$T/proj" >/dev/null 2>"$T/err5"
status=$?
set -e
check "--token-budget lots: refused ($status)" test "$status" -ne 0
assert_contains "--token-budget lots: says why" "$(cat "$T/err5")" "is not an amount like 500k"
finish
