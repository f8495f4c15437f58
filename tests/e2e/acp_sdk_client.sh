#!/usr/bin/env bash
# loom acp driven by a client on the official ACP SDK (tests/acp/client.mjs):
# initialize → session/new → a prompt streaming text, a Read, an Edit that
# needs permission (granted by the client) → the edit's diff → end_turn; a
# second prompt cancelled mid-stream → cancelled; session/list, set_mode,
# set_config_option; an image, a file link and an embedded resource; a
# question as an elicitation form; an MCP server the client passes (its
# tool's elicitation through the client, its prompt as a command);
# session/load of the first session replays it, in a second loom acp process. Against mockllm (tests/scenarios/acp_session.json).
source "$(dirname "$0")/_lib.sh"

# The client's MCP server (python3) must be connected before the first
# request, however loaded the machine: its tool is the model's first call.
export LOOM_MCP_STARTUP_WAIT_MS=30000
ACP_BIN="$(dirname "$LOOM_BIN")/loom-acp"
CLIENT_DIR="$LOOM_SRC/tests/acp"
if [ ! -d "$CLIENT_DIR/node_modules/@agentclientprotocol/sdk" ]; then
  echo "skip: tests/acp/node_modules is missing (make deps)" >&2
  exit 0
fi
check "loom-acp is built beside loom" test -x "$ACP_BIN"

start_mock "$SCENARIOS/acp_session.json"
use_provider anthropic
mkdir -p "$T/work/proj"
printf 'hello world\n' > "$T/work/proj/notes.txt"

if out=$(cd "$CLIENT_DIR" && timeout 120 node client.mjs "$ACP_BIN" "$T/work/proj" "$T/work/proj/notes.txt" \
                      "$LOOM_SRC/tests/mcp/fake_server.py" 2>"$T/client.err"); then
  rc=0
else
  rc=$?
fi
while IFS= read -r line; do
  case "$line" in
    "ok - "*) ok "${line#ok - }" ;;
    "not ok - "*) not_ok "${line#not ok - }" ;;
  esac
done <<< "$out"
# What the model was sent for the prompt of content blocks.
body=$(jq -c 'select(.body | tostring | contains("IMAGE-PROMPT")) | .body' "$MOCK_LOG" | tail -n 1)
assert_contains "the image block reached the model as an image" "$body" '"type":"image"'
assert_contains "the linked file's content was attached" "$body" "goodbye world"
assert_contains "the embedded resource's text is in the prompt" "$body" "EMBEDDED-TEXT unsaved"
assert_contains "the embedded resource names its uri" "$body" "file:///virtual/buffer.txt"
check "the image folder is gone after loom acp exits" \
  test -z "$(ls -d "${TMPDIR:-/tmp}"/loom-acp-* 2>/dev/null | while read -r d; do [ -d "/proc/${d##*-}" ] || echo "$d"; done)"
[ "$rc" -eq 0 ] || not_ok "the client exited $rc: $(tail -c 3000 "$T/client.err")"
[ "$PASSED" -gt 20 ] || not_ok "the client ran only $PASSED checks: $(tail -c 3000 "$T/client.err")"
finish
