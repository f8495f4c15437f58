#!/usr/bin/env bash
# working.updated (docs/events.md row 26): after a scripted TodoWrite the
# headless event stream carries C_working with the plan, the dashboard's
# turn and the goal; a turn that changed nothing sends none (no two in a
# row alike); text output and stream-json (Claude Code's format, which has
# no such message) are untouched by it.
source "$(dirname "$0")/_lib.sh"

PROJ="$T/proj"
mkdir -p "$PROJ"
cat > "$T/scenario.json" <<'JSON'
{"sequence": true,
 "turns": [
  {"reply": {"tool_calls": [{"id": "t1", "name": "TodoWrite", "input": {"todos": [
     {"content": "gamma-read-the-log", "status": "in_progress", "activeForm": "Reading the log"},
     {"content": "delta-patch-cmake", "status": "pending", "activeForm": "Patching cmake"}]}}]}},
  {"reply": {"tool_calls": [{"id": "t2", "name": "TodoWrite", "input": {"todos": [
     {"content": "gamma-read-the-log", "status": "completed", "activeForm": "Reading the log"},
     {"content": "delta-patch-cmake", "status": "in_progress", "activeForm": "Patching cmake"}]}}]}},
  {"reply": {"text": "Plan under way."}}
]}
JSON

start_mock "$T/scenario.json"
use_provider anthropic
events=$("$LOOM_BIN" -p "fix the build" --cwd "$PROJ" --output-format events)
wu=$(jq -c 'select(.type=="working.updated")' <<<"$events")
n=$(grep -c . <<<"$wu" || true)
check "working.updated is in the event stream (got $n)" test "$n" -ge 2
assert_eq "working.updated is for the user" \
  "$(jq -r .visibility <<<"$wu" | sort -u)" "user"
first=$(head -n 1 <<<"$wu")
assert_eq "the first carries the scripted plan" \
  "$(jq -r '[.payload.plan[] | .content + ":" + .status] | join(",")' <<<"$first")" \
  "gamma-read-the-log:in_progress,delta-patch-cmake:pending"
assert_eq "the plan keeps activeForm" \
  "$(jq -r '.payload.plan[0].activeForm' <<<"$first")" "Reading the log"
assert_eq "the goal is the prompt" "$(jq -r .payload.goal <<<"$first")" "fix the build"
assert_eq "the first is turn 1 on the dashboard" "$(jq -r .payload.dashboard.turn <<<"$first")" "1"
assert_eq "the top-level turn mirrors the dashboard's" "$(jq -r .payload.turn <<<"$first")" "1"
check "the dashboard counts the request's tokens" \
  test "$(jq -r .payload.dashboard.tokens <<<"$first")" -gt 0
assert_eq "the dashboard has every field" \
  "$(jq -r '.payload.dashboard | keys | join(",")' <<<"$first")" \
  "budget_total,budget_used,depth,errors_recent,last_hb_ms,tokens,turn,window"
assert_eq "no pending events in a quiet run" "$(jq -c .payload.events <<<"$first")" "[]"
second=$(sed -n 2p <<<"$wu")
assert_eq "the next follows the second TodoWrite" \
  "$(jq -r '[.payload.plan[] | .content + ":" + .status] | join(",")' <<<"$second")" \
  "gamma-read-the-log:completed,delta-patch-cmake:in_progress"
assert_eq "and its turn" "$(jq -r .payload.dashboard.turn <<<"$second")" "2"
# Emitted only on change: consecutive payloads always differ.
dups=$(jq -c .payload <<<"$wu" | uniq -d | grep -c . || true)
assert_eq "no two working.updated in a row alike" "$dups" "0"
# Each comes after its turn's tool result (the observe step), before the end.
order=$(jq -r 'select(.type=="tool.finished" or .type=="working.updated") | .type' <<<"$events" |
  head -n 4 | paste -sd, -)
assert_eq "after the turn's TodoWrite result" "$order" \
  "tool.finished,working.updated,tool.finished,working.updated"
assert_eq "the run still ends with its state" \
  "$(tail -n 1 <<<"$events" | jq -r '.type + ":" + .payload.state')" "run.state_changed:completed"

start_mock "$T/scenario.json"
sj=$("$LOOM_BIN" -p "fix the build" --cwd "$PROJ" --output-format stream-json --verbose)
check "stream-json lines are JSON" jq -e . <<<"$sj"
assert_eq "stream-json leaves working.updated out" \
  "$(grep -c 'working.updated' <<<"$sj" || true)" "0"
assert_eq "stream-json still ends with its result" "$(tail -n 1 <<<"$sj" | jq -r .type)" "result"

start_mock "$T/scenario.json"
out=$("$LOOM_BIN" -p "fix the build" --cwd "$PROJ")
assert_eq "text output is the answer alone" "$out" "Plan under way."

finish
