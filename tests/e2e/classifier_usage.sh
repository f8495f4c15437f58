#!/usr/bin/env bash
# Class 19 of issue #10: every model call Loom makes is counted. Auto mode's
# permission classifier asks the model about each call the rules cannot
# settle; its tokens are part of the run's reported usage (json and
# events), its cost part of cost_usd, and the token budget and the cost
# cap count them — each classifier call reported as a model.usage event
# naming its purpose and the tool it judged.
source "$(dirname "$0")/_lib.sh"
mkdir -p "$T/proj"
cat > "$T/scenario.json" <<'JSON'
{"turns": [
  {"match": {"system_contains": "security monitor"},
   "reply": {"text": "{\"decision\": \"allow\", \"reason\": \"a file in the project\"}",
             "usage": {"input_tokens": 5000, "output_tokens": 200}}},
  {"reply": {"tool_calls": [{"id": "c1", "name": "Bash", "input": {"command": "echo one > one.txt"}}],
             "usage": {"input_tokens": 100, "output_tokens": 10}}},
  {"reply": {"tool_calls": [{"id": "c2", "name": "Read", "input": {"file_path": "one.txt"}}],
             "usage": {"input_tokens": 100, "output_tokens": 10}}},
  {"reply": {"tool_calls": [{"id": "c3", "name": "Bash", "input": {"command": "echo two > two.txt"}}],
             "usage": {"input_tokens": 100, "output_tokens": 10}}},
  {"reply": {"text": "Counted.", "usage": {"input_tokens": 100, "output_tokens": 10}}}
]}
JSON
for provider in ${PROVIDERS:-anthropic openai}; do
  rm -f "$T/proj"/*.txt
  start_mock "$T/scenario.json"
  use_provider "$provider"
  mkdir -p "$T/proj/.loom"
  echo '{"price_input_per_mtok": 1, "price_output_per_mtok": 10}' > "$LOOM_HOME/settings.json"
  json=$("$LOOM_BIN" -p "count" --permission-mode auto --cwd "$T/proj" --output-format json)
  calls=$(jq -r 'select(.body | tostring | contains("security monitor")) | .t' "$MOCK_LOG" | wc -l)
  assert_eq "$provider: two classifier calls (none for the Read)" "$calls" "2"
  check "$provider: the classifier's allows ran the commands" test -e "$T/proj/two.txt"
  assert_eq "$provider: input tokens count the classifier" "$(jq -r .usage.input_tokens <<<"$json")" "10400"
  assert_eq "$provider: output tokens count the classifier" "$(jq -r .usage.output_tokens <<<"$json")" "440"
  assert_eq "$provider: and so does the cost" "$(jq -r '.cost_usd * 1e6 | round' <<<"$json")" "14800"

  start_mock "$T/scenario.json"
  "$LOOM_BIN" -p "count" --permission-mode auto --cwd "$T/proj" --output-format events > "$T/events.jsonl"
  assert_eq "$provider: one model.usage event per classifier call" \
    "$(jq -r 'select(.type=="model.usage") | .payload.purpose' "$T/events.jsonl" | paste -sd,)" \
    "permission_classifier,permission_classifier"
  assert_eq "$provider: attributed to the call it judged" \
    "$(jq -r 'select(.type=="model.usage") | "\(.correlation_id):\(.payload.tool):\(.payload.usage.inputTokens)"' "$T/events.jsonl" | paste -sd,)" \
    "c1:Bash:5000,c3:Bash:5000"
  assert_eq "$provider: the stream's result counts them too" \
    "$(jq -r 'select(.type=="run.state_changed" and .payload.state=="completed") | .payload.usage.totalTokens' "$T/events.jsonl")" "10840"

  # --token-budget: 6000 tokens. The model's own turns use 110 each, so
  # without the classifier the run would finish; with it the second Bash
  # pushes the run past the budget and it stops there.
  rm -f "$T/proj"/*.txt
  start_mock "$T/scenario.json"
  json=$("$LOOM_BIN" -p "count" --permission-mode auto --cwd "$T/proj" --token-budget 6000 \
           --output-format json) && rc=0 || rc=$?
  assert_eq "$provider: the token budget counts the classifier" "$(jq -r .stop_reason <<<"$json")" "token_budget"
  assert_eq "$provider: a budget stop exits 3" "$rc" "3"
  check "$provider: the final turn never came" test "$(jq -r .result <<<"$json")" != "Counted."

  # max_usd: the classifier's first call alone costs $0.007.
  echo '{"price_input_per_mtok": 1, "price_output_per_mtok": 10, "max_usd": 0.006}' > "$LOOM_HOME/settings.json"
  start_mock "$T/scenario.json"
  json=$("$LOOM_BIN" -p "count" --permission-mode auto --cwd "$T/proj" --output-format json) && rc=0 || rc=$?
  assert_eq "$provider: the cost cap counts the classifier" "$(jq -r .stop_reason <<<"$json")" "usd_budget"
  rm -rf "$T/proj/.loom"
done

# Compaction is a model call too: its tokens were always in the usage; now
# its cost is in cost_usd and it is reported as model.usage "compaction".
SUMMARY='<analysis>ok</analysis><summary>1. Primary Request and Intent: say hi.</summary>'
jq -n --arg s "$SUMMARY" '{sequence: true, turns: [
  {match: {no_tools: true}, reply: {text: $s, usage: {input_tokens: 7000, output_tokens: 300}}},
  {reply: {tool_calls: [{id: "k1", name: "Bash", input: {command: "echo hi"}}],
           usage: {input_tokens: 100, output_tokens: 10}}},
  {faults: [{status: 413, times: 1}],
   reply: {text: "Done after compaction.", usage: {input_tokens: 100, output_tokens: 10}}}]}' \
  > "$T/compact.json"
mkdir -p "$T/proj/.loom"
echo '{"price_input_per_mtok": 1, "price_output_per_mtok": 10}' > "$LOOM_HOME/settings.json"
start_mock "$T/compact.json"
use_provider anthropic
"$LOOM_BIN" -p "say hi" --permission-mode bypassPermissions --cwd "$T/proj" \
  --output-format events > "$T/compact.jsonl"
final=$(jq -c 'select(.type=="run.state_changed" and .payload.state=="completed") | .payload' "$T/compact.jsonl")
assert_eq "compaction: the run completed" "$(jq -r .result <<<"$final")" "Done after compaction."
assert_eq "compaction: its tokens are in the usage" "$(jq -r .usage.inputTokens <<<"$final")" "7200"
assert_eq "compaction: and its cost in cost_usd" "$(jq -r '.cost_usd * 1e6 | round' <<<"$final")" "10400"
assert_eq "compaction: reported as model.usage" \
  "$(jq -r 'select(.type=="model.usage") | "\(.payload.purpose):\(.payload.usage.inputTokens)"' "$T/compact.jsonl")" \
  "compaction:7000"

# A background compaction the run ends before taking: its summary is not
# applied, but its model call was paid for and is counted. The final reply
# drips for ~3 s while the summary comes back at once.
jq -n --arg s "$SUMMARY" '{sequence: true, turns: [
  {match: {no_tools: true}, reply: {text: $s, usage: {input_tokens: 7000, output_tokens: 300}}},
  {reply: {tool_calls: [{id: "k1", name: "Bash", input: {command: "echo hi"}}],
           usage: {input_tokens: 8500, output_tokens: 10}}},
  {reply: {text: "Done before the summary was used.", usage: {input_tokens: 100, output_tokens: 10}},
   chunk_size: 1, drip_ms: 80}]}' > "$T/background.json"
echo '{"price_input_per_mtok": 1, "price_output_per_mtok": 10, "max_output_tokens": 500}' \
  > "$LOOM_HOME/settings.json"
start_mock "$T/background.json"
use_provider anthropic
"$LOOM_BIN" -p "say hi" --permission-mode bypassPermissions --cwd "$T/proj" --context-window 10000 \
  --output-format events > "$T/background.jsonl"
final=$(jq -c 'select(.type=="run.state_changed" and .payload.state=="completed") | .payload' "$T/background.jsonl")
check "background: the compaction ran in the background" \
  grep -q '"context.compaction_started"' "$T/background.jsonl"
check "background: the run ended before applying it" \
  bash -c '! grep -q "\"context.compacted\"" "$1"' _ "$T/background.jsonl"
assert_eq "background: its tokens are in the usage" "$(jq -r .usage.inputTokens <<<"$final")" "15600"
assert_eq "background: and in cost_usd" "$(jq -r '.cost_usd * 1e6 | round' <<<"$final")" "18800"
assert_eq "background: reported as model.usage" \
  "$(jq -r 'select(.type=="model.usage") | "\(.payload.purpose):\(.payload.usage.inputTokens)"' "$T/background.jsonl")" \
  "compaction:7000"
rm -f "$LOOM_HOME/settings.json"
rm -rf "$T/proj/.loom"
finish
