#!/usr/bin/env bash
# Typing ahead never answers a permission prompt. While the model streams
# slowly, the person types the next message; then a permission prompt
# appears. What was typed before the prompt — "always add tests" + Enter,
# "yes" without Enter, a stream of "a" keys that goes on after the prompt
# appears — is kept for the next message and never read as the answer: the
# command does not run and .loom/settings.local.json does not change until
# a key is pressed after the prompt, once the typing has stopped. Enter
# alone and an arrow key answer nothing. Afterwards the typed-ahead line is
# the next message the model gets, and the unfinished text waits at the
# prompt, unsent.
source "$(dirname "$0")/repl_lib.sh"

mkdir -p "$T/proj/.loom"
local_settings="$T/proj/.loom/settings.local.json"
echo '{"permissions": {"allow": ["Bash(git status:*)"]}}' > "$local_settings"
# The user trusts this folder, so the rules "always" saves in it count
# (docs/permissions.md §10); the trust question itself is repl_trust.sh's.
echo "{\"trustedWorkspaces\": [\"$T/proj\"]}" > "$LOOM_HOME/settings.json"
settings_sum() { md5sum < "$local_settings"; }
SUM0=$(settings_sum)

cat > "$T/scenario.json" <<'JSON'
{"turns": [
  {"reply": {"text": "Working on it.\nThe first step streams slowly, one character at a time, to leave time to type.", "tool_calls": [{"id": "b1", "name": "Bash", "input": {"command": "touch one.txt"}}]}, "chunk_size": 1, "drip_ms": 50},
  {"reply": {"text": "Second step.\nIt is coming along slowly here, one character at a time, like the first.", "tool_calls": [{"id": "b2", "name": "Bash", "input": {"command": "touch two.txt"}}]}, "chunk_size": 1, "drip_ms": 50},
  {"reply": {"text": "Third step.\nIt is streaming slowly as well, one character at a time, as the others did.", "tool_calls": [{"id": "b3", "name": "Bash", "input": {"command": "touch three.txt"}}]}, "chunk_size": 1, "drip_ms": 50},
  {"reply": {"text": "All three answered."}},
  {"match": {"last_user_contains": "always add tests"}, "reply": {"text": "Noted: tests will be added."}}
]}
JSON
start_mock "$T/scenario.json"
use_provider anthropic
repl_start "$T/proj"
wait_prompt

asked() { [ "$(screen | grep -cF -e 'allow? [y/a/n] ›' -e 'allow? [y/n] ›')" -ge "$1" ]; }
waiting_last() { [ "$(screen | grep -v '^[[:space:]]*$' | tail -n 1 | sed 's/[[:space:]]*$//')" == "allow? [y/a/n] ›" ]; }
not_run() { [ ! -e "$T/proj/$1" ] && [ "$(settings_sum)" == "$SUM0" ]; }

type_line "start the work"
# 1. A whole line with Enter, typed while the reply streams.
wait_screen "the reply streaming" "Working on" 15
if screen | grep -qF 'allow?'; then not_ok "the prompt is up too early"; else ok "the prompt is not up yet while the reply streams"; fi
tm send-keys -t repl -l "always add tests"
keys Enter
wait_until "the first approval" 20 asked 1
assert_contains "the typed-ahead line is kept, and said so" "$(screen)" "kept for your next message: always add tests"
sleep 1.5
check "1: the command did not run on typed-ahead text" not_run one.txt
check "1: the prompt still waits for its key" waiting_last
# Enter alone, and an arrow key, answer nothing.
answer Enter
sleep 1
answer Up
sleep 1
check "1: Enter and an arrow key did not answer" not_run one.txt
check "1: the prompt still waits after Enter and an arrow" waiting_last
answer -l n
keys Enter   # no reason
# 2. A word without Enter ("yes"), typed while the next reply streams.
wait_screen "the second reply streaming" "Second step" 20
check "1: n denied the first command" test ! -e "$T/proj/one.txt"
tm send-keys -t repl -l "yes"
wait_until "the second approval" 20 asked 2
assert_contains "2: the first approval answered no" "$(screen)" "allow? [y/a/n] › no"
sleep 1.5
check "2: \"yes\" typed ahead did not answer: not run" not_run two.txt
check "2: the prompt still waits" waiting_last
answer -l y
wait_screen "the third reply streaming" "Third step" 20
check "2: a key after the quiet moment answers: the command ran" test -e "$T/proj/two.txt"
check "2: allowing once saved nothing" test "$(settings_sum)" == "$SUM0"

# 3. Keys typed on and on, from before the prompt until well after it (a
# typist of its own, so polling the screen never makes a gap in the keys).
( for _ in $(seq 1 400); do [ -d "$T" ] && [ ! -e "$T/stop-typing" ] || break; tm send-keys -t repl -l "a" 2>/dev/null; sleep 0.1; done ) &
TYPIST=$!
seen=0
wait_until "the third approval while typing goes on" 30 asked 3 && seen=1
sleep 2.5
touch "$T/stop-typing"
wait "$TYPIST" 2>/dev/null || true
check "3: the third approval came up while typing went on" test "$seen" -eq 1
check "3: a stream of \"a\" keys did not answer: not run" test ! -e "$T/proj/three.txt"
check "3: a stream of \"a\" keys saved no rule" test "$(settings_sum)" == "$SUM0"
sleep 1
check "3: the prompt still waits" waiting_last
s=$(screen)
assert_contains "3: the prompt shows the exact rule a would save" "$s" "a saves Bash(touch three.txt) in .loom/settings.local.json"
answer -l a
wait_screen "the run's end" "All three answered." 20
check "3: a after the quiet moment ran the command" test -e "$T/proj/three.txt"
assert_eq "3: a saved exactly the rule shown" "$(jq -c .permissions.allow "$local_settings")" \
  '["Bash(git status:*)","Bash(touch three.txt)"]'

# The typed-ahead line is the next message; the rest waits at the prompt.
wait_screen "the reply to the typed-ahead message" "Noted: tests will be added." 20
assert_eq "the next request carries the typed-ahead line as the user's message" \
  "$(jq -r 'select(.body.messages != null) | .body.messages[-1].content | if type=="string" then . else map(select(.type=="text") | .text | select(startswith("<working-memory>") | not)) | join("") end' "$MOCK_LOG" | tail -n 1)" \
  "always add tests"
sleep 0.5
last=$(screen | grep -v '^[[:space:]]*$' | tail -n 1)
assert_contains "the unfinished typed-ahead text waits at the prompt" "$last" "› yes"
check "… and it was not sent" bash -c "[ \$(wc -l < '$MOCK_LOG') -eq 5 ]"
keys C-c
wait_prompt
keys C-d
assert_eq "exit status 0" "$(wait_exit)" "0"
finish
