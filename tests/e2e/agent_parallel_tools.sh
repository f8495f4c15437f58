#!/usr/bin/env bash
# One turn with three Reads and a Grep: they run concurrently (their trace
# intervals overlap) and their results come back in call order.
source "$(dirname "$0")/_lib.sh"

mkdir -p "$T/proj"
for f in a b c; do
  # Big enough that each Read takes a few milliseconds.
  awk -v f="$f" 'BEGIN { for (i = 0; i < 3000; i++) { printf "%s line %d ", f, i; for (j = 0; j < 60; j++) printf "xxxxxxxxxx"; print "" } }' > "$T/proj/$f.txt"
done
echo "needle here" > "$T/proj/n.txt"
cat > "$T/scenario.json" <<JSON
{"turns": [
  {"reply": {"text": "Reading all of them at once.", "tool_calls": [
    {"id": "r1", "name": "Read", "input": {"file_path": "$T/proj/a.txt"}},
    {"id": "r2", "name": "Read", "input": {"file_path": "$T/proj/b.txt"}},
    {"id": "r3", "name": "Read", "input": {"file_path": "$T/proj/c.txt"}},
    {"id": "g1", "name": "Grep", "input": {"pattern": "needle", "path": "$T/proj"}}]}},
  {"reply": {"text": "Done reading."}}
]}
JSON
for provider in ${PROVIDERS:-anthropic openai}; do
  start_mock "$T/scenario.json"
  use_provider "$provider"
  "$LOOM_BIN" -p "read" --permission-mode bypassPermissions --cwd "$T/proj" --output-format events >"$T/events"
  # Run one after another, no two intervals would intersect; run together,
  # some do. (Which ones depends on the scheduler, so only "some" is asserted.)
  overlaps=$(jq -s '[.[] | select(.type=="tool.finished" or .type=="tool.failed") | .payload] as $c
                    | [range(0; $c | length) as $i | range($i + 1; $c | length) as $j
                       | select($c[$i].started_us < $c[$j].finished_us and $c[$j].started_us < $c[$i].finished_us)]
                    | length' "$T/events")
  check "$provider: the calls ran concurrently ($overlaps overlapping pairs)" test "$overlaps" -ge 1
  assert_eq "$provider: four tool events" \
    "$(jq -r 'select(.type=="tool.finished") | .payload.call_id' "$T/events" | sort | paste -sd,)" "g1,r1,r2,r3"
  file=$(session_file "$(tail -n 1 "$T/events" | jq -r .payload.session_id)")
  assert_eq "$provider: results recorded in call order" \
    "$(jq -r 'select(.type=="function_call_result") | .callId' "$file" | paste -sd,)" "r1,r2,r3,g1"
  assert_contains "$provider: grep found the needle" \
    "$(jq -r 'select(.type=="function_call_result" and .callId=="g1") | .output' "$file")" "n.txt"
  last=$(tail -n 1 "$MOCK_LOG")
  case "$provider" in
    anthropic) order=$(jq -r '[.body.messages[-1].content[] | select(.type=="tool_result") | .tool_use_id] | join(",")' <<<"$last") ;;
    openai) order=$(jq -r '[.body.messages[] | select(.role=="tool") | .tool_call_id] | join(",")' <<<"$last") ;;
  esac
  assert_eq "$provider: the model got the results in call order" "$order" "r1,r2,r3,g1"
done
finish
