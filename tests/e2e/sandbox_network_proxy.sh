#!/usr/bin/env bash
# sandbox.network.allowedDomains (issue 25, item 6): sandboxed commands reach
# the network only through Loom's filtering proxy, and the proxy lets through
# only the listed hosts. Two loopback HTTP listeners stand for two hosts with
# different names: A is reached as "localhost" (listed), B as "127.0.0.1"
# (not listed; the proxy matches names, so the two are different hosts).
# The model's curl reaches A through the proxy, plain HTTP and CONNECT
# alike; B is refused by the proxy (403), directly (no proxy: connect()
# refused) and so is UDP; B's log stays empty. An untrusted repository's own
# list is ignored. `loom sandbox` gets the same proxy.
source "$(dirname "$0")/_lib.sh"

if out=$("$LOOM_BIN" sandbox -- true 2>&1); [[ "$out" == *"not supported here"* ]]; then
  echo "skipped: $out"
  finish
  exit 0
fi
command -v curl > /dev/null || { echo "skipped: no curl"; finish; exit 0; }

start_listener
PA=$LISTEN_PORT
LOG_A=$LISTEN_LOG
LOG_B="$T/listener_b.log"
: > "$LOG_B"
python3 "$LOOM_SRC/tests/e2e/http_listener.py" "$LOG_B" "$T/b.port" 127.0.0.1 &
B_PID=$!
trap 'kill "$B_PID" 2>/dev/null || true; cleanup' EXIT
for _ in $(seq 1 250); do [ -s "$T/b.port" ] && break; sleep 0.02; done
PB=$(cat "$T/b.port")

mkdir -p "$T/proj/.loom"
echo '{"sandbox": {"enabled": true, "network": {"allowedDomains": ["localhost", "*.example.test"]}}}' \
  > "$LOOM_HOME/settings.json"

declare -A cmd=(
  [plain]="curl -sS -f http://localhost:$PA/plain; echo status \$?"
  [tunnel]="curl -sS -f -p http://localhost:$PA/tunnel; echo status \$?"
  [refused_plain]="curl -sS http://127.0.0.1:$PB/refused-plain; echo; curl -sS -f http://127.0.0.1:$PB/refused-plain; echo status \$?"
  [refused_tunnel]="curl -sS -f -p http://127.0.0.1:$PB/refused-tunnel; echo status \$?"
  [direct]="curl -sS --noproxy '*' http://127.0.0.1:$PB/direct; echo status \$?"
  [udp]="python3 -c 'import socket; socket.socket(socket.AF_INET, socket.SOCK_DGRAM)' 2>&1 | tail -n 1; echo status \$?"
  [env]="echo \"\$https_proxy\""
)
ids=(plain tunnel refused_plain refused_tunnel direct udp env)
turns='[]'
for id in "${ids[@]}"; do
  turns=$(jq --arg id "$id" --arg c "${cmd[$id]}" \
    '. + [{reply: {tool_calls: [{id: $id, name: "Bash", input: {command: $c}}]}}]' <<<"$turns")
done
jq -n --argjson t "$turns" '{turns: ($t + [{reply: {text: "Done."}}])}' > "$T/scenario.json"

run_loom() {
  start_mock "$T/scenario.json"
  use_provider anthropic
  json=$("$LOOM_BIN" -p "network" --permission-mode bypassPermissions --cwd "$T/proj" \
         --output-format json 2>"$T/loom.err")
  file=$(session_file "$(jq -r .session_id <<<"$json")")
}
result() { jq -r --arg id "$1" 'select(.type=="function_call_result" and .callId==$id) | .output' "$file"; }
raw() { jq -c --arg id "$1" "select(.type==\"function_call_result\" and .callId==\$id) | .providerData.toolResult.rawResponse | $2" "$file"; }

