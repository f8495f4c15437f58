#!/usr/bin/env bash
# Issue 14 item 1, background half: Agent with run_in_background returns the
# agent id and an output file at once (before the agent ends); its
# completion reaches the parent as a <task-notification> at a later turn
# boundary, without polling; TaskOutput reads agent_1 and TaskStop stops
# agent_3 (its shell is killed, it makes no further request); SendMessage
# to a running agent is delivered at its next step, and to a finished one
# resumes it with its conversation kept.
source "$(dirname "$0")/_lib.sh"
# jtrue JQ_ARGS... — the filter's last output is true (no input is a failure:
# jq 1.6 -e exits 0 on empty input).
jtrue() { local out; out=$(jq -e "$@" 2>/dev/null) && [ "$(tail -n 1 <<<"$out")" = true ]; }

mkdir -p "$T/proj" "$LOOM_HOME"
echo '{"agents": {"enabled": true}}' > "$LOOM_HOME/settings.json"
G="You are Loom's general-purpose agent"
# A unique sleep, so the check for a leftover process finds only ours.
STOP_SLEEP="sleep 37.$$"
jq -n --arg g "$G" --arg stop "$STOP_SLEEP" '
def child(mark; at; reply): {match: ({system_contains: $g, body_contains: mark} + (if at == null then {} else {assistant_turns: at} end)), reply: reply};
def bg(id; name; prompt): {id: id, name: "Agent", input: {description: name, name: name, prompt: prompt, run_in_background: true}};
{turns: [
  child("MSG-TO-FINISHED"; null; {text: "FAST-RESUMED"}),
  child("BG-FAST"; 0; {text: "FAST-DONE"}),
  child("MSG-TO-RUNNING"; null; {text: "SLOW-GOT-MSG"}),
  child("BG-SLOW"; 0; {tool_calls: [{name: "Bash", input: {command: "sleep 3"}}]}),
  child("BG-SLOW"; 1; {text: "SLOW-NO-MSG"}),
  child("BG-STOP"; 0; {tool_calls: [{name: "Bash", input: {command: $stop}}]}),
  child("BG-STOP"; 1; {text: "STOP-NOT-STOPPED"}),
  {match: {assistant_turns: 0}, reply: {tool_calls: [bg("bg1"; "fast"; "BG-FAST answer at once")]}},
  {match: {assistant_turns: 1}, reply: {tool_calls: [bg("bg2"; "slow"; "BG-SLOW take a while"),
                                                     {id: "sl1", name: "Bash", input: {command: "sleep 1"}}]}},
  {match: {assistant_turns: 2}, reply: {tool_calls: [
     {id: "sm1", name: "SendMessage", input: {to: "slow", message: "MSG-TO-RUNNING here is more"}},
     {id: "to1", name: "TaskOutput", input: {task_id: "agent_1", block: true}}]}},
  {match: {assistant_turns: 3}, reply: {tool_calls: [bg("bg3"; "stoppable"; "BG-STOP run long"),
                                                     {id: "sl3", name: "Bash", input: {command: "sleep 1"}}]}},
  {match: {assistant_turns: 4}, reply: {tool_calls: [{id: "ts3", name: "TaskStop", input: {task_id: "agent_3"}}]}},
  {match: {assistant_turns: 5}, reply: {tool_calls: [{id: "to2", name: "TaskOutput", input: {task_id: "agent_2", block: true}}]}},
  {match: {assistant_turns: 6}, reply: {tool_calls: [
     {id: "sm2", name: "SendMessage", input: {to: "fast", message: "MSG-TO-FINISHED one more thing"}}]}},
  {match: {}, reply: {text: "PARENT-DONE"}}]}' > "$T/scenario.json"
start_mock "$T/scenario.json"
use_provider anthropic
"$LOOM_BIN" -p "BG-GOAL" --permission-mode bypassPermissions --cwd "$T/proj" \
  --output-format events > "$T/events" 2> "$T/err" || true
