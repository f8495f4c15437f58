#!/usr/bin/env bash
# Foreground sub-agents: one reply calls Agent (general-purpose) and its
# alias Task (Explore); both children run to their answers, which come back
# as the calls' results with Claude Code's toolUseResult fields; the
# Explore child is declared no tool with side effects; each child has its
# sidechain transcript under the session's .mf/subagents/.
source "$(dirname "$0")/_lib.sh"
source "$LOOM_SRC/tests/e2e/_mcp_lib.sh"
# The children connect to the MCP server too; on a loaded machine the
# default 2 s wait can pass before it answers initialize.
export LOOM_MCP_STARTUP_WAIT_MS=30000
need_fake_server

mkdir -p "$T/proj" "$LOOM_HOME"
echo "alpha" > "$T/proj/a.txt"
echo "beta" > "$T/proj/b.txt"
echo "gamma" > "$T/proj/c.txt"
# Sub-agents are off by default: the user settings turn them on.
echo '{"agents": {"enabled": true}}' > "$LOOM_HOME/settings.json"
cat > "$T/scenario.json" <<JSON
{"turns": [
  {"match": {"assistant_turns": 0, "last_user_contains": "PARENT-GOAL"},
   "reply": {"text": "Delegating.", "tool_calls": [
     {"id": "ag1", "name": "Agent", "input": {"description": "read files", "prompt": "CHILD-GP read the files", "subagent_type": "general-purpose", "name": "reader"}},
     {"id": "ag2", "name": "Task", "input": {"description": "explore", "prompt": "CHILD-EX look around", "subagent_type": "Explore"}}],
   "usage": {"input_tokens": 100, "output_tokens": 10}}},
  {"match": {"assistant_turns": 0, "last_user_contains": "CHILD-"},
   "reply": {"text": "Reading.", "tool_calls": [
     {"name": "Read", "input": {"file_path": "$T/proj/a.txt"}},
     {"name": "Read", "input": {"file_path": "$T/proj/b.txt"}},
     {"name": "Read", "input": {"file_path": "$T/proj/c.txt"}}],
     "usage": {"input_tokens": 50, "output_tokens": 5}}},
  {"match": {"assistant_turns": 1, "tool_results": 3},
   "reply": {"text": "CHILD-ANSWER alpha beta gamma", "usage": {"input_tokens": 60, "output_tokens": 6}}},
  {"match": {"assistant_turns": 1, "tool_results": 2},
   "reply": {"text": "PARENT-DONE", "usage": {"input_tokens": 200, "output_tokens": 20}}}
]}
JSON
for provider in ${PROVIDERS:-anthropic openai}; do
  start_mock "$T/scenario.json"
  use_provider "$provider"
  "$LOOM_BIN" -p "PARENT-GOAL" --permission-mode bypassPermissions --cwd "$T/proj" \
    --output-format events >"$T/events" 2>"$T/err"
  last=$(tail -n 1 "$T/events")
  assert_eq "$provider: the run completed" "$(jq -r .payload.state <<<"$last")" "completed"
  assert_eq "$provider: the parent's answer" "$(jq -r .payload.result <<<"$last")" "PARENT-DONE"
  sid=$(jq -r .payload.session_id <<<"$last")
  file=$(session_file "$sid")
  for id in ag1 ag2; do
    raw=$(jq -c "select(.type==\"function_call_result\" and .callId==\"$id\") | .providerData.toolResult.rawResponse" "$file")
    assert_eq "$provider: $id status" "$(jq -r .status <<<"$raw")" "completed"
    assert_contains "$provider: $id agentId" "$(jq -r .agentId <<<"$raw")" "agent_"
    check "$provider: $id has model, usage, duration and tool uses" \
      jq -e '(.model|type=="string") and (.usage.totalTokens==121) and (.totalDurationMs>=0) and (.totalToolUseCount==3) and (.content[0].text=="CHILD-ANSWER alpha beta gamma")' <<<"$raw"
    assert_eq "$provider: $id result text" \
      "$(jq -r "select(.type==\"function_call_result\" and .callId==\"$id\") | .output" "$file")" "CHILD-ANSWER alpha beta gamma"
    tp=$(jq -r .transcriptPath <<<"$raw")
    check "$provider: $id sidechain is marked" jq -se '.[0].isSidechain == true and (.[0].agentId|startswith("agent_"))' "$tp"
  done
  assert_eq "$provider: agent types" \
    "$(jq -r 'select(.type=="function_call_result" and (.callId|startswith("ag"))) | .providerData.toolResult.rawResponse.agentType' "$file" | sort | paste -sd,)" \
    "Explore,general-purpose"
  # The tree's usage: 110 (parent turn 1) + 220 (parent turn 2) + 2 × 121.
  assert_eq "$provider: result usage is the tree's total" "$(jq -r .payload.usage.totalTokens <<<"$last")" "572"
  assert_eq "$provider: usage_by_agent rows" "$(jq -r '.payload.usage_by_agent | length' <<<"$last")" "2"
  assert_eq "$provider: agent.spawned events" "$(jq -s '[.[] | select(.type=="agent.spawned")] | length' "$T/events")" "2"
  assert_eq "$provider: agent.completed events" "$(jq -s '[.[] | select(.type=="agent.completed")] | length' "$T/events")" "2"
  check "$provider: child tool events carry the agent id" \
    jq -se '[.[] | select(.type=="tool.started" and .payload.tool=="Read")] | length == 6 and all(.payload.agent_id != null)' "$T/events"
  # What each child's first request declared.
  ex_tools=$(jq -r 'select((.body|tostring)|contains("CHILD-EX")) | [.body.tools[] | (.name // .function.name)] | join(",")' "$MOCK_LOG" | head -n 1)
  gp_tools=$(jq -r 'select((.body|tostring)|contains("CHILD-GP")) | [.body.tools[] | (.name // .function.name)] | join(",")' "$MOCK_LOG" | head -n 1)
  check "$provider: Explore declares Read ($ex_tools)" grep -qw Read <<<"$ex_tools"
  for t in Write Edit Bash Agent; do
    check "$provider: Explore does not declare $t" bash -c "! grep -qw $t <<<'$ex_tools'"
  done
  check "$provider: general-purpose declares Write and Bash ($gp_tools)" bash -c "grep -qw Write <<<'$gp_tools' && grep -qw Bash <<<'$gp_tools'"
