#!/usr/bin/env bash
# Seed 000 M4's replay experiment (issue 24, docs/evolve.md "Replay"): the
# same task run before and after E1. The scripted model explores when it
# knows nothing (Grep, Read the Makefile, then `make build`: 4 model calls)
# and goes straight to `make build` when its request holds a pattern that
# worked (2 calls) — as a model that reads its recalled memories would.
# (The recall is in a run's first request; the direct path's next turn is
# told apart by its own call's id, p1.)
#  1. Control, evolve off: the task twice, 4 turns both times, and no
#     recalled pattern in any request.
#  2. Evolve on: the first run is distilled into a pattern; the memory
#     recall puts it in the second run's request (name, description,
#     steps) and the run is shorter.
#  3. The run's metric set (docs/evolve.md) goes out as OpenTelemetry
#     metrics: gauges of the accepted totals, sums of the items recalled
#     and of those unused.
#     The turn counts are printed for the report.
source "$(dirname "$0")/_lib.sh"
source "$LOOM_SRC/tests/e2e/_mcp_lib.sh"

mkdir -p "$T/proj"
git -C "$T/proj" init -q
printf 'build:\n\t@echo built the release\n' > "$T/proj/Makefile"

jq -n --arg mk "$T/proj/Makefile" '{turns: [
  {match: {assistant_turns: 0, body_contains: "Worked for: build the release binary"},
   reply: {tool_calls: [{id: "p1", name: "Bash", input: {command: "make build"}}]}},
  {match: {tool_results: 1, body_contains: "\"p1\""}, reply: {text: "BUILT"}},
  {match: {assistant_turns: 0}, reply: {tool_calls: [{id: "g1", name: "Grep", input: {pattern: "build", path: "."}}]}},
  {match: {tool_results: 1}, reply: {tool_calls: [{id: "r1", name: "Read", input: {file_path: $mk}}]}},
  {match: {tool_results: 2}, reply: {tool_calls: [{id: "b1", name: "Bash", input: {command: "make build"}}]}},
  {match: {tool_results: 3}, reply: {text: "BUILT"}}]}' > "$T/task.json"
start_mock "$T/task.json"
use_provider anthropic

last_payload() { tail -n 1 "$T/events" | jq -c .payload; }
run() {
  : > "$MOCK_LOG"
  "$LOOM_BIN" -p "build the release binary" --cwd "$T/proj" --output-format events \
    >"$T/events" 2>"$T/err" || true
}

# ---- 1: control -------------------------------------------------------------------
echo '{"permissions": {"allow": ["Bash", "Read", "Grep"]}}' > "$LOOM_HOME/settings.json"
run
c1=$(last_payload | jq -r .num_turns)
run
c2=$(last_payload | jq -r .num_turns)
assert_eq "control: the answer" "$(last_payload | jq -r .result)" "BUILT"
assert_eq "control: both runs take 4 turns" "$c1,$c2" "4,4"
check_not "control: no recalled pattern in the second run's request" grep -q "Relevant memories" <<<"$(raw_req 1)"

# ---- 2: before and after E1 ----------------------------------------------------------
echo '{"permissions": {"allow": ["Bash", "Read", "Grep"]}, "evolve": {"enabled": true}}' > "$LOOM_HOME/settings.json"
run
before=$(last_payload | jq -r .num_turns)
assert_eq "before: a pattern is distilled" "$(last_payload | jq -r .evolve.kind)" "pattern"
check "before: its entry is written" test -n "$(ls "$T/proj/.loom/mf/patterns/")"
run
after=$(last_payload | jq -r .num_turns)
body=$(raw_req 1)
assert_contains "after: the request holds the injected pattern" "$body" \
  "Steps: Grep > Read(Makefile) > Bash(make build): Worked for: build the release binary"
assert_contains "after: in the memory block" "$body" "Relevant memories for this query"
assert_contains "after: the steps it lists" "$body" "3. \`Bash(make build)\`"
assert_eq "after: the answer is the same" "$(last_payload | jq -r .result)" "BUILT"
assert_eq "the turn counts: before 4, after 2" "$before,$after" "4,2"
echo "# M4 replay: control $c1 and $c2 turns; with E1 before $before, after $after turns"
check "the recall is recorded for the metrics" \
  jq -se 'length == 1 and .[0].items[0].kind == "pattern"' "$T/proj/.loom/mf/recall.jsonl"
stats=$("$LOOM_BIN" evolve stats --cwd "$T/proj" --json)
check "stats: the recalled pattern was used (make build ran) ($(jq -c .mis_injection <<<"$stats"))" \
  jq -e '.mis_injection.items == 1 and .mis_injection.used == 1 and .mis_injection.rate == 0' <<<"$stats"

# ---- 3: the metric set as OpenTelemetry metrics ------------------------------------
RECV_OUT="$T/otlp.jsonl"; : > "$RECV_OUT"; rm -f "$T/otlp.port"
node "$LOOM_SRC/tests/otel/receiver.mjs" "$T/otlp.port" "$RECV_OUT" 2>"$T/recv.err" &
RECV_PID=$!
stop_receiver() { kill "$RECV_PID" 2>/dev/null; wait "$RECV_PID" 2>/dev/null || true; }
trap 'stop_receiver; cleanup' EXIT
for _ in $(seq 1 250); do [ -s "$T/otlp.port" ] && break; sleep 0.02; done
: > "$MOCK_LOG"
OTEL_METRICS_EXPORTER=otlp OTEL_EXPORTER_OTLP_ENDPOINT="http://127.0.0.1:$(cat "$T/otlp.port")" \
  "$LOOM_BIN" -p "build the release binary" --cwd "$T/proj" --output-format events \
  >"$T/events" 2>"$T/err" || true
mine=$(last_payload | jq -c .evolve.metrics)
check "the result carries the run's metric set ($mine)" \
  jq -e '.recalled >= 1 and .recalled_unused == 0 and .skills_accepted == 0 and .constraints_accepted == 0' <<<"$mine"
metric() { jq -s -c --arg n "$1" '[.[] | select(.signal=="metrics" and .metric.name==$n) | .metric][0]' "$RECV_OUT"; }
for _ in $(seq 1 100); do [ "$(metric loom.evolve.recalled)" != null ] && break; sleep 0.05; done
assert_eq "exported: items recalled into the run" \
  "$(metric loom.evolve.recalled | jq -r '.points[0].value')" "$(jq -r .recalled <<<"$mine")"
assert_eq "exported: of them unused" \
  "$(metric loom.evolve.recalled.unused | jq -r '.points[0].value')" "0"
assert_eq "exported: skills accepted" \
  "$(metric loom.evolve.skills.accepted | jq -r '.points[0].value')" "0"
assert_eq "exported: constraints accepted" \
  "$(metric loom.evolve.constraints.accepted | jq -r '.points[0].value')" "0"
check "the receiver found every metric well-formed" test ! -s "$T/recv.err"

finish
