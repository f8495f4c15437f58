#!/usr/bin/env bash
# Done when 5 (seed 000 M3, parallel gain): one reply makes three Agent
# calls and each child runs a 2 s command. They run at the same time: by the
# order of the event stream, all three children's Bash tool.started come
# before the first Bash tool.finished (run one after another, each would
# finish before the next starts). The wall figures are printed for the
# closing note, never asserted (DESIGN §7: no timed assertions).
source "$(dirname "$0")/_lib.sh"
# jtrue JQ_ARGS... — the filter's last output is true (no input is a failure:
# jq 1.6 -e exits 0 on empty input).
jtrue() { local out; out=$(jq -e "$@" 2>/dev/null) && [ "$(tail -n 1 <<<"$out")" = true ]; }

mkdir -p "$T/proj" "$LOOM_HOME"
echo '{"agents": {"enabled": true}}' > "$LOOM_HOME/settings.json"
cat > "$T/scenario.json" <<'JSON'
{"turns": [
  {"match": {"system_contains": "You are Loom's general-purpose agent", "assistant_turns": 0},
   "reply": {"text": "Sleeping.", "tool_calls": [{"name": "Bash", "input": {"command": "sleep 2; echo slept"}}]}},
  {"match": {"system_contains": "You are Loom's general-purpose agent", "assistant_turns": 1},
   "reply": {"text": "CHILD-SLEPT"}},
  {"match": {"assistant_turns": 0},
   "reply": {"text": "Three at once.", "tool_calls": [
     {"id": "p1", "name": "Agent", "input": {"description": "sleep 1", "prompt": "PAR-1 run sleep 2", "name": "one"}},
     {"id": "p2", "name": "Agent", "input": {"description": "sleep 2", "prompt": "PAR-2 run sleep 2", "name": "two"}},
     {"id": "p3", "name": "Agent", "input": {"description": "sleep 3", "prompt": "PAR-3 run sleep 2", "name": "three"}}]}},
  {"match": {"assistant_turns": 1}, "reply": {"text": "PARENT-DONE"}}
]}
JSON
start_mock "$T/scenario.json"
use_provider anthropic
t0=$(date +%s%N)
"$LOOM_BIN" -p "go" --permission-mode bypassPermissions --cwd "$T/proj" \
  --output-format events > "$T/events" 2> "$T/err" || true
t1=$(date +%s%N)
last=$(tail -n 1 "$T/events")
assert_eq "the run completed" "$(jq -r .payload.state <<<"$last")" "completed"
assert_eq "three children spawned" "$(jq -s '[.[] | select(.type=="agent.spawned")] | length' "$T/events")" "3"
assert_eq "three children's Bash calls" \
  "$(jq -s '[.[] | select(.type=="tool.started" and .payload.tool=="Bash" and .payload.agent_id != null)] | length' "$T/events")" "3"
assert_eq "in three different children" \
  "$(jq -r 'select(.type=="tool.started" and .payload.tool=="Bash") | .payload.agent_id' "$T/events" | sort -u | wc -l | tr -d ' ')" "3"
# The order of the stream: line numbers of the Bash starts and finishes.
order=$(jq -s -c '[to_entries[] | select(.value.payload.tool=="Bash")
                   | {i: .key, t: .value.type}]
                  | {starts: [.[] | select(.t=="tool.started") | .i],
                     first_finish: ([.[] | select(.t=="tool.finished" or .t=="tool.failed") | .i] | min)}' "$T/events")
check "all three Bash starts precede the first Bash finish ($order)" \
  jtrue '(.starts | length) == 3 and .first_finish != null and (.starts | max) < .first_finish' <<<"$order"
check "each child's answer came back" \
  jtrue -s '[.[].body.messages[-1].content | arrays | .[] | select(.type=="tool_result" and (.tool_use_id|startswith("p"))) | .content | tostring | select(contains("CHILD-SLEPT"))] | length == 3' "$MOCK_LOG"
# The figures (printed, not asserted): the span of the three Bash calls and
# the whole run, against 6 s for three in a row.
span=$(jq -s '[.[] | select(.type=="tool.finished" and .payload.tool=="Bash") | .payload]
              | if length == 3 then ((map(.finished_us) | max) - (map(.started_us) | min)) / 1000 | floor else "n/a" end' "$T/events")
echo "# parallel gain: 3 sub-agents x 'sleep 2': Bash span ${span} ms, whole run $(( (t1 - t0) / 1000000 )) ms (serial would be >= 6000 ms)"
finish
