#!/usr/bin/env bash
# /rewind in the REPL: a prompt whose run Reads then Edits a file changes it
# on disk; /rewind puts the file back as it was and shows the report, and
# the conversation continues from before that prompt.
source "$(dirname "$0")/repl_lib.sh"

mkdir -p "$T/proj"
printf 'colour = alpha\nsize = 3\n' > "$T/proj/notes.txt"
cat > "$T/scenario.json" <<'JSON'
{"turns": [
  {"reply": {"text": "Hello."}},
  {"reply": {"text": "Reading it first.", "tool_calls": [{"id": "r1", "name": "Read", "input": {"file_path": "notes.txt"}}]}},
  {"reply": {"text": "Now the edit.", "tool_calls": [{"id": "e1", "name": "Edit", "input": {"file_path": "notes.txt", "old_string": "alpha", "new_string": "beta"}}]}},
  {"reply": {"text": "Changed **alpha** to beta."}},
  {"match": {"last_user_contains": "after the rewind"}, "reply": {"text": "Starting over."}}
]}
JSON
start_mock "$T/scenario.json"
use_provider anthropic
repl_start "$T/proj" --permission-mode acceptEdits
wait_prompt
# A first exchange, so the rewound prompt is not the session's first.
type_line "hi"
wait_screen "the greeting" "Hello."
wait_prompt
type_line "change alpha to beta in notes.txt"
wait_screen "the final answer" "Changed alpha to beta." 15
wait_prompt
s=$(screen)
assert_contains "the Read call is shown" "$s" "● Read(notes.txt)"
assert_contains "its result is folded" "$s" "⎿  Read 2 lines"
assert_contains "the Edit call is shown" "$s" "● Edit(notes.txt)"
assert_eq "the file changed on disk" "$(cat "$T/proj/notes.txt")" "colour = beta
size = 3"

type_line "/rewind"
wait_screen "the rewind report" "Rewound 1 turn."
wait_prompt
s=$(screen)
assert_contains "the report names the file" "$s" "notes.txt"
assert_contains "the report says files were rewound" "$s" "Files rewound to their state before message"
assert_eq "the file is back to the original" "$(cat "$T/proj/notes.txt")" "colour = alpha
size = 3"

# The next prompt continues from before the rewound turn.
type_line "after the rewind, hello"
wait_screen "the answer after the rewind" "Starting over."
assert_eq "the request holds the first exchange, not the rewound turn" \
  "$(jq -r '.body.messages | length' "$MOCK_LOG" | tail -n 1)" "3"
wait_prompt
# Back past the first prompt: an empty conversation.
type_line "/rewind 2"
wait_screen "rewinding to the start" "Rewound 2 turns."
wait_prompt
keys C-d
assert_eq "exit status 0" "$(wait_exit)" "0"
finish