done

# The child's MCP tools come from connections of its own (a clone of the
# session's servers): the fake server's echo answers inside the child, and
# the server the child started is gone when the run ends.
cat > "$T/mcp.json" <<JSON
{"turns": [
  {"match": {"assistant_turns": 0, "last_user_contains": "MCP-GOAL"},
   "reply": {"tool_calls": [{"id": "am1", "name": "Agent", "input": {"description": "echo", "prompt": "CHILD-MCP echo"}}]}},
  {"match": {"assistant_turns": 0, "last_user_contains": "CHILD-MCP"},
   "reply": {"tool_calls": [{"id": "e1", "name": "mcp__fake__echo", "input": {"text": "FROM-THE-CHILD"}}]}},
  {"match": {"assistant_turns": 1, "tool_results": 1, "system_contains": "agent"},
   "reply": {"text": "\$last:(FROM-THE-[A-Z]+)"}}
]}
JSON
start_mock "$T/mcp.json"
use_provider anthropic
"$LOOM_BIN" -p "MCP-GOAL" --permission-mode bypassPermissions --cwd "$T/proj" \
  --mcp-config "$(mcp_config fake "$(fake_entry --log "$T/fakelog")")" --output-format events >"$T/events" 2>"$T/err" || true
file=$(session_file "$(tail -n 1 "$T/events" | jq -r .payload.session_id)")
assert_eq "mcp: the child's echo came back through its answer" \
  "$(jq -r 'select(.type=="function_call_result" and .callId=="am1") | .output' "$file")" "FROM-THE-CHILD"
child_tools=$(jq -r 'select((.body|tostring)|contains("CHILD-MCP")) | [.body.tools[] | .name] | join(",")' "$MOCK_LOG" | head -n 1)
assert_contains "mcp: the child declares the server's tools" "$child_tools" "mcp__fake__echo"
no_fake_left() { ! pgrep -f -- "$T/fakelog" >/dev/null; }
check "mcp: no fake server outlives the run" no_fake_left
finish
