#!/usr/bin/env bash
# A sandboxed command cannot kill or stop Loom (issue #10, classes 9 and
# 14): a command that SIGKILLs the harness would outlive its call and its
# deadline, since nothing would be left to end it. Every way to signal a
# process is tried against Loom (the command's parent): kill -9 / -STOP
# $PPID, kill to Loom's process group, kill(-1) (every process of the user —
# as root, the machine), python os.kill, tgkill, tkill, rt_sigqueueinfo,
# pidfd_open, and pidfd_send_signal on a /proc/PID directory. All but the
# real SIGKILL use signal 0, which only asks whether the signal could be
# sent, so a failure of the test harms nothing. The run must finish, Loom
# alive; a command still signals itself and its own children.
# `loom sandbox` (the command replaces loom there) refuses kill(-1) only.
source "$(dirname "$0")/_lib.sh"

if out=$("$LOOM_BIN" sandbox -- true 2>&1); [[ "$out" == *"not supported here"* ]]; then
  echo "skipped: $out"
  finish
  exit 0
fi
mkdir -p "$T/proj/.loom"
echo '{"sandbox": {"enabled": true, "network": "deny"}}' > "$T/proj/.loom/settings.json"

# Loom's pid comes from the shell ($PPID): python's own parent is that shell.
py='import ctypes,os,signal,sys; libc=ctypes.CDLL(None, use_errno=True); L=int(os.environ["LP"])'
spellings=(
  'kill -0 $PPID'
  'kill -0 -- -$(ps -o pgid= -p $PPID | tr -d " ")'
  'kill -0 -1'
  "LP=\$PPID python3 -c '$py; os.kill(L, 0)'"
  "LP=\$PPID python3 -c '$py; os.killpg(os.getpgid(L), 0)'"
  "LP=\$PPID python3 -c '$py; sys.exit(0 if libc.syscall(234, L, L, 0) == 0 else 1)'"
  "LP=\$PPID python3 -c '$py; sys.exit(0 if libc.syscall(200, L, 0) == 0 else 1)'"
  "LP=\$PPID python3 -c '$py; info=ctypes.create_string_buffer(128); sys.exit(0 if libc.syscall(129, L, 0, info) == 0 else 1)'"
  "LP=\$PPID python3 -c '$py; os.pidfd_open(L)'"
  "LP=\$PPID python3 -c '$py; fd=os.open(\"/proc/%d\" % L, os.O_RDONLY | os.O_DIRECTORY); signal.pidfd_send_signal(fd, 0)'"
  "LP=\$PPID python3 -c '$py; os.kill(L | (1 << 32), 0)' 2>&1 | grep -q OverflowError && exit 1; python3 -c '$py; sys.exit(0 if libc.syscall(62, ctypes.c_long(L | (1 << 32)), 0) == 0 else 1)'"
  'L=$PPID; kill -STOP $L; kill -CONT $L; kill -9 $L'
)
turns='[]'
for i in "${!spellings[@]}"; do
  turns=$(jq --arg id "k$i" --arg c "${spellings[$i]}; echo status \$?" \
    '. + [{reply: {tool_calls: [{id: $id, name: "Bash", input: {command: $c}}]}}]' <<<"$turns")
done
own='sleep 30 & kill $! && wait $!; echo "own child: $?"; kill -0 $$ && echo self-ok'
turns=$(jq --arg c "$own" '. + [{reply: {tool_calls: [{id: "own", name: "Bash", input: {command: $c}}]}},
                                {reply: {text: "Done."}}]' <<<"$turns")
jq -n --argjson t "$turns" '{turns: $t}' > "$T/scenario.json"
start_mock "$T/scenario.json"
use_provider anthropic
set +e
json=$(timeout 60 "$LOOM_BIN" -p "signal loom" --permission-mode bypassPermissions --cwd "$T/proj" --output-format json)
rc=$?
set -e
assert_eq "loom lived through the run and exited 0" "$rc" "0"
assert_eq "the run completed" "$(jq -r .subtype <<<"$json" 2>/dev/null)" "success"
file=$(session_file "$(jq -r .session_id <<<"$json" 2>/dev/null)")
result() { jq -r --arg id "$1" 'select(.type=="function_call_result" and .callId==$id) | .output' "$file"; }
for i in "${!spellings[@]}"; do
  out=$(result "k$i")
  if [[ -z "$out" ]]; then not_ok "no result (loom gone?): ${spellings[$i]}"
  elif [[ "$out" == *"status 0"* ]]; then not_ok "signal reached loom: ${spellings[$i]}"
  else ok "refused: ${spellings[$i]}"; fi
done
out=$(result own)
assert_contains "a command still kills its own child" "$out" "own child: 143"
assert_contains "a command still signals itself" "$out" "self-ok"

# loom sandbox: the command is this process after exec; kill(-1) is still refused.
out=$("$LOOM_BIN" sandbox -- sh -c 'kill -0 $$ && echo self-ok; kill -0 -1 2>/dev/null && echo all-reached; true' 2>&1)
assert_contains "loom sandbox: the command signals itself" "$out" "self-ok"
if [[ "$out" == *all-reached* ]]; then not_ok "loom sandbox: kill(-1) got through"; else ok "loom sandbox: kill(-1) refused"; fi
finish
