#!/usr/bin/env bash
# The REPL's face of extensions, with a project command /review and a
# skill in a trusted workspace: /help lists both (hint, description,
# scope); "/rev" Tab completes "/review"; "/review the parser" reaches the
# model as the command's expanded prompt; a command file named after a
# built-in (/status) never replaces it; /skills lists the skill as offered;
# a name that is neither keeps the hint and sends nothing.
source "$(dirname "$0")/repl_lib.sh"

mkdir -p "$T/proj/.loom/commands" "$T/proj/.loom/skills/deploy-notes"
cat > "$T/proj/.loom/commands/review.md" <<'MD'
---
description: Review the code for bugs
argument-hint: "[focus]"
---
Review the code, focusing on $ARGUMENTS. REVIEW-MARKER
MD
cat > "$T/proj/.loom/commands/status.md" <<'MD'
---
description: A file that must not replace the built-in
---
STATUS-COMMAND-MARKER
MD
cat > "$T/proj/.loom/skills/deploy-notes/SKILL.md" <<'MD'
---
name: deploy-notes
description: How this project is deployed
argument-hint: "[env]"
---
DEPLOY-BODY-MARKER
MD
printf '{"trustedWorkspaces": ["%s"]}\n' "$(realpath "$T/proj")" > "$LOOM_HOME/settings.json"
cat > "$T/scenario.json" <<'JSON'
{"turns": [{"reply": {"text": "Reviewed."}}]}
JSON
start_mock "$T/scenario.json"
use_provider anthropic
repl_start "$T/proj"
wait_prompt

type_line "/help"
wait_screen "/help" "Ctrl-D"
s=$(screen)
assert_contains "/help has a custom commands section" "$s" "Custom commands"
assert_contains "/help lists /review with its hint" "$s" "/review [focus]"
assert_contains "/help gives its description and scope" \
  "$(grep -F '/review [focus]' <<<"$s")" "Review the code for bugs (project)"
assert_contains "/help has a skills section" "$s" "Skills"
assert_contains "/help lists the skill" "$s" "/deploy-notes [env]"

type_line "/skills"
# Its file, not its description: /help shows the description too.
wait_screen "/skills" ".loom/skills/deploy-notes/SKILL.md"
s=$(screen)
assert_contains "/skills says the skill is offered" "$s" "offered to the model"
assert_contains "/skills names its file" "$s" ".loom/skills/deploy-notes/SKILL.md"

# A built-in's name runs the built-in, not the file.
type_line "/status"
wait_screen "/status" "Provider  anthropic"
wait_prompt
check "the built-in ran: nothing was sent" test ! -s "$MOCK_LOG"

type_line "/reviewx now"
wait_screen "the hint" "Unknown command /reviewx"
check "an unknown name sends nothing" test ! -s "$MOCK_LOG"

# Tab completes the command's name; the arguments follow.
tm send-keys -t repl -l "/rev"
keys Tab
wait_screen "the completed name" "› /review "
tm send-keys -t repl -l "the parser"
keys Enter
wait_screen "the answer" "Reviewed."
wait_prompt
msg=$(tail -n 1 "$MOCK_LOG" | jq -r '.body.messages[-1].content | if type=="string" then . else map(.text // "") | join("") end')
assert_contains "the command's prompt reached the model" "$msg" "REVIEW-MARKER"
assert_contains "with the arguments put in" "$msg" "focusing on the parser"
check "the other file did not" bash -c '! grep -q STATUS-COMMAND-MARKER "$1"' _ "$MOCK_LOG"

keys C-d
assert_eq "Ctrl-D exits with status 0" "$(wait_exit)" "0"
finish
