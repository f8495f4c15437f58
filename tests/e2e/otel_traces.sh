#!/usr/bin/env bash
# OpenTelemetry GenAI traces and metrics (docs/telemetry.md): one run with a
# sub-agent that calls an MCP tool, and a reactive compaction, exported to a
# local OTLP/HTTP JSON receiver (tests/otel/receiver.mjs, which checks every
# body against the OTLP JSON mapping). The span tree is checked by parent
# ids — run → execute_tool Agent → invoke_agent child → chat / execute_tool
# mcp__fake__echo — and the attributes by name against mockllm's scripted
# usage; the log's lines arrive as OTLP log records with the same trace and
# span ids; hooks get TRACEPARENT. The receiver decodes every body with the
# official OpenTelemetry protobuf definitions (from npm), refusing any field
# the proto does not define. Then with the receiver gone: the run's answer
# is the same and the result says how many spans were dropped.
source "$(dirname "$0")/_lib.sh"
source "$LOOM_SRC/tests/e2e/_mcp_lib.sh"

RECV_PID=
start_receiver() {
  RECV_OUT="$T/otlp.jsonl"; : > "$RECV_OUT"; rm -f "$T/otlp.port"
  node "$LOOM_SRC/tests/otel/receiver.mjs" "$T/otlp.port" "$RECV_OUT" 2>"$T/recv.err" &
  RECV_PID=$!
  for _ in $(seq 1 250); do [ -s "$T/otlp.port" ] && break; sleep 0.02; done
  [ -s "$T/otlp.port" ] || { cat "$T/recv.err" >&2; echo "receiver did not start" >&2; exit 1; }
  RECV_PORT=$(cat "$T/otlp.port")
}
stop_receiver() { [ -n "$RECV_PID" ] && kill "$RECV_PID" 2>/dev/null; wait "$RECV_PID" 2>/dev/null || true; RECV_PID=; }
trap 'stop_receiver; cleanup' EXIT

mkdir -p "$T/proj" "$LOOM_HOME"
# Hooks see the trace too: one fired for the run (UserPromptSubmit), one
# for the child's Bash call (PreToolUse).
cat > "$LOOM_HOME/settings.json" <<JSON
{"hooks": {"UserPromptSubmit": [{"hooks": [{"type": "command", "command": "printf 'prompt %s\\n' \"\$TRACEPARENT\" >> $T/hook_tp.txt"}]}],
           "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "printf 'bash %s\\n' \"\$TRACEPARENT\" >> $T/hook_tp.txt"}]}]}}
JSON
SUMMARY='<analysis>ok</analysis><summary>1. Primary Request and Intent: delegate.</summary>'
CHILD="You are Loom's general-purpose agent"
jq -n --arg s "$SUMMARY" --arg child "$CHILD" '{turns: [
  {match: {no_tools: true}, reply: {text: $s, usage: {input_tokens: 900, output_tokens: 40}}},
  {match: {system_contains: $child, assistant_turns: 0},
   reply: {tool_calls: [{id: "e1", name: "mcp__fake__echo", input: {text: "FROM-THE-CHILD"}},
                        {id: "b1", name: "Bash", input: {command: "printf %s \"$TRACEPARENT\" > tp.txt"}}],
           usage: {input_tokens: 210, output_tokens: 21, cache_read_input_tokens: 7, cache_creation_input_tokens: 3}}},
  {match: {system_contains: $child, assistant_turns: 1},
   reply: {text: "CHILD-REPORT", usage: {input_tokens: 220, output_tokens: 22}}},
  {match: {last_user_contains: "This session is being continued"},
   reply: {text: "Parent done.", usage: {input_tokens: 130, output_tokens: 13}}},
  {match: {assistant_turns: 0, last_user_contains: "delegate it"},
   reply: {text: "Delegating.", tool_calls: [{id: "ag1", name: "Agent",
     input: {description: "echo it", prompt: "echo FROM-THE-CHILD", subagent_type: "general-purpose"}}],
     usage: {input_tokens: 100, output_tokens: 10, cache_read_input_tokens: 50, cache_creation_input_tokens: 25}}},
  {match: {assistant_turns: 1, tool_results: 1}, faults: [{status: 413, times: 1}],
   reply: {text: "not reached: the 413 compacts the conversation"}}
]}' > "$T/scenario.json"
start_mock "$T/scenario.json"
use_provider anthropic
start_receiver

