#!/usr/bin/env bash
# Done when 2 (seed 000 M3, recursion termination, row 4.6): a scripted
# model that always spawns stops at d_max. Every agent's first request
# (no tool results yet) answers with an Agent call; every later one says
# "done". With d_max 3 exactly four agents ever ask the model (depths
# 0–3): the depth-3 agent's Agent call spawns nothing and comes back as the
# structured hand-off {status: handoff, reason: depth_limit, depth, d_max,
# goal, report}, not an error. runtime.max_depth 1 stops one level down.
source "$(dirname "$0")/_lib.sh"
# jtrue JQ_ARGS... — the filter's last output is true (no input is a failure:
# jq 1.6 -e exits 0 on empty input).
jtrue() { local out; out=$(jq -e "$@" 2>/dev/null) && [ "$(tail -n 1 <<<"$out")" = true ]; }

mkdir -p "$T/proj" "$LOOM_HOME"
cat > "$T/scenario.json" <<'JSON'
{"turns": [
  {"match": {"tool_results": 0},
   "reply": {"text": "Spawning again.", "tool_calls": [{"name": "Agent", "input": {
     "description": "recurse", "subagent_type": "general-purpose",
     "prompt": "RECURSE-GOAL split this and delegate it"}}]}},
  {"match": {"tool_results": 1}, "reply": {"text": "done"}}
]}
JSON

run_tree() { # SETTINGS_JSON
  echo "$1" > "$LOOM_HOME/settings.json"
  start_mock "$T/scenario.json"
  use_provider anthropic
  "$LOOM_BIN" -p "RECURSE-GOAL top" --permission-mode bypassPermissions --cwd "$T/proj" \
    --output-format events > "$T/events" 2> "$T/err" || true
}
# first_requests — the requests that open an agent's conversation.
first_requests() { jq -c 'select((.body.messages | length) == 1)' "$MOCK_LOG"; }
# handoffs — the tool results that carry a hand-off, as JSON objects.
handoffs() {
  jq -c '.body.messages[-1].content | arrays | .[] | select(.type=="tool_result")
         | (.content | if type=="array" then map(.text) | join("") else . end)
         | (try fromjson catch null) | select(type=="object" and .status=="handoff")' "$MOCK_LOG"
}

run_tree '{"agents": {"enabled": true}}'
last=$(tail -n 1 "$T/events")
assert_eq "d_max 3: the run completed" "$(jq -r .payload.state <<<"$last")" "completed"
assert_eq "d_max 3: four agents asked the model (depths 0-3), none deeper" "$(first_requests | wc -l | tr -d ' ')" "4"
assert_eq "d_max 3: eight requests in all (each agent: spawn, then done)" "$(wc -l < "$MOCK_LOG" | tr -d ' ')" "8"
assert_eq "d_max 3: three agents spawned" \
  "$(jq -s '[.[] | select(.type=="agent.spawned")] | length' "$T/events")" "3"
assert_eq "d_max 3: spawned at depths 1, 2, 3" \
  "$(jq -s -c '[.[] | select(.type=="agent.spawned") | .payload.depth] | sort' "$T/events")" "[1,2,3]"
assert_eq "d_max 3: one hand-off" "$(handoffs | sort -u | wc -l | tr -d ' ')" "1"
h=$(handoffs | sed -n 1p)
check "d_max 3: the hand-off is structured ($h)" \
  jtrue '.reason=="depth_limit" and .depth==3 and .d_max==3 and (.goal|contains("RECURSE-GOAL")) and (.report|type=="string" and length>0)' <<<"$h"
check "d_max 3: the hand-off is not an error result" \
  jtrue -s '[.[].body.messages[-1].content | arrays | .[] | select(.type=="tool_result")
            | select((.content|tostring)|contains("handoff"))] | all(.is_error != true)' "$MOCK_LOG"
# The hand-off went to the depth-3 agent's model, which then finished; every
# agent above got its child's "done".
assert_eq "d_max 3: every Agent call got an answer" \
  "$(jq -s '[.[] | select(.type=="agent.completed")] | length' "$T/events")" "3"

run_tree '{"agents": {"enabled": true}, "runtime": {"max_depth": 1}}'
assert_eq "runtime.max_depth 1: two agents asked the model" "$(first_requests | wc -l | tr -d ' ')" "2"
h=$(handoffs | sed -n 1p)
check "runtime.max_depth 1: hand-off at depth 1 ($h)" jtrue '.depth==1 and .d_max==1' <<<"$h"
finish
