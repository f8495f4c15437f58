#!/usr/bin/env bash
# CLAUDE.md and AGENTS.md both reach the request (docs/memory.md), in the
# documented order: at the user level ~/.claude/CLAUDE.md then
# $LOOM_HOME/AGENTS.md; in each directory from the repository root down,
# CLAUDE.md, .claude/CLAUDE.md, AGENTS.md. A CLAUDE.md symlinked to
# AGENTS.md is loaded once. With LOOM_COMPAT_CLAUDE=0 only the AGENTS.md
# files load. In the REPL, a `# note` that creates ./AGENTS.md leaves
# CLAUDE.md in the request (it used to hide it), /memory lists both, and
# /memory edit offers each file by number; /status lists the files.
source "$(dirname "$0")/repl_lib.sh"

R="$T/repo"
mkdir -p "$R/.git" "$R/.claude" "$R/pkg" "$HOME/.claude"
echo "CLAUDE-USER-MARK" > "$HOME/.claude/CLAUDE.md"
echo "LOOM-USER-MARK" > "$LOOM_HOME/AGENTS.md"
echo "ROOT-CLAUDE-MARK" > "$R/CLAUDE.md"
echo "DOT-CLAUDE-MARK" > "$R/.claude/CLAUDE.md"
echo "ROOT-AGENTS-MARK" > "$R/AGENTS.md"
echo "PKG-SHARED-MARK" > "$R/pkg/AGENTS.md"
ln -s AGENTS.md "$R/pkg/CLAUDE.md"
echo "{\"trustedWorkspaces\": [\"$T\"]}" > "$LOOM_HOME/settings.json"

start_mock "$SCENARIOS/chat_two_turns.json"
use_provider anthropic
system_of_last() {
  jq -rs '.[-1].body.system | if type=="string" then . else map(.text) | join("\n") end' "$MOCK_LOG"
}
line_of() { grep -n -m1 -F -- "$2" <<<"$1" | cut -d: -f1; }

# ---- headless: every file, in order ---------------------------------------------
"$LOOM_BIN" -p "hi" --cwd "$R/pkg" >/dev/null
sys=$(system_of_last)
order=(CLAUDE-USER-MARK LOOM-USER-MARK ROOT-CLAUDE-MARK DOT-CLAUDE-MARK ROOT-AGENTS-MARK PKG-SHARED-MARK)
prev=0
for m in "${order[@]}"; do
  at=$(line_of "$sys" "$m")
  if [ -z "$at" ]; then not_ok "$m is in the request"; continue; fi
  ok "$m is in the request"
  check "$m comes after the one before it" test "$at" -gt "$prev"
  prev=$at
done
assert_eq "a CLAUDE.md symlinked to AGENTS.md is loaded once" "$(grep -c PKG-SHARED-MARK <<<"$sys")" "1"

# ---- compat off: only AGENTS.md files ------------------------------------------
start_mock "$SCENARIOS/chat_two_turns.json"
LOOM_COMPAT_CLAUDE=0 "$LOOM_BIN" -p "hi" --cwd "$R/pkg" >/dev/null
sys=$(system_of_last)
for m in CLAUDE-USER-MARK ROOT-CLAUDE-MARK DOT-CLAUDE-MARK; do
  check "compat off: $m is not in the request" lacks "$sys" "$m"
done
for m in LOOM-USER-MARK ROOT-AGENTS-MARK PKG-SHARED-MARK; do
  assert_contains "compat off: $m still is" "$sys" "$m"
done

# ---- the REPL: a # note creates AGENTS.md, CLAUDE.md stays -------------------------
rm "$HOME/.claude/CLAUDE.md" "$LOOM_HOME/AGENTS.md"
P="$T/proj"
mkdir -p "$P"
echo "ONLY-CLAUDE-MARK" > "$P/CLAUDE.md"
cat > "$T/chat.json" <<'JSON'
{"turns": [
  {"match": {"last_user_contains": "first question"}, "reply": {"text": "First answer."}},
  {"match": {"last_user_contains": "second question"}, "reply": {"text": "Second answer."}},
  {"match": {"last_user_contains": "third question"}, "reply": {"text": "Third answer."}}]}
JSON
start_mock "$T/chat.json"
export EDITOR="sed -i s/ONLY-CLAUDE-MARK/EDITED-CLAUDE-MARK/"
repl_start "$P"
wait_prompt
type_line "the first question"
wait_screen "the first answer" "First answer."
wait_prompt
assert_contains "before the note: CLAUDE.md is in the request" "$(system_of_last)" "ONLY-CLAUDE-MARK"

type_line "# remember-this-note"
wait_screen "#" "Remembered in ./AGENTS.md"
check "./AGENTS.md was created with the note" grep -qxF -- "- remember-this-note" "$P/AGENTS.md"
wait_prompt
type_line "the second question"
wait_screen "the second answer" "Second answer."
wait_prompt
sys=$(system_of_last)
assert_contains "after the note: CLAUDE.md is still in the request" "$sys" "ONLY-CLAUDE-MARK"
assert_contains "after the note: the new AGENTS.md is too" "$sys" "remember-this-note"
check "CLAUDE.md comes before AGENTS.md" \
  test "$(line_of "$sys" ONLY-CLAUDE-MARK)" -lt "$(line_of "$sys" remember-this-note)"

type_line "/memory"
wait_screen "/memory" "/memory edit  lists the 2 files"
s=$(screen)
check "/memory lists CLAUDE.md" grep -qE "^  $P/CLAUDE.md +project" <<<"$s"
check "/memory lists AGENTS.md" grep -qE "^  $P/AGENTS.md +project" <<<"$s"

type_line "/memory edit"
wait_screen "/memory edit" "/memory edit N opens file N in sed"
s=$(screen)
check "/memory edit offers CLAUDE.md as 1" grep -qE "^  1  $P/CLAUDE.md" <<<"$s"
check "/memory edit offers ./AGENTS.md as 2" grep -qE "^  2  \./AGENTS.md" <<<"$s"
wait_prompt
type_line "/memory edit 1"
wait_screen "/memory edit 1" "$P/CLAUDE.md reloaded"
check "the editor changed CLAUDE.md" grep -qx "EDITED-CLAUDE-MARK" "$P/CLAUDE.md"
wait_prompt
type_line "the third question"
wait_screen "the third answer" "Third answer."
wait_prompt
sys=$(system_of_last)
assert_contains "after /memory edit 1 the request has the edited CLAUDE.md" "$sys" "EDITED-CLAUDE-MARK"
assert_contains "... and still the AGENTS.md note" "$sys" "remember-this-note"
type_line "/status"
wait_screen "/status" "Configuration files"
s=$(screen)
check "/status lists CLAUDE.md as loaded" grep -qE "^  loaded +memory +project +claude +$P/CLAUDE.md" <<<"$s"
check "/status lists AGENTS.md as loaded" grep -qE "^  loaded +memory +project +loom +$P/AGENTS.md" <<<"$s"
check "/status lists the user settings" grep -qE "^  loaded +settings +user +loom +$LOOM_HOME/settings.json" <<<"$s"
assert_contains "/status says the workspace is trusted" "$s" "the workspace is trusted"
wait_prompt
type_line "/exit"
assert_eq "/exit leaves with status 0" "$(wait_exit)" "0"
finish
