#!/usr/bin/env bash
# The REPL streams a reply: lines appear while the model is still sending,
# under a spinner with the elapsed time and a token count; markdown is
# rendered (no ** or backticks on screen); the prompt comes back at the end.
source "$(dirname "$0")/repl_lib.sh"

mkdir -p "$T/proj"
cat > "$T/scenario.json" <<'JSON'
{"turns": [
  {"reply": {"text": "First line of the **answer**.\nSecond line, with `code`.\nThird line.\nFourth line.\nFifth line.\nSixth and last line.", "usage": {"input_tokens": 20, "output_tokens": 1500}},
   "chunk_size": 4, "drip_ms": 60}
]}
JSON
start_mock "$T/scenario.json"
use_provider anthropic
repl_start "$T/proj"
wait_prompt
type_line "tell me six lines"

# Part of the reply, not all of it, and the spinner below it.
partial() {
  mid=$(screen)
  [[ "$mid" == *"First line of the answer."* && "$mid" != *"Sixth and last line."* && "$mid" == *"Thinking…"* ]]
}
wait_until "the first line, and the spinner, while the rest streams" 10 partial
check "the spinner counts seconds and tokens" grep -qE '(⠋|⠙|⠹|⠸|⠼|⠴|⠦|⠧|⠇|⠏) Thinking… [0-9]+s · [0-9.]+k? tokens' <<<"$mid"
check "the last line has not arrived yet" lacks "$mid" "Sixth and last line."

wait_screen "the whole reply" "Sixth and last line." 15
wait_prompt
final=$(screen)
assert_contains "markdown is rendered" "$final" "First line of the answer."
assert_contains "inline code is rendered" "$final" "Second line, with code."
check "no ** on screen" lacks "$final" "**"
check "no backticks on screen" lacks "$final" '`'
check "the spinner is gone" lacks "$final" "Thinking…"
assert_eq "each line once" "$(grep -c 'Third line.' <<<"$final")" "1"

id=$(header_session_id)
file=$(session_file "$id")
assert_contains "the reply is in the session" \
  "$(jq -r 'select(.type=="message" and .role=="assistant") | .content[0].text' "$file")" "Sixth and last line."
s=$(tm capture-pane -p -e -t repl)
check "with a terminal, the reply is styled" grep -qF $'\e[1m' <<<"$s"
keys C-d
assert_eq "exit status 0" "$(wait_exit)" "0"

# NO_COLOR: the same layout and not one escape code.
NO_COLOR=1 repl_start "$T/proj"
wait_prompt
type_line "tell me six lines"
wait_screen "the whole reply without color" "Sixth and last line." 15
wait_prompt
s=$(tm capture-pane -p -e -t repl)
assert_contains "NO_COLOR still renders markdown" "$s" "First line of the answer."
check "NO_COLOR output has no escape codes" lacks "$s" $'\e['

keys C-d
assert_eq "exit status 0 (NO_COLOR)" "$(wait_exit)" "0"
finish
