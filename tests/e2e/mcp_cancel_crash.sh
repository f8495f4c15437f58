#!/usr/bin/env bash
# A slow MCP call past its server's "timeout" (ms) is a tool error saying it
# timed out, and notifications/cancelled reaches the server (the fake logs
# "cancelled <id>"); a server that crashes in a call gives a clean tool
# error, and the next call to it works from a new process; once loom exits
# no server process it started is left running.
source "$(dirname "$0")/_lib.sh"
source "$LOOM_SRC/tests/e2e/_mcp_lib.sh"
need_fake_server

export LOOM_MCP_STARTUP_WAIT_MS=30000
mkdir -p "$T/proj"
: > "$T/pids"
# Each start of a server appends its pid (exec keeps it) to $T/pids.
wrapped() { # NAME FAKE-ARGS...
  local name=$1; shift
  local cmd
  cmd="echo \$\$ >> $(printf %q "$T/pids"); echo \$\$ > $(printf %q "$T/$name.pid"); exec python3 $(printf '%q ' "$MCP_FAKE" "$@")"
  jq -cn --arg c "$cmd" '{command: "sh", args: ["-c", $c]}'
}
slow_entry=$(wrapped slow --log "$T/slow.log" | jq -c '. + {timeout: 1000}')
crashy_entry=$(wrapped crashy --crash-on big --log "$T/crashy.log")
cfg=$(mcp_config slow "$slow_entry" crashy "$crashy_entry")

cat > "$T/scenario.json" <<'JSON'
{"turns": [
  {"reply": {"tool_calls": [{"id": "t1", "name": "mcp__slow__slow", "input": {"ms": 8000}}]}},
  {"reply": {"tool_calls": [{"id": "t2", "name": "mcp__slow__slow", "input": {"ms": 300}}]}},
  {"reply": {"tool_calls": [{"id": "c1", "name": "mcp__crashy__echo", "input": {"text": "before the crash"}}]}},
  {"reply": {"tool_calls": [{"id": "c2", "name": "mcp__crashy__big", "input": {"bytes": 10}}]}},
  {"reply": {"tool_calls": [{"id": "c3", "name": "mcp__crashy__echo", "input": {"text": "after the crash"}}]}},
  {"reply": {"text": "Survived."}}
]}
JSON
start_mock "$T/scenario.json"
use_provider anthropic
# The pid of the first crashy process, read while loom runs (the crash
# replaces the file's content).
start=$SECONDS
"$LOOM_BIN" -p "slow and crashy" --cwd "$T/proj" --permission-mode bypassPermissions --mcp-config "$cfg" --output-format json \
  > "$T/out.json" 2> "$T/stderr" &
loom_pid=$!
for _ in $(seq 1 300); do [ -s "$T/crashy.pid" ] && break; sleep 0.05; done
first_crashy=$(cat "$T/crashy.pid" 2>/dev/null || echo none)
wait "$loom_pid" || true
took=$((SECONDS - start))
json=$(cat "$T/out.json")
assert_eq "the run completed" "$(jq -r .result <<<"$json" 2>/dev/null)" "Survived."

t1=$(tool_result t1)
assert_eq "the slow call is a tool error" "$(tool_is_error t1)" "true"
assert_contains "it says it timed out" "$t1" "timed out"
assert_contains "it names the server" "$t1" "slow"
check "the timeout cut the 8 s call short (the run took ${took}s)" test "$took" -lt 8
assert_eq "a short call to the same server then works" "$(tool_result t2)" "done"
check "notifications/cancelled reached the server" grep -q '^recv notifications/cancelled$' "$T/slow.log"
check "the server stopped the cancelled call (its log: cancelled <id>)" grep -Eq '^cancelled [^ ]+$' "$T/slow.log"

assert_eq "the crashy server answers before the crash" "$(tool_result c1)" "before the crash"
c2=$(tool_result c2)
assert_eq "the crashing call is a tool error" "$(tool_is_error c2)" "true"
assert_contains "the error names the server" "$c2" "crashy"
assert_eq "the next call works again" "$(tool_result c3)" "after the crash"
assert_eq "the next call is no error" "$(tool_is_error c3)" "false"
second_crashy=$(cat "$T/crashy.pid" 2>/dev/null || echo none)
check "the next call came from a new process ($first_crashy, then $second_crashy)" \
  test "$first_crashy" != none -a "$second_crashy" != none -a "$first_crashy" != "$second_crashy"
assert_eq "three server processes were started (slow, crashy twice)" "$(wc -l < "$T/pids" | tr -d ' ')" "3"
# loom has exited: every server it started is gone.
sleep 0.2
assert_eq "no server process outlives loom" "$(pids_alive "$T/pids" | tr '\n' ' ')" ""
for pid in $(cat "$T/pids"); do
  check "kill -0 $pid fails after loom exited" bash -c "! kill -0 $pid 2>/dev/null || grep -q '^State:.*Z' /proc/$pid/status"
done
finish
