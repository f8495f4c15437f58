#!/usr/bin/env bash
# mcp_serve_malformed.sh — `loom mcp serve` over stdio fed broken and
# out-of-order messages: each gets its JSON-RPC error (-32700 bad JSON,
# -32600 not a request / a batch / a bad id / before initialize / a second
# initialize, -32601 an unknown method, -32602 wrong params), notifications
# and responses get nothing, and the server keeps answering and exits 0 at
# the end of its input.
source "$(dirname "$0")/_lib.sh"
W="$T/work"
cd "$W"
big=$(head -c 200000 /dev/zero | tr '\0' 'a')
{
  echo '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"Read","arguments":{"file_path":"a"}}}'
  echo '{"jsonrpc":"2.0","id":2,"method":"tools/list"}'
  echo '{"jsonrpc":"2.0","id":3,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}'
  echo '{"jsonrpc":"2.0","method":"notifications/initialized"}'
  echo '{"jsonrpc":"2.0","id":4,"method":"initialize","params":{"protocolVersion":"2025-06-18"}}'
  echo 'this is not json'
  echo '{"jsonrpc":"2.0","id":5,"method":'
  echo '[{"jsonrpc":"2.0","id":6,"method":"ping"}]'
  echo '"a string"'
  echo '{"id":7,"method":"ping"}'
  echo '{"jsonrpc":"1.0","id":8,"method":"ping"}'
  echo '{"jsonrpc":"2.0","id":{"x":1},"method":"ping"}'
  echo '{"jsonrpc":"2.0","id":9,"method":42}'
  echo '{"jsonrpc":"2.0","id":10,"method":"no/such/method"}'
  echo '{"jsonrpc":"2.0","id":11,"method":"tools/call","params":"Read"}'
  echo '{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"arguments":{}}}'
  echo '{"jsonrpc":"2.0","id":13,"method":"tools/call","params":{"name":"Read","arguments":[1]}}'
  echo '{"jsonrpc":"2.0","id":14,"method":"tools/list","params":{"cursor":"bogus"}}'
  echo '{"jsonrpc":"2.0","id":15,"method":"logging/setLevel","params":{"level":"loud"}}'
  echo '{"jsonrpc":"2.0","id":16,"method":"logging/setLevel","params":{"level":"debug"}}'
  echo '{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":999}}'
  echo '{"jsonrpc":"2.0","id":77,"result":{}}'
  echo '{"jsonrpc":"2.0","method":"notifications/unknown"}'
  echo "{\"jsonrpc\":\"2.0\",\"id\":17,\"method\":\"ping\",\"params\":{\"pad\":\"$big\"}}"
  printf '\x00\xff\xfe garbage bytes\n'
  echo '{"jsonrpc":"2.0","id":18,"method":"tools/call","params":{"name":"agent","arguments":{}}}'
  echo '{"jsonrpc":"2.0","id":19,"method":"ping"}'
} > "$T/in.jsonl"
rc=0
timeout 60 "$LOOM_BIN" mcp serve < "$T/in.jsonl" > "$T/out.jsonl" 2> "$T/err" || rc=$?
assert_eq "the server exits 0 at the end of its input" "$rc" 0
check "every output line is JSON" valid_jsonl "$T/out.jsonl"
# code_of ID — the error code of the answer to ID ("result" when it succeeded).
code_of() { jq -r --argjson id "$1" 'select(.id == $id) | if .error then .error.code else "result" end' "$T/out.jsonl"; }
null_codes() { jq -r 'select(.id == null) | .error.code' "$T/out.jsonl" | tr '\n' ' '; }
assert_eq "tools/call before initialize: -32600" "$(code_of 1)" -32600
assert_eq "tools/list before initialize: -32600" "$(code_of 2)" -32600
assert_eq "initialize: a result" "$(code_of 3)" result
assert_eq "a second initialize: -32600" "$(code_of 4)" -32600
assert_eq "the id-less errors: two -32700, then -32600 for a batch, a string and an object id, and -32700 for bad bytes" \
  "$(null_codes)" "-32700 -32700 -32600 -32600 -32600 -32700 "
assert_eq "no jsonrpc member: -32600" "$(code_of 7)" -32600
assert_eq "jsonrpc 1.0: -32600" "$(code_of 8)" -32600
assert_eq "a method that is not a string: -32600" "$(code_of 9)" -32600
assert_eq "an unknown method: -32601" "$(code_of 10)" -32601
assert_eq "params not an object: -32602" "$(code_of 11)" -32602
assert_eq "tools/call without a name: -32602" "$(code_of 12)" -32602
assert_eq "arguments not an object: -32602" "$(code_of 13)" -32602
assert_eq "a bogus cursor: -32602" "$(code_of 14)" -32602
assert_eq "an unknown log level: -32602" "$(code_of 15)" -32602
assert_eq "logging/setLevel debug: a result" "$(code_of 16)" result
assert_eq "a 200 kB ping still answers" "$(code_of 17)" result
assert_eq "agent without a prompt: an isError tool result" \
  "$(jq -r 'select(.id == 18) | .result.isError' "$T/out.jsonl")" true
assert_eq "the last ping answers" "$(code_of 19)" result
assert_eq "notifications and responses get no answer" \
  "$(jq -r 'select(.id == 77 or .id == 999) | .id' "$T/out.jsonl")" ""
assert_eq "nothing on stderr but our own lines" "$(grep -v '^loom-mcp-server: ' "$T/err" || true)" ""
finish
