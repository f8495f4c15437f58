#!/usr/bin/env bash
# Extraction at run end (docs/memory.md, "Extraction"): with
# memory.extraction on and a .loom/memory folder in the project, a run that
# completed sends one isolated request to the extractor, and its JSON reply
# becomes entry files with frontmatter plus MEMORY.md lines; the next run
# recalls them. A duplicate merges, a contradiction replaces with a note, a
# candidate holding an API key is never written, a malformed reply writes
# nothing.
source "$(dirname "$0")/_lib.sh"

R="$T/repo"
mkdir -p "$R/.git" "$R/.loom/memory"
echo "ref: refs/heads/main" > "$R/.git/HEAD"
echo '{"memory": {"extraction": {"enabled": true, "max_tokens": 900}}}' > "$LOOM_HOME/settings.json"

# scenario FILE ANSWER EXTRACTOR_TEXT — the agent answers ANSWER; the
# extractor (its system prompt names it) answers EXTRACTOR_TEXT.
scenario() {
  jq -n --arg a "$2" --arg x "$3" '{turns: [
    {match: {system_contains: "memory extractor", no_tools: true}, reply: {text: $x}},
    {reply: {text: $a}}]}' > "$1"
}
extractor_requests() { jq -s '[.[] | select(.body.system | tostring | contains("memory extractor"))] | length' "$MOCK_LOG"; }
run() { "$LOOM_BIN" -p "$1" --output-format json --permission-mode bypassPermissions --cwd "$R" 2>"$T/err"; }

add_tabs='{"memories":[{"action":"add","name":"Indentation style","description":"This project indents with tabs, never spaces","type":"project","body":"Indent with tabs: the linter rejects spaces."}]}'
scenario "$T/s1.json" "Understood: tabs, because the linter enforces them." "$add_tabs"
start_mock "$T/s1.json"
use_provider anthropic
out=$(run "Remember: in this project we indent with tabs, never spaces, because the linter enforces it.")
sid=$(jq -r .session_id <<<"$out")
f="$R/.loom/memory/indentation-style.md"
check "the entry file is written" test -f "$f"
assert_eq "one extractor request" "$(extractor_requests)" 1
xreq=$(jq -s '[.[] | select(.body.system | tostring | contains("memory extractor"))][0].body' "$MOCK_LOG")
check "it is isolated: no tools" jq -e '(.tools // []) | length == 0' <<<"$xreq" >/dev/null
assert_eq "its output cap is memory.extraction.max_tokens" "$(jq -r .max_tokens <<<"$xreq")" 900
assert_contains "it reads the conversation" "$(jq -r '.messages[0].content | if type=="string" then . else map(.text) | join("") end' <<<"$xreq")" "[user]"
assert_eq "the frontmatter name" "$(sed -n 's/^name: //p' "$f")" '"Indentation style"'
assert_eq "its type" "$(sed -n 's/^type: //p' "$f")" '"project"'
assert_eq "dated created" "$(sed -n 's/^created: "\(.*\)"/\1/p' "$f")" "$(date -u +%F)"
assert_eq "dated updated" "$(sed -n 's/^updated: "\(.*\)"/\1/p' "$f")" "$(date -u +%F)"
assert_eq "its source session" "$(sed -n 's/^source_session: "\(.*\)"/\1/p' "$f")" "$sid"
assert_contains "the fact is the body" "$(cat "$f")" "Indent with tabs: the linter rejects spaces."
assert_eq "the index line" "$(cat "$R/.loom/memory/MEMORY.md")" \
  "- [Indentation style](indentation-style.md) — This project indents with tabs, never spaces"
assert_eq "the result reports it" "$(jq -c .memory <<<"$out")" \
  '{"status":"extracted","written":["indentation-style"],"merged":[],"replaced":[],"dropped":[]}'

# The next run recalls it; the extractor answers the same fact: a merge.
scenario "$T/s2.json" "Reindented with tabs." "$add_tabs"
start_mock "$T/s2.json"
out=$(run "Fix the indentation style in main.c, it has spaces")
assert_contains "the next run's request recalls the entry" \
  "$(sed -n 1p "$MOCK_LOG" | jq -r .raw_body)" "Indent with tabs: the linter rejects spaces."
assert_eq "the extractor sees the existing entry" \
  "$(jq -s '[.[] | select(.body.system | tostring | contains("memory extractor"))][0].raw_body | contains("- indentation-style [project] Indentation style")' "$MOCK_LOG")" true
