#!/usr/bin/env bash
# Sub-agent events in the headless stream (docs/events.md rows 9, 10, 22):
# loom -p --output-format events with one Agent call. agent.spawned
# comes before agent.completed, both name the same agent; the completion
# carries the child's usage and state; the child's own events reach the
# stream with agent_id in their payload; the Agent call's tool.finished
# comes after the completion. Text mode keeps the child's text off stdout
# (only the reply is printed), its warnings say whose they are, and
# --verbose says on stderr how the agent ended.
source "$(dirname "$0")/_lib.sh"

MARK="You are Loom's general-purpose agent"
cat > "$T/scenario.json" <<JSON
{"turns": [
  {"match": {"system_contains": "$MARK"}, "faults": [{"status": 429, "times": 1}],
   "reply": {"text": "CHILD-REPORT: two files found.",
             "usage": {"input_tokens": 120, "output_tokens": 30}}},
  {"reply": {"text": "Delegating.", "tool_calls": [{"id": "ag1", "name": "Agent",
     "input": {"description": "survey the repo", "prompt": "List what is here.",
               "subagent_type": "general-purpose"}}],
             "usage": {"input_tokens": 50, "output_tokens": 10}}},
  {"reply": {"text": "Parent done.", "usage": {"input_tokens": 80, "output_tokens": 5}}}
]}
JSON
start_mock "$T/scenario.json"
use_provider anthropic

# A model the price table does not know (docs/providers.md): no prices.
"$LOOM_BIN" -p "survey it" --agents on --model mock-unpriced --output-format events \
  > "$T/events.jsonl" 2> "$T/err.txt" || true
check "the stream is JSON lines" valid_jsonl "$T/events.jsonl"
ev="$T/events.jsonl"
# No prices are set: no cost anywhere, and no -1 standing in for one.
assert_eq "no -1 in any event, a sub-agent's included" \
  "$(jq -s '[.[] | .. | numbers | select(. == -1)] | length' "$ev")" "0"
assert_eq "no cost_usd in any event without prices" \
  "$(jq -s '[.[] | .. | objects | select(has("cost_usd"))] | length' "$ev")" "0"
types=$(jq -r .type "$ev" | paste -sd, -)
line_of() { jq -r .type "$ev" | grep -nxF -- "$1" | head -n 1 | cut -d: -f1; }
spawned=$(line_of agent.spawned)
completed=$(line_of agent.completed)
check "agent.spawned is in the stream ($types)" test -n "$spawned"
check "agent.completed is in the stream" test -n "$completed"
if [ -n "$spawned" ] && [ -n "$completed" ]; then
  check "spawned comes before completed" test "$spawned" -lt "$completed"
fi
sp=$(jq -c 'select(.type=="agent.spawned") | .payload' "$ev" | head -n 1)
co=$(jq -c 'select(.type=="agent.completed") | .payload' "$ev" | head -n 1)
id=$(jq -r .agent_id <<<"$sp")
check "spawned names an agent id" test -n "$id" -a "$id" != null
assert_eq "spawned: its type" "$(jq -r .agent_type <<<"$sp")" "general-purpose"
assert_eq "spawned: depth 1" "$(jq -r .depth <<<"$sp")" "1"
assert_eq "spawned: foreground" "$(jq -r .background <<<"$sp")" "false"
assert_eq "spawned: correlation is the Agent call" \
  "$(jq -r 'select(.type=="agent.spawned") | .correlation_id' "$ev" | head -n 1)" "ag1"
assert_eq "completed names the same agent" "$(jq -r .agent_id <<<"$co")" "$id"
assert_eq "completed: state" "$(jq -r .state <<<"$co")" "completed"
assert_eq "completed: the child's input tokens" "$(jq -r .usage.inputTokens <<<"$co")" "120"
assert_eq "completed: the child's output tokens" "$(jq -r .usage.outputTokens <<<"$co")" "30"
assert_eq "completed: a duration" "$(jq -r '.duration_ms >= 0' <<<"$co")" "true"
assert_contains "completed: the result" "$(jq -r .result <<<"$co")" "CHILD-REPORT"

# The child's own events come through tagged with its id.
tagged=$(jq -c --arg id "$id" 'select(.type!="agent.spawned" and .type!="agent.completed" and
  .type!="agent.progress" and .payload.agent_id==$id) | .type' "$ev" | sort -u | paste -sd, -)
assert_contains "the child's model.completed carries agent_id" "$tagged" "model.completed"
assert_eq "the child's model.completed has the child's usage" \
  "$(jq -r --arg id "$id" 'select(.type=="model.completed" and .payload.agent_id==$id) | .payload.usage.outputTokens' "$ev")" "30"
assert_eq "the parent's own model calls carry no agent_id" \
  "$(jq -r 'select(.type=="model.completed" and (.payload.agent_id|not)) | .payload.turn' "$ev" | wc -l | tr -d ' ')" "2"
fin=$(jq -r 'select(.type=="tool.finished" and .payload.call_id=="ag1") | .type' "$ev" | head -n 1)
check "the Agent call finished" test "$fin" = tool.finished
fin_line=$(jq -c '[.type, .payload.call_id]' "$ev" | grep -nF '["tool.finished","ag1"]' | head -n 1 | cut -d: -f1)
if [ -n "$fin_line" ] && [ -n "$completed" ]; then
  check "the Agent call's result comes after the completion" test "$completed" -lt "$fin_line"
fi
last=$(tail -n 1 "$ev")
assert_eq "the run completed" "$(jq -r .payload.state <<<"$last")" "completed"
assert_eq "the run's usage is the tree's: 50+80 own + 120 the child's" \
  "$(jq -r .payload.usage.inputTokens <<<"$last")" "250"

assert_eq "the child's retry warning comes tagged with its id" \
  "$(jq -r --arg id "$id" 'select(.type=="warning.emitted" and .payload.agent_id==$id) | .payload.kind' "$ev")" \
  "model_retry"

# Text mode: only the reply on stdout; the child's warning names it;
# --verbose says how the agent ended. (A fresh mock: its 429 again.)
start_mock "$T/scenario.json"
use_provider anthropic
out=$("$LOOM_BIN" -p "survey it" --agents on --verbose 2> "$T/verbose.txt")
assert_contains "text: the child's warning says whose it is" "$(cat "$T/verbose.txt")" \
  "loom: warning: [agent agent_1] "
assert_contains "text: the reply is printed" "$out" "Parent done."
check "text: the child's text is not on stdout" test "${out/CHILD-REPORT/}" = "$out"
assert_contains "verbose: the agent's summary line on stderr" "$(cat "$T/verbose.txt")" \
  "loom: agent ✓"
assert_contains "verbose: it says the agent completed and its tokens" \
  "$(grep -F 'loom: agent' "$T/verbose.txt")" "completed · 0 tool uses · 150 tokens"

# The flag takes on or off, nothing else.
set +e
"$LOOM_BIN" -p "x" --agents maybe > /dev/null 2> "$T/flag.txt"
status=$?
set -e
assert_eq "--agents maybe: a usage error" "$status" "2"
assert_contains "--agents maybe: says what it takes" "$(cat "$T/flag.txt")" "--agents takes on or off, not \"maybe\""

finish
