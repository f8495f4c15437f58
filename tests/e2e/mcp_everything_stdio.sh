#!/usr/bin/env bash
# MCP over stdio against the reference server-everything: the model's call
# of mcp__everything__echo reaches the server and its answer the next
# request; structuredContent is checked against the tool's outputSchema
# (server-everything's passes, the fake's mismatch is a tool error naming
# the path); a long operation's progress notifications become tool.progress
# events; the server's status (connected, tool count) is in the run's start
# event and in the -p json result.
source "$(dirname "$0")/_lib.sh"
source "$LOOM_SRC/tests/e2e/_mcp_lib.sh"
need_reference_servers
need_fake_server

export LOOM_MCP_STARTUP_WAIT_MS=30000
mkdir -p "$T/proj"
cfg=$(mcp_config everything "$(everything_entry)" fake "$(fake_entry --bad-structured)")

cat > "$T/scenario.json" <<'JSON'
{"turns": [
  {"reply": {"tool_calls": [{"id": "e1", "name": "mcp__everything__echo", "input": {"message": "hello from the model"}}]}},
  {"reply": {"tool_calls": [{"id": "s1", "name": "mcp__everything__get-structured-content", "input": {"location": "Chicago"}}]}},
  {"reply": {"tool_calls": [{"id": "w1", "name": "mcp__fake__weather", "input": {}}]}},
  {"reply": {"tool_calls": [{"id": "p1", "name": "mcp__everything__trigger-long-running-operation", "input": {"duration": 1, "steps": 3}}]}},
  {"reply": {"text": "All four done."}}
]}
JSON
start_mock "$T/scenario.json"
use_provider anthropic
"$LOOM_BIN" -p "use the servers" --cwd "$T/proj" --mcp-config "$cfg" \
  --output-format events > "$T/events.jsonl" 2> "$T/stderr" || true
ev="$T/events.jsonl"
check "events output is JSON lines" valid_jsonl "$ev"
assert_eq "the run completed" "$(tail -n 1 "$ev" | jq -r .payload.state)" "completed"
assert_eq "five model requests" "$(nreq)" "5"

declared=$(tool_names 1)
assert_contains "the first request declares mcp__everything__echo" "$declared" "mcp__everything__echo"
assert_contains "the first request declares the fake's weather tool" "$declared" "mcp__fake__weather"

assert_eq "echo's result reaches the next request" "$(tool_result e1)" "Echo: hello from the model"
assert_eq "echo's result is no error" "$(tool_is_error e1)" "false"

s1=$(tool_result s1)
assert_contains "get-structured-content's result reaches the model" "$s1" "Light rain"
assert_eq "structuredContent matching its outputSchema is no error" "$(tool_is_error s1)" "false"

w1=$(tool_result w1)
assert_eq "structuredContent violating its outputSchema is a tool error" "$(tool_is_error w1)" "true"
assert_contains "the error names the path in the structured content" "$w1" "temperature"
assert_contains "the error says it is the output schema" "$w1" "outputSchema"

progress=$(jq -c 'select(.type == "tool.progress")' "$ev")
assert_eq "three tool.progress events for the long operation" "$(grep -c . <<<"$progress" || true)" "3"
assert_eq "progress events carry the call's id" \
  "$(jq -r '.correlation_id + "/" + .payload.call_id' <<<"$progress" | sort -u)" "p1/p1"
assert_eq "progress counts 1, 2, 3 of 3" \
  "$(jq -r '"\(.payload.progress)/\(.payload.total)"' <<<"$progress" | tr '\n' ' ')" "1/3 2/3 3/3 "
assert_eq "progress names the tool" "$(jq -r .payload.tool <<<"$progress" | sort -u)" \
  "mcp__everything__trigger-long-running-operation"
assert_contains "the long operation's result reaches the model" "$(tool_result p1)" "Long running operation completed"
first_progress=$(grep -n '"type":"tool.progress"' "$ev" | head -n 1 | cut -d: -f1)
finished=$(grep -n '"type":"tool.finished".*"correlation_id":"p1"\|"correlation_id":"p1".*"type":"tool.finished"' "$ev" | head -n 1 | cut -d: -f1)
check "the progress came while the tool ran (before tool.finished)" test "${first_progress:-99999}" -lt "${finished:-0}"

n_everything=$(tr ',' '\n' <<<"$declared" | grep -c '^mcp__everything__')
start=$(jq -c 'select(.type == "run.state_changed" and .payload.state == "running") | .payload' "$ev" | head -n 1)
assert_eq "the start event says everything is connected" \
  "$(jq -r '.mcp_servers[] | select(.name == "everything") | .state' <<<"$start")" "connected"
assert_eq "the start event counts everything's tools as declared" \
  "$(jq -r '.mcp_servers[] | select(.name == "everything") | .tools' <<<"$start")" "$n_everything"
assert_eq "the start event says the fake is connected" \
  "$(jq -r '.mcp_servers[] | select(.name == "fake") | .state' <<<"$start")" "connected"

# -p json: the result's mcp_servers.
cat > "$T/one.json" <<'JSON'
{"turns": [{"reply": {"text": "Nothing to do."}}]}
JSON
start_mock "$T/one.json"
json=$("$LOOM_BIN" -p "status only" --cwd "$T/proj" --mcp-config "$cfg" --output-format json)
srv=$(jq -c '.mcp_servers[] | select(.name == "everything")' <<<"$json")
assert_eq "the json result says everything is connected" "$(jq -r .state <<<"$srv")" "connected"
assert_eq "the json result counts everything's tools" "$(jq -r .tools <<<"$srv")" "$n_everything"
assert_eq "the json result names the transport" "$(jq -r .transport <<<"$srv")" "stdio"
check "the json result counts everything's prompts and resources" \
  test "$(jq -r '.prompts > 0 and .resources > 0' <<<"$srv")" = true
assert_eq "the json result counts the fake's tools" \
  "$(jq -r '.mcp_servers[] | select(.name == "fake") | .tools' <<<"$json")" \
  "$(tool_names 1 | tr ',' '\n' | grep -c '^mcp__fake__')"
finish
