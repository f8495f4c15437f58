#!/usr/bin/env bash
# Seed 000's heartbeat scenarios (dimension ②) against mockllm:
#  A  a watched source file changes while a long Bash runs → the Bash is
#     stopped within T_hb + 2 s, the next request lists the event, the
#     model's disposition acknowledges it, and the journal shows detected →
#     projected → acknowledged for one event_id;
#  B  a resource threshold fires critical while a long tool runs → the Act
#     is stopped at once, Observe follows with no model call in between,
#     and the event is in the surface;
#  C  SIGINT during a slow model stream → a critical external_signal event;
#     the run ends resumable with a structured report of why.
source "$(dirname "$0")/_lib.sh"

mkdir -p "$T/proj/src" "$T/proj/.loom"
echo "int main(void) { return 0; }" > "$T/proj/src/a.c"
journal_of() { cat "$LOOM_HOME"/projects/*/"$1".mf/journal.jsonl; }
run_bg() { # out-file args… — loom -p in the background; sets LOOM_PID
  local out=$1; shift
  "$LOOM_BIN" -p "$@" --permission-mode bypassPermissions --cwd "$T/proj" \
    --output-format events > "$out" 2>"$out.err" &
  LOOM_PID=$!
}
wait_for() { # what seconds command…
  local what=$1 secs=$2; shift 2
  for _ in $(seq 1 $((secs * 20))); do "$@" && return 0; sleep 0.05; done
  not_ok "timed out after ${secs}s waiting for $what"; return 1
}

# --- A: a watched file changes during a long Bash --------------------------
cat > "$T/proj/.loom/settings.json" <<'JSON'
{"heartbeat": {"T_hb": 1, "T_hb_act": 1, "delta_hb": 0.1,
  "watch_sources": [{"type": "filesystem", "paths": ["./src"], "method": "hash"}]}}
JSON
jq -n '{turns: [
  {reply: {text: "Building.", tool_calls: [{id: "b1", name: "Bash", input: {command: "sleep 60"}}]}},
  {reply: {text: "The source changed under me; replanning.", tool_calls: [{id: "ack1", name: "AcknowledgeEvent",
     input: {event_id: "$last:ev_[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", disposition: "replan", note: "src/a.c changed during the build"}}]}},
  {reply: {text: "Acknowledged; I will rebuild from the new source."}}]}' > "$T/a.json"
start_mock "$T/a.json"
use_provider anthropic
run_bg "$T/a.out" "build the project"
wait_for "the long Bash" 10 pgrep -f "^sleep 60$" >/dev/null
changed_at=$(date +%s%N)
echo "int helper(void) { return 1; }" >> "$T/proj/src/a.c"
wait "$LOOM_PID" || true
stopped_ms=$(( ( $(jq -r 'select(.type=="tool.failed" or .type=="tool.finished") | select(.payload.call_id=="b1") | .payload.finished_us' "$T/a.out") * 1000 - changed_at ) / 1000000 ))
# Not a timing test (a loaded machine stretches it): the 60 s command must
# have been cut short by the change, well before it would end by itself.
echo "# A: the Bash ended ${stopped_ms} ms after the change (seed bound: T_hb + 2 s)"
check "A: the Bash was cut short by the change (${stopped_ms} ms, not 60 s)" test "$stopped_ms" -lt 30000
assert_contains "A: the Bash result says the harness stopped it" \
  "$(jq -r 'select(.type=="tool.failed") | select(.payload.call_id=="b1") | .payload.output' "$T/a.out")" "stopped by the harness"
ev=$(jq -r 'select(.type=="heartbeat.event") | .payload.event_id' "$T/a.out")
assert_eq "A: one heartbeat.event" "$(wc -l <<<"$ev")" "1"
assert_eq "A: urgency high, action request" \
  "$(jq -r 'select(.type=="heartbeat.event") | "\(.payload.source) \(.payload.urgency) \(.payload.action)"' "$T/a.out")" \
  "filesystem high request"
tail2=$(sed -n 2p "$MOCK_LOG" | jq -r '.body.messages[-1].content[-1].text')
assert_contains "A: the next request's working block lists the event" "$tail2" "[$ev] high filesystem: "
assert_contains "A: …naming the file" "$tail2" "a.c"
assert_eq "A: the model's disposition was accepted" \
  "$(jq -r 'select(.type=="tool.finished") | select(.payload.call_id=="ack1") | .payload.is_error' "$T/a.out")" "false"
tail3=$(sed -n 3p "$MOCK_LOG" | jq -r '.body.messages[-1].content[-1].text')
assert_contains "A: after the ack the event is an active risk" "$tail3" "active risks:"
assert_contains "A: …with its disposition" "$tail3" "replan"
sid=$(jq -r 'select(.type=="run.state_changed") | .payload.session_id' "$T/a.out" | tail -n 1)
assert_eq "A: the journal shows detected → projected → acknowledged for one event_id" \
  "$(journal_of "$sid" | jq -r --arg ev "$ev" 'select(.event_id==$ev) | .state' | paste -sd,)" \
  "detected,projected,acknowledged"
assert_eq "A: the run completed" "$(tail -n 1 "$T/a.out" | jq -r .payload.state)" "completed"

# --- B: a resource threshold fires critical during a long tool --------------
# The threshold sits 4 points above the memory in use now; the tool fills
# /dev/shm (tmpfs: memory that cannot be reclaimed) by several points.
used=$(awk '/MemTotal/ {t=$2} /MemAvailable/ {a=$2} END {printf "%.1f", 100 * (1 - a / t)}' /proc/meminfo)
fill_mb=$(awk '/MemTotal/ {printf "%d", $2 / 1024 * 0.09}' /proc/meminfo)
threshold=$(awk -v u="$used" 'BEGIN {printf "%.1f", u + 4}')
SHM="/dev/shm/loom-e2e-$$"
trap 'rm -f "$SHM"; cleanup' EXIT
jq -n --argjson th "$threshold" '{heartbeat: {T_hb: 1, T_hb_act: 0.2,
  watch_sources: [{type: "resource", memory_pct: $th}]}}' > "$T/proj/.loom/settings.json"
jq -n --arg cmd "dd if=/dev/zero of=$SHM bs=1M count=$fill_mb 2>/dev/null; sleep 60" '{turns: [
  {reply: {text: "Running the long job.", tool_calls: [{id: "j1", name: "Bash", input: {command: $cmd}}]}},
  {reply: {text: "Memory ran short; I stopped."}}]}' > "$T/b.json"
start_mock "$T/b.json"
run_bg "$T/b.out" "run the long job"
wait "$LOOM_PID" || true
rm -f "$SHM"
assert_eq "B: a critical resource event, forced" \
  "$(jq -r 'select(.type=="heartbeat.event") | "\(.payload.source) \(.payload.urgency) \(.payload.action)"' "$T/b.out" | head -n 1)" \
  "resource critical force"
dur=$(jq -r 'select(.type=="tool.failed") | select(.payload.call_id=="j1") | .payload.duration_ms' "$T/b.out")
check "B: the Act was stopped at once (${dur} ms, not 60 s)" test "${dur:-99999}" -lt 15000
assert_eq "B: two model calls: none between the stop and Observe" "$(wc -l < "$MOCK_LOG")" "2"
evb=$(jq -r 'select(.type=="heartbeat.event") | .payload.event_id' "$T/b.out" | head -n 1)
assert_contains "B: the Observe request holds the event in the surface" \
  "$(sed -n 2p "$MOCK_LOG" | jq -r '.body.messages[-1].content[-1].text')" "[$evb] critical resource: memory"
check "B: the dd's file is gone" test ! -e "$SHM"

# --- C: SIGINT during a slow model stream -----------------------------------
cat > "$T/proj/.loom/settings.json" <<'JSON'
{"heartbeat": {"T_hb": 5, "watch_sources": [{"type": "external_signal"}]}}
JSON
jq -n '{turns: [
  {drip_ms: 300, chunk_size: 2, reply: {text: "a long, slow answer that takes many seconds to stream"}},
  {match: {last_user_contains: "go on"}, reply: {text: "Resumed and done."}}]}' > "$T/c.json"
start_mock "$T/c.json"
run_bg "$T/c.out" "tell me slowly"
wait_for "the stream to start" 10 grep -q '"token.delta"' "$T/c.out"
kill -INT "$LOOM_PID"
set +e
wait "$LOOM_PID"
status=$?
set -e
assert_eq "C: exit status 3 (resumable)" "$status" "3"
res=$(tail -n 1 "$T/c.out")
assert_eq "C: stop reason" "$(jq -r .payload.stop_reason <<<"$res")" "external_signal"
assert_eq "C: the report names the event" \
  "$(jq -r '.payload.interrupt | "\(.source) \(.urgency) \(.summary)"' <<<"$res")" "external_signal critical SIGINT received"
assert_eq "C: the error says it is resumable" "$(jq -r .payload.error.code <<<"$res")" "run_resumable"
assert_contains "C: and why" "$(jq -r .payload.error.message <<<"$res")" "stopped by SIGINT"
assert_eq "C: the event came through the stream as heartbeat.event" \
  "$(jq -r 'select(.type=="heartbeat.event") | .payload.source' "$T/c.out")" "external_signal"
sid=$(jq -r .payload.session_id <<<"$res")
assert_eq "C: one model call" "$(wc -l < "$MOCK_LOG")" "1"
json=$("$LOOM_BIN" -p "go on" --resume "$sid" --permission-mode bypassPermissions --cwd "$T/proj" --output-format json)
assert_eq "C: the session resumes" "$(jq -r .result <<<"$json")" "Resumed and done."
finish
