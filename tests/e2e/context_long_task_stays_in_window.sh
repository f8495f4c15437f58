#!/usr/bin/env bash
# Seed 000 M1 experiments against a 16k-token window the mock enforces:
# a 100-turn task with large tool outputs completes with at least one
# auto-compaction and one renew, and no request ever exceeds the window;
# after renew the goal, the plan (byte-identical) and the dashboard are in
# the next request; the summarization request has no tools, asks for the six
# sections and carries the user's words verbatim.
source "$(dirname "$0")/_lib.sh"

mkdir -p "$T/proj"
# ~3,000 characters of output per call: the window fills in a few turns.
head -c 2999 < <(yes 'lorem ipsum dolor sit amet consectetur') > "$T/proj/big.txt"
# ~7,000 in the second phase: one result can push ρ across two thresholds.
head -c 6999 < <(yes 'sed ut perspiciatis unde omnis iste natus') > "$T/proj/huge.txt"
export LOOM_CONTEXT_WINDOW=16000 LOOM_MAX_OUTPUT_TOKENS=2000

GOAL="Read big.txt again and again until the plan is done. Keep the file unchanged."
PLAN='[{"content":"Read the file 45 times","status":"in_progress","activeForm":"Reading"},{"content":"Renew the context","status":"pending","activeForm":"Renewing"},{"content":"Read the file 52 more times","status":"pending","activeForm":"Reading more"}]'
SUMMARY='<analysis>Reading a file repeatedly.</analysis><summary>1. Primary Request and Intent: read big.txt repeatedly.
2. Key Technical Concepts: none.
3. Files and Code Sections: big.txt, read only.
4. Errors and Fixes: none.
5. Problem Solving: reading in progress.
6. All User Messages: the goal.</summary>'
jq -n --argjson plan "$PLAN" --arg summary "$SUMMARY" '{
  sequence: true, context_window: 16000,
  turns: [
    {match: {no_tools: true}, reply: {text: $summary}},
    {reply: {text: "Planning.", tool_calls: [{name: "TodoWrite", input: {todos: $plan}}]}},
    {repeat: 45, reply: {tool_calls: [{name: "Bash", input: {command: "cat big.txt"}}]}},
    {reply: {text: "Phase one is done; renewing.", tool_calls: [{name: "Renew", input: {reason: "phase one done", progress: "phase one of three done"}}]}},
    {repeat: 52, reply: {tool_calls: [{name: "Bash", input: {command: "cat huge.txt"}}]}},
    {reply: {text: "All reads done."}}
  ]}' > "$T/m1.json"
start_mock "$T/m1.json"
use_provider anthropic
json=$("$LOOM_BIN" -p "$GOAL" --permission-mode bypassPermissions --cwd "$T/proj" \
  --output-format json 2>"$T/err")
assert_eq "100 turns: completed" "$(jq -r .subtype <<<"$json")" "success"
assert_eq "100 turns: counted" "$(jq -r .num_turns <<<"$json")" "100"
assert_eq "no request exceeded the window" \
  "$(jq -s '[.[] | select(.window_exceeded)] | length' "$MOCK_LOG")" "0"
max_est=$(jq -s 'map(.est_tokens) | max' "$MOCK_LOG")
check "the largest request ($max_est tokens) stayed under 16000" test "$max_est" -le 16000
file=$(session_file "$(jq -r .session_id <<<"$json")")
valid_jsonl "$file" && ok "the session file is valid JSONL" || not_ok "the session file is not valid JSONL"
n_compact=$(jq -r 'select(.type=="summary" and .providerData.compactType=="auto") | .id' "$file" | wc -l)
n_background=$(jq -r 'select(.type=="context-edit" and .kind=="compact") | .id' "$file" | wc -l)
check "at least one auto-compaction ($n_compact blocking, $n_background in the background)" \
  test $((n_compact + n_background)) -ge 1
n_renew=$(jq -r 'select(.type=="summary" and .providerData.renew) | .id' "$file" | wc -l)
check "at least one renew ($n_renew)" test "$n_renew" -ge 1
check "summaries point back with logicalParentId" \
  jq -se '[.[] | select(.type=="summary")] | all(.logicalParentId != null and .parentId == null)' "$file"
n_local=$(jq -r 'select(.type=="context-edit" and .kind!="compact") | .kind' "$file" | sort -u | paste -sd,)
check "local ladder steps were recorded ($n_local)" test -n "$n_local"

# A compaction made in the background: later requests open with its summary,
# and the turns that ran meanwhile follow it.
if [ "$n_background" -ge 1 ]; then
  check "background compaction: a request opens with the summary and keeps the turns after it" \
    jq -se '[.[] | select(.body.tools != null and (.body.messages | length) > 2)
             | select(.body.messages[0].content[0].text | startswith("This session is being continued") and contains("Primary Request"))] | length > 0' "$MOCK_LOG"
fi

# Every main request holds the goal and the dashboard at its tail.
main='select(.body.tools != null and (.body.tools | length) > 0)'
check "every main request carries the goal in its working memory" \
  jq -se --arg g "$GOAL" "[.[] | $main | .body.messages[-1].content[-1].text | contains(\"goal: \" + \$g)] | all" "$MOCK_LOG"

# The request right after the renew: goal, plan items byte-identical, dashboard.
after=$(jq -cn "first(inputs | $main | select(any(.body.messages[0].content[]?; .text? // \"\" | contains(\"Context renewed\"))))" "$MOCK_LOG")
check "a request after the renew exists" test -n "$after"
tail_text=$(jq -r '.body.messages[-1].content[-1].text' <<<"$after")
assert_contains "after renew: the goal" "$tail_text" "goal: $GOAL"
assert_contains "after renew: the dashboard" "$tail_text" "dashboard: context "
assert_contains "after renew: the progress the model reported" "$tail_text" "phase one of three done"
for item in "Read the file 45 times" "Renew the context" "Read the file 52 more times"; do
  assert_contains "after renew: plan item '$item'" "$tail_text" "$item"
done
mf=$(dirname "$file")/$(basename "$file" .jsonl).mf
assert_eq "M_f plan_state holds the plan byte-identical" \
  "$(jq -c .todos "$mf/plan_state.json")" "$(jq -c . <<<"$PLAN")"
for f in working_state plan_state event_state knowledge_state; do
  check "M_f $f.json written" test -s "$mf/$f.json"
done

# The summarization request.
sum=$(jq -cn 'first(inputs | select(.body.tools == null or (.body.tools | length) == 0))' "$MOCK_LOG")
check "a summarization request was sent" test -n "$sum"
sum_text=$(jq -r '.body.messages[-1].content | if type=="string" then . else map(.text) | join("") end' <<<"$sum")
for s in "Primary Request and Intent" "Key Technical Concepts" "Files and Code Sections" "Errors and Fixes" "Problem Solving" "All User Messages"; do
  assert_contains "summary prompt asks for '$s'" "$sum_text" "$s"
done
assert_contains "summary prompt: the user's words verbatim" "$sum_text" "<user_message>
$GOAL
</user_message>"
assert_contains "summary prompt: do not redo" "$sum_text" "must NOT redo"
assert_contains "summary prompt: under 1,000 words" "$sum_text" "under 1,000 words"
assert_eq "summary request: same model as the agent" "$(jq -r .body.model <<<"$sum")" \
  "$(jq -rn "first(inputs | $main | .body.model)" "$MOCK_LOG")"
finish