run_loom() {
  OTEL_TRACES_EXPORTER=otlp OTEL_METRICS_EXPORTER=otlp OTEL_LOGS_EXPORTER=otlp \
  OTEL_EXPORTER_OTLP_ENDPOINT="http://127.0.0.1:$1" OTEL_SERVICE_NAME=loom-e2e \
  OTEL_EXPORTER_OTLP_HEADERS="x-test-token=s%20ecret,broken-member" \
  OTEL_RESOURCE_ATTRIBUTES="deployment.environment=test" \
  OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true LOOM_LOG="$T/loom-$1.log" \
  "$LOOM_BIN" -p "delegate it" --agents on --permission-mode bypassPermissions --cwd "$T/proj" \
    --mcp-config "$(mcp_config fake "$(fake_entry --log-meta --log "$T/fakelog")")" --output-format events
}
status=0
run_loom "$RECV_PORT" > "$T/events.jsonl" 2> "$T/err.txt" || status=$?
assert_eq "loom exits 0 ($(tail -n 3 "$T/err.txt"))" "$status" "0"
ev="$T/events.jsonl"
last=$(tail -n 1 "$ev")
assert_eq "the run completed" "$(jq -r .payload.state <<<"$last")" "completed"
assert_eq "its answer" "$(jq -r .payload.result <<<"$last")" "Parent done."
check "a compaction happened" grep -q '"context.compacted"' "$ev"
assert_eq "nothing the receiver refused" "$(jq -s '[.[] | select(.error)] | map(.error) | join("; ")' -r "$RECV_OUT")" ""
assert_eq "no span was dropped" "$(jq -r .payload.telemetry.spans_dropped <<<"$last")" "0"
nspans=$(jq -s '[.[] | select(.signal=="traces")] | length' "$RECV_OUT")
assert_eq "the result counts the spans the receiver got" \
  "$(jq -r .payload.telemetry.spans_exported <<<"$last")" "$nspans"
assert_eq "the header from OTEL_EXPORTER_OTLP_HEADERS, percent-decoded" \
  "$(jq -r 'select(.signal=="header") | .value' "$RECV_OUT" | sort -u)" "s ecret"
assert_contains "a bad header member is a warning, not a failure" \
  "$(jq -r 'select(.type=="warning.emitted" and .payload.kind=="telemetry") | .payload.message' "$ev")" \
  "skipped the member \"broken-member\""

spans="$T/spans.json"
jq -s '[.[] | select(.signal=="traces") | .span]' "$RECV_OUT" > "$spans"
res=$(jq -s -c '[.[] | select(.signal=="traces") | .resource][0]' "$RECV_OUT")
assert_eq "resource: service.name" "$(jq -r '."service.name"' <<<"$res")" "loom-e2e"
assert_eq "resource: OTEL_RESOURCE_ATTRIBUTES" "$(jq -r '."deployment.environment"' <<<"$res")" "test"
assert_eq "one trace" "$(jq '[.[].traceId] | unique | length' "$spans")" "1"
one() { jq -c --arg n "$1" '[.[] | select(.name==$n)]' "$spans"; }
root=$(one "invoke_agent loom")
assert_eq "one root invoke_agent span" "$(jq length <<<"$root")" "1"
root_id=$(jq -r '.[0].spanId' <<<"$root")
assert_eq "the root has no parent" "$(jq -r '.[0].parentSpanId' <<<"$root")" ""
sid=$(jq -r .payload.session_id <<<"$last")
assert_eq "root: gen_ai.conversation.id is the session" \
  "$(jq -r '.[0].attributes."gen_ai.conversation.id"' <<<"$root")" "$sid"
assert_eq "root: gen_ai.operation.name" "$(jq -r '.[0].attributes."gen_ai.operation.name"' <<<"$root")" "invoke_agent"
assert_eq "root: the run's input tokens (100+130 own, 210+220 the child's, 900 compaction)" \
  "$(jq -r '.[0].attributes."gen_ai.usage.input_tokens"' <<<"$root")" \
  "$(jq -r .payload.usage.inputTokens <<<"$last")"
