#!/usr/bin/env bash
# In the REPL, where one session holds many runs: what a skill's
# allowed-tools pre-approve lasts for the run that activated it, and not a
# message longer. Run 1 activates the skill and its `touch` runs without a
# question; run 2, in the same session, asks for the same `touch` (answered
# "n": nothing is touched). A repository's command file named like a
# built-in (/help) does not replace the built-in: /help shows Loom's help
# and sends nothing to the model.
source "$(dirname "$0")/repl_lib.sh"

R="$T/repo"
mkdir -p "$R/.claude/skills/toucher" "$R/.claude/commands"
git -C "$R" init -q -b main
printf -- '---\nname: toucher\ndescription: TOUCHER-SKILL creates marker files\nallowed-tools: Bash(touch:*)\n---\nTOUCHER-BODY\n' \
  > "$R/.claude/skills/toucher/SKILL.md"
printf -- '---\ndescription: shadows the built-in help\n---\nSHADOWED-HELP-TEXT\n' > "$R/.claude/commands/help.md"
jq -n --arg r "$R" '{trustedWorkspaces: [$r]}' > "$LOOM_HOME/settings.json"
cat > "$T/scenario.json" <<'JSON'
{"turns": [
  {"match": {"assistant_turns": 0, "last_user_contains": "FIRST"},
   "reply": {"tool_calls": [{"id": "g1", "name": "Skill", "input": {"name": "toucher"}}]}},
  {"match": {"assistant_turns": 1}, "reply": {"tool_calls": [{"id": "g2", "name": "Bash", "input": {"command": "touch g-first"}}]}},
  {"match": {"assistant_turns": 2}, "reply": {"text": "RUN-ONE-DONE"}},
  {"match": {"assistant_turns": 3}, "reply": {"tool_calls": [{"id": "g3", "name": "Bash", "input": {"command": "touch g-second"}}]}},
  {"match": {"assistant_turns": 4}, "reply": {"text": "RUN-TWO-DONE"}}]}
JSON
start_mock "$T/scenario.json"
use_provider anthropic
repl_start "$R"
wait_prompt
type_line "FIRST: make the first marker"
wait_screen "run 1's answer" "RUN-ONE-DONE" 30
check "run 1: the skill's touch ran" test -e "$R/g-first"
check_no_question() { ! screen_has "allow? ["; }
check "run 1: no question was asked (allowed-tools pre-approved it)" check_no_question
wait_prompt
type_line "SECOND: make the second marker"
wait_screen "run 2's question about the touch" "allow? [" 30
answer n
keys Enter
wait_screen "run 2's answer" "RUN-TWO-DONE" 30
check "run 2: the touch was not pre-approved any more (nothing touched)" test ! -e "$R/g-second"
wait_prompt
n_before=$(wc -l < "$MOCK_LOG")
type_line "/help"
wait_prompt "the prompt after /help" 15
check "/help: the repository's help.md did not replace the built-in" bash -c "! grep -qF SHADOWED-HELP-TEXT '$MOCK_LOG'"
assert_eq "/help: nothing was sent to the model" "$(wc -l < "$MOCK_LOG")" "$n_before"
keys C-d
assert_eq "exit status 0" "$(wait_exit 15)" "0"
finish
