#!/usr/bin/env bash
# With "network": "deny", a sandboxed command reaches no host daemon through
# a Unix socket (issue #10, class 8): the test serves pathname sockets
# outside the workspace (a daemon, an ssh-agent-like $SSH_AUTH_SOCK, a
# datagram log socket) and an abstract one, and the model tries them with
# python3, curl --unix-socket, perl, ssh-add, bash, a relative path, a
# symlink in the workspace, socat and nc -U where installed. The listener
# logs every connection and byte: it must log nothing. socketpair still
# works, and so do ordinary commands. A socket listed in allowUnixSockets is
# reached (and the others still are not); with "network": "allow" the same
# daemon is reached, which shows the test's listener works.
source "$(dirname "$0")/_lib.sh"

if out=$("$LOOM_BIN" sandbox -- true 2>&1); [[ "$out" == *"not supported here"* ]]; then
  echo "skipped: $out"
  finish
  exit 0
fi

mkdir -p "$T/proj/.loom" "$T/sock"
ABSTRACT="loom-e2e-$$-$RANDOM"
# The listener: accepts on every socket, logs "NAME connect" and what it
# receives, and answers "pong" so clients that wait for a reply finish.
cat > "$T/listener.py" <<'PY'
import os, socket, sys, threading
log_path, sock_dir, abstract = sys.argv[1:4]
lock = threading.Lock()
def log(line):
    with lock, open(log_path, "a") as f:
        f.write(line + "\n")
def serve_stream(name, addr):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.bind(addr)
    s.listen(16)
    while True:
        c, _ = s.accept()
        log(name + " connect")
        def talk(c=c):
            c.settimeout(2)
            try:
                data = c.recv(4096)
                log(name + " got " + repr(data))
                c.sendall(b"HTTP/1.0 200 OK\r\nContent-Length: 4\r\n\r\npong")
            except Exception:
                pass
            c.close()
        threading.Thread(target=talk, daemon=True).start()
def serve_dgram(name, addr):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    s.bind(addr)
    while True:
        data = s.recv(4096)
        log(name + " got " + repr(data))
for name in ("daemon", "agent", "allowed"):
    threading.Thread(target=serve_stream, args=(name, os.path.join(sock_dir, name + ".sock")), daemon=True).start()
threading.Thread(target=serve_stream, args=("abstract", "\0" + abstract), daemon=True).start()
threading.Thread(target=serve_dgram, args=("log", os.path.join(sock_dir, "log.sock")), daemon=True).start()
open(log_path + ".ready", "w").close()
threading.Event().wait()
PY
: > "$T/listener.log"
python3 "$T/listener.py" "$T/listener.log" "$T/sock" "$ABSTRACT" &
LISTENER_PID=$!
trap 'kill "$LISTENER_PID" 2>/dev/null || true; cleanup' EXIT
for _ in $(seq 1 250); do [ -e "$T/listener.log.ready" ] && break; sleep 0.02; done
check "the listener is up" test -e "$T/listener.log.ready"

D="$T/sock/daemon.sock"
PYC='import socket,sys; s=socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); s.sendall(b"hello"); print("reply", s.recv(100))'
spellings=(
  "python3 -c '$PYC' $D"
  "python3 -c 'import socket; s=socket.socket(socket.AF_UNIX); s.connect(\"\\0$ABSTRACT\"); s.sendall(b\"hello\"); print(\"reply\", s.recv(100))'"
  "curl -s --max-time 3 --unix-socket $D http://localhost/ping"
  "SSH_AUTH_SOCK=$T/sock/agent.sock ssh-add -l"
  "SSH_AUTH_SOCK=$T/sock/agent.sock python3 -c 'import os,socket; s=socket.socket(socket.AF_UNIX); s.connect(os.environ[\"SSH_AUTH_SOCK\"]); s.sendall(b\"hello\")'"
  "perl -MIO::Socket::UNIX -e '\$s = IO::Socket::UNIX->new(Peer => \$ARGV[0]) or die \"connect: \$!\\n\"; print \$s \"hello\"' $D"
  "python3 -c 'import socket; s=socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM); s.sendto(b\"hello\", \"$T/sock/log.sock\")'"
  "python3 -c 'import socket; s=socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET); s.connect(\"$D\"); s.send(b\"hello\")'"
  "cd $T/sock && python3 -c '$PYC' daemon.sock"
  "ln -sf $D ./d.sock && python3 -c '$PYC' ./d.sock"
  # logger exits 0 even when it cannot send: only the listener's log judges it.
  "logger -u $T/sock/log.sock hello 2>&1; false"
)
command -v socat > /dev/null && spellings+=("echo hello | socat - UNIX-CONNECT:$D")
command -v nc > /dev/null && spellings+=("echo hello | nc -U -w 2 $D")

# Ordinary commands still work; socketpair too.
ordinary='ls -l / > /dev/null && echo ls-ok
git init -q repo && cd repo && git status --short && echo git-ok && cd ..
printf "all:\n\t@echo make-ok\n" > Makefile && make
python3 -c "print(\"python-ok\")"
python3 -c "import socket; a, b = socket.socketpair(); a.send(b\"x\"); print(\"socketpair-ok\", b.recv(1))"
python3 -c "import subprocess; print(subprocess.run([\"echo\", \"subprocess-ok\"], capture_output=True, text=True).stdout.strip())"'

