#!/usr/bin/env bash
# loom serve's A2A surface (docs/a2a.md) driven by the official @a2a-js/sdk
# client (tests/a2a/a2a_client.mjs, the SDK pinned in tests/a2a): the
# client fetches the Agent Card, sends a message answered by mockllm's
# scripted text (blocking SendMessage → a completed Task with its
# artifacts), streams another task to completion (the Task, status
# updates, an artifact update), cancels a third whose model call stalls
# (→ TASK_STATE_CANCELED), answers an approval with "approve" on the
# input-required task, lists tasks of a context, and sets/gets/lists/
# deletes a push notification config whose URL receives the stream's
# updates. Malformed JSON-RPC (bad JSON -32700, an unknown method -32601,
# wrong params -32602, an unknown task -32001) is answered and never
# crashes the server; a wrong token is a 401.
source "$(dirname "$0")/_lib.sh"
# loom-serve is started, stopped and cleaned up by _serve_lib.sh, on this
# scenario's own config folder and workspace.
SERVE_CONF="$T/config" SERVE_WORKSPACE="$T/work"
source "$(dirname "$0")/_serve_lib.sh"
CLIENT="$LOOM_SRC/tests/a2a/a2a_client.mjs"
[ -d "$LOOM_SRC/tests/a2a/node_modules/@a2a-js/sdk" ] ||
  { echo "the A2A SDK is not installed: run scripts/deps.sh" >&2; exit 1; }

cat > "$T/scenario.json" <<'JSON'
{ "turns": [
  { "match": { "last_user_contains": "say hello" },
    "reply": { "text": "Hello from Loom over A2A." } },
  { "match": { "last_user_contains": "stall forever" },
    "reply": { "text": "never seen" },
    "faults": [ { "stall_ms": 60000, "after_events": 1, "times": 100 } ] },
  { "match": { "last_user_contains": "echo please", "tool_results": 0 },
    "reply": { "tool_calls": [ { "id": "toolu_a2a_1", "name": "Bash",
                                 "input": { "command": "echo hi-from-a2a" } } ] } },
  { "match": { "tool_results": 1 }, "reply": { "text": "Echoed it." } },
  { "match": {}, "reply": { "text": "ok" } } ] }
JSON
start_mock "$T/scenario.json"
use_provider anthropic

TOKEN=tok-a2a-approver-0123456789
TOKEN_B=tok-a2a-globex-admin-0123456
mkdir -p "$T/config"
cat > "$T/config/profiles.yaml" <<'YAML'
profiles:
  default:
    policies: [default]
  careful:
    mode: default
    policies: [ask_echo]
  acme_only:
    tenant: acme
    policies: [default]
YAML
cat > "$T/config/policies.yaml" <<'YAML'
policies:
  default:
    permissions: {mode: acceptEdits}
  ask_echo:
    permissions: {mode: acceptEdits, ask: ["Bash(echo:*)"]}
YAML
cat > "$T/config/tenants.yaml" <<YAML
tenants:
  acme:
    projects:
      default: {workspace: $T/work}
  globex: {}
tokens:
  - token: $TOKEN
    tenant: acme
    role: approver
  - token: $TOKEN_B
    tenant: globex
    role: admin
YAML

start_serve --keepalive-ms 200
BASE=$SERVE_URL

client() { (cd "$LOOM_SRC/tests/a2a" && timeout 60 node "$CLIENT" "$@"); }

# The card.
client card "$BASE" > "$T/card.json"
assert_eq "the SDK resolves the card" "$(jq -r .name "$T/card.json")" "Loom"
assert_eq "its JSON-RPC interface is /a2a" \
  "$(jq -r '.supportedInterfaces[0] | "\(.protocolBinding) \(.protocolVersion) \(.url)"' "$T/card.json")" \
  "JSONRPC 1.0 $BASE/a2a"
assert_eq "streaming and push notifications" \
  "$(jq -c '[.capabilities.streaming, .capabilities.pushNotifications]' "$T/card.json")" "[true,true]"
assert_eq "a skill per profile" "$(jq -c '[.skills[].id]' "$T/card.json")" '["default","careful"]'
assert_eq "the bearer scheme" \
  "$(jq -r '.securitySchemes.bearer.httpAuthSecurityScheme.scheme' "$T/card.json")" "Bearer"
