#!/usr/bin/env bash
# Malformed extension files (issue 15, the last "Done when"): a SKILL.md,
# a plugin.json or a command file that cannot be read is a warning naming
# the file and the problem, and everything else still loads — a good
# skill is still offered, a good command still expands, a good plugin's
# command still expands.
#
# The bad files are the ways such files go wrong in real repositories: YAML
# that does not parse, no frontmatter, a name that breaks the rules or is
# not its folder's, no description or one past 1024 characters, a key of
# the wrong type, a manifest cut short or with a name of the wrong type,
# a file of binary bytes, and a file of several megabytes. None may crash
# loom or stop the run.
source "$(dirname "$0")/_lib.sh"

check_not() { local what=$1; shift; if "$@"; then not_ok "$what"; else ok "$what"; fi; }
# first_has TEXT — the first logged request holds TEXT.
first_has() { sed -n 1p "$MOCK_LOG" | grep -qF -- "$1"; }

R="$T/repo"
mkdir -p "$R"
git -C "$R" init -q -b main
jq -n --arg r "$R" '{trustedWorkspaces: [$r]}' > "$LOOM_HOME/settings.json"

# skill DIR NAME-LINE... — writes DIR/SKILL.md from the remaining lines.
skill() { local d=$1; shift; mkdir -p "$d"; printf '%s\n' "$@" > "$d/SKILL.md"; }

# --- skills ----------------------------------------------------------------------
S="$R/.loom/skills"
skill "$S/good-skill" '---' 'name: good-skill' \
  'description: GOOD-SKILL-DESCRIPTION formats widget tables. Use for any table of widgets.' \
  '---' 'GOOD-SKILL-BODY'
skill "$S/bad-yaml" '---' 'name: bad-yaml' 'description: [unclosed, list' '---' 'BAD-BODY'
skill "$S/no-frontmatter" 'Just some notes about a skill, no frontmatter at all.'
skill "$S/Bad_Name" '---' 'name: Bad_Name' 'description: a name with capitals and an underscore' '---' 'BAD-BODY'
skill "$S/folder-a" '---' 'name: folder-b' 'description: a name that is not its folder' '---' 'BAD-BODY'
skill "$S/no-description" '---' 'name: no-description' '---' 'BAD-BODY'
skill "$S/long-description" '---' 'name: long-description' \
  "description: $(head -c 1100 /dev/zero | tr '\0' 'x')" '---' 'BAD-BODY'
skill "$S/wrong-type" '---' 'name: wrong-type' 'description: {nested: map}' '---' 'BAD-BODY'
mkdir -p "$S/binary"
head -c 4096 /dev/urandom > "$S/binary/SKILL.md"
mkdir -p "$S/huge"
{ printf -- '---\nname: huge\ndescription: HUGE-SKILL a skill of six megabytes\n---\n'
  head -c 6000000 /dev/zero | tr '\0' 'h'; } > "$S/huge/SKILL.md"
# A .claude skill beside them, good: compat reads it too.
skill "$R/.claude/skills/claude-good" '---' 'name: claude-good' \
  'description: CLAUDE-GOOD-DESCRIPTION from the .claude folder.' '---' 'CLAUDE-GOOD-BODY'

# --- commands --------------------------------------------------------------------
C="$R/.loom/commands"
mkdir -p "$C" "$R/.claude/commands"
printf -- '---\ndescription: deploy a widget\n---\nGOOD-COMMAND deploy $ARGUMENTS now\n' > "$C/good.md"
printf -- '---\ndescription: [oops\n---\nBAD-COMMAND-YAML $ARGUMENTS\n' > "$C/bad-yaml.md"
printf -- '---\ndescription: ok\nallowed-tools: {a: 1}\n---\nBAD-COMMAND-TYPE\n' > "$C/bad-type.md"
printf -- '---\ndescription: never closed\nBAD-COMMAND-OPEN\n' > "$C/unclosed.md"
head -c 4096 /dev/urandom > "$C/binary.md"
printf -- '---\ndescription: from .claude\n---\nCLAUDE-COMMAND $1 and $2\n' > "$R/.claude/commands/claude-cmd.md"

