#!/usr/bin/env bash
# A hole in the middle of a session file (issue #10, class 16): `loom -p
# --continue` either sends a request holding the first prompt and every
# intact turn, with a warning naming the damaged line, or refuses with an
# error naming the file and the line, sending nothing. Never a request
# that silently lacks the start of the conversation.
source "$(dirname "$0")/_lib.sh"

cat > "$T/scenario.json" <<'JSON'
{"turns": [
 {"match": {"last_user_contains": "ALPHA"}, "reply": {"text": "reply one"}},
 {"match": {"last_user_contains": "BETA"}, "reply": {"text": "reply two"}},
 {"match": {"last_user_contains": "GAMMA"}, "reply": {"text": "reply three"}},
 {"match": {"last_user_contains": "DELTA"}, "reply": {"text": "reply delta"}},
 {"match": {"last_user_contains": "NEXT"}, "reply": {"text": "reply four"}}]}
JSON
start_mock "$T/scenario.json"
use_provider anthropic

# Three turns: line 1 session-meta, then u1 a1 u2 a2 u3 a3 on lines 2..7.
"$LOOM_BIN" -p "first prompt ALPHA" >/dev/null
"$LOOM_BIN" -p "second BETA" -c >/dev/null
"$LOOM_BIN" -p "third GAMMA" -c >/dev/null
file=$(find "$LOOM_HOME/projects" -name '*.jsonl')
# The title record (docs/session-format.md, "Titles") is no part of the
# chain; taken out, the lines below are numbered as the damage needs.
sed -i '/"type":"title"/d' "$file"
cp "$file" "$T/pristine"
assert_eq "setup: seven lines" "$(wc -l < "$file")" "7"
ids=($(jq -r .id "$file"))   # ids[0] is line 1
id_of() { echo "${ids[$(($1 - 1))]}"; }

# --- kinds of damage (each edits $file in place) ---
del_line() { sed -i "${1}d" "$file"; }
garble() { sed -i "${1}s/.*/{\"type\":\"message\",\"id\":broken garbage/" "$file"; }
no_id() { local l; l=$(sed -n "${1}p" "$file" | jq -c 'del(.id)'); awk -v n="$1" -v l="$l" 'NR==n{print l; next} {print}' "$file" > "$T/tmp" && cat "$T/tmp" > "$file"; }
cut_half() { awk -v n="$1" 'NR==n{print substr($0, 1, int(length($0)/2)); next} {print}' "$file" > "$T/tmp" && cat "$T/tmp" > "$file"; }
nul_byte() { perl -i -pe "if (\$. == $1) { substr(\$_, 60, 0) = \"\\0\" }" "$file"; }
dup_exact() { sed -i "${1}p" "$file"; }
crlf() { sed -i 's/$/\r/' "$file"; }
# Line 8: a different record claiming line $1's id.
dup_other() { sed -n "${1}p" "$file" | jq -c '.content[0].text = "forged"' >> "$file"; }
# The first prompt's parent becomes the last reply: a cycle.
cycle() { local l; l=$(sed -n 2p "$file" | jq -c --arg p "$(id_of 7)" '.parentId = $p'); awk -v l="$l" 'NR==2{print l; next} {print}' "$file" > "$T/tmp" && cat "$T/tmp" > "$file"; }
# Line 5 deleted and line 6 dated before line 4: the order cannot be confirmed.
del_and_backdate() {
  del_line 5
  local l; l=$(sed -n 5p "$file" | jq -c '.timestamp = "2000-01-01T00:00:00.000Z"')
  awk -v l="$l" 'NR==5{print l; next} {print}' "$file" > "$T/tmp" && cat "$T/tmp" > "$file"
}
# A compaction: summary (line 8, logicalParentId = line 7), then a turn; line 7 garbled.
summary_then_garble() {
  local ts="2099-01-01T00:00:0"
  jq -nc --arg lp "$(id_of 7)" --arg t "${ts}1.000Z" '{type:"summary", id:"sum-1", parentId:null, timestamp:$t,
        logicalParentId:$lp, summary:"SUMMARY of ALPHA BETA GAMMA"}' >> "$file"
  jq -nc --arg t "${ts}2.000Z" '{type:"message", id:"u-delta", parentId:"sum-1", timestamp:$t, role:"user",
        content:[{type:"text", text:"after the summary DELTA"}]}' >> "$file"
  jq -nc --arg t "${ts}3.000Z" '{type:"message", id:"a-delta", parentId:"u-delta", timestamp:$t, role:"assistant",
        content:[{type:"text", text:"reply delta"}]}' >> "$file"
  garble 7
}

# continue_after WHAT — runs `loom -p "NEXT" -c`; sets status, err, req (the
# messages of the request it made, or "" when none).
continue_after() {
  local before; before=$(wc -l < "$MOCK_LOG")
  set +e
  "$LOOM_BIN" -p "NEXT one" -c >"$T/out" 2>"$T/err"
  status=$?
  set -e
  err=$(cat "$T/err")
  if [ "$(wc -l < "$MOCK_LOG")" -gt "$before" ]; then
    req=$(tail -n 1 "$MOCK_LOG" | jq -c .body.messages)
  else
    req=""
  fi
}

has_texts() { local t; for t in "$@"; do [[ "$req" == *"$t"* ]] || return 1; done; }