STATUS=$(curl -sS --noproxy '*' -o "$T/card_a.json" -w '%{http_code}' \
  -H "Authorization: Bearer $TOKEN" "$BASE/.well-known/agent-card.json")
assert_eq "with acme's token the card adds acme's own profile" \
  "$(jq -c '[.skills[].id]' "$T/card_a.json")" '["default","careful","acme_only"]'
curl -sS --noproxy '*' -o "$T/card_b.json" -H "Authorization: Bearer $TOKEN_B" \
  "$BASE/.well-known/agent-card.json"
assert_eq "globex's token sees only the global ones" "$(jq -c '[.skills[].id]' "$T/card_b.json")" \
  '["default","careful"]'
STATUS=$(curl -sS --noproxy '*' -o /dev/null -w '%{http_code}' "$BASE/.well-known/agent-card.json")
assert_eq "the card needs no token" "$STATUS" "200"

# A message, blocking: the scripted answer, a completed task.
client send "$BASE" "$TOKEN" "please say hello" > "$T/send.json"
cat "$T/send.json" >&2
assert_eq "SendMessage answers a completed Task" "$(jq -r .task.status.state "$T/send.json")" \
  "TASK_STATE_COMPLETED"
TASK1=$(jq -r .task.id "$T/send.json")
CTX1=$(jq -r .task.contextId "$T/send.json")
assert_contains "the task id is the run" "$TASK1" "run_"
assert_contains "the context is the session" "$CTX1" "sess_"
assert_contains "the status message is the model's answer" \
  "$(jq -r '.task.status.message.parts[0].text' "$T/send.json")" "Hello from Loom over A2A."
check "the Task carries artifacts with content" \
  jq -e '.task.artifacts | length > 0 and all(.parts | length == 1)' "$T/send.json"
client get "$BASE" "$TOKEN" "$TASK1" > "$T/get.json"
assert_eq "GetTask gives it again" "$(jq -r '"\(.id) \(.status.state)"' "$T/get.json")" \
  "$TASK1 TASK_STATE_COMPLETED"

