#!/usr/bin/env bash
# The heartbeat stays silent when nothing changes: a 60-turn run with it on
# (fast ticks, a watched directory the agent itself writes into with Write)
# produces no event at all, and the run reports the heartbeat thread's CPU
# share. A forced renew while an event is pending keeps the event, its id
# and its state; `loom signal` delivers the signal that raises it.
source "$(dirname "$0")/_lib.sh"

mkdir -p "$T/proj/src" "$T/proj/.loom"
echo "seed" > "$T/proj/src/keep.txt"
cat > "$T/proj/.loom/settings.json" <<'JSON'
{"heartbeat": {"T_hb": 0.05, "T_hb_act": 0.05,
  "watch_sources": [{"type": "filesystem", "paths": ["./src"], "method": "hash"},
                    {"type": "resource", "memory_pct": 99.9},
                    {"type": "external_signal"}]}}
JSON

# --- 60 quiet turns ---------------------------------------------------------
jq -n '{turns: ([range(0; 59) | if . % 2 == 0
    then {reply: {tool_calls: [{id: "w\(.)", name: "Write", input: {file_path: "src/gen_\(.).txt", content: "generated \(.)\n"}}]}}
    else {reply: {tool_calls: [{id: "b\(.)", name: "Bash", input: {command: "echo turn \(.)"}}]}} end]
  + [{reply: {text: "Sixty quiet turns."}}])}' > "$T/quiet.json"
start_mock "$T/quiet.json"
use_provider anthropic
"$LOOM_BIN" -p "generate files" --permission-mode bypassPermissions --cwd "$T/proj" \
  --output-format events > "$T/quiet.out"
