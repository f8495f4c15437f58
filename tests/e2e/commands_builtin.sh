#!/usr/bin/env bash
# The commands Loom ships (docs/commands.md): /init sends the built-in
# prompt and the model's Write of AGENTS.md goes through without a question
# (the command grants only that file); /review's request holds the working
# tree's diff (git status and git diff run through the pipeline); a
# project's own review.md replaces the built-in. Newcomer messages: a 401
# names the variable that held the key, once; an unwritable LOOM_HOME is
# named; the turn-limit stop names the session and the resume command;
# --help lists the subcommands.
source "$(dirname "$0")/_lib.sh"

mkdir -p "$T/proj"
cd "$T/proj"
git init -q . && git config user.email t@example.com && git config user.name t
printf 'int main(void) { return 0; }\n' > main.c
printf 'all:\n\tcc -o app main.c\n' > Makefile
git add . && git commit -qm init
printf 'int main(void) { return 42; /* CHANGED-LINE */ }\n' > main.c
cd "$T/work"
printf '{"trustedWorkspaces": ["%s"]}\n' "$(realpath "$T/proj")" > "$LOOM_HOME/settings.json"

cat > "$T/scenario.json" <<JSON
{"turns": [
  {"match": {"last_user_contains": "named AGENTS.md", "tool_results": 0},
   "reply": {"text": "Writing it.", "tool_calls": [{"name": "Write", "input":
     {"file_path": "$T/proj/AGENTS.md", "content": "# AGENTS.md\n\nBuild: make\n"}}]}},
  {"match": {"tool_results": 1}, "reply": {"text": "INIT-DONE"}},
  {"match": {"last_user_contains": "Review the uncommitted"}, "reply": {"text": "REVIEW-DONE"}},
  {"reply": {"text": "OTHER"}}
]}
JSON
start_mock "$T/scenario.json"
use_provider anthropic

out=$("$LOOM_BIN" -p "/init" --cwd "$T/proj" 2>"$T/err" | tail -n 1)
assert_eq "/init ends with the model's answer" "$out" "INIT-DONE"
assert_eq "/init: the model's Write made AGENTS.md" "$(head -n 1 "$T/proj/AGENTS.md" 2>/dev/null)" "# AGENTS.md"
first=$(head -n 1 "$MOCK_LOG" | jq -r '.body.messages[0].content | if type=="string" then . else map(.text // "") | join("") end')
assert_contains "/init sends the built-in prompt" "$first" "Explore first"
assert_contains "/init asks for build and test commands" "$first" "How to build, lint and test"
check "/init's Write was not refused" bash -c '! grep -qi "denied\|not allowed" "$1"' _ "$T/err"

: > "$MOCK_LOG"
out=$("$LOOM_BIN" -p "/review" --cwd "$T/proj" 2>"$T/err")
assert_eq "/review ends with the model's answer" "$out" "REVIEW-DONE"
req=$(jq -r '.body.messages[0].content | if type=="string" then . else map(.text // "") | join("") end' "$MOCK_LOG" | head -c 20000)
assert_contains "/review's request holds the diff" "$req" "+int main(void) { return 42; /* CHANGED-LINE */ }"
assert_contains "/review's request holds the status" "$req" " M main.c"
assert_contains "/review's request holds the removed line" "$req" "-int main(void) { return 0; }"

# A project's own command of the same name replaces the built-in.
mkdir -p "$T/proj/.loom/commands"
printf -- '---\ndescription: mine\n---\nMY-OWN-REVIEW\n' > "$T/proj/.loom/commands/review.md"
: > "$MOCK_LOG"
"$LOOM_BIN" -p "/review" --cwd "$T/proj" >/dev/null 2>"$T/err"
assert_contains "a project's review.md replaces the built-in" \
  "$(jq -r '.body.messages[0].content | if type=="string" then . else map(.text // "") | join("") end' "$MOCK_LOG")" "MY-OWN-REVIEW"
rm -r "$T/proj/.loom"

# The turn-limit stop names the session and how to go on.
cat > "$T/turns.json" <<'JSON'
{"turns": [{"reply": {"text": "looking", "tool_calls": [{"name": "Bash", "input": {"command": "true"}}]}}]}
JSON
start_mock "$T/turns.json"
"$LOOM_BIN" -p "go" --max-turns 1 --permission-mode bypassPermissions --cwd "$T/proj" --output-format json >"$T/out" 2>"$T/err" && rc=0 || rc=$?
assert_eq "the turn limit exits 3" "$rc" "3"
sid=$(jq -r .session_id "$T/out")
assert_contains "the turn-limit stop names the resume command" "$(cat "$T/err" "$T/out")" "loom --resume $sid"

# A 401 names the variable that held the key, once.
cat > "$T/auth.json" <<'JSON'
{"turns": [{"reply": {"text": "x"}, "faults": [{"status": 401, "times": 100}]}]}
JSON
start_mock "$T/auth.json"
"$LOOM_BIN" -p "hi" --cwd "$T/proj" >/dev/null 2>"$T/err" || true
assert_contains "anthropic: a 401 names ANTHROPIC_API_KEY" "$(cat "$T/err")" "the API key in ANTHROPIC_API_KEY was refused"
assert_eq "the 401 is said once" "$(grep -c "refused" "$T/err")" "1"
LOOM_API_KEY=other "$LOOM_BIN" -p "hi" --cwd "$T/proj" >/dev/null 2>"$T/err" || true
assert_contains "a 401 names LOOM_API_KEY when that held the key" "$(cat "$T/err")" "the API key in LOOM_API_KEY was refused"
use_provider openai
"$LOOM_BIN" -p "hi" --cwd "$T/proj" >/dev/null 2>"$T/err" || true
assert_contains "openai: a 401 names OPENAI_API_KEY" "$(cat "$T/err")" "the API key in OPENAI_API_KEY was refused"
use_provider anthropic

# An unwritable LOOM_HOME is named, with the path.
touch "$T/afile"
LOOM_HOME="$T/afile/home" "$LOOM_BIN" -p "hi" --cwd "$T/proj" >/dev/null 2>"$T/err" && rc=0 || rc=$?
check "an unwritable LOOM_HOME fails" test "$rc" -ne 0
assert_contains "the message names LOOM_HOME and the path" "$(cat "$T/err")" "LOOM_HOME=$T/afile/home is not a folder Loom can write"
assert_eq "it is said once" "$(grep -c "LOOM_HOME" "$T/err")" "1"

# A bad settings file: one message naming the file.
mkdir -p "$T/proj/.loom" && echo '{bad' > "$T/proj/.loom/settings.json"
"$LOOM_BIN" -p "hi" --cwd "$T/proj" >/dev/null 2>"$T/err" || true
assert_contains "a bad settings file is named" "$(cat "$T/err")" "$T/proj/.loom/settings.json"
assert_eq "the bad settings file is said once" "$(grep -c "settings.json" "$T/err")" "1"
rm -r "$T/proj/.loom"

help=$("$LOOM_BIN" --help)
for sub in mcp doctor plugin sandbox signal; do
  assert_contains "--help lists loom $sub" "$help" "loom $sub"
done
finish