# Streaming to completion.
client stream "$BASE" "$TOKEN" "stream: say hello again" > "$T/stream.jsonl"
cat "$T/stream.jsonl" >&2
assert_eq "the stream opens with the Task" "$(head -n 1 "$T/stream.jsonl" | jq -r 'keys[0]')" "task"
check "status updates: working, then completed last" jq -se '
  [.[] | .statusUpdate.status.state // empty] as $s
  | ($s | index("TASK_STATE_WORKING")) != null and $s[-1] == "TASK_STATE_COMPLETED"' \
  "$T/stream.jsonl"
check "an artifact update with its content" jq -se '
  [.[] | .artifactUpdate // empty] | length > 0 and all(.artifact.parts | length == 1)
  and all(.lastChunk == true)' "$T/stream.jsonl"
assert_eq "the last event is the completed status" \
  "$(tail -n 1 "$T/stream.jsonl" | jq -r .statusUpdate.status.state)" "TASK_STATE_COMPLETED"

# Cancel a task whose model call stalls.
client cancel "$BASE" "$TOKEN" "stall forever please" > "$T/cancel.jsonl"
cat "$T/cancel.jsonl" >&2
assert_eq "CancelTask answers the canceled Task" \
  "$(jq -r 'select(.cancelled) | .cancelled.status.state' "$T/cancel.jsonl")" "TASK_STATE_CANCELED"
assert_eq "the stream ends canceled" \
  "$(jq -r 'select(.statusUpdate) | .statusUpdate.status.state' "$T/cancel.jsonl" | tail -n 1)" \
  "TASK_STATE_CANCELED"
assert_eq "GetTask after: canceled" \
  "$(jq -r 'select(.after) | .after.status.state' "$T/cancel.jsonl")" "TASK_STATE_CANCELED"
CANCELLED=$(jq -r 'select(.cancelled) | .cancelled.id' "$T/cancel.jsonl")

# SubscribeToTask on a task started without waiting: the Task, then the
# updates until the cancel ends it.
client subscribe "$BASE" "$TOKEN" "stall forever, subscribed" > "$T/sub.jsonl"
assert_eq "returnImmediately answers before the run ends" \
  "$(jq -r 'select(.started) | .started.status.state' "$T/sub.jsonl")" "TASK_STATE_SUBMITTED"
assert_eq "the subscription opens with the Task" "$(sed -n 2p "$T/sub.jsonl" | jq -r 'keys[0]')" "task"
assert_eq "and ends canceled" "$(tail -n 1 "$T/sub.jsonl" | jq -r .statusUpdate.status.state)" \
  "TASK_STATE_CANCELED"

# An approval: input-required, answered "approve" on the same task.
A2A_SKILL=careful client send "$BASE" "$TOKEN" "echo please" > "$T/ask.json"
cat "$T/ask.json" >&2
assert_eq "waiting for approval is input-required" "$(jq -r .task.status.state "$T/ask.json")" \
  "TASK_STATE_INPUT_REQUIRED"
assert_contains "the status message asks" "$(jq -r '.task.status.message.parts[0].text' "$T/ask.json")" \
  "approve"
TASK3=$(jq -r .task.id "$T/ask.json")
client send "$BASE" "$TOKEN" "approve" "$TASK3" > "$T/approved.json"
cat "$T/approved.json" >&2
assert_eq "\"approve\" on the task lets it finish" "$(jq -r .task.status.state "$T/approved.json")" \
  "TASK_STATE_COMPLETED"
assert_eq "it is the same task" "$(jq -r .task.id "$T/approved.json")" "$TASK3"

client list "$BASE" "$TOKEN" "$CTX1" > "$T/list.json"
assert_eq "ListTasks of a context" "$(jq -c '[.tasks[].id]' "$T/list.json")" "[\"$TASK1\"]"

# Push notification configs: create, get, list, delete.
start_listener
client push "$BASE" "$TOKEN" "$TASK1" "http://127.0.0.1:$LISTEN_PORT/a2a-hook" > "$T/push.jsonl"
cat "$T/push.jsonl" >&2
assert_eq "Create answers the config" \
  "$(jq -r 'select(.created) | .created | "\(.taskId) \(.url)"' "$T/push.jsonl")" \
  "$TASK1 http://127.0.0.1:$LISTEN_PORT/a2a-hook"
assert_eq "Get finds it" "$(jq -r 'select(.got) | .got.token' "$T/push.jsonl")" "tok-123"
assert_eq "List has it" "$(jq -r 'select(.listed) | .listed.configs | length' "$T/push.jsonl")" "1"
assert_eq "Delete removes it" \
  "$(jq -r 'select(.listed_after_delete) | .listed_after_delete.configs // [] | length' "$T/push.jsonl")" "0"
client sendpush "$BASE" "$TOKEN" "say hello with a push" "http://127.0.0.1:$LISTEN_PORT/pushed" \
  > "$T/sendpush.json"
assert_eq "SendMessage with a push config completes" \
  "$(jq -r .task.status.state "$T/sendpush.json")" "TASK_STATE_COMPLETED"
for _ in $(seq 1 100); do grep -q 'POST /pushed {"statusUpdate".*TASK_STATE_COMPLETED' "$LISTEN_LOG" && break; sleep 0.05; done
check "the push URL got the Task, the artifacts and the completed status last" python3 -c '
import json, sys
bodies = [json.loads(l.split(" ", 3)[3]) for l in open(sys.argv[1]) if " POST /pushed " in l]
states = [b["statusUpdate"]["status"]["state"] for b in bodies if "statusUpdate" in b]
ok = "task" in bodies[0] and states[-1:] == ["TASK_STATE_COMPLETED"]
ok = ok and any("artifactUpdate" in b for b in bodies)
sys.exit(0 if ok else 1)' "$LISTEN_LOG"
client push "$BASE" "$TOKEN" "$TASK1" "http://192.0.2.1/hook" > "$T/push_remote.jsonl"
assert_eq "a non-loopback push URL is refused (-32602)" \
  "$(jq -r '.code' "$T/push_remote.jsonl" | head -n 1)" "-32602"

# Malformed input: JSON-RPC errors, never a crash.
rpc() {
  curl -sS --noproxy '*' -X POST -H "Authorization: Bearer $TOKEN" \
    -H 'Content-Type: application/json' --data-binary "$1" "$BASE/a2a"
}
assert_eq "bad JSON: -32700" "$(rpc '{"jsonrpc":"2.0",' | jq -r .error.code)" "-32700"
assert_eq "unknown method: -32601" \
  "$(rpc '{"jsonrpc":"2.0","id":1,"method":"Frobnicate","params":{}}' | jq -r .error.code)" "-32601"
assert_eq "wrong params: -32602" \
  "$(rpc '{"jsonrpc":"2.0","id":2,"method":"SendMessage","params":{"message":"hi"}}' | jq -r .error.code)" "-32602"
assert_eq "wrong params (GetTask id a number): -32602" \
  "$(rpc '{"jsonrpc":"2.0","id":3,"method":"GetTask","params":{"id":7}}' | jq -r .error.code)" "-32602"
assert_eq "an envelope without jsonrpc: -32600" \
  "$(rpc '{"id":4,"method":"GetTask"}' | jq -r .error.code)" "-32600"
STATUS=$(curl -sS --noproxy '*' -o "$T/note.body" -w '%{http_code}' -X POST \
  -H "Authorization: Bearer $TOKEN" -d '{"jsonrpc":"2.0","method":"GetTask","params":{"id":"x"}}' \
  "$BASE/a2a")
assert_eq "a notification (no id): 204, no body" "$STATUS $(wc -c < "$T/note.body")" "204 0"
assert_eq "the id comes back" \
  "$(rpc '{"jsonrpc":"2.0","id":"abc","method":"GetTask","params":{"id":"run_nope"}}' | jq -r .id)" "abc"
client get "$BASE" "$TOKEN" "run_0000000000000000000000nope" > "$T/nf.json"
assert_eq "GetTask of an unknown id: the SDK's TaskNotFoundError" \
  "$(jq -r '"\(.error) \(.code)"' "$T/nf.json")" "TaskNotFoundError -32001"
client send "$BASE" "$TOKEN" "more" "$CANCELLED" > "$T/ended.json"
assert_eq "a message to an ended task: UnsupportedOperation" "$(jq -r .code "$T/ended.json")" "-32004"
# Another tenant sees nothing of acme's tasks and contexts.
rpc_b() {
  curl -sS --noproxy '*' -X POST -H "Authorization: Bearer $TOKEN_B" \
    -H 'Content-Type: application/json' --data-binary "$1" "$BASE/a2a"
}
for m in GetTask CancelTask SubscribeToTask; do
  assert_eq "globex: $m of acme's task is TaskNotFound" \
    "$(rpc_b "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"$m\",\"params\":{\"id\":\"$TASK1\"}}" | jq -r .error.code)" \
    "-32001"
done
assert_eq "globex: a message on acme's task is TaskNotFound" \
  "$(rpc_b "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"SendMessage\",\"params\":{\"message\":{\"taskId\":\"$TASK3\",\"parts\":[{\"text\":\"approve\"}]}}}" | jq -r .error.code)" \
  "-32001"
