#!/usr/bin/env bash
# Slash commands: /status shows the session and model, /help lists the
# commands, an unknown one gets a hint, /model switches and the
# conversation continues, /fork moves to a copy, /clear starts afresh,
# /resume opens the picker (Esc closes it) and reopens by id, /exit leaves. None of them calls the model.
source "$(dirname "$0")/repl_lib.sh"

mkdir -p "$T/proj"
cat > "$T/scenario.json" <<'JSON'
{"turns": [{"reply": {"text": "Noted."}},
           {"reply": {"text": "Still here."}}]}
JSON
start_mock "$T/scenario.json"
use_provider anthropic
repl_start "$T/proj" --model first-model
id=$(header_session_id)
wait_prompt

type_line "/status"
wait_screen "/status" "Provider  anthropic"
s=$(screen)
assert_contains "/status shows the session id" "$s" "Session   $id"
assert_contains "/status shows the model" "$s" "Model     first-model"
assert_contains "/status shows the file" "$s" "File      $(session_file "$id")"
assert_contains "/status shows the directory" "$s" "Cwd       $T/proj"

type_line "/help"
wait_screen "/help" "/rewind [N]"
s=$(screen)
for c in /clear /resume /model /cost /status /fork /exit; do
  assert_contains "/help lists $c" "$s" "$c"
done

type_line "/frobnicate now"
wait_screen "the hint" "Unknown command /frobnicate · type /help"

type_line "/cost"
wait_screen "/cost" "Tokens   0 total"
check "no model call so far" test ! -s "$MOCK_LOG"

# A message, then another model: the same session goes on.
type_line "remember this"
wait_screen "the first answer" "Noted."
wait_prompt
type_line "/model second-model"
wait_screen "/model" "Model: second-model (anthropic)"
type_line "still there?"
wait_screen "the second answer" "Still here."
wait_prompt
assert_eq "the second request used the new model" "$(jq -r '.body.model' "$MOCK_LOG" | tail -n 1)" "second-model"
assert_eq "and carried the conversation" "$(jq -r '.body.messages | length' "$MOCK_LOG" | tail -n 1)" "3"
type_line "/status"
wait_screen "/status after /model" "Model     second-model"
assert_contains "same session after /model" "$(screen | grep 'Session   ' | tail -n 1)" "$id"
type_line "/cost"
# The first /cost's "Tokens   0 total" may still be on the screen, and
# its "Cost" line matches already: wait for the newest Tokens line to
# count (a /cost that still shows 0 fails the check below after the wait).
last_tokens_counted() { ! screen | grep '^Tokens' | tail -n 1 | grep -q 'Tokens   0 total'; }
wait_until "/cost after two runs" 10 last_tokens_counted || true
tokens=$(screen | grep '^Tokens' | tail -n 1)
check "/cost counts both runs ($tokens)" test -n "${tokens##*Tokens   0 total*}"

type_line "/fork"
wait_screen "/fork" "Forked into session "
fork_id=$(screen | grep -o 'Forked into session [0-9a-f-]*' | awk '{print $4}')
check "the fork is a new session file" test -n "$(session_file "$fork_id")"
check "the fork differs from the original" test "$fork_id" != "$id"

type_line "/resume"
wait_screen "/resume opens the picker" "Esc cancels"
s=$(screen)
assert_contains "/resume lists the original with its first prompt" "$s" "$id"
assert_contains "/resume shows first prompts" "$s" "remember this"
keys Escape
wait_screen "Esc closes the picker" "Cancelled"
type_line "/resume $id"
wait_screen "/resume ID" "Resumed session $id"

type_line "/clear"
wait_screen "/clear" "New session "
new_id=$(screen | grep -o 'New session [0-9a-f-]*' | tail -n 1 | awk '{print $3}')
check "/clear made a new session" test "$new_id" != "$id"

type_line "/exit"
assert_eq "/exit leaves with status 0" "$(wait_exit)" "0"
assert_eq "only the two prompts reached the model" "$(wc -l < "$MOCK_LOG")" "2"
finish
