#!/usr/bin/env bash
# The agent end to end: Read → Edit → Bash runs the test → final answer, in
# the Anthropic and the OpenAI format; the test really goes from red to green.
source "$(dirname "$0")/_lib.sh"

scenario="$LOOM_SRC/examples/cassettes/fix-test.json"
for provider in ${PROVIDERS:-anthropic openai}; do
  rm -rf "$T/proj" && cp -r "$LOOM_SRC/examples/demo" "$T/proj"
  check "$provider: the demo test fails before" bash -c "! bash '$T/proj/test.sh' >/dev/null"
  start_mock "$scenario"
  use_provider "$provider"
  set +e
  "$LOOM_BIN" -p "The test in this project fails. Fix it." --cwd "$T/proj" \
    --permission-mode acceptEdits --allowedTools "Bash(bash test.sh)" \
    --output-format events >"$T/events" 2>"$T/err"
  status=$?
  set -e
  assert_eq "$provider: exit status 0" "$status" "0"
  check "$provider: the test passes on disk afterwards" bash "$T/proj/test.sh"
  assert_eq "$provider: tools ran in order" \
    "$(jq -r 'select(.type=="tool.finished" or .type=="tool.failed") | .payload.tool' "$T/events" | paste -sd,)" "Bash,Read,Edit,Bash"
  assert_contains "$provider: the first test run failed" \
    "$(jq -r 'select(.type=="tool.failed") | .payload.output' "$T/events")" "FAIL add 2 3"
  last=$(tail -n 1 "$T/events")
  assert_eq "$provider: run completed" "$(jq -r .payload.state <<<"$last")" "completed"
  assert_contains "$provider: final answer" "$(jq -r .payload.result <<<"$last")" "now passes"
  assert_eq "$provider: five model turns" "$(jq -r .payload.num_turns <<<"$last")" "5"
  file=$(session_file "$(jq -r .payload.session_id <<<"$last")")
  assert_eq "$provider: four results recorded" "$(jq -r 'select(.type=="function_call_result") | .callId' "$file" | wc -l)" "4"
  check "$provider: the edit took a file-history snapshot" \
    grep -q '"type":"file-history-snapshot"' "$file"
  # What the model saw after the edit: the Bash result of the passing test.
  assert_contains "$provider: the model saw the passing run" \
    "$(jq -r 'select(.type=="function_call_result" and .callId=="call_run_2") | .output' "$file")" "ok   add 2 3"
done
finish