assert_eq "the same fact again merges" "$(jq -c .memory.merged <<<"$out")" '["indentation-style"]'
assert_eq "no second file" "$(ls "$R/.loom/memory" | grep -c '\.md$')" 2
assert_eq "one index line still" "$(wc -l < "$R/.loom/memory/MEMORY.md")" 1

# A contradiction replaces the old entry and leaves a note.
replace='{"memories":[{"action":"replace","target":"indentation-style","name":"Indentation uses spaces","description":"The project switched to 4 spaces","type":"project","body":"Indent with 4 spaces since the formatter change."}]}'
scenario "$T/s3.json" "Noted, 4 spaces from now on." "$replace"
start_mock "$T/s3.json"
out=$(run "We switched the formatter: indent with 4 spaces now, not tabs.")
n="$R/.loom/memory/indentation-uses-spaces.md"
check "the new entry is written" test -f "$n"
check "the old entry is gone" test ! -e "$f"
assert_contains "with a note of what it replaced" "$(cat "$n")" \
  "Replaces \`indentation-style\` on $(date -u +%F)"
assert_contains "… and what that said" "$(cat "$n")" "which said: This project indents with tabs, never spaces"
assert_eq "the index points at the new entry only" "$(cat "$R/.loom/memory/MEMORY.md")" \
  "- [Indentation uses spaces](indentation-uses-spaces.md) — The project switched to 4 spaces"
assert_eq "the result says so" "$(jq -c .memory.replaced <<<"$out")" \
  '[{"slug":"indentation-uses-spaces","replaced":"indentation-style"}]'

# A candidate holding an API key is dropped; the clean one beside it stays.
key="sk-ant-api03-$(printf 'A%.0s' $(seq 1 40))xyz"
secret=$(jq -nc --arg k "$key" '{memories:[
  {action:"add",name:"Staging key",description:"How to reach staging",type:"reference",body:("The staging key is " + $k + " (in the vault too).")},
  {action:"add",name:"Release day",description:"Releases go out on Tuesdays",type:"project",body:"Release on Tuesdays after the QA sign-off."}]}')
scenario "$T/s4.json" "Done, staging is reachable and the release is planned." "$secret"
start_mock "$T/s4.json"
before=$(ls "$R/.loom/memory")
out=$(run "Set up staging access with our key and plan the release for Tuesday as usual.")
check "the key is in no memory file" bash -c '! grep -rq "sk-ant-api03" "$1"' _ "$R/.loom/memory"
check "no entry for it" test ! -e "$R/.loom/memory/staging-key.md"
assert_eq "the drop is reported" "$(jq -c '.memory.dropped | map(.name)' <<<"$out")" '["Staging key"]'
assert_contains "naming the kind" "$(jq -r '.memory.dropped[0].why' <<<"$out")" "anthropic_api_key"
assert_contains "and warned about" "$(cat "$T/err")" 'memory candidate "Staging key" dropped'
check "the warning does not hold the key" bash -c '! grep -q "sk-ant-api03" "$1"' _ "$T/err"
check "the clean candidate is written" test -f "$R/.loom/memory/release-day.md"

# Every field of a candidate is scanned, for every kind of credential the
# scanner knows; a secret in the name is withheld from the report too.
oai="sk-proj-Xb7Qm2Lp9Rt4Vw8Zk3Nf6Hj1Dg5Sa0Ye"
gh="ghp_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
pem=$(printf -- '-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\n-----END OPENSSH PRIVATE KEY-----')
many=$(jq -nc --arg o "$oai" --arg g "$gh" --arg p "$pem" '{memories:[
  {action:"add",name:"OpenAI access",description:("key " + $o),type:"reference",body:"Use the shared account."},
  {action:"add",name:"AWS access",description:"The deploy user",type:"reference",body:"Access key AKIAIOSFODNN7EXAMPLE for deploys."},
  {action:"add",name:("Token " + $g),description:"GitHub",type:"reference",body:"CI uses it."},
  {action:"add",name:"Deploy key",description:"The deploy SSH key",type:"reference",body:$p},
  {action:"add",name:"Database login",description:"Staging database",type:"reference",body:"password = \"Zq8#vL2!mW9pR4tY\" for the staging db"},
  {action:"add",name:"Build cache",description:"CI caches node_modules by lockfile hash",type:"project",body:"The CI cache key is the lockfile hash."}]}')