check "root: the compaction is a span event" \
  jq -e '.[0].events | map(.name) | index("context.compacted") != null' <<<"$root"
check "root: compaction_started is a span event with its trigger" \
  jq -e '.[0].events[] | select(.name=="context.compaction_started") | .attributes."loom.trigger" | length > 0' <<<"$root"

agent_tool=$(one "execute_tool Agent")
assert_eq "the Agent call is under the root" "$(jq -r '.[0].parentSpanId' <<<"$agent_tool")" "$root_id"
assert_eq "the Agent call: gen_ai.tool.call.id" "$(jq -r '.[0].attributes."gen_ai.tool.call.id"' <<<"$agent_tool")" "ag1"
assert_contains "the Agent call: its arguments (capture on)" \
  "$(jq -r '.[0].attributes."gen_ai.tool.call.arguments"' <<<"$agent_tool")" "echo FROM-THE-CHILD"
child=$(one "invoke_agent general-purpose")
assert_eq "one sub-agent span" "$(jq length <<<"$child")" "1"
assert_eq "the sub-agent is under the Agent call" "$(jq -r '.[0].parentSpanId' <<<"$child")" \
  "$(jq -r '.[0].spanId' <<<"$agent_tool")"
child_id=$(jq -r '.[0].spanId' <<<"$child")
assert_eq "sub-agent: its usage (210+220)" "$(jq -r '.[0].attributes."gen_ai.usage.input_tokens"' <<<"$child")" "430"

mcp=$(one "execute_tool mcp__fake__echo")
assert_eq "the MCP call is under the sub-agent" "$(jq -r '.[0].parentSpanId' <<<"$mcp")" "$child_id"
assert_eq "mcp: mcp.method.name" "$(jq -r '.[0].attributes."mcp.method.name"' <<<"$mcp")" "tools/call"
assert_eq "mcp: the server's tool name" "$(jq -r '.[0].attributes."mcp.tool.name"' <<<"$mcp")" "echo"
assert_eq "mcp: gen_ai.tool.call.id" "$(jq -r '.[0].attributes."gen_ai.tool.call.id"' <<<"$mcp")" "e1"
assert_contains "mcp: the result (capture on)" "$(jq -r '.[0].attributes."gen_ai.tool.call.result"' <<<"$mcp")" "FROM-THE-CHILD"
assert_eq "mcp: a client span" "$(jq -r '.[0].kind' <<<"$mcp")" "3"

# W3C trace context: the Bash command and the MCP server saw their spans.
bash_span=$(one "execute_tool Bash")
trace=$(jq -r '.[0].traceId' <<<"$root")
assert_eq "the child's Bash call is under the child" "$(jq -r '.[0].parentSpanId' <<<"$bash_span")" "$child_id"
assert_eq "Bash: TRACEPARENT names the trace and the Bash call's span" \
  "$(cat "$T/proj/tp.txt" 2>/dev/null)" "00-$trace-$(jq -r '.[0].spanId' <<<"$bash_span")-01"
assert_eq "MCP: _meta.traceparent names the trace and the MCP call's span" \
  "$(grep '^meta tools/call ' "$T/fakelog" | head -n 1 | cut -d' ' -f3- | jq -r .traceparent)" \
  "00-$trace-$(jq -r '.[0].spanId' <<<"$mcp")-01"

# Hooks: TRACEPARENT per firing — the prompt's names the run's span, the
# child's Bash call's names a span of the run's trace.
assert_eq "hook (UserPromptSubmit): TRACEPARENT is the run's span" \
  "$(grep '^prompt ' "$T/hook_tp.txt" | head -n 1 | cut -d' ' -f2)" "00-$trace-$root_id-01"
hook_bash=$(grep '^bash ' "$T/hook_tp.txt" | head -n 1 | cut -d' ' -f2)
assert_eq "hook (PreToolUse Bash): TRACEPARENT is in the run's trace" "$(cut -d- -f2 <<<"$hook_bash")" "$trace"
check "hook (PreToolUse Bash): its parent span is one of the trace's ($hook_bash)" \
  jq -e --arg id "$(cut -d- -f3 <<<"$hook_bash")" 'map(.spanId) | index($id) != null' "$spans"

