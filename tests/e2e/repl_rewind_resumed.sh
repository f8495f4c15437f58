#!/usr/bin/env bash
# /rewind after a lazy resume: a long session (compaction summaries, rewind
# branches) resumed in the REPL through its index — which reads only the
# records after the last summary — and rewound past that summary, then
# continued: the request holds turns from before it (records the resume had
# not read) and is the same bytes as when the file is read whole
# (LOOM_SESSION_INDEX=0).
source "$(dirname "$0")/repl_lib.sh"

mkdir -p "$T/proj"
cat > "$T/s.json" <<'JSON'
{"sequence": true, "turns": [{"reply": {"text": "Going on from there."}, "repeat": 10}]}
JSON
start_mock "$T/s.json"
use_provider anthropic
sid=0190a000-0000-7000-8000-000000000000
dir="$LOOM_HOME/projects/$(printf '%s' "$T/proj" | tr -c 'A-Za-z0-9' '-')"
mkdir -p "$dir"
# 400 records, a summary every 150, a rewind branch every 10 turns: fewer
# than 30 turns come after the last summary, so /rewind 30 goes past it.
python3 "$LOOM_SRC/bench/gen_session.py" "$T/pristine.jsonl" 400 150 10
last_summary=$(grep -n '"type":"summary"' "$T/pristine.jsonl" | tail -n 1 | cut -d: -f1)
first_after=$(tail -n +"$last_summary" "$T/pristine.jsonl" | grep -o '"text":"turn [0-9]*' | head -n 1 |
  grep -o '[0-9]*$')
real_bin=$LOOM_BIN

# rewound MODE [VAR=VALUE...]: resume in the REPL, /rewind 30, one prompt;
# the request body goes to $T/body.MODE.
rewound() {
  local mode=$1
  shift
  cp "$T/pristine.jsonl" "$dir/$sid.jsonl"
  rm -f "$dir/$sid.idx"
  printf '#!/bin/sh\nexec env %s LOOM_LOG=%q %q "$@"\n' "$*" "$T/log.$mode" "$real_bin" \
    > "$T/loom-$mode"
  chmod +x "$T/loom-$mode"
  LOOM_BIN="$T/loom-$mode" repl_start "$T/proj" --resume "$sid"
  wait_prompt
  type_line "/rewind 30"
  wait_screen "$mode: the rewind report" "Rewound 30 turns."
  wait_prompt
  type_line "after the rewind"
  wait_screen "$mode: the answer" "Going on from there."
  wait_prompt
  keys C-d
  assert_eq "$mode: exit status 0" "$(wait_exit)" "0"
  tail -n 1 "$MOCK_LOG" | jq -c .body > "$T/body.$mode"
}
rewound whole LOOM_SESSION_INDEX=0
rewound indexed LOOM_SESSION_INDEX=1
check "indexed: the resume went through the index" grep -q '"indexed ' "$T/log.indexed"
check "whole: read whole" bash -c "! grep -q 'indexed ' '$T/log.whole'"
check "the request after the rewind is the same bytes both ways" cmp "$T/body.whole" \
  "$T/body.indexed"
turns=$(jq -r '.messages[].content | if type == "string" then . else .[].text? // empty end' \
  "$T/body.indexed" | grep -o '^turn [0-9]*' | grep -o '[0-9]*$' | sort -n)
check "the request holds turns" test -n "$turns"
check "its turns are all from before the last summary (turn $first_after on)" \
  test "$(tail -n 1 <<<"$turns")" -lt "$first_after"
finish