# --- plugins ---------------------------------------------------------------------
M="$T/market"
plugin() { # NAME — a plugin folder in the marketplace with one command
  mkdir -p "$M/plugins/$1/.claude-plugin" "$M/plugins/$1/commands"
  jq -n --arg n "$1" '{name: $n, version: "1.0.0", description: "test plugin", author: {name: "Acme"}}' \
    > "$M/plugins/$1/.claude-plugin/plugin.json"
  printf -- '---\ndescription: hello from %s\n---\nPLUGIN-COMMAND-%s $ARGUMENTS\n' "$1" "$1" \
    > "$M/plugins/$1/commands/hello.md"
}
plugin good-tools
plugin cut-tools
plugin typed-tools
mkdir -p "$M/.claude-plugin"
jq -n '{name: "acme-market", owner: {name: "Acme"}, plugins: [
  {name: "good-tools", source: "./plugins/good-tools", description: "good"},
  {name: "cut-tools", source: "./plugins/cut-tools", description: "cut short later"},
  {name: "typed-tools", source: "./plugins/typed-tools", description: "wrong type later"}]}' \
  > "$M/.claude-plugin/marketplace.json"
set +e
"$LOOM_BIN" plugin marketplace add "$M" > "$T/p.out" 2>&1
rc_add=$?
for p in good-tools cut-tools typed-tools; do
  "$LOOM_BIN" plugin install "$p@acme-market" >> "$T/p.out" 2>&1 || rc_add=$?
done
set -e
assert_eq "plugins: the marketplace is added and the three plugins installed ($(tail -c 300 "$T/p.out"))" "$rc_add" "0"
# Break two installed copies the way a bad edit or an interrupted copy would.
CUT=$(find "$LOOM_HOME" -path '*cut-tools/.claude-plugin/plugin.json' | head -n 1)
TYPED=$(find "$LOOM_HOME" -path '*typed-tools/.claude-plugin/plugin.json' | head -n 1)
check "plugins: the installed cut-tools manifest is found" test -n "$CUT"
check "plugins: the installed typed-tools manifest is found" test -n "$TYPED"
[ -n "$CUT" ] && printf '{"name": "cut-tools", "version": "1.0' > "$CUT"
[ -n "$TYPED" ] && printf '{"name": 42, "version": "1.0.0"}' > "$TYPED"

# A marketplace whose plugin's manifest is malformed: install refuses,
# naming the file.
mkdir -p "$T/badmarket/.claude-plugin" "$T/badmarket/plugins/broken/.claude-plugin"
printf '{"name": "broken", ' > "$T/badmarket/plugins/broken/.claude-plugin/plugin.json"
jq -n '{name: "bad-market", owner: {name: "X"}, plugins: [{name: "broken", source: "./plugins/broken"}]}' \
  > "$T/badmarket/.claude-plugin/marketplace.json"
set +e
"$LOOM_BIN" plugin marketplace add "$T/badmarket" > "$T/bad.out" 2>&1
"$LOOM_BIN" plugin install broken@bad-market >> "$T/bad.out" 2>&1
rc_bad=$?
set -e
check "plugins: installing a plugin with a malformed manifest fails" test "$rc_bad" -ne 0
check "plugins: ... naming its plugin.json" grep -q 'broken/.claude-plugin/plugin.json' "$T/bad.out"
check "plugins: ... and no crash (exit status below 128)" test "$rc_bad" -lt 128