# The JSONL log: the run thread's lines (the model calls) name the run's span.
wire=$(jq -c 'select(.module=="wire")' "$T/loom-$RECV_PORT.log" | head -n 1)
check "the log has a wire line" test -n "$wire"
assert_eq "log: trace_id is the trace" "$(jq -r .trace_id <<<"$wire")" "$trace"
assert_eq "log: span_id is the run's span" "$(jq -r .span_id <<<"$wire")" "$root_id"

# OTLP logs: every line the run thread logged (it has the run's trace) is a
# log record with the same message, severity, trace and span.
logs="$T/logs.json"
jq -s '[.[] | select(.signal=="logs") | .log]' "$RECV_OUT" > "$logs"
check "logs: some records arrived" jq -e 'length > 0' "$logs"
check "logs: the result counts them" \
  test "$(jq -r .payload.telemetry.logs_exported <<<"$last")" -ge 1
traced=$(jq -c 'select(.trace_id)' "$T/loom-$RECV_PORT.log")
check "logs: the JSONL log has traced lines" test -n "$traced"
missing=$(jq -c --slurpfile got "$logs" '. as $l | select(($got[0] | map(select(.body==$l.msg
  and .traceId==$l.trace_id and .spanId==$l.span_id
  and .severityText==($l.level | ascii_upcase)
  and .attributes."loom.module"==$l.module)) | length) == 0) | .msg' <<<"$traced")
assert_eq "logs: each traced JSONL line has its OTLP record" "$missing" ""
wire_rec=$(jq -c '[.[] | select(.attributes."loom.module"=="wire")][0]' "$logs")
assert_eq "logs: a wire line's severity number (INFO is 9)" "$(jq -r .severityNumber <<<"$wire_rec")" "9"
assert_eq "logs: the resource is the spans'" \
  "$(jq -s -c '[.[] | select(.signal=="logs") | .resource][0]' "$RECV_OUT")" "$res"

chats=$(jq -c '[.[] | select(.attributes."gen_ai.operation.name"=="chat" and (.attributes | has("loom.purpose") | not))]' "$spans")
assert_eq "four turns' chat spans (two the root's, two the child's)" "$(jq length <<<"$chats")" "4"
# The compaction's summary call is a model call outside the loop's turns: a
# chat span of its own under the run, with its usage (900 in, 40 out).
side=$(jq -c '[.[] | select(.attributes."loom.purpose"=="compaction")]' "$spans")
assert_eq "the compaction's model call: one chat span" "$(jq length <<<"$side")" "1"
assert_eq "the compaction's chat: under the root" "$(jq -r '.[0].parentSpanId' <<<"$side")" "$root_id"
assert_eq "the compaction's chat: named for the model" "$(jq -r '.[0].name' <<<"$side")" \
  "chat $(jq -r '.[0].attributes."gen_ai.request.model"' <<<"$root")"
assert_eq "the compaction's chat: its usage" \
  "$(jq -c '.[0].attributes | [."gen_ai.operation.name", ."gen_ai.usage.input_tokens", ."gen_ai.usage.output_tokens"]' <<<"$side")" \
  '["chat",900,40]'
assert_eq "the child's chats are under the child" \
  "$(jq --arg p "$child_id" '[.[] | select(.parentSpanId==$p)] | length' <<<"$chats")" "2"
assert_eq "the root's chats are under the root" \
  "$(jq --arg p "$root_id" '[.[] | select(.parentSpanId==$p)] | length' <<<"$chats")" "2"