last=$(tail -n 1 "$T/events")
assert_eq "the run completed" "$(jq -r .payload.state <<<"$last")" "completed"
assert_eq "the parent answered" "$(jq -r .payload.result <<<"$last")" "PARENT-DONE"

parent() { jq -c --arg g "$G" 'select(.body.system|tostring|contains($g)|not)' "$MOCK_LOG"; }
# result ID — the text of the parent's tool result for call ID.
result() {
  parent | jq -rs --arg id "$1" '[.[].body.messages[]?.content | arrays | .[]
    | select(.type=="tool_result" and .tool_use_id==$id) | .content
    | if type=="array" then map(.text // "") | join("") else . end] | last // ""' 
}

# ---- at once: the id and the output file ----------------------------------------
r1=$(result bg1)
assert_contains "bg1: the result names agent_1" "$r1" "agentId: agent_1"
out1=$(sed -n 's/^output_file: //p' <<<"$r1" | head -n 1)
check "bg1: the result names an output file ($out1)" test -n "$out1"
order=$(jq -s -c '[to_entries[] | select((.value.type=="tool.finished" and .value.payload.call_id=="bg2")
                                       or (.value.type=="agent.completed" and .value.payload.agent_id=="agent_2"))
                   | .value.type]' "$T/events")
assert_eq "bg2: the Agent call returned before the agent ended" "$order" '["tool.finished","agent.completed"]'

# ---- the completion note ------------------------------------------------------------
first_note=$(parent | jq -s '[.[] | .raw_body | contains("<task-id>agent_1</task-id>")] | index(true)')
n_parent=$(parent | wc -l | tr -d ' ')
check "agent_1's completion reached the parent as a task-notification (request $first_note of $n_parent)" \
  test "$first_note" != null
assert_contains "the note carries the agent's answer" \
  "$(parent | jq -r '.raw_body' | grep -o '<task-id>agent_1</task-id>.\{0,400\}' | head -n 1)" "FAST-DONE"
check "no TaskOutput was needed to learn of it (it came before the final turn)" \
  test "${first_note:-99}" != null -a "${first_note:-99}" -lt "$n_parent"

# ---- TaskOutput / TaskStop on agents --------------------------------------------------
assert_contains "TaskOutput agent_1 gives its answer" "$(result to1)" "FAST-DONE"
check "TaskStop agent_3 succeeded ($(result ts3 | head -c 200))" \
  jtrue -s '[.[].body.messages[]?.content | arrays | .[] | select(.type=="tool_result" and .tool_use_id=="ts3")] | length > 0 and all(.is_error != true)' "$MOCK_LOG"
assert_eq "agent_3 ended cancelled" \
  "$(jq -r 'select(.type=="agent.completed" and .payload.agent_id=="agent_3") | .payload.state' "$T/events" | tail -n 1)" "cancelled"
check "agent_3 made no request after its stop" \
  bash -c "! grep -q 'STOP-NOT-STOPPED' <<<\"\$(jq -r .raw_body '$MOCK_LOG')\""
# ([s]leep: the pattern must not match the checking shell's own command line.)
check "agent_3's shell is gone" bash -c "! pgrep -f '[s]${STOP_SLEEP#s}' >/dev/null"

# ---- SendMessage ------------------------------------------------------------------
assert_contains "SendMessage to the running agent: delivered" "$(result sm1)" "delivered"
assert_contains "the running agent read it at its next step" "$(result to2)" "SLOW-GOT-MSG"
assert_contains "SendMessage to the finished agent: resumed" "$(result sm2)" "resumed"
resumed=$(jq -c --arg g "$G" 'select((.body.system|tostring|contains($g)) and (.raw_body|contains("MSG-TO-FINISHED")))' "$MOCK_LOG" | sed -n 1p)
check "the resumed agent asked the model again" test -n "$resumed"
check "its conversation was kept (its first prompt and answer)" \
  jtrue '(.raw_body|contains("BG-FAST answer at once")) and (.raw_body|contains("FAST-DONE"))' <<<"$resumed"
check "the output file holds the agent's latest answer" grep -q "FAST-RESUMED" "${out1:-/nonexistent}"
finish
