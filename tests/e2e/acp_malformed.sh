#!/usr/bin/env bash
# loom acp given malformed input, raw lines through the pipe: bad JSON, a
# non-object, a wrong "jsonrpc", unknown methods, wrong parameter types,
# calls out of order (a prompt before any session, a prompt on a session
# never made), answers to requests never sent, binary noise, a line 4 MiB
# long and JSON nested 100000 deep. Each request gets the JSON-RPC error
# (-32700, -32600, -32601, -32602, -32002, -32000), notifications get
# nothing, the process never crashes, and afterwards it still answers.
source "$(dirname "$0")/_lib.sh"

ACP_BIN="$(dirname "$LOOM_BIN")/loom-acp"
cat > "$T/scenario.json" <<'JSON'
{"turns": [{"reply": {"text": "Fine."}}]}
JSON
start_mock "$T/scenario.json"
use_provider anthropic
mkdir -p "$T/work/proj"
P="$T/work/proj"

{
  echo '{"jsonrpc":"2.0","id":1,"method":"session/prompt","params":{"sessionId":"nope","prompt":[{"type":"text","text":"hi"}]}}'
  echo '{"jsonrpc":"2.0","id":2,"method":"initialize","params":{"protocolVersion":1}}'
  echo 'this is not json'
  echo '{"jsonrpc":"2.0","id":3,"method":"initialize","params":{"protocolVersion":1}'
  echo '[1,2,3]'
  echo '"a string"'
  echo '{"jsonrpc":"1.0","id":4,"method":"initialize","params":{"protocolVersion":1}}'
  echo '{"jsonrpc":"2.0","id":5,"method":"no/such/method","params":{}}'
  echo '{"jsonrpc":"2.0","id":6,"method":42}'
  echo '{"jsonrpc":"2.0","id":{"an":"object"},"method":"initialize"}'
  echo '{"jsonrpc":"2.0","id":7,"method":"initialize","params":{"protocolVersion":[1]}}'
  echo '{"jsonrpc":"2.0","id":8,"method":"session/new","params":{"cwd":5,"mcpServers":[]}}'
  echo '{"jsonrpc":"2.0","id":9,"method":"session/new","params":{"cwd":"relative/dir","mcpServers":[]}}'
  echo '{"jsonrpc":"2.0","id":10,"method":"session/new","params":{"cwd":"/no/such/dir/anywhere","mcpServers":[]}}'
  echo '{"jsonrpc":"2.0","id":11,"method":"session/new","params":{"cwd":"'"$P"'","mcpServers":"not a list"}}'
  echo '{"jsonrpc":"2.0","id":12,"method":"session/new","params":{"cwd":"'"$P"'","mcpServers":[{"name":"x"}]}}'
  echo '{"jsonrpc":"2.0","id":13,"method":"session/new","params":[1,2]}'
  echo '{"jsonrpc":"2.0","id":14,"method":"session/prompt","params":{"sessionId":5,"prompt":[]}}'
  echo '{"jsonrpc":"2.0","id":15,"method":"session/load","params":{"sessionId":"00000000-0000-0000-0000-000000000000","cwd":"'"$P"'","mcpServers":[]}}'
  echo '{"jsonrpc":"2.0","id":16,"method":"session/set_mode","params":{"sessionId":"nope","modeId":"plan"}}'
  echo '{"jsonrpc":"2.0","id":17,"method":"session/list","params":{"cwd":17}}'
  echo '{"jsonrpc":"2.0","id":99,"result":{"outcome":{"outcome":"selected","optionId":"allow_once"}}}'
  echo '{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"nope"}}'
  echo '{"jsonrpc":"2.0","method":"session/cancel","params":"x"}'
  echo '{"jsonrpc":"2.0","method":"made/up/notification"}'
  printf '\x00\xff\xfe{\x01garbage\n'
  echo ''
  echo '   '
  printf '{"jsonrpc":"2.0","id":18,"method":"initialize","params":{"protocolVersion":1,"clientInfo":{"name":"%s","version":"1"}}}\n' "$(head -c 4194304 /dev/zero | tr '\0' 'a')"
  python3 -c 'print("[" * 100000 + "]" * 100000)'
  echo '{"jsonrpc":"2.0","id":19,"method":"session/new","params":{"cwd":"'"$P"'","mcpServers":[]}}'
} > "$T/in.jsonl"

"$ACP_BIN" < "$T/in.jsonl" > "$T/out.jsonl" 2> "$T/err.txt"
rc=$?
assert_eq "loom acp exits 0 at the end of its input" "$rc" "0"
check "every line it wrote is JSON" valid_jsonl "$T/out.jsonl"
code() { jq -r --argjson id "$1" 'select(.id == $id) | .error.code' "$T/out.jsonl" | head -n 1; }
assert_eq "a prompt before any session: resource not found" "$(code 1)" "-32002"
assert_eq "initialize still answers after it" "$(jq -r 'select(.id == 2) | .result.protocolVersion' "$T/out.jsonl")" "1"
assert_eq "bad JSON, a cut-off line, noise, nesting past the parser's limit: parse errors, id null" \
  "$(jq -r 'select(.id == null and .error.code == -32700) | .error.code' "$T/out.jsonl" | wc -l | tr -d ' ')" "5"
assert_eq "an array, a string, a wrong jsonrpc, a numeric method, an object id: invalid request" \
  "$(jq -r 'select(.error.code == -32600) | .error.code' "$T/out.jsonl" | wc -l | tr -d ' ')" "5"
assert_eq "a wrong jsonrpc: invalid request, with the request's id" "$(code 4)" "-32600"
assert_eq "a numeric method: invalid request, with the request's id" "$(code 6)" "-32600"
assert_eq "an unknown method: method not found" "$(code 5)" "-32601"
assert_eq "protocolVersion of the wrong type: invalid params" "$(code 7)" "-32602"
assert_eq "cwd a number: invalid params" "$(code 8)" "-32602"
assert_eq "cwd relative: invalid params" "$(code 9)" "-32602"
assert_eq "cwd missing: invalid params" "$(code 10)" "-32602"
assert_eq "mcpServers not a list: invalid params" "$(code 11)" "-32602"
assert_eq "an MCP server with neither command nor url: invalid params" "$(code 12)" "-32602"
assert_eq "params an array: invalid params" "$(code 13)" "-32602"
assert_eq "sessionId a number: invalid params" "$(code 14)" "-32602"
assert_eq "session/load of a session that does not exist: resource not found" "$(code 15)" "-32002"
assert_eq "set_mode on an unknown session: resource not found" "$(code 16)" "-32002"
assert_eq "session/list with cwd a number: invalid params" "$(code 17)" "-32602"
assert_eq "no answer to a stray response or to notifications" \
  "$(jq -r 'select(.id == 99)' "$T/out.jsonl")" ""
assert_eq "a 4 MiB line is read whole" "$(jq -r 'select(.id == 18) | .result.protocolVersion' "$T/out.jsonl")" "1"
sid=$(jq -r 'select(.id == 19) | .result.sessionId' "$T/out.jsonl")
check "after all of it, session/new still works" test -n "$sid" -a "$sid" != null
assert_eq "one response per request, no more" \
  "$(jq -r 'select(.id != null and .method == null) | .id' "$T/out.jsonl" | sort -n | tr '\n' ' ')" \
  "1 2 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 "
check "nothing but JSON-RPC on stdout (logs go to stderr)" \
  test "$(jq -r 'select(.jsonrpc != "2.0")' "$T/out.jsonl")" = ""
finish