first=$(jq -c '[.[] | select(.attributes."gen_ai.usage.input_tokens"==100)][0]' <<<"$chats")
assert_eq "chat: gen_ai.provider.name" "$(jq -r '.attributes."gen_ai.provider.name"' <<<"$first")" "anthropic"
model=$(jq -r '.attributes."gen_ai.request.model"' <<<"$first")
check "chat: gen_ai.request.model is set ($model)" test -n "$model"
assert_eq "chat: the span's name" "$(jq -r .name <<<"$first")" "chat $model"
check "chat: gen_ai.response.model is set" jq -e '.attributes."gen_ai.response.model" | length > 0' <<<"$first"
assert_eq "chat: finish reasons" "$(jq -c '.attributes."gen_ai.response.finish_reasons"' <<<"$first")" '["tool_use"]'
assert_eq "chat: output tokens" "$(jq -r '.attributes."gen_ai.usage.output_tokens"' <<<"$first")" "10"
assert_eq "chat: cache read tokens" "$(jq -r '.attributes."gen_ai.usage.cache_read.input_tokens"' <<<"$first")" "50"
assert_eq "chat: cache creation tokens" "$(jq -r '.attributes."gen_ai.usage.cache_creation.input_tokens"' <<<"$first")" "25"
assert_eq "chat: reasoning tokens" "$(jq -r '.attributes."gen_ai.usage.reasoning.output_tokens"' <<<"$first")" "0"
assert_eq "chat: gen_ai.conversation.id" "$(jq -r '.attributes."gen_ai.conversation.id"' <<<"$first")" "$sid"
cchat=$(jq -c '[.[] | select(.attributes."gen_ai.usage.input_tokens"==210)][0]' <<<"$chats")
assert_eq "the child's chat: its cache reads" "$(jq -r '.attributes."gen_ai.usage.cache_read.input_tokens"' <<<"$cchat")" "7"
assert_eq "the child's chat: under the child" "$(jq -r .parentSpanId <<<"$cchat")" "$child_id"

# Metrics: token usage by type sums to the chats' usage.
m() { jq -s -c --arg n "$1" '[.[] | select(.signal=="metrics" and .metric.name==$n) | .metric][0]' "$RECV_OUT"; }
tok=$(m gen_ai.client.token.usage)
assert_eq "metrics: token usage is a histogram" "$(jq -r .kind <<<"$tok")" "histogram"
assert_eq "metrics: input tokens of the turns (100+130+210+220)" \
  "$(jq '[.points[] | select(.attributes."gen_ai.token.type"=="input" and (.attributes | has("loom.purpose") | not)) | .sum] | add' <<<"$tok")" "660"
assert_eq "metrics: output tokens of the turns" \
  "$(jq '[.points[] | select(.attributes."gen_ai.token.type"=="output" and (.attributes | has("loom.purpose") | not)) | .sum] | add' <<<"$tok")" "66"
assert_eq "metrics: the compaction's tokens, by purpose" \
  "$(jq -c '[.points[] | select(.attributes."loom.purpose"=="compaction") | [.attributes."gen_ai.token.type", .sum]] | sort' <<<"$tok")" \
  '[["input",900],["output",40]]'
assert_eq "metrics: time to first chunk for every turn, the sub-agent's too" \
  "$(jq '[.points[].count] | add' <<<"$(m gen_ai.client.operation.time_to_first_chunk)")" "4"
assert_eq "metrics: four chat durations" \
  "$(jq '[.points[].count] | add' <<<"$(m gen_ai.client.operation.duration)")" "4"
assert_eq "metrics: tool durations, by outcome" \
  "$(jq -c '[.points[] | select(.attributes."loom.tool.outcome"=="ok") | .attributes."gen_ai.tool.name"] | sort' <<<"$(m loom.tool.duration)")" \
  '["Agent","Bash","mcp__fake__echo"]'

# The receiver itself: the official definitions refuse what breaks the proto
# (so a field Loom got wrong fails the checks above), and a protobuf body
# encoded with them is read.
post_json() { curl -s -o /dev/null -w '%{http_code}' -H 'content-type: application/json' \
  --data-binary "$2" "http://127.0.0.1:$RECV_PORT/v1/$1"; }
span_with() { jq -c -n --argjson a "$1" '{resourceSpans: [{resource: {attributes: []}, scopeSpans: [{spans: [
  {traceId: "0123456789abcdef0123456789abcdef", spanId: "0123456789abcdef", name: "probe", kind: 1,
   startTimeUnixNano: "1", endTimeUnixNano: "2", attributes: [$a]}]}]}]}'; }
