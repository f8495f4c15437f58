#!/usr/bin/env bash
# The REPL's keys (docs/repl.md): Esc interrupts a running Bash `sleep 30`
# (the run ends interrupted at once, the prompt comes back); Ctrl-C on an
# empty prompt once gives a hint and stays, twice within a second quits;
# Shift-Tab cycles default → acceptEdits → plan → default and the footer
# shows each mode at once; a line longer than the terminal takes the
# footer away instead of wrapping over it; Ctrl-R finds an earlier line; Tab completes
# `/st` to `/status` and `/permissions a` lists acceptEdits and auto,
# `/permissions ac` completes `acceptEdits`.
source "$(dirname "$0")/repl_lib.sh"

mkdir -p "$T/proj"
cat > "$T/scenario.json" <<'JSON'
{"turns": [
  {"reply": {"text": "Waiting.", "tool_calls": [{"id": "s1", "name": "Bash", "input": {"command": "sleep 30"}}]}},
  {"reply": {"text": "Remembered the color blue."}},
  {"reply": {"text": "Read the long one."}}
]}
JSON
start_mock "$T/scenario.json"
use_provider anthropic
repl_start "$T/proj" --model keys-model --allowedTools 'Bash(sleep:*)'
wait_prompt

# The footer: the mode, the model, the context use.
wait_until "the footer" 10 bash -c "$(declare -f tm screen_all footer); TMUX_SOCKET=$TMUX_SOCKET; footer | grep -qF 'default'"
f=$(footer)
assert_contains "the footer shows the mode" "$f" "◦ default"
assert_contains "the footer shows the model" "$f" "keys-model"

# Esc interrupts the running tool.
type_line "wait please"
wait_screen "the sleep running" "Bash(sleep 30)" 15
start=$SECONDS
keys Escape
wait_screen "the interruption" "Interrupted by user" 10
wait_prompt "the prompt after Esc" 10
check "the run ended well before the sleep would have" test $((SECONDS - start)) -lt 10
check "no sleep 30 is left running" bash -c "! pgrep -f '^sleep 30$' >/dev/null"

# Shift-Tab cycles the mode; the footer follows at once.
keys BTab
wait_until "acceptEdits in the footer" 5 bash -c "$(declare -f tm screen_all footer); TMUX_SOCKET=$TMUX_SOCKET; footer | grep -qF '⏵⏵ acceptEdits'"
keys BTab
wait_until "plan in the footer" 5 bash -c "$(declare -f tm screen_all footer); TMUX_SOCKET=$TMUX_SOCKET; footer | grep -qF '⏸ plan'"
type_line "/status"
wait_screen "/status in plan" "Mode      plan"
wait_prompt
keys BTab
wait_until "default again in the footer" 5 bash -c "$(declare -f tm screen_all footer); TMUX_SOCKET=$TMUX_SOCKET; footer | grep -qF '◦ default'"

# Tab completes a command and a command's argument.
tm send-keys -t repl -l "/st"
keys Tab
wait_screen "/st completed" "› /status "
keys C-u
tm send-keys -t repl -l "/permissions a"
keys Tab
wait_screen "the modes starting with a listed" "acceptEdits  auto"
tm send-keys -t repl -l "c"
keys Tab
wait_screen "the mode completed" "› /permissions acceptEdits "
keys C-u
tm send-keys -t repl -l "/model so"
keys Tab
wait_screen "a model alias of the table completed" "› /model sonnet "
keys C-u

# Ctrl-R: the earlier line "wait please" comes back from the history and
# is sent again with Enter.
keys C-r
tm send-keys -t repl -l "wait p"
keys Enter
wait_screen "the answer to the line found" "Remembered the color blue." 15
wait_prompt
user_text() { jq -r 'select(.body.messages != null) | .body.messages[-1].content | if type=="string" then . else map(select(.type=="text") | .text | select(startswith("<working-memory>") | not)) | last end' "$MOCK_LOG" | tail -n 1; }
assert_eq "Ctrl-R found the earlier line and Enter sent it" "$(user_text)" "wait please"

# A line longer than the terminal: the footer gives way rather than leave
# its tail in the wrapped line; UTF-8 typed reaches the model intact.
long="é✓ $(printf 'word%.0s ' $(seq 1 30))end"
tm send-keys -t repl -l "$long"
keys Enter
wait_screen "the answer to the long line" "Read the long one." 15
wait_prompt
assert_eq "the long line reached the model as typed" "$(user_text)" "$long"
check "the wrapped line carries no footer remains" bash -c '! grep -F -- "$1" <<<"$2" | grep -qF "ctx "' _ "word end" "$(screen_all)"

# Ctrl-C on a line clears it and is no first press of the pair.
tm send-keys -t repl -l "half typed"
wait_screen "typed text" "› half typed"
keys C-c
wait_prompt "the line cleared"
keys C-c
wait_screen "the hint after the line was cleared" "press Ctrl-C again to quit"
check "a Ctrl-C clearing a line and one on the empty prompt do not quit" test ! -s "$T/repl.status"
sleep 1.2

# Ctrl-C on an empty prompt: once is a hint, twice quits.
keys C-c
wait_screen "the hint" "press Ctrl-C again to quit"
wait_prompt "the prompt after one Ctrl-C"
check "one Ctrl-C does not quit" test ! -s "$T/repl.status"
sleep 1.2 # a Ctrl-C more than a second later is a first press again
keys C-c
wait_prompt
check "a Ctrl-C after more than a second does not quit" test ! -s "$T/repl.status"
sleep 1.2
keys C-c
sleep 0.1
keys C-c
assert_eq "two Ctrl-C on an empty prompt quit with status 0" "$(wait_exit)" "0"
finish