scenario() { # $1 file; $2.. extra turns as JSON
  local turns='[]' i
  for i in "${!spellings[@]}"; do
    turns=$(jq --arg id "u$i" --arg c "${spellings[$i]}; echo status \$?" \
      '. + [{reply: {tool_calls: [{id: $id, name: "Bash", input: {command: $c}}]}}]' <<<"$turns")
  done
  turns=$(jq --arg c "$ordinary" \
    '. + [{reply: {tool_calls: [{id: "ordinary", name: "Bash", input: {command: $c}}]}}]' <<<"$turns")
  turns=$(jq --arg c "python3 -c '$PYC' $T/sock/allowed.sock; echo status \$?" \
    '. + [{reply: {tool_calls: [{id: "allowed", name: "Bash", input: {command: $c}}]}},
          {reply: {text: "Done."}}]' <<<"$turns")
  jq -n --argjson t "$turns" '{turns: $t}' > "$1"
}
scenario "$T/scenario.json"

run_loom() {
  start_mock "$T/scenario.json"
  use_provider anthropic
  json=$("$LOOM_BIN" -p "unix sockets" --permission-mode bypassPermissions --cwd "$T/proj" --output-format json)
  file=$(session_file "$(jq -r .session_id <<<"$json")")
}
result() { jq -r --arg id "$1" 'select(.type=="function_call_result" and .callId==$id) | .output' "$file"; }
raw() { jq -c --arg id "$1" "select(.type==\"function_call_result\" and .callId==\$id) | .providerData.toolResult.rawResponse | $2" "$file"; }

# 1. Network denied, no allow list: nothing reaches any listener.
echo '{"sandbox": {"enabled": true, "network": "deny"}}' > "$T/proj/.loom/settings.json"
: > "$T/listener.log"
run_loom
assert_eq "deny: the run completed" "$(jq -r .subtype <<<"$json")" "success"
for i in "${!spellings[@]}"; do
  out=$(result "u$i")
  if [[ "$out" == *"status 0"* || "$out" == *"reply"* || "$out" == *pong* ]]; then
    not_ok "deny: reached a daemon: ${spellings[$i]}: $out"
  else
    ok "deny: refused: ${spellings[$i]}"
  fi
done
sleep 0.3
assert_eq "deny: the listeners received nothing" "$(cat "$T/listener.log")" ""
assert_eq "deny: the model is told the network is blocked" "$(raw u0 .networkBlocked)" "true"
out=$(result ordinary)
for w in ls-ok git-ok make-ok python-ok socketpair-ok subprocess-ok; do
  assert_contains "deny: ordinary commands work: $w" "$out" "$w"
done
assert_contains "deny: an unlisted allowed.sock is refused too" "$(result allowed)" "status 1"

# 1b. A repository's own list is not the user's: untrusted, it is ignored
# (with a notice) and the socket stays out of reach.
echo "{\"sandbox\": {\"enabled\": true, \"network\": \"deny\", \"allowUnixSockets\": [\"$T/sock/allowed.sock\"]}}" \
  > "$T/proj/.loom/settings.json"
: > "$T/listener.log"
start_mock "$T/scenario.json"
use_provider anthropic
json=$("$LOOM_BIN" -p "unix sockets" --permission-mode bypassPermissions --cwd "$T/proj" \
       --output-format json 2>"$T/untrusted.err")
file=$(session_file "$(jq -r .session_id <<<"$json")")
assert_contains "untrusted list: ignored with a notice" "$(cat "$T/untrusted.err")" "sandbox.allowUnixSockets"
assert_contains "untrusted list: the listed socket stays refused" "$(result allowed)" "status 1"
sleep 0.3
assert_eq "untrusted list: the listener got nothing" "$(cat "$T/listener.log")" ""

# 2. allowUnixSockets lists one socket: it is reached; the others still not.
# The lists that open something are the user's own: a repository's would be
# ignored until the workspace is trusted (docs/permissions.md §10).
rm -f "$T/proj/.loom/settings.json"
echo "{\"sandbox\": {\"enabled\": true, \"network\": \"deny\", \"allowUnixSockets\": [\"$T/sock/allowed.sock\"]}}" \
  > "$LOOM_HOME/settings.json"
: > "$T/listener.log"
run_loom
assert_contains "allow list: the listed socket answers" "$(result allowed)" "reply b'HTTP"
for i in "${!spellings[@]}"; do
  out=$(result "u$i")
  if [[ "$out" == *"status 0"* || "$out" == *"reply"* || "$out" == *pong* ]]; then
    not_ok "allow list: reached an unlisted daemon: ${spellings[$i]}: $out"
  else
    ok "allow list: still refused: ${spellings[$i]}"
  fi
done
sleep 0.3
assert_eq "allow list: only the listed socket got anything" \
  "$(grep -v '^allowed ' "$T/listener.log" || true)" ""
assert_contains "allow list: the listed socket got the bytes" "$(cat "$T/listener.log")" "allowed got b'hello'"
out=$(result ordinary)
assert_contains "allow list: socketpair works" "$out" "socketpair-ok"

# 3. Claude Code's spelling of the list, inside a network object.
echo "{\"sandbox\": {\"enabled\": true, \"network\": {\"allowUnixSockets\": [\"$T/sock/allowed.sock\"]}}}" \
  > "$LOOM_HOME/settings.json"
: > "$T/listener.log"
run_loom
assert_contains "network.allowUnixSockets: the listed socket answers" "$(result allowed)" "reply b'HTTP"
assert_contains "network.allowUnixSockets: the daemon is still refused" "$(result u0)" "status 1"

# 4. The network allowed: the same daemon answers (the listener works).
echo '{"sandbox": {"enabled": true, "network": "allow"}}' > "$LOOM_HOME/settings.json"
: > "$T/listener.log"
run_loom
assert_contains "network allow: python reaches the daemon" "$(result u0)" "reply b'HTTP"
assert_contains "network allow: the abstract socket answers" "$(result u1)" "reply b'HTTP"
assert_contains "network allow: the listener logged it" "$(cat "$T/listener.log")" "daemon got b'hello'"
finish
