#!/usr/bin/env bash
# Hostile MCP servers at start-up (tests/mcp/hostile_server.py): one that
# never answers initialize, one that answers it but never tools/list, one
# that exits at once, one whose tools/list is not an array — the run goes
# on without each, and `loom -p` ends promptly after its answer instead of
# waiting out the 30 s connect timeout. One that floods notifications and
# one that floods pings while it stops reading its input: Loom stays
# small and still exits promptly. Huge instructions trying to close the
# system prompt: cut at 4 KiB. One that asks for sampling, elicitation
# and roots right after the handshake: refused, declined, the workspace.
# One that writes 40 MB to stderr: its log file stops at 16 MiB.
source "$(dirname "$0")/_lib.sh"

H="$LOOM_SRC/tests/mcp/hostile_server.py"
HLOG="$T/hostile.log"
cat > "$T/scenario.json" <<'JSON'
{"turns": [{"reply": {"text": "answered"}}]}
JSON
cat > "$T/bash.json" <<'JSON'
{"turns": [
  {"reply": {"tool_calls": [{"id": "b1", "name": "Bash", "input": {"command": "sleep 3; echo slept"}}]}},
  {"reply": {"text": "answered"}}
]}
JSON
unset MCP_TIMEOUT MCP_TOOL_TIMEOUT
cfg() { jq -nc --arg h "$H" --arg log "$HLOG" --arg more "$*" '{mcpServers: {h: {command: "python3",
  args: ([$h, "--log", $log] + ($more | split(" ")))}}}'; }
# run SCENARIO MODE... — one run; sets json and took (seconds).
run() {
  local scen=$1; shift
  : > "$HLOG"
  start_mock "$scen"
  use_provider anthropic
  local start=$(date +%s%N)
  json=$("$LOOM_BIN" -p "go" --permission-mode bypassPermissions --mcp-config "$(cfg "$@")" \
    --output-format json 2>"$T/stderr")
  took=$(( ($(date +%s%N) - start) / 1000000 ))
}
state() { jq -r '.mcp_servers[0].state' <<<"$json"; }

for mode in never-init tools-hang; do
  run "$T/scenario.json" --mode "$mode"
  assert_eq "$mode: the run completed" "$(jq -r .subtype <<<"$json")" "success"
  assert_eq "$mode: the answer" "$(jq -r .result <<<"$json")" "answered"
  assert_eq "$mode: still connecting when the run ended" "$(state)" "connecting"
  check "$mode: loom exits promptly (${took} ms, the connect timeout is 30 s)" test "$took" -lt 8000
done

run "$T/scenario.json" --mode exit-now
assert_eq "exit-now: the run completed" "$(jq -r .subtype <<<"$json")" "success"
assert_eq "exit-now: failed" "$(state)" "failed"
assert_contains "exit-now: the reason" "$(jq -r '.mcp_servers[0].error' <<<"$json")" "exited with status 3"

run "$T/scenario.json" --mode tools-not-array
assert_eq "tools not an array: failed" "$(state)" "failed"
assert_contains "tools not an array: the reason" "$(jq -r '.mcp_servers[0].error' <<<"$json")" 'no "tools" array'

run "$T/scenario.json" --mode instructions-huge
assert_eq "huge instructions: connected" "$(state)" "connected"
sys=$(jq -sr 'map(select(.body.system)) | first | .body.system | map(.text) | join("\n")' "$MOCK_LOG")
assert_contains "huge instructions: in the system prompt" "$sys" "## MCP server h"
assert_contains "huge instructions: cut, said so" "$sys" "[instructions cut]"
check "huge instructions: at most 4 KiB of them" \
  test "$(grep -o 'Use the hostile tools. ' <<<"$sys" | wc -l)" -le 187
check "huge instructions: the tail that closes the prompt is not there" \
  bash -c '! grep -q INSTRUCTIONS-TAIL <<<"$1"' _ "$sys"

# Floods: Loom's memory is measured as its peak resident set (the
# server's own is not counted: /proc of the loom process). A sanitizer
# build's shadow memory and quarantine dwarf it: the bound is for the
# plain build.
small_kb=40000
grep -qa __asan_init "$LOOM_BIN" && small_kb=2000000
peak_run() {
  local scen=$1; shift
  : > "$HLOG"
  start_mock "$scen"
  use_provider anthropic
  local start=$(date +%s%N)
  "$LOOM_BIN" -p "go" --permission-mode bypassPermissions --mcp-config "$(cfg "$@")" \
    --output-format json > "$T/out.json" 2>"$T/stderr" &
  local pid=$! hwm=0
  while kill -0 "$pid" 2>/dev/null; do
    local v=$(awk '/^VmHWM/ {print $2}' "/proc/$pid/status" 2>/dev/null || true)
    [ -n "$v" ] && hwm=$v
    sleep 0.1
  done
  wait "$pid" || true
  took=$(( ($(date +%s%N) - start) / 1000000 ))
  json=$(cat "$T/out.json")
  peak_kb=$hwm
}
peak_run "$T/bash.json" --mode ping-flood 300000
assert_eq "ping flood, server not reading: the run completed" "$(jq -r .subtype <<<"$json")" "success"
check "ping flood: Loom stays small (${peak_kb} kB)" test "$peak_kb" -lt "$small_kb"
check "ping flood: loom exits promptly (${took} ms)" test "$took" -lt 15000

peak_run "$T/bash.json" --mode flood 300000
assert_eq "notification flood: connected" "$(state)" "connected"
check "notification flood: Loom stays small (${peak_kb} kB)" test "$peak_kb" -lt "$small_kb"

run "$T/bash.json" --mode stderr-flood
assert_eq "stderr flood: the run completed" "$(jq -r .subtype <<<"$json")" "success"
slog=$(find "$LOOM_HOME/projects" -path "*$(jq -r .session_id <<<"$json").mf/mcp-h.log")
check "stderr flood: the flood was sent" grep -q "stderr flood sent" "$HLOG"
check "stderr flood: the server's log is capped ($(wc -c < "$slog") bytes)" \
  test "$(wc -c < "$slog")" -lt 17000000
check "stderr flood: the log says where it was cut" grep -q "the log is cut here" "$slog"

run "$T/bash.json" --mode sample-on-init
for _ in $(seq 1 50); do grep -q "on-init roots/list" "$HLOG" && break; sleep 0.1; done
assert_contains "sampling at start: refused" "$(grep 'on-init sampling' "$HLOG")" '"code": -32601'
assert_contains "URL elicitation at start: declined" "$(grep 'on-init elicitation' "$HLOG")" '"action": "decline"'
assert_contains "roots: the workspace" "$(grep 'on-init roots' "$HLOG")" "\"file://$T/work\""
finish
