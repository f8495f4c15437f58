#!/usr/bin/env bash
# A hostile MCP server (tests/mcp/hostile_server.py) that writes noise on
# stdout before it is asked anything and answers initialize with wrong,
# string, object and null ids first: the handshake still completes. Its
# tools/list is full of traps — a tool named "Bash" (must not shadow
# Loom's Bash), a string inputSchema, no name, a 1000-character name (two
# differing only past the cut), names that normalize alike, unicode, a
# 100 KB description, a schema nested 1800 deep — and its results are
# worse: invalid UTF-8, a 20 MB line, 10 MB of text, bad base64 images,
# structuredContent violating the outputSchema, members of the wrong
# types, a result that is a string, two answers to one call, progress
# with unknown tokens, 2000 list_changed, requests for sampling (off by
# default: refused) and elicitation (headless: declined), and a call that
# times out (notifications/cancelled reaches the server). Every call ends
# with a result the model can read, none waits for its timeout, and the
# run completes.
source "$(dirname "$0")/_lib.sh"

H="$LOOM_SRC/tests/mcp/hostile_server.py"
jqe() { jq -e "$@" >/dev/null; }
HLOG="$T/hostile.log"
names=(mcp__h__ok mcp__h__Bash Bash mcp__h__bad_utf8 mcp__h__huge_line mcp__h__big
       mcp__h__bad_image mcp__h__out_schema mcp__h__wrong_types mcp__h__result_not_object
       mcp__h__answer_twice mcp__h__escape mcp__h__progress_junk mcp__h__sample
       mcp__h__elicit mcp__h__storm mcp__h__ok mcp__h__slow mcp__h__ok)
python3 - "${names[@]}" > "$T/scenario.json" <<'PY'
import json, sys
turns = []
for i, n in enumerate(sys.argv[1:]):
    inp = {"command": "echo loom-bash-ran"} if n == "Bash" else {}
    turns.append({"reply": {"tool_calls": [{"id": "c%d" % i, "name": n, "input": inp}]}})
turns.append({"reply": {"text": "survived"}})
print(json.dumps({"turns": turns}))
PY
cfg=$(jq -nc --arg h "$H" --arg log "$HLOG" \
  '{mcpServers: {h: {command: "python3", args: [$h, "--mode", "noise-first", "--mode", "wrong-ids", "--log", $log]}}}')

start_mock "$T/scenario.json"
use_provider anthropic
start=$(date +%s)
# 20 s per call: the invalid-UTF-8 and oversized answers must come back
# long before it; the slow tool (3 s) must hit a 1 s timeout, so it gets
# its own below.
json=$(MCP_TOOL_TIMEOUT=20000 "$LOOM_BIN" -p "go" --permission-mode bypassPermissions \
  --mcp-config "$cfg" --output-format json)
took=$(( $(date +%s) - start ))
assert_eq "the run completed" "$(jq -r .subtype <<<"$json")" "success"
assert_eq "the final answer" "$(jq -r .result <<<"$json")" "survived"
assert_eq "noise and wrong ids before the answer: connected" \
  "$(jq -r '.mcp_servers[0].state' <<<"$json")" "connected"
check "no call waited for its timeout (took ${took}s)" test "$took" -lt 18

file=$(session_file "$(jq -r .session_id <<<"$json")")
out() { jq -r --arg id "$1" 'select(.type=="function_call_result" and .callId==$id) | .output | tostring' "$file"; }
err() { jq -r --arg id "$1" 'select(.type=="function_call_result" and .callId==$id) | .isError' "$file"; }

# ---- the declarations ---------------------------------------------------------
req=$(jq -sc 'map(select(.body.tools)) | first | .body' "$MOCK_LOG")
tools=$(jq -r '.tools[].name' <<<"$req")
assert_eq "Loom's Bash is declared once" "$(grep -cx 'Bash' <<<"$tools")" "1"
assert_eq "the server's Bash is its own tool" "$(grep -cx 'mcp__h__Bash' <<<"$tools")" "1"
assert_eq "names that normalize alike: one declaration" "$(grep -cx 'mcp__h__with_space' <<<"$tools")" "1"
check "every name is at most 64 characters" \
  jqe '[.tools[].name | length] | max <= 64' <<<"$req"