: > "$RECV_OUT"
assert_eq "receiver: a well-formed span is taken" \
  "$(post_json traces "$(span_with '{"key":"k","value":{"intValue":"7"}}')")" "200"
for bad in '{"key":"k","value":{"intValue":"seven"}}' '{"key":"k","value":{"stringValue":7}}' \
           '{"key":"k","value":{"stringValue":"x"},"extra":1}' '{"key":"k","value":{"strValue":"x"}}'; do
  assert_eq "receiver: the attribute $bad is refused" "$(post_json traces "$(span_with "$bad")")" "400"
done
assert_contains "receiver: an unknown field is named" \
  "$(jq -r 'select(.error) | .error' "$RECV_OUT" | tr '\n' ' ')" "attributes[0].extra: no such field"
assert_eq "receiver: an enum as a name is refused (OTLP JSON writes integers)" \
  "$(post_json traces "$(span_with '{"key":"k","value":{"boolValue":true}}' | sed 's/"kind":1/"kind":"SPAN_KIND_INTERNAL"/')")" "400"
(cd "$LOOM_SRC/tests/otel" && node --input-type=module -e '
import { createRequire } from "node:module";
const root = createRequire(process.cwd() + "/")("@opentelemetry/otlp-transformer/build/src/generated/root.js");
const T = root.opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest;
const body = T.encode(T.fromObject({resourceSpans: [{resource: {attributes: []}, scopeSpans: [{spans: [{
  traceId: Buffer.alloc(16, 1), spanId: Buffer.alloc(8, 2), name: "from-protobuf", kind: 3,
  startTimeUnixNano: 1, endTimeUnixNano: 2}]}]}]})).finish();
const r = await fetch(`http://127.0.0.1:${process.argv[1]}/v1/traces`, {method: "POST",
  headers: {"content-type": "application/x-protobuf"}, body});
process.stdout.write(String(r.status));' "$RECV_PORT") > "$T/pb.status" 2>"$T/pb.err"
assert_eq "receiver: a protobuf body is taken ($(cat "$T/pb.err"))" "$(cat "$T/pb.status")" "200"
assert_eq "receiver: and decoded" \
  "$(jq -r 'select(.signal=="traces") | .span | "\(.name) \(.traceId) \(.kind)"' "$RECV_OUT" | tail -n 1)" \
  "from-protobuf 01010101010101010101010101010101 3"

# 2. The receiver is gone: the same answer, and the drop is reported.
stop_receiver
start_mock "$T/scenario.json"
status=0
run_loom 1 > "$T/events2.jsonl" 2> "$T/err2.txt" || status=$?
assert_eq "receiver down: loom exits 0 ($(tail -n 3 "$T/err2.txt"))" "$status" "0"
last2=$(tail -n 1 "$T/events2.jsonl")
assert_eq "receiver down: the run completed" "$(jq -r .payload.state <<<"$last2")" "completed"
assert_eq "receiver down: the same answer" "$(jq -r .payload.result <<<"$last2")" "Parent done."
assert_eq "receiver down: nothing exported" "$(jq -r .payload.telemetry.spans_exported <<<"$last2")" "0"
assert_eq "receiver down: every span counted dropped" \
  "$(jq -r .payload.telemetry.spans_dropped <<<"$last2")" "$nspans"
assert_contains "receiver down: why" "$(jq -r .payload.telemetry.last_error <<<"$last2")" "127.0.0.1:1"
assert_eq "receiver down: no log record exported" "$(jq -r .payload.telemetry.logs_exported <<<"$last2")" "0"

# 3. Off by default: no telemetry key, nothing sent.
start_mock "$T/scenario.json"
"$LOOM_BIN" -p "delegate it" --agents on --permission-mode bypassPermissions --cwd "$T/proj" \
  --mcp-config "$(mcp_config fake "$(fake_entry)")" --output-format events > "$T/events3.jsonl" 2>/dev/null || true
assert_eq "off by default: no telemetry in the result" \
  "$(tail -n 1 "$T/events3.jsonl" | jq -r '.payload | has("telemetry")')" "false"

finish