# repaired WHAT LINE TEXTS... — answered with every intact text sent and a
# warning that names the line; the damaged bytes are still in the file, and
# a second continue repairs the same way.
repaired() {
  local what=$1 line=$2; shift 2
  cp "$file" "$T/damaged"
  continue_after
  check "$what: exit 0 (exit $status: $err)" test "$status" -eq 0
  check "$what: the request holds the first prompt and every intact turn ($req)" \
    has_texts "first prompt ALPHA" "$@" "NEXT one"
  assert_contains "$what: the warning names line $line" "$err" "line $line"
  check "$what: the damaged bytes are left as they were" \
    cmp -s "$T/damaged" <(head -c "$(stat -c %s "$T/damaged")" "$file")
  continue_after
  check "$what: a second continue works the same way ($err)" has_texts "first prompt ALPHA" "$@"
}

# refused WHAT LINE — non-zero exit, an error naming the file and line,
# and no request at all.
refused() {
  local what=$1 line=$2
  cp "$file" "$T/damaged"
  continue_after
  check "$what: non-zero exit" test "$status" -ne 0
  assert_contains "$what: the error names the file" "$err" "$file"
  assert_contains "$what: the error names line $line" "$err" "line $line"
  assert_contains "$what: the error says how to go on" "$err" "LOOM_ACCEPT_BROKEN_SESSION=1"
  assert_eq "$what: no request was sent" "$req" ""
  check "$what: the file is untouched" cmp -s "$T/damaged" "$file"
}

fresh() { cat "$T/pristine" > "$file"; }

# Holes the loader can close: the record before the gap is the end of its
# chain and not newer than the orphan.
fresh; del_line 5;   repaired "a2 deleted" 5 "reply one" "second BETA" "third GAMMA" "reply three"
fresh; garble 5;     repaired "a2 garbled" 5 "reply one" "second BETA" "third GAMMA" "reply three"
assert_contains "a2 garbled: the warning says what was wrong" "$err" "not JSON"
fresh; no_id 5;      repaired "a2 without an id" 5 "reply one" "second BETA" "third GAMMA" "reply three"
fresh; cut_half 4;   repaired "u2 cut in half" 4 "reply one" "reply two" "third GAMMA" "reply three"
fresh; nul_byte 3;   repaired "a1 with a NUL byte" 3 "second BETA" "reply two" "third GAMMA" "reply three"
fresh; del_line 6;   repaired "u3 deleted" 6 "reply one" "second BETA" "reply two" "reply three"
fresh; summary_then_garble
repaired_summary() {
  continue_after
  check "summary, old leaf garbled: exit 0 ($err)" test "$status" -eq 0
  check "summary, old leaf garbled: request holds the summary and the turn after it ($req)" \
    has_texts "SUMMARY of ALPHA BETA GAMMA" "after the summary DELTA" "reply delta" "NEXT one"
  assert_contains "summary, old leaf garbled: the warning names line 7" "$err" "line 7"
}
repaired_summary

# Damage that loses nothing: the file loads whole.
fresh; dup_exact 4;  continue_after
check "u2 duplicated exactly: exit 0" test "$status" -eq 0
check "u2 duplicated exactly: full history" has_texts "first prompt ALPHA" "reply one" "second BETA" "reply two" "third GAMMA" "reply three"
fresh; crlf;         continue_after
check "CRLF line endings: exit 0 ($err)" test "$status" -eq 0
check "CRLF line endings: full history" has_texts "first prompt ALPHA" "reply one" "second BETA" "reply two" "third GAMMA" "reply three"

# Holes that cannot be closed safely: refused, naming the line.
fresh; garble 2;     refused "first prompt garbled" 3
fresh; del_line 2;   refused "first prompt deleted" 2
fresh; dup_other 4;  refused "two records share u2's id" 4
assert_contains "two records share an id: the error names the other line" "$err" "line 8"
fresh; cycle;        refused "parentId cycle" 2
fresh; del_and_backdate; refused "gap with timestamps out of order" 5

# The way out the error names: accept the history after the gap.
fresh; garble 2
export LOOM_ACCEPT_BROKEN_SESSION=1
continue_after
unset LOOM_ACCEPT_BROKEN_SESSION
check "accepted: exit 0" test "$status" -eq 0
assert_contains "accepted: the warning says so" "$err" "LOOM_ACCEPT_BROKEN_SESSION"
check "accepted: the turns after the gap are sent" has_texts "reply one" "second BETA" "third GAMMA"

# A session with a tool call: u1, the reply, its function_call, the result,
# the final reply on lines 2..6.
cat > "$T/tools.json" <<'JSON'
{"sequence": true, "turns": [
 {"reply": {"text": "Looking.", "tool_calls": [{"name": "Bash", "input": {"command": "echo tool-output-XYZ"}}]}},
 {"reply": {"text": "It printed XYZ."}},
 {"reply": {"text": "reply four"}, "repeat": 10}]}
JSON
start_mock "$T/tools.json"
"$LOOM_BIN" -p "first prompt ALPHA" --permission-mode bypassPermissions >/dev/null
file=$(ls -t "$(dirname "$file")"/*.jsonl | head -n 1)
# as above; so is the permission-mode record a bypassPermissions session notes
sed -i '/"type":"title"/d; /"type":"permission-mode"/d' "$file"
cp "$file" "$T/pristine"
assert_eq "tool session: six lines" "$(jq -r .type "$file" | paste -sd,)" \
  "session-meta,message,message,function_call,function_call_result,message"
# The tool result garbled: the call gets the interrupted result instead.
fresh; garble 5; repaired "tool result garbled" 6 "Looking." "It printed XYZ." "interrupted"
# The call deleted: its result is kept, as text.
fresh; del_line 4; repaired "function_call deleted" 4 "Looking." "tool-output-XYZ" "It printed XYZ."
finish
