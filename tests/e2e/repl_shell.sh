#!/usr/bin/env bash
# `!cmd` runs a shell command in the session's directory and shows its
# output; no model request is made for it, and a failing command shows its
# status (its output going with the next message is repl_sessions.sh).
source "$(dirname "$0")/repl_lib.sh"

mkdir -p "$T/proj"
cat > "$T/scenario.json" <<'JSON'
{"turns": [{"reply": {"text": "unused"}}]}
JSON
start_mock "$T/scenario.json"
use_provider anthropic
repl_start "$T/proj"
wait_prompt
type_line '!echo hi'
hi_alone() { screen | grep -qx "hi"; }
wait_until "hi on its own line" 10 hi_alone
wait_prompt
type_line '!pwd; echo made > made.txt'
wait_screen "pwd" "$T/proj"
wait_prompt
check "it ran in the session's directory" test -f "$T/proj/made.txt"
type_line '!exit 3'
wait_screen "the exit status" "exit 3"
wait_prompt
check "no model request was made" test ! -s "$MOCK_LOG"
keys C-d
assert_eq "exit status 0" "$(wait_exit)" "0"
finish
