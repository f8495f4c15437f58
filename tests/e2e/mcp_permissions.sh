#!/usr/bin/env bash
# Permission rules over MCP tools (server-everything): a deny of
# mcp__everything__* (or of the server, mcp__everything) blocks every tool
# of the server, read-only ones included; an allow of mcp__everything__echo
# runs echo, while a tool the rule does not name and whose annotations do not
# make it read-only still needs approval — headless a denial saying so, in
# the REPL an approval question (and none for echo). A read-only tool
# (readOnlyHint: true, as server-everything's get-sum) runs without asking
# in default mode: the annotations give the default (docs/mcp.md).
source "$(dirname "$0")/repl_lib.sh"
source "$LOOM_SRC/tests/e2e/_mcp_lib.sh"
need_reference_servers

export LOOM_MCP_STARTUP_WAIT_MS=30000
mkdir -p "$T/proj"
cfg=$(mcp_config everything "$(everything_entry)")
cat > "$T/scenario.json" <<'JSON'
{"turns": [
  {"reply": {"tool_calls": [{"id": "p1", "name": "mcp__everything__echo", "input": {"message": "may I?"}}]}},
  {"reply": {"tool_calls": [{"id": "p2", "name": "mcp__everything__get-sum", "input": {"a": 1, "b": 2}}]}},
  {"reply": {"tool_calls": [{"id": "p3", "name": "mcp__everything__toggle-simulated-logging", "input": {}}]}},
  {"reply": {"text": "Tried all three."}}
]}
JSON
start_mock "$T/scenario.json"
use_provider anthropic
run_headless() { # RULES_JSON
  echo "{\"permissions\": $1}" > "$LOOM_HOME/settings.json"
  start_mock "$T/scenario.json"
  json=$("$LOOM_BIN" -p "try the tools" --cwd "$T/proj" --mcp-config "$cfg" --output-format json)
  assert_eq "$1: the run completed" "$(jq -r .result <<<"$json")" "Tried all three."
}

for rule in 'mcp__everything__*' 'mcp__everything'; do
  run_headless "{\"deny\": [\"$rule\"]}"
  for id in p1 p2 p3; do
    assert_eq "deny $rule: call $id is refused" "$(tool_is_error $id)" "true"
    assert_contains "deny $rule: call $id's result is a denial" "$(tool_result $id)" "denied"
  done
  check "deny $rule: echo never reached the server" bash -c "! grep -q 'Echo: may I' '$MOCK_LOG'"
done

run_headless '{"allow": ["mcp__everything__echo"]}'
assert_eq "allow echo: echo ran" "$(tool_result p1)" "Echo: may I?"
assert_eq "allow echo: get-sum (readOnlyHint) ran" "$(tool_result p2)" "The sum of 1 and 2 is 3."
p3=$(tool_result p3)
assert_eq "allow echo: toggle-simulated-logging is refused" "$(tool_is_error p3)" "true"
assert_contains "allow echo: the refusal says it needs approval nobody can give" "$p3" "nobody can approve it"

# The allow rule is what lets a tool that would ask run.
run_headless '{"allow": ["mcp__everything__toggle-simulated-logging"]}'
assert_eq "allow toggle-simulated-logging: it ran" "$(tool_is_error p3)" "false"
assert_contains "allow toggle-simulated-logging: its result reached the model" "$(tool_result p3)" "logging"

# The REPL: a question for toggle-simulated-logging, none for echo.
echo '{"permissions": {"allow": ["mcp__everything__echo"]}}' > "$LOOM_HOME/settings.json"
start_mock "$T/scenario.json"
repl_launch "$T/proj" --mcp-config "$cfg"
wait_screen "the header" "loom 0.1.0" 15
wait_prompt
type_line "try the tools"
wait_screen "the approval question" "Allow this mcp__everything__toggle-simulated-logging call?" 20
s=$(screen)
check "no question was asked for echo" bash -c "! grep -q 'Allow this mcp__everything__echo' <<<'$(sed "s/'//g" <<<"$s")'"
check "no question was asked for get-sum" bash -c "! grep -q 'Allow this mcp__everything__get-sum' <<<'$(sed "s/'//g" <<<"$s")'"
assert_eq "repl: echo ran before the question" "$(tool_result p1)" "Echo: may I?"
answer -l "y"; keys Enter
wait_screen "the final answer" "Tried all three." 20
wait_prompt
assert_contains "repl: the approved call ran" "$(tool_result p3)" "logging"
assert_eq "repl: the approved call is no error" "$(tool_is_error p3)" "false"
keys C-d
assert_eq "repl: exit status 0" "$(wait_exit 15)" "0"
finish
