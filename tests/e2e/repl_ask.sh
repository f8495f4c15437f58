#!/usr/bin/env bash
# AskUserQuestion in the REPL: the question and its numbered options show
# under the call, the person answers with a number (or in their own words),
# and the model gets the chosen label.
source "$(dirname "$0")/repl_lib.sh"

mkdir -p "$T/proj"
cat > "$T/scenario.json" <<'JSON'
{"turns": [
  {"reply": {"text": "One question first.", "tool_calls": [{"id": "q1", "name": "AskUserQuestion", "input": {"questions": [{"question": "Which colour?", "header": "Colour", "options": [{"label": "Red", "description": "warm"}, {"label": "Blue", "description": "cool"}]}]}}]}},
  {"reply": {"text": "Blue it is."}}
]}
JSON
start_mock "$T/scenario.json"
use_provider anthropic
repl_start "$T/proj"
wait_prompt
type_line "pick a colour with me"
wait_screen "the question" "? Which colour?"
wait_screen "its options" "2. Blue — cool"
wait_prompt "the answer prompt"
s=$(screen)
check "the call comes before the question" \
  test "$(grep -n 'AskUserQuestion(Which colour?)' <<<"$s" | head -n 1 | cut -d: -f1)" -lt \
       "$(grep -n '? Which colour?' <<<"$s" | head -n 1 | cut -d: -f1)"
type_line "2"
wait_screen "the final answer" "Blue it is."
wait_prompt
assert_contains "the model got the label" \
  "$(jq -r '.body.messages[-1].content[] | select(.type=="tool_result") | .content | if type=="string" then . else map(.text) | join("") end' "$MOCK_LOG")" \
  '"Which colour?" = "Blue"'
keys C-d
assert_eq "exit status 0" "$(wait_exit)" "0"
finish
