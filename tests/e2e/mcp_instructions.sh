#!/usr/bin/env bash
# A server's instructions are in a request exactly when its tools are
# (seed 000 §5: never tools without their instructions, nor instructions
# without their tools). With no start-up wait and a fake that answers
# initialize only after 1.5 s, the first request has neither; once the
# server has connected (the model's first tool call, a Bash loop, waits
# until the fake was asked for its tools) a later request has both.
source "$(dirname "$0")/_lib.sh"
source "$LOOM_SRC/tests/e2e/_mcp_lib.sh"
need_fake_server

export LOOM_MCP_STARTUP_WAIT_MS=0
FAKE_LOG="$T/fake.log"
mkdir -p "$T/proj"
# The Bash loop waits (at most 30 s) until the fake was asked for its tools.
wait_cmd="for i in \$(seq 1 300); do grep -q 'recv tools/list' '$FAKE_LOG' 2>/dev/null && break; sleep 0.1; done; sleep 1; echo waited"
jq -n --arg cmd "$wait_cmd" '{turns: [
  {reply: {tool_calls: [{id: "b1", name: "Bash", input: {command: $cmd}}]}},
  {reply: {tool_calls: [{id: "f1", name: "mcp__fake__echo", input: {text: "connected now"}}]}},
  {reply: {text: "Both seen."}}]}' > "$T/scenario.json"
start_mock "$T/scenario.json"
use_provider anthropic
json=$("$LOOM_BIN" -p "wait for the server" --cwd "$T/proj" --permission-mode bypassPermissions \
        --output-format json 2> "$T/stderr" \
        --mcp-config "$(mcp_config fake "$(fake_entry --instructions "USE-FAKE-WISELY" --delay-init 1500 --log "$FAKE_LOG")")")
assert_eq "the run completed" "$(jq -r .result <<<"$json")" "Both seen."
assert_eq "three requests" "$(nreq)" "3"
has_instr() { raw_req "$1" | grep -q "USE-FAKE-WISELY"; }
has_tools() { tool_names "$1" | tr ',' '\n' | grep -q '^mcp__fake__'; }
check_not "the first request has no instructions of the server" has_instr 1
check_not "the first request has no tool of the server" has_tools 1
check "the second request has the server's instructions" has_instr 2
check "the second request has the server's tools" has_tools 2
for i in 1 2 3; do
  a=no; b=no
  has_instr "$i" && a=yes
  has_tools "$i" && b=yes
  assert_eq "request $i: instructions ($a) exactly when tools ($b)" "$a" "$b"
done
assert_eq "the server's tool ran" "$(tool_result f1)" "connected now"
assert_contains "the instructions are in the system prompt" "$(raw_part 2 system)" "USE-FAKE-WISELY"
assert_contains "the instructions are said to be the server's" "$(raw_part 2 system)" \
  'Instructions the MCP server \"fake\" gives for its tools'
finish
