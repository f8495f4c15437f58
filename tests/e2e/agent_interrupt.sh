#!/usr/bin/env bash
# SIGINT while a tool runs: the tool is stopped, "Interrupted by user" is
# recorded after the call's result, exit status 130, and the session resumes.
source "$(dirname "$0")/_lib.sh"

mkdir -p "$T/proj"
cat > "$T/scenario.json" <<'JSON'
{"turns": [
  {"reply": {"text": "Starting a long job.", "tool_calls": [{"id": "s1", "name": "Bash", "input": {"command": "sleep 30; echo finished"}}]}},
  {"reply": {"text": "Picked up after the interruption."}}
]}
JSON
for provider in ${PROVIDERS:-anthropic openai}; do
  start_mock "$T/scenario.json"
  use_provider "$provider"
  "$LOOM_BIN" -p "long job" --permission-mode bypassPermissions --cwd "$T/proj" --output-format events >"$T/events" 2>"$T/err" &
  pid=$!
  for _ in $(seq 1 200); do grep -q '"tool.started"' "$T/events" 2>/dev/null && break; sleep 0.05; done
  t0=$(date +%s.%N)
  kill -INT "$pid"
  set +e
  wait "$pid"
  status=$?
  set -e
  t1=$(date +%s.%N)
  assert_eq "$provider: exit status 130" "$status" "130"
  check "$provider: stopped promptly, not after the 30 s sleep" awk -v a="$t0" -v b="$t1" 'BEGIN{exit !(b - a < 10)}'
  last=$(tail -n 1 "$T/events")
  assert_eq "$provider: run state cancelled" "$(jq -r .payload.state <<<"$last")" "cancelled"
  id=$(jq -r .payload.session_id <<<"$last")
  file=$(session_file "$id")
  check "$provider: session is whole JSONL" valid_jsonl "$file"
  assert_eq "$provider: the call has a result" \
    "$(jq -r 'select(.type=="function_call_result" and .callId=="s1") | .isError' "$file")" "true"
  assert_eq "$provider: interruption recorded last, never drives a run" \
    "$(tail -n 1 "$file" | jq -r '[.role, .content[0].text, .providerData.skipRun] | join("|")')" "user|Interrupted by user|true"
  out=$("$LOOM_BIN" -p "please continue" --resume "$id" --cwd "$T/proj")
  assert_eq "$provider: the session resumes" "$out" "Picked up after the interruption."
done
finish
