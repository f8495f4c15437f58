#!/usr/bin/env bash
# Done when 1 (seed 000 M3, read-only isolation): an Explore sub-agent told
# to write a file cannot. Its requests declare no tool with side effects
# (only read-only and local-state tools); the Write and Bash calls the
# scripted model makes anyway are refused (an unknown tool to it: the
# pipeline's "find" step), and the file stays absent — even in
# bypassPermissions, so it is the role, not the mode, that stops them.
source "$(dirname "$0")/_lib.sh"
# jtrue JQ_ARGS... — the filter's last output is true (no input is a failure:
# jq 1.6 -e exits 0 on empty input).
jtrue() { local out; out=$(jq -e "$@" 2>/dev/null) && [ "$(tail -n 1 <<<"$out")" = true ]; }

mkdir -p "$T/proj" "$LOOM_HOME"
echo "seed" > "$T/proj/present.txt"
echo '{"agents": {"enabled": true}}' > "$LOOM_HOME/settings.json"
# Explore's turns first: they match on the role's marker in the system text.
cat > "$T/scenario.json" <<JSON
{"turns": [
  {"match": {"system_contains": "You are Loom's Explore agent", "assistant_turns": 0},
   "reply": {"text": "Writing as told.", "tool_calls": [
     {"id": "w1", "name": "Write", "input": {"file_path": "$T/proj/x.txt", "content": "written"}},
     {"id": "b1", "name": "Bash", "input": {"command": "touch $T/proj/y.txt"}},
     {"id": "r1", "name": "Read", "input": {"file_path": "$T/proj/present.txt"}}]}},
  {"match": {"system_contains": "You are Loom's Explore agent", "assistant_turns": 1},
   "reply": {"text": "EXPLORE-DONE: I cannot write files."}},
  {"match": {"assistant_turns": 0},
   "reply": {"tool_calls": [{"id": "ag1", "name": "Agent", "input": {
     "description": "write x", "subagent_type": "Explore",
     "prompt": "EXPLORE-TASK write the file x.txt with the text written"}}]}},
  {"match": {"assistant_turns": 1}, "reply": {"text": "PARENT-DONE"}}
]}
JSON
start_mock "$T/scenario.json"
use_provider anthropic
"$LOOM_BIN" -p "go" --permission-mode bypassPermissions --cwd "$T/proj" \
  --output-format events > "$T/events" 2> "$T/err" || true
last=$(tail -n 1 "$T/events")
assert_eq "the run completed" "$(jq -r .payload.state <<<"$last")" "completed"
assert_eq "the parent answered" "$(jq -r .payload.result <<<"$last")" "PARENT-DONE"

explore() { jq -c 'select(.body.system | tostring | contains("You are Loom'"'"'s Explore agent"))' "$MOCK_LOG"; }
assert_eq "two Explore requests" "$(explore | wc -l | tr -d ' ')" "2"
# The set a read-only role may declare (plan §3 Done 1, and WebFetch, which
# reads). Anything else in the list is a tool with side effects.
allowed='["Read","Glob","Grep","TodoWrite","Renew","AcknowledgeEvent","Publish","WebFetch","TaskOutput","StructuredOutput"]'
declared=$(explore | sed -n 1p | jq -c '[.body.tools[].name]')
check "Explore declares Read ($declared)" jtrue 'index("Read") != null' <<<"$declared"
check "Explore declares nothing outside the read-only set" \
   jtrue --argjson ok "$allowed" 'all(.[]; . as $t | $ok | index($t) != null)' <<<"$declared"
for t in Write Edit Bash Agent TaskStop NotebookEdit; do
  check "Explore does not declare $t" jtrue --arg t "$t" 'index($t) == null' <<<"$declared"
done
assert_eq "every Explore request declares the same tools" "$(explore | jq -c '[.body.tools[].name]' | sort -u | wc -l | tr -d ' ')" "1"

# The refused calls: the child's second request carries their results.
second=$(explore | sed -n 2p)
result_of() { jq -c --arg id "$1" '[.body.messages[-1].content[] | select(.type=="tool_result" and .tool_use_id==$id)][0]' <<<"$second"; }
check "Write came back as an error" jtrue '.is_error == true' <<<"$(result_of w1)"
check "Bash came back as an error" jtrue '.is_error == true' <<<"$(result_of b1)"
check "Read worked" jtrue '(.is_error // false) == false and (.content | tostring | contains("seed"))' <<<"$(result_of r1)"
assert_contains "the Write error names the tool" "$(jq -r '.content | tostring' <<<"$(result_of w1)")" "Write"
check "x.txt was not written" test ! -e "$T/proj/x.txt"
check "y.txt was not touched" test ! -e "$T/proj/y.txt"
check "no Write ran anywhere in the tree" \
  jtrue -s '[.[] | select(.type=="tool.finished" and (.payload.tool=="Write" or .payload.tool=="Bash") and (.payload.is_error | not))] | length == 0' "$T/events"

# The parent got the child's answer, as a completed Explore agent.
parent2=$(jq -c 'select((.body.system | tostring | contains("Explore agent") | not) and (.body.messages | length) == 3)' "$MOCK_LOG" | tail -n 1)
assert_contains "the parent read the Explore answer" \
  "$(jq -r '.body.messages[-1].content[] | select(.type=="tool_result") | .content | tostring' <<<"$parent2")" "EXPLORE-DONE"
finish
