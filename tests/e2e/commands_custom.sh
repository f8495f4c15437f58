#!/usr/bin/env bash
# Custom slash commands (docs/commands.md) through the real binary: a goal
# "/review src/a.c" in a git repository becomes the command file's prompt
# with $ARGUMENTS and $1 put in and `!`git status`` replaced by git's real
# output; a command whose allowed-tools grant Bash(git tag:*) runs its
# !`git tag …` headless without a prompt, and the same line without the
# grant is denied in default mode — the request holds the denial, not the
# output, and no tag was made; an @file include brings the file's text; a
# namespaced .claude/commands/frontend/x.md is /frontend:x; a malformed
# command file is a warning naming it while the others work; an untrusted
# workspace's .loom/commands are not loaded, with a notice naming them; a
# PreToolUse hook sees (and may block) a command's !`cmd` like any call.
source "$(dirname "$0")/_lib.sh"

P="$T/proj"
mkdir -p "$P/src" "$P/.loom/commands" "$P/.claude/commands/frontend"
git -C "$P" init -q
printf 'int answer = 42;\n' > "$P/src/a.c"
git -C "$P" add src/a.c
git -C "$P" -c user.name=t -c user.email=t@example.com commit -qm init
printf 'int answer = 43; /* CHANGED-LINE */\n' > "$P/src/a.c"
# A PreToolUse hook on Bash logs each command and blocks one: the !`cmd`
# lines go through the same pipeline as the model's calls.
cat > "$T/pre.sh" <<SH
#!/usr/bin/env bash
cmd=\$(jq -r .tool_input.command)
echo "\$cmd" >> "$T/hook.log"
case "\$cmd" in *BLOCK-ME*) echo "blocked by the test hook" >&2; exit 2 ;; esac
exit 0
SH
chmod +x "$T/pre.sh"
jq -n --arg p "$P" --arg hook "$T/pre.sh" '{trustedWorkspaces: [$p],
  hooks: {PreToolUse: [{matcher: "Bash", hooks: [{type: "command", command: $hook, timeout: 5}]}]}}' \
  > "$LOOM_HOME/settings.json"

cat > "$P/.loom/commands/review.md" <<'MD'
---
description: Review a file against the working tree
argument-hint: [file] [focus]
allowed-tools: Bash(git status:*)
---
REVIEW-CMD file=$1 focus=[$2] all=[$ARGUMENTS]
Working tree:
!`git status`
MD
cat > "$P/.loom/commands/tagok.md" <<'MD'
---
allowed-tools: Bash(git tag:*)
---
TAGOK-CMD [!`git tag granted-tag`]
MD
cat > "$P/.loom/commands/tagno.md" <<'MD'
TAGNO-CMD [!`git tag ungranted-tag`]
MD
cat > "$P/.loom/commands/hooked.md" <<'MD'
HOOKED-CMD [!`git status --short`] [!`echo BLOCK-ME`]
MD
cat > "$P/.loom/commands/explain.md" <<'MD'
EXPLAIN-CMD Explain @src/a.c, then write to someone@example.com about @missing.c.
MD
cat > "$P/.claude/commands/frontend/x.md" <<'MD'
---
description: the frontend x
---
FRONTEND-X-CMD $ARGUMENTS
MD
cat > "$P/.loom/commands/broken.md" <<'MD'
---
description: [never closed
---
BROKEN-BODY
MD

echo '{"turns": [{"match": {}, "reply": {"text": "done"}}]}' > "$T/scenario.json"
start_mock "$T/scenario.json"
use_provider anthropic

# The user messages' text of the last request.
user_text() {
  tail -n 1 "$MOCK_LOG" | jq -r '[.body.messages[] | select(.role == "user") | .content
    | if type == "string" then . else map(.text // "") | join("\n") end] | join("\n")'
}

# run GOAL [DIR] — loom -p headless in default mode; stream on $T/events, stderr on $T/err.
run() {
  "$LOOM_BIN" -p "$1" --cwd "${2:-$P}" --output-format events >"$T/events" 2>"$T/err" || true
}

run '/review src/a.c "the loop"'
u=$(user_text)
assert_contains "review: \$1 and \$2 are put in" "$u" "REVIEW-CMD file=src/a.c focus=[the loop]"
assert_contains "review: \$ARGUMENTS is the arguments as typed" "$u" 'all=[src/a.c "the loop"]'
assert_contains "review: git status's real output replaces the !\`cmd\`" "$u" "modified:   src/a.c"
check_not_contains() { if [[ "$2" == *"$3"* ]]; then not_ok "$1: [$3] is there"; else ok "$1"; fi; }
check_not_contains "review: the !\`cmd\` itself is not sent" "$u" '!`git status`'
assert_eq "review: the run completed" "$(tail -n 1 "$T/events" | jq -r .payload.state)" "completed"
assert_contains "a malformed command file is a warning naming it" "$(cat "$T/err" "$T/events")" "broken.md"

run "/tagok"
u=$(user_text)
assert_contains "granted: the command ran headless without a prompt" "$u" "TAGOK-CMD [(no output)]"
assert_eq "granted: the tag exists" "$(git -C "$P" tag -l granted-tag)" "granted-tag"

run "/tagno"
u=$(user_text)
assert_contains "not granted: the command's line is in the request" "$u" "TAGNO-CMD"
assert_contains "not granted: the denial replaces the output" "$u" "TAGNO-CMD [Permission"
assert_contains "not granted: it says denied" "$u" "denied"
assert_eq "not granted: no tag was made" "$(git -C "$P" tag -l ungranted-tag)" ""

run "/hooked"
u=$(user_text)
assert_contains "hooked: the hook saw the command's !\`cmd\`" "$(cat "$T/hook.log")" "git status --short"
assert_contains "hooked: the unblocked one ran" "$u" "HOOKED-CMD [ M src/a.c"
assert_contains "hooked: the hook's block is what the request holds" "$u" "blocked by the test hook"
check_not_contains "hooked: the blocked command's output is not there" "$u" "[BLOCK-ME]"

run "/explain"
u=$(user_text)
assert_contains "explain: the line is sent" "$u" "EXPLAIN-CMD Explain @src/a.c"
assert_contains "explain: the file's text follows it" "$u" "CHANGED-LINE"
assert_contains "explain: an e-mail address stays text" "$u" "someone@example.com"

run "/frontend:x hello there"
assert_contains "namespaced: /frontend:x is .claude/commands/frontend/x.md" "$(user_text)" \
  "FRONTEND-X-CMD hello there"

run "/broken"
check_not_contains "the malformed command is not loaded" "$(user_text)" "BROKEN-BODY"

# An untrusted workspace: its commands are not loaded, and a notice says so.
U="$T/untrusted"
mkdir -p "$U/.loom/commands"
printf 'EVIL-BODY !`touch %s/pwned`\n' "$T" > "$U/.loom/commands/evil.md"
run "/evil" "$U"
check_not_contains "untrusted: the command's body is not sent" "$(user_text)" "EVIL-BODY"
check "untrusted: its !\`cmd\` never ran" test ! -e "$T/pwned"
assert_contains "untrusted: a notice names the folder" "$(cat "$T/err" "$T/events")" "$U/.loom/commands"
finish
