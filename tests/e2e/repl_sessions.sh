#!/usr/bin/env bash
# Sessions in the REPL (docs/repl.md, "Sessions"): sessions get a title
# from their first prompt; `loom --resume` without an id opens the picker,
# choosing #2 resumes that session and shows its recent turns; `/resume N`
# opens the N-th; an ambiguous id prefix lists the candidates with their
# titles; /export writes the conversation as markdown and will not replace
# a file without "!"; `!cmd` output reaches the next request (and makes no
# request by itself); leaving prints the resume command. Without a
# terminal, `--resume` lists the sessions and asks for an id.
source "$(dirname "$0")/repl_lib.sh"

mkdir -p "$T/proj"
cat > "$T/scenario.json" <<'JSON'
{"sequence": true,
 "turns": [{"reply": {"text": "Reply A about alpha."}},
           {"reply": {"text": "Reply B about beta."}},
           {"reply": {"text": "Reply C about gamma."}},
           {"reply": {"text": "Beta continued."}},
           {"reply": {"text": "Saw the echo."}}]}
JSON
start_mock "$T/scenario.json"
use_provider anthropic

# Three sessions, oldest first.
ids=()
for p in "alpha first task" "beta second task" "gamma third task"; do
  "$LOOM_BIN" -p "$p" --cwd "$T/proj" --output-format json > "$T/run.json" 2>/dev/null
  ids+=("$(jq -r .session_id "$T/run.json")")
done
alpha=${ids[0]} beta=${ids[1]} gamma=${ids[2]}
f=$(session_file "$beta")
assert_eq "the first prompt became the session's title record" \
  "$(jq -r 'select(.type=="title") | .title' "$f")" "beta second task"

# No terminal: the list (newest first, with titles) and a request for an id.
set +e
"$LOOM_BIN" -p "x" --resume --cwd "$T/proj" > "$T/np.out" 2> "$T/np.err"
status=$?
set -e
check "without a terminal, --resume without an id fails (status $status)" test "$status" -ne 0
err=$(cat "$T/np.err")
assert_contains "the list names the newest session first" "$(grep ' 1\. ' "$T/np.err")" "$gamma  gamma third task"
assert_contains "and the others with their titles" "$err" "3. $alpha  alpha first task"
assert_contains "the list shows message counts" "$err" "2 messages"
assert_contains "it asks for an id" "$err" "--resume needs a session id"
assert_eq "nothing was asked of the model" "$(wc -l < "$MOCK_LOG")" "3"

# The picker: #2 is beta.
repl_launch "$T/proj" --resume
wait_screen "the picker" "Resume a session of this directory"
wait_screen "the picker's first row" "1. gamma third task"
wait_screen "the picker's last line" "Esc cancels"
s=$(screen)
assert_contains "the picker shows the age" "$s" "just now"
assert_contains "and the first prompt under the title" "$s" "$beta  beta second task"
keys 2
keys Enter
wait_screen "the header" "loom 0.1.0"
assert_eq "the chosen session is open" "$(header_session_id)" "$beta"
wait_screen "the resume line" "Resumed session $beta"
wait_prompt "the prompt after the recent turns"
s=$(screen)
assert_contains "the recent turns show the prompt" "$s" "› beta second task"
assert_contains "and the answer" "$s" "Reply B about beta."
type_line "go on with beta"
wait_screen "the answer" "Beta continued."
wait_prompt
assert_contains "the resumed conversation reached the model" \
  "$(tail -n 1 "$MOCK_LOG" | jq -r '.body.messages[0].content | if type=="string" then . else .[0].text end')" \
  "beta second task"

# !cmd: shown, no request, then carried by the next message.
type_line '!echo BANG-OUT-7'
bang_alone() { screen | grep -qx "BANG-OUT-7"; }
wait_until "the command's output" 10 bang_alone
wait_prompt
assert_eq "!cmd made no request" "$(wc -l < "$MOCK_LOG")" "4"
type_line "what did it print?"
wait_screen "the answer" "Saw the echo."
wait_prompt
last=$(tail -n 1 "$MOCK_LOG" | jq -r '.body.messages[-1].content | if type=="string" then . else map(select(.type=="text") | .text) | join("") end')
assert_contains "the next request holds the command" "$last" "<bash-input>echo BANG-OUT-7</bash-input>"
assert_contains "and its output" "$last" "<bash-stdout>BANG-OUT-7</bash-stdout><bash-stderr></bash-stderr>"
assert_contains "then the message" "$last" "what did it print?"

# /resume N: beta (current, just used) is 1, gamma 2, alpha 3.
type_line "/resume 1"
wait_screen "/resume 1" "Resumed session $beta · beta second task"
wait_prompt
type_line "/resume 3"
wait_screen "/resume 3" "Resumed session $alpha"
wait_prompt
assert_contains "its recent turns" "$(screen)" "Reply A about alpha."

# An ambiguous prefix lists the candidates with their titles.
common=$alpha
for id in "$beta" "$gamma"; do
  while [ "${id#"$common"}" = "$id" ]; do common=${common%?}; done
done
type_line "/resume $common"
wait_screen "the ambiguous prefix" "is ambiguous; it matches:"
wait_prompt
s=$(screen)
assert_contains "the candidates are listed with titles (alpha)" "$s" "$alpha  alpha first task"
assert_contains "the candidates are listed with titles (gamma)" "$s" "$gamma  gamma third task"

# /export, then a refusal to overwrite, then "!".
type_line "/export"
wait_screen "/export" "Exported the conversation to $T/proj/loom-$alpha.md"
md="$T/proj/loom-$alpha.md"
check "the markdown file exists" test -f "$md"
assert_eq "it is headed by the title" "$(head -n 1 "$md")" "# alpha first task"
assert_contains "it holds the prompt under a user heading" "$(cat "$md")" "## User

alpha first task"
assert_contains "and the answer under an assistant heading" "$(cat "$md")" "## Assistant

Reply A about alpha."
echo "mine" > "$md"
type_line "/export"
wait_screen "the refusal" "loom-$alpha.md exists; /export ! replaces it"
assert_eq "the file was left alone" "$(cat "$md")" "mine"
type_line "/export !"
wait_until "the file replaced" 10 grep -q "Reply A about alpha." "$md"
type_line "/export notes/out.md"
export_failed() { screen | grep -q "^/export: .*notes/out.md"; }
wait_until "a missing folder: an error naming the file" 10 export_failed
check "nothing was written there" test ! -e "$T/proj/notes/out.md"
wait_prompt

# Leaving says how to come back (the pane stays to be read).
tm set-option -t repl remain-on-exit on >/dev/null
keys C-d
assert_eq "exit status 0" "$(wait_exit)" "0"
assert_contains "the resume command is printed on exit" "$(screen)" "Resume this session with: loom --resume $alpha"

# Esc cancels the picker. A tmux server of its own: the last one, killed
# with its dead pane, may still be going away.
tm kill-server >/dev/null 2>&1 || true
TMUX_SOCKET="loom-$$-picker"
repl_launch "$T/proj" --resume
tm set-option -t repl remain-on-exit on >/dev/null
wait_screen "the picker again" "1. "
keys Escape
assert_eq "a cancelled picker leaves with an error status" "$(wait_exit)" "2"
assert_contains "and says so" "$(screen)" "no session was chosen"
finish
