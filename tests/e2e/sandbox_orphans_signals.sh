#!/usr/bin/env bash
# A signal whose default action ends loom without running its exit handlers
# (SIGALRM, SIGXCPU, SIGVTALRM, SIGPROF, SIGIO, SIGSYS, SIGPIPE — what
# `loom -p … | head` gets once head is gone) still takes every
# command with it (issue #10, class 9): loom is sent the signal while a
# command runs that has detached children (setsid -f, nohup &) — loom dies
# of that signal, and nothing it started is left. With and without the
# sandbox. (SIGKILL is the documented limit; SIGTERM/SIGINT are
# sandbox_orphans.sh's.)
#
# Every process is marked by a number in its argv unique to this run, so
# other processes on the machine are never counted or touched.
source "$(dirname "$0")/_lib.sh"
ulimit -c 0 # SIGXCPU and SIGSYS dump core by default

source "$LOOM_SRC/tests/e2e/_orphans_lib.sh"
orphans_init 4
mkdir -p "$T/proj/.loom"

try_signal() { # MODE SIG N
  local mode=$1 sig=$2 n=$3 loom_pid rc
  cat > "$T/s.json" <<JSON
{"turns": [
  {"reply": {"tool_calls": [{"id": "long", "name": "Bash",
     "input": {"command": "setsid -f sleep ${MARK}${n}1 > /dev/null 2>&1; nohup sleep ${MARK}${n}2 > /dev/null 2>&1 & sleep ${MARK}${n}3"}}]}},
  {"reply": {"text": "Done."}}
]}
JSON
  start_mock "$T/s.json"
  use_provider anthropic
  "$LOOM_BIN" -p "long" --permission-mode bypassPermissions --cwd "$T/proj" > "$T/out" 2>&1 &
  loom_pid=$!
  for _ in $(seq 1 250); do
    [ "$(leftover | wc -l)" -ge 3 ] && break
    sleep 0.02
  done
  check "$mode SIG$sig: the command and its children were running" test "$(leftover | wc -l)" -ge 3
  kill -"$sig" "$loom_pid"
  set +e
  timeout 30 tail --pid="$loom_pid" -f /dev/null
  wait "$loom_pid"
  rc=$?
  set -e
  assert_eq "$mode SIG$sig: loom died of the signal" "$rc" "$((128 + $(kill -l "$sig")))"
  assert_eq "$mode SIG$sig: nothing left after loom died" "$(leftover)" ""
  kill_marked
  stop_mock
}

n=1
for sig in ALRM XCPU VTALRM PROF IO SYS PIPE; do
  try_signal unsandboxed "$sig" "$n"
  n=$((n + 1))
done
if out=$("$LOOM_BIN" sandbox -- true 2>&1); [[ "$out" == *"not supported here"* ]]; then
  echo "skipped (sandboxed): $out"
else
  echo '{"sandbox": {"enabled": true, "network": "deny"}}' > "$T/proj/.loom/settings.json"
  for sig in ALRM PIPE; do
    try_signal sandboxed "$sig" "$n"
    n=$((n + 1))
  done
fi
finish
