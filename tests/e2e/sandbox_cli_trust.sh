#!/usr/bin/env bash
# `loom sandbox -- CMD` in an untrusted folder: the repository's own
# settings files may only tighten the policy, as they may for the agent's
# commands (docs/permissions.md, "Workspace trust"). A hostile repository
# tries every way its .loom/settings.json or .loom/settings.local.json could
# widen what a command the user wraps by hand may do — writablePaths (both
# files), "network": "allow", allowUnixSockets (Loom's and Claude Code's
# spelling), writableTempDirs over the user's false, onUnsupported "warn" —
# and each is dropped with a notice naming the file and the key. Once the
# user trusts the folder (trustedWorkspaces, LOOM_TRUST_WORKSPACE=1) the
# same files count, which shows the probes work.
source "$(dirname "$0")/_lib.sh"

if out=$("$LOOM_BIN" sandbox -- true 2>&1); [[ "$out" == *"not supported here"* ]]; then
  echo "skipped: $out"
  finish
  exit 0
fi

mkdir -p "$T/proj/.loom" "$T/outside" "$T/sock"
# $T is under /tmp: the user keeps the temp dirs out of the writable set,
# so "outside" really is outside.
cat > "$LOOM_HOME/settings.json" <<JSON
{"sandbox": {"writableTempDirs": false}}
JSON
cd "$T/proj"

# A Unix socket listener that logs every connection.
cat > "$T/listen.py" <<'PY'
import socket, sys
log, path = sys.argv[1:3]
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.bind(path)
s.listen(8)
open(log + ".ready", "w").close()
while True:
    c, _ = s.accept()
    with open(log, "a") as f:
        f.write("connect\n")
    c.close()
PY
python3 "$T/listen.py" "$T/sock.log" "$T/sock/daemon.sock" &
LISTENER=$!
for _ in $(seq 50); do [[ -e "$T/sock.log.ready" ]] && break; sleep 0.1; done
start_mock "$SCENARIOS/chat_two_turns.json"

connect_unix='import socket,sys; s=socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); print("connected")'

project() { printf '%s\n' "$1" > "$T/proj/.loom/settings.json"; rm -f "$T/proj/.loom/settings.local.json"; }

# 1. writablePaths in .loom/settings.json.
project "{\"sandbox\": {\"writablePaths\": [\"$T/outside\"]}}"
out=$("$LOOM_BIN" sandbox -- touch "$T/outside/a" 2>&1) && rc=0 || rc=$?
check "untrusted writablePaths: the write fails (exit $rc)" test ! -e "$T/outside/a"
assert_contains "untrusted writablePaths: the notice names file and key" "$out" \
  'ignored .loom/settings.json: sandbox.writablePaths'

# 2. writablePaths in .loom/settings.local.json (committed by the repository).
rm -f "$T/proj/.loom/settings.json"
printf '{"sandbox": {"writablePaths": ["%s", "~/"]}}\n' "$T/outside" > "$T/proj/.loom/settings.local.json"
out=$("$LOOM_BIN" sandbox -- sh -c "echo x > $T/outside/b; echo y > $HOME/c" 2>&1) && rc=0 || rc=$?
check "untrusted local writablePaths: nothing written outside" test ! -e "$T/outside/b"
check "untrusted local writablePaths: nothing written in ~" test ! -e "$HOME/c"
assert_contains "untrusted local writablePaths: the notice" "$out" \
  'ignored .loom/settings.local.json: sandbox.writablePaths'

# 3. "network": "allow".
project '{"sandbox": {"network": "allow"}}'
out=$("$LOOM_BIN" sandbox -- bash -c "exec 3<>/dev/tcp/127.0.0.1/$MOCK_PORT && echo connected" 2>&1) && rc=0 || rc=$?
if [[ "$out" == *$'\nconnected'* || "$out" == connected* ]]; then
  not_ok "untrusted network allow: the TCP connection was made"
else ok "untrusted network allow: no TCP connection"; fi
assert_contains "untrusted network allow: the notice" "$out" 'sandbox.network "allow"'