assert_eq "globex: acme's context is unknown" \
  "$(rpc_b "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"SendMessage\",\"params\":{\"message\":{\"contextId\":\"$CTX1\",\"parts\":[{\"text\":\"hi\"}]}}}" | jq -r .error.code)" \
  "-32602"
assert_eq "globex: a push config on acme's task is TaskNotFound" \
  "$(rpc_b "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"CreateTaskPushNotificationConfig\",\"params\":{\"taskId\":\"$TASK1\",\"url\":\"http://127.0.0.1:9/x\"}}" | jq -r .error.code)" \
  "-32001"
assert_eq "globex: ListTasks of acme's context is empty" \
  "$(rpc_b "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ListTasks\",\"params\":{\"contextId\":\"$CTX1\"}}" | jq -c '.result.tasks // .error.code')" \
  "[]"
STATUS=$(curl -sS --noproxy '*' -o "$T/401.body" -w '%{http_code}' -X POST \
  -H 'Authorization: Bearer wrong-token' -d '{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"x"}}' \
  "$BASE/a2a")
assert_eq "a wrong token: 401" "$STATUS" "401"
client get "$BASE" "wrong-token" "$TASK1" > "$T/sdk401.json"
assert_contains "the SDK sees the 401" "$(jq -r .message "$T/sdk401.json")" "401"
check "the server is still up" kill -0 "$SERVE_PID"

stop_serve
finish
