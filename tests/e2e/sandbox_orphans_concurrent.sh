#!/usr/bin/env bash
# What a call leaves behind ends with the call even while another command
# runs (issue #10, class 9): a background shell (run_in_background) is kept
# running for the whole run, and meanwhile each foreground call detaches a
# sleeper in a way that takes it out of the call's process group — setsid -f,
# setsid + &, a python daemon (fork, setsid, fork), a process that joins the
# background shell's own group (setpgid), one that makes itself a subreaper
# and detaches a grandchild, a process that ignores SIGTERM and SIGHUP in a
# new session. The next call looks for the sleeper: it must be gone, while
# the background shell's own sleeper still runs (it lasts for the run).
# Without the sandbox: with it on, run_in_background is refused, so no
# command runs beside a foreground call.
#
# Every process is marked by a number in its argv unique to this run, so
# other processes on the machine are never counted or touched.
source "$(dirname "$0")/_lib.sh"

source "$LOOM_SRC/tests/e2e/_orphans_lib.sh"
orphans_init 6

mkdir -p "$T/proj/.loom"

# The background shell's group, for the spelling that joins it.
BGPG="\$(ps -o pgid= -p \"\$(pgrep -f 'slee[p] ${MARK}00' | head -n 1)\" | tr -d ' ')"
spellings=(
  "setsid -f sleep ${MARK}01 > /dev/null 2>&1"
  "setsid sleep ${MARK}02 > /dev/null 2>&1 &"
  "python3 -c 'import os
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        os.closerange(0, 3)
        os.execvp(\"sleep\", [\"sleep\", \"${MARK}03\"])
    os._exit(0)
os.wait()'"
  "G=$BGPG; python3 -c 'import os,sys
if os.fork() == 0:
    os.setpgid(0, int(sys.argv[1]))
    if os.fork() == 0:
        os.closerange(0, 3)
        os.execvp(\"sleep\", [\"sleep\", \"${MARK}04\"])
    os._exit(0)
os.wait()' \"\$G\""
  "python3 -c 'import ctypes,os
ctypes.CDLL(None).prctl(36, 1, 0, 0, 0)
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        os.closerange(0, 3)
        os.execvp(\"sleep\", [\"sleep\", \"${MARK}05\"])
    os._exit(0)
os.wait()'"
  "setsid bash -c 'trap \"\" TERM HUP; sleep ${MARK}06' > /dev/null 2>&1 & disown; echo started"
)
CHECK_CMD="sleep 0.2; pgrep -fa 'slee[p] ${MARK}0[1-9]' || echo NONE-LEFT; pgrep -f 'slee[p] ${MARK}00' > /dev/null && echo BG-ALIVE"

turns=$(jq -n --arg c "sleep ${MARK}00" \
  '[{reply: {tool_calls: [{id: "bg", name: "Bash", input: {command: $c, run_in_background: true}}]}}]')
for i in "${!spellings[@]}"; do
  turns=$(jq --arg id "s$i" --arg c "${spellings[$i]}" --arg chk "$CHECK_CMD" --arg cid "c$i" \
    '. + [{reply: {tool_calls: [{id: $id, name: "Bash", input: {command: $c}}]}},
          {reply: {tool_calls: [{id: $cid, name: "Bash", input: {command: $chk}}]}}]' <<<"$turns")
done
turns=$(jq '. + [{reply: {text: "Done."}}]' <<<"$turns")
jq -n --argjson t "$turns" '{turns: $t}' > "$T/scenario.json"

# Unsandboxed only: with the sandbox on, background shells are refused.
for mode in unsandboxed; do
  start_mock "$T/scenario.json"
  use_provider anthropic
  json=$("$LOOM_BIN" -p "leave things running" --permission-mode bypassPermissions \
           --cwd "$T/proj" --output-format json)
  assert_eq "$mode: the run completed" "$(jq -r .subtype <<<"$json")" "success"
  file=$(session_file "$(jq -r .session_id <<<"$json")")
  result() { jq -r --arg id "$1" 'select(.type=="function_call_result" and .callId==$id) | .output' "$file"; }
  assert_contains "$mode: the background shell started" "$(result bg)" "running in background"
  for i in "${!spellings[@]}"; do
    out=$(result "c$i")
    assert_contains "$mode: gone after its call, with a background shell running: ${spellings[$i]%%$'\n'*}" \
      "$out" "NONE-LEFT"
    assert_contains "$mode: the background shell still runs after call $i" "$out" "BG-ALIVE"
  done
  assert_eq "$mode: nothing left after loom exits" "$(leftover)" ""
  kill_marked
  stop_mock
done
finish