res=$(tail -n 1 "$T/quiet.out")
assert_eq "quiet: completed in 60 turns" "$(jq -r '"\(.payload.state) \(.payload.num_turns)"' <<<"$res")" "completed 60"
assert_eq "quiet: 30 files written by the agent" "$(ls "$T/proj/src" | grep -c '^gen_')" "30"
assert_eq "quiet: no heartbeat.event at all" "$(grep -c '"heartbeat.event"' "$T/quiet.out" || true)" "0"
assert_eq "quiet: the heartbeat reports no events" "$(jq -r .payload.heartbeat.events <<<"$res")" "0"
ticks=$(jq -r .payload.heartbeat.ticks <<<"$res")
check "quiet: the heartbeat ticked throughout ($ticks ticks)" test "$ticks" -ge 2
share=$(jq -r .payload.heartbeat.cpu_share <<<"$res")
assert_eq "quiet: the CPU share is reported ($share)" "$(jq -r type <<<"$share")" "number"
echo "# heartbeat thread CPU share over the 60-turn run: $share (ticks $ticks)"
sid=$(jq -r .payload.session_id <<<"$res")
journal=$(ls "$LOOM_HOME"/projects/*/"$sid".mf/journal.jsonl 2>/dev/null || true)
check "quiet: the journal holds no event" bash -c "[ -z '$journal' ] || [ ! -s '$journal' ]"

# --- renew while an event is pending -----------------------------------------
jq -n '{sequence: true, turns: [
  {drip_ms: 150, chunk_size: 2, reply: {text: "Thinking about it slowly, one piece at a time.", tool_calls: [{id: "e1", name: "Bash", input: {command: "echo step"}}]}},
  {reply: {text: "Renewing my context.", tool_calls: [{id: "r1", name: "Renew", input: {reason: "test"}}]}},
  {reply: {text: "Done."}}]}' > "$T/renew.json"
start_mock "$T/renew.json"
"$LOOM_BIN" -p "work with a pending event" --permission-mode bypassPermissions --cwd "$T/proj" \
  --output-format events > "$T/renew.out" 2>"$T/renew.err" &
pid=$!
for _ in $(seq 1 200); do ls "$LOOM_HOME"/projects/*/*.mf/run.pid >/dev/null 2>&1 && break; sleep 0.05; done
mf=$(dirname "$(ls "$LOOM_HOME"/projects/*/*.mf/run.pid | head -n 1)")
sid=$(basename "$mf" .mf)
assert_eq "loom signal: the run's pid file names it" "$(cat "$mf/run.pid")" "$pid"
assert_contains "loom signal: delivered" "$("$LOOM_BIN" signal "${sid:0:13}" USR1)" "sent SIGUSR1 to process $pid"
wait "$pid" || not_ok "renew: the run failed: $(cat "$T/renew.err")"
ev=$(jq -r 'select(.type=="heartbeat.event") | .payload.event_id' "$T/renew.out")
assert_eq "renew: one external_signal event, high" \
  "$(jq -r 'select(.type=="heartbeat.event") | "\(.payload.source) \(.payload.urgency)"' "$T/renew.out")" "external_signal high"
assert_eq "renew: it happened, asked for by the model" \
  "$(jq -r 'select(.type=="context.renewed") | .payload.reason' "$T/renew.out")" "requested"
after=$(sed -n 3p "$MOCK_LOG" | jq -r '.body.messages[-1].content[-1].text')
assert_contains "renew: the request after renew holds the history's summary" \
  "$(sed -n 3p "$MOCK_LOG" | jq -r '.body.messages[0].content[0].text')" "Context renewed"
assert_contains "renew: the event is still pending, same id" "$after" "pending:
- [$ev] high external_signal: SIGUSR1"
assert_eq "renew: M_f event_state keeps its id and state" \
  "$(jq -r --arg ev "$ev" '.events[] | select(.id==$ev) | .state' "$mf/event_state.json")" "projected"
check "renew: the pid file is gone after the run" test ! -e "$mf/run.pid"

# --- a forced renew (ρ ≥ 1) while an event is pending ------------------------
# A 9,000-token window, and one tool result too large for it: the next turn
# must renew, and the pending event keeps its id and state through it.
head -c 40000 < <(yes 'forced renew filler line') > "$T/proj/huge.txt"
jq -n '{sequence: true, turns: [
  {match: {no_tools: true}, reply: {text: "<summary>1. Primary Request and Intent: read the huge file.</summary>"}},
  {drip_ms: 150, chunk_size: 2, reply: {text: "Reading slowly, piece by piece, to leave time.", tool_calls: [{id: "f1", name: "Bash", input: {command: "echo first"}}]}},
  {reply: {tool_calls: [{id: "f2", name: "Bash", input: {command: "cat huge.txt"}}]}},
  {reply: {text: "Done after a forced renew."}}]}' > "$T/forced.json"
start_mock "$T/forced.json"
"$LOOM_BIN" -p "read the huge file" --context-window 9000 --permission-mode bypassPermissions \
  --cwd "$T/proj" --output-format events > "$T/forced.out" 2>"$T/forced.err" &
pid=$!
for _ in $(seq 1 200); do grep -q '"token.delta"' "$T/forced.out" 2>/dev/null && break; sleep 0.05; done
kill -USR1 "$pid" || not_ok "forced: the run ended before the signal"
wait "$pid" || not_ok "forced: the run failed: $(cat "$T/forced.err")"
evf=$(jq -r 'select(.type=="heartbeat.event") | .payload.event_id' "$T/forced.out")
assert_eq "forced: renew was forced by ρ ≥ 1" \
  "$(jq -r 'select(.type=="context.renewed") | .payload.reason' "$T/forced.out")" "forced"
assert_contains "forced: after it the event is still pending, same id" \
  "$(sed -n 3p "$MOCK_LOG" | jq -r '.body.messages[-1].content[-1].text')" "pending:
- [$evf] high external_signal: SIGUSR1"
assert_eq "forced: the run completed" "$(tail -n 1 "$T/forced.out" | jq -r .payload.state)" "completed"

assert_contains "loom signal: a session with no run is refused" \
  "$("$LOOM_BIN" signal "$sid" USR1 2>&1 || true)" "no run with a heartbeat"
finish