run_loom
assert_eq "the run completed" "$(jq -r .subtype <<<"$json")" "success"
assert_contains "allowed host, plain HTTP through the proxy" "$(result plain)" "listener says hello"
assert_contains "allowed host, plain HTTP: curl succeeded" "$(result plain)" "status 0"
assert_contains "allowed host, CONNECT tunnel" "$(result tunnel)" "listener says hello"
assert_contains "allowed host, CONNECT: curl succeeded" "$(result tunnel)" "status 0"
assert_contains "the command is pointed at Loom's proxy" "$(result env)" "http://127.0.0.1:"
assert_contains "unlisted host, plain HTTP: the proxy says why" "$(result refused_plain)" \
  "127.0.0.1 is not in sandbox.network.allowedDomains"
assert_contains "unlisted host, plain HTTP: refused (403, curl -f exits 22)" "$(result refused_plain)" "status 22"
# curl exits 56 or (newer, with -f) 22 for a refused CONNECT; never 0.
out=$(result refused_tunnel)
assert_contains "unlisted host, CONNECT: refused with 403" "$out" "403"
check "unlisted host, CONNECT: curl failed" test "${out#*status 0}" == "$out"
assert_contains "unlisted host, past the proxy: connect() refused" "$(result direct)" "status 7"
assert_contains "UDP sockets stay refused" "$(result udp)" "Permission denied"
assert_eq "the model is told which host the proxy refused" "$(raw refused_plain .networkRefusedHosts)" '"127.0.0.1"'
assert_eq "networkBlocked is set" "$(raw refused_tunnel .networkBlocked)" "true"
assert_contains "the note names the allow-list" "$(result refused_tunnel)" "sandbox.network.allowedDomains"
assert_eq "the allowed calls are not marked blocked" "$(raw plain .networkBlocked)" "false"
assert_eq "host A got exactly the two allowed requests" "$(awk '{print $3}' "$LOG_A" | sort | tr '\n' ' ')" "/plain /tunnel "
assert_eq "host B got nothing" "$(cat "$LOG_B")" ""

# An untrusted repository cannot add itself a host: its list is dropped.
echo '{"sandbox": {"enabled": true}}' > "$LOOM_HOME/settings.json"
echo '{"sandbox": {"network": {"allowedDomains": ["127.0.0.1", "localhost"]}}}' > "$T/proj/.loom/settings.json"
: > "$LOG_A"
run_loom
assert_contains "untrusted list: ignored with a notice" "$(cat "$T/loom.err")" "sandbox.network"
assert_contains "untrusted list: the network stays denied" "$(result plain)" "status 7"
assert_eq "untrusted list: nothing reached host A" "$(cat "$LOG_A")" ""
assert_eq "untrusted list: nothing reached host B" "$(cat "$LOG_B")" ""
rm -f "$T/proj/.loom/settings.json"

# `loom sandbox` runs the same proxy for the command it wraps.
echo '{"sandbox": {"network": {"allowedDomains": ["localhost"]}}}' > "$LOOM_HOME/settings.json"
out=$(cd "$T/proj" && "$LOOM_BIN" sandbox -- sh -c "curl -sS -f http://localhost:$PA/cli; echo status \$?; curl -sS -f http://127.0.0.1:$PB/cli; echo status \$?" 2>&1)
assert_contains "loom sandbox: the listed host answers" "$out" "listener says hello"
assert_contains "loom sandbox: the unlisted host is refused" "$out" "status 22"
assert_eq "loom sandbox: host B still got nothing" "$(cat "$LOG_B")" ""

# A malformed entry is a configuration error naming it.
echo '{"sandbox": {"enabled": true, "network": {"allowedDomains": ["exa*mple.com"]}}}' > "$LOOM_HOME/settings.json"
out=$(cd "$T/proj" && "$LOOM_BIN" sandbox -- true 2>&1 || true)
assert_contains "a bad domain entry is named" "$out" "sandbox.network.allowedDomains[0]"
finish
