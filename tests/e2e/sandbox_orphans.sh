#!/usr/bin/env bash
# Processes a command leaves behind do not outlive it (issue #10, class 9):
# the model runs `cmd &`, nohup, a subshell, setsid, a double fork, disown, a
# python daemon (fork + setsid + fork), a timed-out command with a detached
# child — each through the real loom, with and without the sandbox. The next
# Bash call looks for them (they must be gone when the call ends), and the
# test looks again after loom exits. A background shell (run_in_background)
# and what it started end when the run ends; so does what a running command
# started when loom gets SIGTERM.
#
# Every process is marked by a number in its argv (`sleep <MARK>NN`) unique to
# this run, so other processes on the machine are never counted or touched.
source "$(dirname "$0")/_lib.sh"

source "$LOOM_SRC/tests/e2e/_orphans_lib.sh"
orphans_init 7

mkdir -p "$T/proj/.loom"

# The spellings. Each ends at once (or times out) and leaves a sleeper.
spellings=(
  "sleep ${MARK}01 &"
  "nohup sleep ${MARK}02 > /dev/null 2>&1 &"
  "(sleep ${MARK}03 &)"
  "setsid -f sleep ${MARK}04 > /dev/null 2>&1"
  "setsid sleep ${MARK}05 > /dev/null 2>&1 &"
  "bash -c 'bash -c \"sleep ${MARK}06 > /dev/null 2>&1 &\" &'"
  "sleep ${MARK}07 > /dev/null 2>&1 & disown"
  "python3 -c 'import os
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        os.closerange(0, 3)
        os.execvp(\"sleep\", [\"sleep\", \"${MARK}08\"])
    os._exit(0)
os.wait()'"
  "setsid bash -c 'trap \"\" TERM HUP; sleep ${MARK}09' > /dev/null 2>&1 & disown; echo started"
)
# The checker: the regex's bracket keeps the checker's own command line from
# matching itself.
CHECK_CMD="pgrep -fa 'slee[p] ${MARK}' || echo NONE-LEFT"

scenario() { # $1: output file
  local turns='[]' i
  for i in "${!spellings[@]}"; do
    turns=$(jq --arg id "s$i" --arg c "${spellings[$i]}" --arg chk "$CHECK_CMD" --arg cid "c$i" \
      '. + [{reply: {tool_calls: [{id: $id, name: "Bash", input: {command: $c}}]}},
            {reply: {tool_calls: [{id: $cid, name: "Bash", input: {command: $chk}}]}}]' <<<"$turns")
  done
  # A command that times out while a detached child of its runs on.
  turns=$(jq --arg c "setsid -f sleep ${MARK}10; sleep ${MARK}11" --arg chk "$CHECK_CMD" \
    '. + [{reply: {tool_calls: [{id: "tmo", name: "Bash", input: {command: $c, timeout: 1500}}]}},
          {reply: {tool_calls: [{id: "ctmo", name: "Bash", input: {command: $chk}}]}},
          {reply: {text: "Done."}}]' <<<"$turns")
  jq -n --argjson t "$turns" '{turns: $t}' > "$1"
}
scenario "$T/scenario.json"

for mode in unsandboxed sandboxed; do
  if [ "$mode" = sandboxed ]; then
    if out=$("$LOOM_BIN" sandbox -- true 2>&1); [[ "$out" == *"not supported here"* ]]; then
      echo "skipped (sandboxed): $out"
      continue
    fi
    echo '{"sandbox": {"enabled": true, "network": "deny"}}' > "$T/proj/.loom/settings.json"
  else
    rm -f "$T/proj/.loom/settings.json"
  fi
  start_mock "$T/scenario.json"
  use_provider anthropic
  json=$("$LOOM_BIN" -p "leave things running" --permission-mode bypassPermissions \
           --cwd "$T/proj" --output-format json)
  assert_eq "$mode: the run completed" "$(jq -r .subtype <<<"$json")" "success"
  file=$(session_file "$(jq -r .session_id <<<"$json")")
  result() { jq -r --arg id "$1" 'select(.type=="function_call_result" and .callId==$id) | .output' "$file"; }
  for i in "${!spellings[@]}"; do
    assert_eq "$mode: nothing left after the call: ${spellings[$i]}" "$(result "c$i")" "NONE-LEFT"
  done
  assert_contains "$mode: the command timed out" "$(result tmo)" "timed out"
  assert_eq "$mode: nothing left after a timed-out call" "$(result ctmo)" "NONE-LEFT"
  assert_eq "$mode: nothing left after loom exits" "$(leftover)" ""
  kill_marked
done
rm -f "$T/proj/.loom/settings.json"

# A background shell and what it left behind end with the run.
cat > "$T/bg.json" <<JSON
{"turns": [
  {"reply": {"tool_calls": [{"id": "bg", "name": "Bash",
     "input": {"command": "setsid -f sleep ${MARK}21 > /dev/null 2>&1; sleep ${MARK}22", "run_in_background": true}}]}},
  {"reply": {"tool_calls": [{"id": "bg2", "name": "Bash",
     "input": {"command": "nohup sleep ${MARK}23 > /dev/null 2>&1 & sleep ${MARK}24", "run_in_background": true}}]}},
  {"reply": {"tool_calls": [{"id": "look", "name": "Bash",
     "input": {"command": "sleep 0.5; pgrep -f 'slee[p] ${MARK}2' | wc -l"}}]}},
  {"reply": {"text": "Done."}}
]}
JSON
start_mock "$T/bg.json"
json=$("$LOOM_BIN" -p "background" --permission-mode bypassPermissions --cwd "$T/proj" --output-format json)
file=$(session_file "$(jq -r .session_id <<<"$json")")
assert_contains "background: started" "$(result bg)" "Command running in background"
# While the run goes on, the background shells and what they started live.
look=$(result look)
if [ "${look//[^0-9]/}" -ge 3 ] 2>/dev/null; then ok "background: running during the run ($look)"
else not_ok "background: expected the background sleepers while the run lasts, saw [$look]"; fi
assert_eq "background: everything ended with the run" "$(leftover)" ""
kill_marked

# SIGTERM to loom while a command runs: the run stops, and neither the
# command nor what it detached outlives loom.
cat > "$T/term.json" <<JSON
{"turns": [
  {"reply": {"tool_calls": [{"id": "long", "name": "Bash",
     "input": {"command": "setsid -f sleep ${MARK}31 > /dev/null 2>&1; nohup sleep ${MARK}32 > /dev/null 2>&1 & sleep ${MARK}33"}}]}},
  {"reply": {"text": "Done."}}
]}
JSON
start_mock "$T/term.json"
"$LOOM_BIN" -p "long" --permission-mode bypassPermissions --cwd "$T/proj" > "$T/term.out" 2>&1 &
loom_pid=$!
for _ in $(seq 1 250); do
  [ "$(pgrep -f "sleep ${MARK}3" | wc -l)" -ge 3 ] && break
  sleep 0.02
done
check "SIGTERM: the command and its children were running" test "$(pgrep -f "sleep ${MARK}3" | wc -l)" -ge 3
kill -TERM "$loom_pid"
wait "$loom_pid" || true
assert_eq "SIGTERM: nothing left after loom exits" "$(leftover)" ""
finish
