#!/usr/bin/env bash
# What the agent does, shown the way people read it (docs/repl.md): an
# Edit's approval shows the coloured diff with the file's line numbers; a
# 5-second Bash loop's lines appear while it runs and the whole output is
# folded when it ends; Ctrl-O and /expand print a folded result whole; the
# TodoWrite list shows every item, the done one struck; thinking collapses
# to its first line; a code block keeps its language; and in a 50-column
# terminal the model's text wraps at word boundaries.
source "$(dirname "$0")/repl_lib.sh"

mkdir -p "$T/proj"
printf 'one\ntwo\nthree\nold line\nfive\n' > "$T/proj/notes.txt"
LOOP='for i in 1 2 3 4 5; do echo line$i; sleep 1; done'
cat > "$T/scenario.json" <<JSON
{"turns": [
  {"reply": {"tool_calls": [{"id": "r1", "name": "Read", "input": {"file_path": "$T/proj/notes.txt"}}]}},
  {"reply": {"tool_calls": [{"id": "e1", "name": "Edit", "input": {"file_path": "$T/proj/notes.txt", "old_string": "old line", "new_string": "new line"}}]}},
  {"reply": {"tool_calls": [{"id": "b1", "name": "Bash", "input": {"command": "$LOOP"}}]}},
  {"reply": {"tool_calls": [{"id": "t1", "name": "TodoWrite", "input": {"todos": [
     {"content": "Write the parser", "status": "completed", "activeForm": "Writing the parser"},
     {"content": "Test the parser", "status": "in_progress", "activeForm": "Testing the parser"},
     {"content": "Ship it", "status": "pending", "activeForm": "Shipping it"}]}}]}},
  {"reply": {"thinking": "Weighing the options first.\nThen the details.\nThen the answer.",
             "text": "All done.\n\n\`\`\`python\ndef f():\n    return 1\n\`\`\`\n"}}
]}
JSON
start_mock "$T/scenario.json"
use_provider anthropic
repl_start "$T/proj"
wait_prompt

ASK='allow? [y/n] ›'
ASKA='allow? [y/a/n] ›'
asking() {
  local last
  last=$(screen | grep -v '^[[:space:]]*$' | tail -n 1 | sed 's/[[:space:]]*$//')
  [ "$last" == "$ASK" ] || [ "$last" == "$ASKA" ]
}

type_line "tidy the notes"
wait_until "the Edit's approval" 15 asking
s=$(screen)
assert_contains "the approval asks about the Edit" "$s" "? Allow this Edit call?"
assert_contains "the approval shows the removed line with its number" "$s" "4 - old line"
assert_contains "the approval shows the added line with its number" "$s" "4 + new line"
assert_contains "the approval shows context before the change" "$s" "3   three"
assert_contains "the approval shows context after the change" "$s" "5   five"
colored=$(tm capture-pane -e -p -S -2000 -t repl)
# tmux writes its own codes between ours: any run of them may come in between.
SGR=$'(\e\\[[0-9;]*m)*'
check "the removed line is red" grep -qE $'\e\\[31m'"$SGR- old line" <<<"$colored"
check "the added line is green" grep -qE $'\e\\[32m'"$SGR\\+ new line" <<<"$colored"
check "nothing was written before the answer" grep -q "old line" "$T/proj/notes.txt"
answer -l y

wait_screen "the Edit's result" "Updated notes.txt with 1 addition and 1 removal" 15
check "the edit was made" grep -q "new line" "$T/proj/notes.txt"
assert_contains "the result shows the diff too" "$(screen | sed -n '/Updated notes.txt/,$p')" "4 + new line"

# The loop prints a line a second: line1 shows while it still runs.
wait_screen "line1 while the loop runs" "line1" 10
s=$(screen)
check "line1 appeared before the command ended" lacks "$s" "line5"
check "the live lines stay under the call while it runs" lacks "$s" "Ctrl-O to expand"
wait_screen "the folded result" "+2 lines (Ctrl-O to expand)" 15

wait_screen "the TodoWrite list" "Ship it" 15
s=$(screen)
assert_contains "the done item is ticked" "$s" "✓ Write the parser"
assert_contains "the item in progress is listed" "$s" "Test the parser"
assert_contains "the pending item is listed" "$s" "☐ Ship it"
colored=$(tm capture-pane -e -p -S -2000 -t repl)
check "the done item is struck through" grep -qE $'\e\\[([0-9]+;)*9m'"${SGR}Write the parser" <<<"$colored"
check "the item in progress is bold" grep -qE $'\e\\[([0-9]+;)*1m'"${SGR}Test the parser" <<<"$colored"

wait_screen "the final answer" "All done." 15
wait_prompt
s=$(screen)
assert_contains "thinking is collapsed to its first line" "$s" "Weighing the options first. (thinking, 3 lines; Ctrl-O)"
check "the rest of the thinking is folded" lacks "$s" "Then the details."
assert_contains "the code block keeps its language" "$s" "┌ python"

# Ctrl-O prints the newest folded result whole: the thinking; again: the loop.
keys C-o
wait_screen "the thinking expanded" "Then the details." 5
keys C-o
wait_until "the loop's output expanded" 5 bash -c '[ "$(tmux -L '"$TMUX_SOCKET"' capture-pane -p -J -S -2000 -t repl | grep -c "line5")" -ge 1 ]'
assert_contains "the expanded result is titled with its call" "$(screen)" "▾ Bash(for i in 1 2 3 4 5"
keys C-u
type_line "/expand 2"
wait_until "/expand 2 prints the loop's output again" 5 bash -c '[ "$(tmux -L '"$TMUX_SOCKET"' capture-pane -p -J -S -2000 -t repl | grep -c "line5")" -ge 2 ]'
type_line "/expand 9"
wait_screen "a number past the kept results is explained" "There are 2 folded results" 5
keys C-d
assert_eq "the REPL exits cleanly" "$(wait_exit)" "0"

# ---- a 50-column terminal: the text wraps at word boundaries ----------------
PARA="Loom wraps every paragraph at word boundaries so that no single word is ever split across two lines, whatever the terminal width happens to be today."
cat > "$T/wrap.json" <<JSON
{"turns": [{"reply": {"text": "$PARA"}}]}
JSON
start_mock "$T/wrap.json"
REPL_SIZE=50x40 repl_start "$T/proj"
wait_prompt
type_line "say it"
wait_screen "the paragraph's end" "today." 15
wait_prompt
# Unjoined: the pane as it is drawn, line by line.
drawn=$(tm capture-pane -p -S -2000 -t repl)
block=$(awk '/^Loom wraps/{on=1} on{print} /today\.$/{exit}' <<<"$drawn")
check "the paragraph takes more than one line" test "$(wc -l <<<"$block")" -gt 2
check "every line fits in 50 columns" awk 'length($0) > 50 {exit 1}' <<<"$block"
ok_words=1
for w in $PARA; do
  grep -qF -- "$w" <<<"$block" || { ok_words=0; echo "split: $w" >&2; }
done
check "no word is split across lines" test "$ok_words" = 1
assert_eq "the words read in order when joined" "$(tr '\n' ' ' <<<"$block" | tr -s ' ' | sed 's/ $//')" "$PARA"
keys C-d
wait_exit >/dev/null
finish