# --- one run: everything loads, the bad files are warnings -------------------------
cat > "$T/scenario.json" <<'JSON'
{"turns": [{"reply": {"text": "LOADED"}}]}
JSON
start_mock "$T/scenario.json"
use_provider anthropic
set +e
json=$("$LOOM_BIN" -p "/good ship-it" --cwd "$R" --output-format json 2> "$T/err")
rc=$?
set -e
err=$(cat "$T/err")
assert_eq "the run exits 0 despite the malformed files" "$rc" "0"
assert_eq "the run completed" "$(jq -r .result <<<"$json" 2>/dev/null)" "LOADED"
body=$(sed -n 1p "$MOCK_LOG")
check "the good command expands" first_has "GOOD-COMMAND deploy ship-it now"
check "the good skill is still offered" first_has "GOOD-SKILL-DESCRIPTION"
check "the good .claude skill is still offered" first_has "CLAUDE-GOOD-DESCRIPTION"
check_not "no skill's body is in the first request" grep -qE "GOOD-SKILL-BODY|CLAUDE-GOOD-BODY|BAD-BODY" <<<"$body"
check_not "no malformed skill is offered" grep -qE '"(bad-yaml|folder-b|Bad_Name|wrong-type)"|- (bad-yaml|folder-b|Bad_Name|wrong-type|no-description|long-description):' <<<"$body"

# warned FILE REGEX — a warning line names FILE and matches REGEX (case-insensitive).
warned() {
  local line
  if [ -z "$1" ]; then not_ok "a warning names the file (no file to look for)"; return; fi
  line=$(grep -F -- "$1" <<<"$err" | head -n 5 || true)
  if [ -z "$line" ]; then not_ok "a warning names $1 (stderr: $(head -c 1500 <<<"$err"))"; return; fi
  if grep -qiE -- "$2" <<<"$line"; then ok "the warning for $1 says the problem ($2)"
  else not_ok "the warning for $1 says the problem: [$line] does not match /$2/"; fi
}
warned "bad-yaml/SKILL.md" "yaml|frontmatter|parse|syntax"
warned "no-frontmatter/SKILL.md" "frontmatter"
warned "Bad_Name/SKILL.md" "name"
warned "folder-a/SKILL.md" "folder|director|name"
warned "no-description/SKILL.md" "description"
warned "long-description/SKILL.md" "description.*(1024|long)|(1024|long).*description"
warned "wrong-type/SKILL.md" "description"
warned "binary/SKILL.md" "frontmatter|utf-?8|binary|text"
warned "commands/bad-yaml.md" "yaml|frontmatter|parse|syntax"
warned "commands/bad-type.md" "allowed-tools"
warned "commands/unclosed.md" "frontmatter|clos|end"
warned "commands/binary.md" "utf-?8|binary|text|frontmatter"
warned "$CUT" "json|parse|end|truncat"
warned "$TYPED" "name"
# The huge skill: either refused with a warning naming it, or loaded with
# its body cut — never the six megabytes in a request.
check "the huge SKILL.md is never sent whole" \
  bash -c "! grep -q 'hhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhh' '$MOCK_LOG'"
check "no warning line is longer than 2000 bytes (a bad file is named, not dumped)" \
  bash -c "! awk 'length > 2000 {bad=1} END {exit !bad}' '$T/err'"

# The .claude command, with positional arguments.
start_mock "$T/scenario.json"
"$LOOM_BIN" -p "/claude-cmd alpha 'beta gamma'" --cwd "$R" --output-format json > /dev/null 2> "$T/err2" || true
check "the .claude command expands with \$1 and \$2" first_has "CLAUDE-COMMAND alpha and beta gamma"

# The good plugin's command still expands beside the two broken ones; the
# broken ones' commands do not.
start_mock "$T/scenario.json"
"$LOOM_BIN" -p "/good-tools:hello world" --cwd "$R" --output-format json > /dev/null 2> "$T/err3" || true
check "the good plugin's command expands" first_has "PLUGIN-COMMAND-good-tools world"
start_mock "$T/scenario.json"
"$LOOM_BIN" -p "/cut-tools:hello world" --cwd "$R" --output-format json > /dev/null 2> "$T/err4" || true
check_not "the cut-short plugin's command does not load" grep -qF "PLUGIN-COMMAND-cut-tools" "$MOCK_LOG"
finish