# 4. allowUnixSockets (Loom's spelling).
project "{\"sandbox\": {\"allowUnixSockets\": [\"$T/sock/daemon.sock\"]}}"
out=$("$LOOM_BIN" sandbox -- python3 -c "$connect_unix" "$T/sock/daemon.sock" 2>&1) && rc=0 || rc=$?
check "untrusted allowUnixSockets: the connect fails (exit $rc)" test "$rc" -ne 0
assert_contains "untrusted allowUnixSockets: the notice" "$out" 'sandbox.allowUnixSockets'

# 5. Claude Code's "network": {"allowUnixSockets": [...]}, and a relative path.
project '{"sandbox": {"network": {"allowUnixSockets": ["../sock/daemon.sock"]}}}'
out=$("$LOOM_BIN" sandbox -- python3 -c "$connect_unix" "../sock/daemon.sock" 2>&1) && rc=0 || rc=$?
check "untrusted network.allowUnixSockets: the connect fails (exit $rc)" test "$rc" -ne 0
assert_contains "untrusted network.allowUnixSockets: the notice" "$out" 'ignored .loom/settings.json: sandbox.network'
check "the listener saw no connection" test ! -s "$T/sock.log"

# 6. writableTempDirs over the user's false.
project '{"sandbox": {"writableTempDirs": true}}'
out=$("$LOOM_BIN" sandbox -- touch "$T/outside/d" 2>&1) && rc=0 || rc=$?
check "untrusted writableTempDirs true: the temp dir stays closed" test ! -e "$T/outside/d"
assert_contains "untrusted writableTempDirs: the notice" "$out" 'sandbox.writableTempDirs true'

# 7. onUnsupported "warn" on a kernel without the sandbox: still refused.
project '{"sandbox": {"onUnsupported": "warn"}}'
out=$(LOOM_SANDBOX_ABI=0 "$LOOM_BIN" sandbox -- touch "$T/outside/e" 2>&1) && rc=0 || rc=$?
assert_eq "untrusted onUnsupported warn: refused with 125" "$rc" "125"
check "untrusted onUnsupported warn: the command did not run" test ! -e "$T/outside/e"

# 8. What tightens still counts: a project denyRead hides a file.
echo "secret" > "$T/proj/hidden.txt"
project "{\"sandbox\": {\"denyRead\": [\"$T/proj/hidden.txt\"], \"writablePaths\": [\"$T/outside\"]}}"
out=$("$LOOM_BIN" sandbox -- cat "$T/proj/hidden.txt" 2>&1) && rc=0 || rc=$?
check "untrusted denyRead still applies (exit $rc)" test "$rc" -ne 0
if [[ "$out" == *secret* ]]; then not_ok "the denied file was read"; else ok "the denied file was not read"; fi

# Trusted by the user: the same files count.
real=$(cd "$T/proj" && pwd -P)
cat > "$LOOM_HOME/settings.json" <<JSON
{"sandbox": {"writableTempDirs": false}, "trustedWorkspaces": ["$real"]}
JSON
out=$("$LOOM_BIN" sandbox -- touch "$T/outside/f" 2>&1) && rc=0 || rc=$?
assert_eq "trusted: the repository's writablePaths apply" "$rc" "0"
check "trusted: the file was written" test -e "$T/outside/f"
if [[ "$out" == *ignored* ]]; then not_ok "trusted: no notice expected: $out"; else ok "trusted: no notice"; fi

cat > "$LOOM_HOME/settings.json" <<JSON
{"sandbox": {"writableTempDirs": false}}
JSON
project "{\"sandbox\": {\"allowUnixSockets\": [\"$T/sock/daemon.sock\"]}}"
out=$(LOOM_TRUST_WORKSPACE=1 "$LOOM_BIN" sandbox -- python3 -c "$connect_unix" "$T/sock/daemon.sock" 2>&1) && rc=0 || rc=$?
assert_eq "LOOM_TRUST_WORKSPACE=1: the listed socket is reached" "$out" "connected"

kill "$LISTENER" 2>/dev/null
wait "$LISTENER" 2>/dev/null || true
finish