scenario "$T/s4b.json" "Noted the access details and the cache." "$many"
start_mock "$T/s4b.json"
out=$(run "Write down how we reach OpenAI, AWS, GitHub, the deploy box and the staging database, and the CI cache.")
assert_eq "five candidates dropped" "$(jq '.memory.dropped | length' <<<"$out")" 5
assert_eq "one kind each" "$(jq -c '[.memory.dropped[].why | capture("\\((?<k>[a-z_]+)\\)").k]' <<<"$out")" \
  '["openai_api_key","aws_access_key_id","github_token","private_key","credential_assignment"]'
assert_eq "the name holding a token is withheld" "$(jq -r '.memory.dropped[2].name' <<<"$out")" "[withheld]"
assert_eq "the clean one is written" "$(jq -c .memory.written <<<"$out")" '["build-cache"]'
for v in "$oai" AKIAIOSFODNN7EXAMPLE "$gh" "BEGIN OPENSSH" 'Zq8#vL2'; do
  check "no file holds ${v:0:12}…" bash -c '! grep -rqF -- "$1" "$2"' _ "$v" "$R/.loom/memory"
  check "nor the warnings" bash -c '! grep -qF -- "$1" "$2"' _ "$v" "$T/err"
done

# A malformed reply writes nothing and says so.
scenario "$T/s5.json" "The CI cache is now keyed on the lockfile hash." 'Sure! I would remember: {"memories": []}'
start_mock "$T/s5.json"
before=$(ls -l --time-style=+%s.%N "$R/.loom/memory" | sort)
out=$(run "Change the CI cache key so it uses the lockfile hash instead of the date.")
assert_eq "a malformed reply: status failed" "$(jq -r .memory.status <<<"$out")" failed
assert_contains "the reason names the fault" "$(jq -r .memory.reason <<<"$out")" "not one JSON object"
assert_contains "a warning says nothing was written" "$(cat "$T/err")" "nothing was written"
assert_eq "the folder is unchanged" "$(ls -l --time-style=+%s.%N "$R/.loom/memory" | sort)" "$before"
bad='{"memories":[{"action":"add","name":"X","description":"y","type":"opinion","body":"z"}]}'
scenario "$T/s6.json" "The CI cache is now keyed on the lockfile hash again." "$bad"
start_mock "$T/s6.json"
out=$(run "Change the CI cache key back so it uses the lockfile hash, like we discussed.")
assert_contains "an unknown type is refused whole" "$(jq -r .memory.reason <<<"$out")" "memories[0].type"
check "and writes nothing" test ! -e "$R/.loom/memory/x.md"

# A hostile repository: a MEMORY.md that is a symlink to a secret is never
# read or rewritten; a .loom/memory that is a symlink elsewhere is never
# written.
H="$T/hostile"
mkdir -p "$H/.git" "$H/.loom/memory" "$HOME/.ssh" "$T/elsewhere"
echo "PRIVATE-KEY-BYTES" > "$HOME/.ssh/id_rsa"
ln -s "$HOME/.ssh/id_rsa" "$H/.loom/memory/MEMORY.md"
scenario "$T/h.json" "Understood: tabs, because the linter enforces them." "$add_tabs"
start_mock "$T/h.json"
out=$("$LOOM_BIN" -p "Remember: in this project we indent with tabs, never spaces, because the linter enforces it." \
  --output-format json --permission-mode bypassPermissions --cwd "$H" 2>/dev/null)
assert_contains "a symlinked MEMORY.md: nothing written" "$(jq -r .memory.reason <<<"$out")" "not a regular file"
check "the link is left as it is" test -L "$H/.loom/memory/MEMORY.md"
check "no entry beside it" test ! -e "$H/.loom/memory/indentation-style.md"
check "the key never reached a request" bash -c '! grep -q PRIVATE-KEY-BYTES "$1"' _ "$MOCK_LOG"
H2="$T/hostile2"
mkdir -p "$H2/.git" "$H2/.loom"
ln -s "$T/elsewhere" "$H2/.loom/memory"
start_mock "$T/h.json"
out=$("$LOOM_BIN" -p "Remember: in this project we indent with tabs, never spaces, because the linter enforces it." \
  --output-format json --permission-mode bypassPermissions --cwd "$H2" 2>/dev/null)
assert_eq "a .loom/memory symlinked elsewhere is not written" "$(jq -r .memory.reason <<<"$out")" \
  "the .loom/memory folder resolves outside the project"
check "nothing lands where it points" test -z "$(ls -A "$T/elsewhere")"
finish
