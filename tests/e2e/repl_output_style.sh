#!/usr/bin/env bash
# /output-style in the REPL: the list marks the active style, switching
# writes "outputStyle" to .loom/settings.local.json (its other keys kept)
# and the next request's system prompt holds the new style's section; an
# unknown name is refused with a hint and nothing changes. Tab completes an
# @path from the working directory, never into .git.
source "$(dirname "$0")/repl_lib.sh"

mkdir -p "$T/proj/.loom" "$T/proj/src" "$T/proj/.git"
echo '{"permissions": {"allow": ["Read"]}}' > "$T/proj/.loom/settings.local.json"
echo 'int main(void) { return 0; }' > "$T/proj/src/main.c"
printf '{"trustedWorkspaces": ["%s"]}\n' "$(realpath "$T/proj")" > "$LOOM_HOME/settings.json"
cat > "$T/scenario.json" <<'JSON'
{"turns": [{"reply": {"text": "Plain answer."}},
           {"reply": {"text": "Explained answer."}}]}
JSON
start_mock "$T/scenario.json"
use_provider anthropic
repl_start "$T/proj"
wait_prompt

type_line "/output-style"
wait_screen "the list" "/output-style NAME switches"
s=$(screen)
assert_contains "the active style is named" "$s" "Output style: default"
assert_contains "the list marks the active one" "$s" "● default"
assert_contains "explanatory is listed" "$s" "explanatory"
assert_contains "learning is listed" "$s" "learning"

type_line "hello"
wait_screen "the first answer" "Plain answer."
wait_prompt
assert_contains "before the switch: the default section" \
  "$(tail -n 1 "$MOCK_LOG" | jq -r '.body.system[0].text')" "then you answer briefly"

type_line "/output-style nosuch"
wait_screen "the refusal" 'No output style "nosuch"'
check "a refused name writes nothing" bash -c '! grep -q outputStyle "$1"' _ "$T/proj/.loom/settings.local.json"

type_line "/output-style explanatory"
wait_screen "the switch" "Output style: explanatory · from the next message"
assert_eq "the choice is kept in the local settings" \
  "$(jq -r .outputStyle "$T/proj/.loom/settings.local.json")" "explanatory"
assert_eq "the local settings' other keys are kept" \
  "$(jq -r '.permissions.allow[0]' "$T/proj/.loom/settings.local.json")" "Read"
type_line "/output-style"
wait_screen "the list again" "● explanatory"

type_line "and now?"
wait_screen "the second answer" "Explained answer."
wait_prompt
sys=$(tail -n 1 "$MOCK_LOG" | jq -r '.body.system[0].text')
assert_contains "after the switch: the explanatory section" "$sys" "Insight:"
check "after the switch: not the default section" bash -c '! grep -q "then you answer briefly" <<<"$1"' _ "$sys"
assert_eq "the conversation went on in the same session" \
  "$(tail -n 1 "$MOCK_LOG" | jq -r '.body.messages | length')" "3"

# Tab completes a path after "@" (the line is not sent: Ctrl-C clears it).
tm send-keys -t repl -l "look at @src/ma"
keys Tab
wait_screen "the completed path" "› look at @src/main.c"
keys C-c
wait_prompt
tm send-keys -t repl -l "@.gi"
keys Tab
sleep 0.3
check "Tab never completes into .git" lacks "$(screen)" "@.git/"
keys C-c
wait_prompt

keys C-d
assert_eq "Ctrl-D exits with status 0" "$(wait_exit)" "0"
finish
