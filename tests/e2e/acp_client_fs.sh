#!/usr/bin/env bash
# loom acp with a client that holds the files and the terminal
# (clientCapabilities fs.readTextFile, fs.writeTextFile, terminal), on the
# official ACP SDK (tests/acp/client_fs.mjs): the Read sees the client's
# unsaved buffer, the Edit writes the edited buffer back through the client
# (the disk untouched), the Bash runs in the client's terminal, embedded in
# its tool call and released; a command a deny rule refuses never reaches
# the client; a cancel kills and releases the terminal; a client offering
# neither gets Loom's own files and commands. Then raw lines
# (tests/acp/client_fs_raw.mjs): malformed, error and missing answers give
# the tool a clear error, never a crash. Against mockllm
# (tests/scenarios/acp_client_fs.json).
source "$(dirname "$0")/_lib.sh"

ACP_BIN="$(dirname "$LOOM_BIN")/loom-acp"
CLIENT_DIR="$LOOM_SRC/tests/acp"
if [ ! -d "$CLIENT_DIR/node_modules/@agentclientprotocol/sdk" ]; then
  echo "skip: tests/acp/node_modules is missing (make deps)" >&2
  exit 0
fi

start_mock "$SCENARIOS/acp_client_fs.json"
use_provider anthropic
P="$T/work/proj"
mkdir -p "$P/.loom"
printf 'hello from the disk\n' > "$P/notes.txt"
printf '{"permissions": {"deny": ["Bash(rm:*)"]}}\n' > "$P/.loom/settings.json"
mkdir -p "$P/precious"

tap() {
  while IFS= read -r line; do
    case "$line" in
      "ok - "*) ok "${line#ok - }" ;;
      "not ok - "*) not_ok "${line#not ok - }" ;;
    esac
  done <<< "$1"
}

if out=$(cd "$CLIENT_DIR" && timeout 120 node client_fs.mjs "$ACP_BIN" "$P" "$P/notes.txt" 2>"$T/client.err"); then
  rc=0
else
  rc=$?
fi
tap "$out"
[ "$rc" -eq 0 ] || not_ok "client_fs.mjs exited $rc: $(tail -c 3000 "$T/client.err")"

# What the model was sent: the buffer in the Read's result, the terminal's
# output and exit code in the Bash's.
body=$(jq -c 'select(.body | tostring | contains("FS-EDIT")) | .body' "$MOCK_LOG" | tail -n 1)
assert_contains "the model read the buffer's text" "$body" "BUFFER-ONLY line"
assert_contains "the terminal's output reached the model" "$body" "from-terminal"
assert_contains "the terminal's stderr reached the model" "$body" "on-stderr"
assert_contains "the exit code reached the model" "$body" "Exit code 3"
check "the denied command did not run" test -d "$P/precious"
check "the disk file is untouched" grep -qx 'hello from the disk' "$P/notes.txt"

if out=$(cd "$CLIENT_DIR" && timeout 120 node client_fs_raw.mjs "$ACP_BIN" "$P" "$P/notes.txt" 2>"$T/raw.err"); then
  rc=0
else
  rc=$?
fi
tap "$out"
[ "$rc" -eq 0 ] || not_ok "client_fs_raw.mjs exited $rc: $(tail -c 3000 "$T/raw.err")"
[ "$PASSED" -gt 30 ] || not_ok "only $PASSED checks ran: $(tail -c 2000 "$T/client.err") $(tail -c 2000 "$T/raw.err")"
finish
