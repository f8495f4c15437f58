# _mcp_lib.sh — shared helpers for the mcp_*.sh scenarios (sourced after
# _lib.sh, not run): where the reference servers and the fake server are,
# a --mcp-config JSON builder, free loopback ports, and jq readers for the
# requests mockllm logged.
#
# The reference servers come from tests/mcp/node_modules (scripts/deps.sh
# installs them with npm ci). A scenario that needs them fails, loudly,
# when they are missing: CI installs them, so a missing install is a broken
# setup, never a reason to skip.

MCP_NODE_MODULES="$LOOM_SRC/tests/mcp/node_modules"
MCP_EVERYTHING="$MCP_NODE_MODULES/.bin/mcp-server-everything"
MCP_FILESYSTEM="$MCP_NODE_MODULES/.bin/mcp-server-filesystem"
MCP_FAKE="$LOOM_SRC/tests/mcp/fake_server.py"

# need_reference_servers — exits the scenario (status 1) when the npm
# install of tests/mcp is missing.
need_reference_servers() {
  local bin
  command -v node >/dev/null || { echo "$(basename "$0" .sh): FAIL: node is not installed (run scripts/deps.sh)" >&2; exit 1; }
  for bin in "$MCP_EVERYTHING" "$MCP_FILESYSTEM"; do
    if [ ! -x "$bin" ]; then
      echo "$(basename "$0" .sh): FAIL: $bin is missing — the MCP reference servers are not installed; run: bash scripts/deps.sh (npm ci in tests/mcp)" >&2
      exit 1
    fi
  done
}

need_fake_server() {
  [ -f "$MCP_FAKE" ] || { echo "$(basename "$0" .sh): FAIL: $MCP_FAKE is missing" >&2; exit 1; }
}

# mcp_config NAME ENTRY_JSON [NAME ENTRY_JSON...] — a --mcp-config value.
mcp_config() {
  local args=() i=0
  while [ $# -gt 0 ]; do
    args+=(--arg "n$i" "$1" --argjson "e$i" "$2")
    shift 2; i=$((i + 1))
  done
  local expr='{mcpServers: ({}'
  for ((k = 0; k < i; k++)); do expr+=" + {(\$n$k): \$e$k}"; done
  expr+=')}'
  jq -cn "${args[@]}" "$expr"
}

# stdio_entry COMMAND [ARGS...] — {"command": …, "args": [...]}.
stdio_entry() {
  local cmd=$1; shift
  # (jq's --args would take an argument like --tools for its own option.)
  { [ $# -gt 0 ] && printf '%s\n' "$@"; } | jq -R . | jq -cs --arg c "$cmd" '{command: $c, args: .}'
}
fake_entry() { stdio_entry python3 "$MCP_FAKE" "$@"; }
everything_entry() { stdio_entry "$MCP_EVERYTHING" stdio; }

# free_port — an unused loopback port.
free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'
}

# wait_port PORT [SECONDS] — waits until something listens on 127.0.0.1:PORT.
wait_port() {
  local end=$((SECONDS + ${2:-20}))
  while ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; do
    [ "$SECONDS" -ge "$end" ] && return 1
    sleep 0.1
  done
  return 0
}

# req N — the body of the N-th request mockllm logged (1-based).
req() { sed -n "${1}p" "$MOCK_LOG" | jq -c .body; }
raw_req() { sed -n "${1}p" "$MOCK_LOG" | jq -j .raw_body; }
nreq() { wc -l < "$MOCK_LOG" | tr -d ' '; }
# tool_names N — the names the N-th request declares, comma-separated.
tool_names() { req "$1" | jq -r '[.tools[]?.name] | join(",")'; }
# tool_result ID — the text of the tool_result for call ID (Anthropic), from
# the last request that carries it.
tool_result() {
  jq -rs --arg id "$1" '[.[].body.messages[]?.content | arrays | .[]
      | select(.type == "tool_result" and .tool_use_id == $id)] | last
      | .content | if type == "string" then . elif type == "array" then map(.text // "") | join("\n") else "" end' "$MOCK_LOG"
}
tool_is_error() {
  jq -rs --arg id "$1" '[.[].body.messages[]?.content | arrays | .[]
      | select(.type == "tool_result" and .tool_use_id == $id)] | last | .is_error // false' "$MOCK_LOG"
}
# pids_alive FILE... — prints the pids (one per line in the files) that
# still run (a zombie counts as gone).
pids_alive() {
  local f pid st
  for f in "$@"; do
    [ -f "$f" ] || continue
    while read -r pid; do
      [ -n "$pid" ] || continue
      st=$(awk '{print $3}' "/proc/$pid/stat" 2>/dev/null || echo gone)
      [ "$st" = gone ] || [ "$st" = Z ] || echo "$pid"
    done < "$f"
  done
}

# start_bg NAME COMMAND... — a background server (its output in
# $T/NAME.out), ended at exit. Sets BG_PID.
MCP_BG_PIDS=()
start_bg() {
  local name=$1; shift
  "$@" > "$T/$name.out" 2>&1 &
  BG_PID=$!
  MCP_BG_PIDS+=("$BG_PID")
}
mcp_bg_kill() {
  local p
  for p in "${MCP_BG_PIDS[@]}"; do
    kill "$p" 2>/dev/null || true
    wait "$p" 2>/dev/null || true
  done
}
if declare -F repl_cleanup >/dev/null; then
  trap 'mcp_bg_kill; repl_cleanup' EXIT
else
  trap 'mcp_bg_kill; cleanup' EXIT
fi

# raw_part N KEY — the exact bytes of the top-level KEY's value ("tools",
# "system") in the N-th request's raw body, as the client sent them.
raw_part() {
  raw_req "$1" | python3 -c '
import json, sys
raw = sys.stdin.read()
key = sys.argv[1]
dec = json.JSONDecoder()
# Walk the top-level object so a "tools" inside a message is never taken.
i = raw.index("{") + 1
while True:
    while raw[i] in " \t\r\n,": i += 1
    if raw[i] == "}": sys.exit("no top-level " + key)
    k, i = dec.raw_decode(raw, i)
    while raw[i] in " \t\r\n:": i += 1
    _, j = dec.raw_decode(raw, i)
    if k == key:
        sys.stdout.write(raw[i:j]); break
    i = j
' "$2"
}
# tools_prefix_kept N M — request M's tools array begins, byte for byte,
# with every tool of request N's (N's array without its closing bracket),
# and goes on with more.
tools_prefix_kept() {
  local a b
  a=$(raw_part "$1" tools) && b=$(raw_part "$2" tools) || return 1
  a=${a%]}
  [ "${b:0:${#a}}" == "$a" ] && [ "${b:${#a}:1}" == "," ]
}

# check_not DESCRIPTION COMMAND... — passes when the command fails.
check_not() {
  local what=$1; shift
  if "$@"; then not_ok "$what"; else ok "$what"; fi
}
