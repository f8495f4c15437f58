#!/usr/bin/env bash
# Shared budgets: a run capped at 3300 tokens spends 300 on its first turn
# and asks for four sub-agents with a share of 1000 each. Three shares fit
# (3000 of the 3000 left) and the fourth is refused; each child, which
# never finishes on its own, stops at exactly its 1000 (budget_share, a
# partial result); then the parent stops at the pool's 3300 (token_budget),
# and the result's usage is the tree's, every scripted reply counted once.
source "$(dirname "$0")/_lib.sh"

mkdir -p "$T/proj" "$LOOM_HOME"
echo '{"agents": {"enabled": true}}' > "$LOOM_HOME/settings.json"
cat > "$T/scenario.json" <<JSON
{"turns": [
  {"match": {"assistant_turns": 0, "last_user_contains": "PARENT-GOAL"},
   "reply": {"text": "Splitting the work.", "tool_calls": [
     {"id": "s1", "name": "Agent", "input": {"description": "part 1", "prompt": "CHILD part 1", "share": {"tokens": 1000}}},
     {"id": "s2", "name": "Agent", "input": {"description": "part 2", "prompt": "CHILD part 2", "share": {"tokens": 1000}}},
     {"id": "s3", "name": "Agent", "input": {"description": "part 3", "prompt": "CHILD part 3", "share": {"tokens": 1000}}},
     {"id": "s4", "name": "Agent", "input": {"description": "part 4", "prompt": "CHILD part 4", "share": {"tokens": 1000}}}],
     "usage": {"input_tokens": 290, "output_tokens": 10}}},
  {"match": {},
   "reply": {"text": "Still looking.", "tool_calls": [{"name": "Glob", "input": {"pattern": "*.none"}}],
     "usage": {"input_tokens": 240, "output_tokens": 10}}}
]}
JSON
for provider in ${PROVIDERS:-anthropic openai}; do
  start_mock "$T/scenario.json"
  use_provider "$provider"
  "$LOOM_BIN" -p "PARENT-GOAL" --permission-mode bypassPermissions --cwd "$T/proj" \
    --token-budget 3300 --output-format events >"$T/events" 2>"$T/err" || true
  last=$(tail -n 1 "$T/events")
  assert_eq "$provider: the parent stops at the pool" "$(jq -r .payload.stop_reason <<<"$last")" "token_budget"
  assert_eq "$provider: result usage is every reply's" "$(jq -r .payload.usage.totalTokens <<<"$last")" "3300"
  assert_eq "$provider: requests made (1 parent + 3 × 4 children)" "$(wc -l <"$MOCK_LOG")" "13"
  file=$(session_file "$(jq -r .payload.session_id <<<"$last")")
  results=$(jq -c 'select(.type=="function_call_result" and (.callId|test("^s[0-9]$")))' "$file")
  assert_eq "$provider: three partial results" \
    "$(jq -r 'select(.providerData.toolResult.rawResponse.status=="partial") | .callId' <<<"$results" | wc -l)" "3"
  check "$provider: each stopped at its share" \
    jq -se '[.[] | select(.providerData.toolResult.rawResponse.status=="partial") | .output | fromjson]
            | length == 3 and all(.stop_reason == "budget_share" and .tokens == 1000 and .status == "partial")' <<<"$results"
  refused=$(jq -r 'select(.providerData.toolResult.rawResponse == null) | .output' <<<"$results")
  assert_contains "$provider: the fourth share is refused" "$refused" "share of 1000 tokens"
  check "$provider: usage_by_agent has the three children at 1000" \
    jq -e '[.payload.usage_by_agent[] | select(.tokens == 1000)] | length == 3' <<<"$last"
done
finish
