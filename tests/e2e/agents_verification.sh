#!/usr/bin/env bash
# Done when 4 (seed 000 M3, verification seeks counterexamples): the main
# agent claims "add.sh adds, the tests pass" and delegates to the
# verification role. The scripted verifier runs the tests itself (Bash) and
# its verdict follows what that run printed (body_contains on the tool
# result): when the claim is false it returns FAIL with the failing step
# first (command, exit code, the failing line); when true, PASS with the
# steps it ran. The verdict is the role's structured output, so the parent
# receives the schema-valid JSON. Anti-pattern 1 (row 4.5a): a PASS whose
# step names a command the verifier never ran is rejected.
source "$(dirname "$0")/_lib.sh"
# jtrue JQ_ARGS... — the filter's last output is true (no input is a failure:
# jq 1.6 -e exits 0 on empty input).
jtrue() { local out; out=$(jq -e "$@" 2>/dev/null) && [ "$(tail -n 1 <<<"$out")" = true ]; }

mkdir -p "$T/proj" "$LOOM_HOME"
echo '{"agents": {"enabled": true}}' > "$LOOM_HOME/settings.json"
cat > "$T/proj/test.sh" <<'SH'
#!/usr/bin/env bash
# The project's tests: add.sh must add.
touch "$(dirname "$0")/tests-ran"
got=$(bash "$(dirname "$0")/add.sh" 2 3)
if [ "$got" = 5 ]; then echo "ok - add 2 3 = 5"; echo "TESTS PASSED"; exit 0; fi
echo "not ok - add 2 3 gave $got, expected 5"; echo "TESTS FAILED"; exit 1
SH
V="You are Loom's verification agent"
cat > "$T/scenario.json" <<JSON
{"turns": [
  {"match": {"system_contains": "$V", "body_contains": "NO-RUN-CLAIM", "assistant_turns": 0},
   "reply": {"tool_calls": [{"id": "so0", "name": "StructuredOutput", "input": {
     "verdict": "PASS", "steps": [{"command": "make test", "exit_code": 0, "result": "all green"}]}}]}},
  {"match": {"system_contains": "$V", "body_contains": "NO-RUN-CLAIM", "assistant_turns": 1},
   "reply": {"text": "I did not run anything."}},
  {"match": {"system_contains": "$V", "assistant_turns": 0},
   "reply": {"text": "Running the tests myself.", "tool_calls": [{"id": "v1", "name": "Bash", "input": {"command": "bash test.sh"}}]}},
  {"match": {"system_contains": "$V", "body_contains": "TESTS FAILED", "assistant_turns": 1},
   "reply": {"tool_calls": [{"id": "so1", "name": "StructuredOutput", "input": {
     "verdict": "FAIL", "steps": [{"command": "bash test.sh", "exit_code": 1,
                                    "result": "\$last:(not ok - [^\\\\\\\\\"]*)"}]}}]}},
  {"match": {"system_contains": "$V", "body_contains": "TESTS PASSED", "assistant_turns": 1},
   "reply": {"tool_calls": [{"id": "so1", "name": "StructuredOutput", "input": {
     "verdict": "PASS", "steps": [{"command": "bash test.sh", "exit_code": 0,
                                    "result": "\$last:(ok - add [^\\\\\\\\\"]*)"}]}}]}},
  {"match": {"system_contains": "$V", "assistant_turns": 2}, "reply": {"text": "Verdict given."}},
  {"match": {"assistant_turns": 0},
   "reply": {"tool_calls": [{"id": "ver", "name": "Agent", "input": {
     "description": "verify the claim", "subagent_type": "verification",
     "prompt": "\$last:(CLAIM[^\\\\\\\\\"]*)"}}]}},
  {"match": {"assistant_turns": 1}, "reply": {"text": "PARENT-DONE"}}
]}
JSON

run_claim() { # LABEL PROMPT
  rm -f "$T/proj/tests-ran"
  start_mock "$T/scenario.json"
  use_provider anthropic
  "$LOOM_BIN" -p "$2" --permission-mode bypassPermissions --cwd "$T/proj" \
    --output-format events > "$T/events.$1" 2> "$T/err.$1" || true
  cp "$MOCK_LOG" "$T/log.$1"
  assert_eq "$1: the run completed" "$(tail -n 1 "$T/events.$1" | jq -r .payload.state)" "completed"
}
# verdict LABEL — the JSON the parent received for its verification call.
verdict() {
  jq -c 'select((.body.system|tostring|contains("verification agent"))|not) | .body.messages[-1].content | arrays | .[]
         | select(.type=="tool_result" and .tool_use_id=="ver")
         | (.content | if type=="array" then map(.text) | join("") else . end)' "$T/log.$1" | tail -n 1 | jq -c '. | fromjson? // .'
}

# The claim is false: add.sh multiplies.
echo 'echo $(( $1 * $2 ))' > "$T/proj/add.sh"
run_claim false "CLAIM: add.sh adds two numbers and the tests pass"
check "false: the verifier ran the tests itself" test -e "$T/proj/tests-ran"
check "false: its Bash call ran in the child" \
  jtrue -s '[.[] | select((.type=="tool.finished" or .type=="tool.failed") and .payload.tool=="Bash" and .payload.agent_id != null)] | length == 1' "$T/events.false"
v=$(verdict false)
check "false: the parent received FAIL with the failing step first ($v)" \
  jtrue '.verdict=="FAIL" and .steps[0].command=="bash test.sh" and .steps[0].exit_code==1 and (.steps[0].result|startswith("not ok - add 2 3 gave 6"))' <<<"$v"

# The claim is true.
echo 'echo $(( $1 + $2 ))' > "$T/proj/add.sh"
run_claim true "CLAIM: add.sh adds two numbers and the tests pass"
check "true: the verifier ran the tests itself" test -e "$T/proj/tests-ran"
v=$(verdict true)
check "true: the parent received PASS with the steps run ($v)" \
  jtrue '.verdict=="PASS" and (.steps|length)>=1 and .steps[0].command=="bash test.sh" and .steps[0].exit_code==0 and (.steps[0].result|startswith("ok - add 2 3 = 5"))' <<<"$v"

# Anti-pattern 1: a PASS naming a command that never ran is rejected.
run_claim norun "CLAIM: NO-RUN-CLAIM add.sh adds two numbers and the tests pass"
rej=$(jq -c '.body.messages[-1].content | arrays | .[] | select(.type=="tool_result" and .tool_use_id=="so0")' "$T/log.norun" | tail -n 1)
check "norun: the StructuredOutput naming an unrun command is an error ($rej)" jtrue '.is_error == true' <<<"$rej"
assert_contains "norun: the error names the command" "$(jq -r '.content|tostring' <<<"$rej")" "make test"
check "norun: the parent did not receive a PASS" bash -c "! jq -e '.verdict==\"PASS\"' <<<'$(verdict norun)' >/dev/null 2>&1"
finish