check "every name is unique" jqe '[.tools[].name] | length == (unique | length)' <<<"$req"
assert_eq "the two 1000-character names stay two" "$(grep -c '^mcp__h__nnnn' <<<"$tools")" "2"
check "a string inputSchema, no name, an empty name, a number: not declared" \
  jqe '[.tools[].name] | (index("mcp__h__bad_schema") == null) and (index("mcp__h__42") == null) and (index("mcp__h__") == null)' <<<"$req"
check "a schema nested 1800 deep: not declared" \
  jqe '[.tools[].name] | index("mcp__h__schema_deep") == null' <<<"$req"
check "a 100 KB description is cut" \
  jqe '.tools[] | select(.name == "mcp__h__desc_huge") | .description | length < 2200' <<<"$req"

# ---- the results ------------------------------------------------------------------
assert_eq "ok works" "$(out c0)" "ok"
assert_eq "the server's Bash ran on the server" "$(out c1)" "hostile Bash ran"
assert_contains "Loom's Bash is Loom's" "$(out c2)" "loom-bash-ran"
assert_contains "invalid UTF-8: read, the bad bytes replaced" "$(out c3)" $'bad \xef\xbf\xbd'
assert_eq "invalid UTF-8: not an error" "$(err c3)" "false"
assert_contains "a 20 MB line: the call fails at once, saying why" "$(out c4)" "over Loom's 16777216-byte cap"
assert_eq "a 20 MB line: a tool error" "$(err c4)" "true"
assert_contains "10 MB of text: cut, kept whole in a file" "$(out c5)" "output cut at 25000 tokens"
spill=$(out c5 | grep -o '/[^ ]*mcp__h__big-[^ ]*\.txt' || true)
check "10 MB of text: the file holds it all" test "$(wc -c < "$spill")" -eq 10485760
assert_contains "bad base64 image: described, not passed on" "$(out c6)" "not shown"
assert_contains "structuredContent against outputSchema: the mismatch named" "$(out c7)" '"n" must be an integer'
assert_eq "structuredContent mismatch: a tool error" "$(err c7)" "true"
assert_contains "members of the wrong types: described" "$(out c8)" "[resource: malformed]"
assert_contains "a result that is a string: an error naming the server" "$(out c9)" "not an object"
assert_eq "two answers to one call: the first counts" "$(out c10)" "first"
assert_contains "terminal escapes reach the model as text" "$(out c11)" "after"
assert_eq "progress with unknown tokens and wrong types: the call ends" "$(out c12)" "progress done"
assert_contains "sampling is off by default: refused" "$(out c13)" "method not found: sampling/createMessage"
assert_contains "elicitation headless: declined" "$(out c14)" '"action": "decline"'
assert_eq "2000 list_changed: sent" "$(out c15)" "storm sent"
assert_eq "after the storm the server still answers" "$(out c16)" "ok"
assert_eq "slow (3 s) within 20 s: done" "$(out c17)" "slow done"
assert_eq "the last call" "$(out c18)" "ok"
check "the storm re-listed the tools a few times, not 2000" \
  test "$(grep -c 'recv tools/list' "$HLOG")" -lt 10

# ---- a timeout sends notifications/cancelled ----------------------------------------
cat > "$T/slow.json" <<'JSON'
{"turns": [
  {"reply": {"tool_calls": [{"id": "s1", "name": "mcp__h__slow", "input": {}}]}},
  {"reply": {"text": "gave up"}}
]}
JSON
: > "$HLOG"
start_mock "$T/slow.json"
json=$(MCP_TOOL_TIMEOUT=1000 "$LOOM_BIN" -p "go" --permission-mode bypassPermissions \
  --mcp-config "$cfg" --output-format json)
file=$(session_file "$(jq -r .session_id <<<"$json")")
assert_contains "a 1 s timeout: the model is told" "$(out s1)" "timed out after 1000 ms"
for _ in $(seq 1 50); do grep -q 'recv notifications/cancelled' "$HLOG" && break; sleep 0.1; done
check "the server got notifications/cancelled" grep -q 'recv notifications/cancelled' "$HLOG"
finish
