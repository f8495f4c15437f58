#!/usr/bin/env bash
# Self-evolution E1 + E2 (issue 24, docs/evolve.md): a pattern seen three
# times becomes a proposed skill; accepted, the Skill tool offers it.
#  1. Three runs with the same steps (Read a .c file, `make build`,
#     `make test`) on goals worded differently: one pattern entry, seen 3,
#     and after the third a proposal whose body names the steps in order.
#  2. The proposal is never loaded: the next request lists no such skill.
#  3. `review edit` opens it in $EDITOR (a script here) and checks it again;
#     an edit that breaks the frontmatter is refused, naming the file.
#  4. Accepted, it moves to .loom/skills/<name>/ and the Skill tool offers
#     it; the scripted model calls it and the body (with the edit) reaches
#     the next request.
#  5. A rejected proposal is not proposed again.
source "$(dirname "$0")/_lib.sh"
source "$LOOM_SRC/tests/e2e/_mcp_lib.sh"

mkdir -p "$T/proj/src"
git -C "$T/proj" init -q
echo 'int main(void) { return 0; }' > "$T/proj/src/main.c"
printf 'build:\n\t@echo built\ntest:\n\t@echo tests passed\nlint:\n\t@echo clean\n' > "$T/proj/Makefile"
cat > "$LOOM_HOME/settings.json" <<JSON
{"permissions": {"allow": ["Bash", "Read"]}, "evolve": {"enabled": true},
 "trustedWorkspaces": ["$T/proj"]}
JSON

last_payload() { tail -n 1 "$T/events" | jq -c .payload; }
run() {
  "$LOOM_BIN" -p "$1" --cwd "$T/proj" --output-format events >"$T/events" 2>"$T/err" || true
}

jq -n --arg f "$T/proj/src/main.c" '{turns: [
  {match: {assistant_turns: 0, last_user_contains: "SKILL-CALL"},
   reply: {tool_calls: [{id: "s1", name: "Skill", input: {name: "c-make-build-make-test"}}]}},
  {match: {tool_results: 1, body_contains: "EDITED-BY-PERSON"}, reply: {text: "USED-THE-SKILL"}},
  {match: {assistant_turns: 0, last_user_contains: "LINT"},
   reply: {tool_calls: [{id: "l1", name: "Bash", input: {command: "make lint"}}]}},
  {match: {assistant_turns: 0},
   reply: {tool_calls: [{id: "r1", name: "Read", input: {file_path: $f}}]}},
  {match: {tool_results: 1, body_contains: "LINT the sources"}, reply: {text: "LINTED"}},
  {match: {tool_results: 1}, reply: {tool_calls: [{id: "b1", name: "Bash", input: {command: "make build"}}]}},
  {match: {tool_results: 2}, reply: {tool_calls: [{id: "t1", name: "Bash", input: {command: "make test -j2"}}]}},
  {match: {tool_results: 3}, reply: {text: "BUILT-AND-TESTED"}}]}' > "$T/steps.json"
start_mock "$T/steps.json"
use_provider anthropic

# ---- 1: three runs, the same steps ------------------------------------------------
goals=("build and test the project" "check that the build and tests still pass" "verify build plus tests after the change")
for i in 0 1 2; do
  run "${goals[$i]}"
  assert_eq "run $((i + 1)): the answer" "$(last_payload | jq -r .result)" "BUILT-AND-TESTED"
  assert_eq "run $((i + 1)): a pattern, seen $((i + 1))" "$(last_payload | jq -c '[.evolve.kind, .evolve.seen]')" "[\"pattern\",$((i + 1))]"
done
entries=("$T/proj/.loom/mf/patterns/"*.md)
assert_eq "one pattern entry" "${#entries[@]}" "1"
check "its signature is the steps" grep -qF 'signature: "Read(*.c) > Bash(make build) > Bash(make test)"' "${entries[0]}"
assert_contains "its evidence names the tools" "$(cat "${entries[0]}")" "tools: Read, Bash"
proposed=$(last_payload | jq -r '.evolve.proposed[0]')
assert_eq "the third run proposes a skill" "$proposed" "skill/c-make-build-make-test"
name=${proposed#skill/}
file="$T/proj/.loom/skills/proposed/$name/SKILL.md"
check "the proposal is a SKILL.md under proposed/" test -f "$file"
body=$(cat "$file")
assert_contains "its body names step 1" "$body" '1. `Read(*.c)`'
assert_contains "its body names step 2" "$body" '2. `Bash(make build)`'
assert_contains "its body names step 3" "$body" '3. `Bash(make test)`'
check "its frontmatter names it" grep -qx "name: $name" "$file"

# ---- 2: a proposal is never loaded --------------------------------------------------
: > "$MOCK_LOG"
run "build and test the project"
check_not "the request offers no proposed skill" grep -q "$name" <<<"$(raw_req 1)"
assert_eq "the run reports no skill offered" "$(last_payload | jq -r '.skills.offered_count // 0')" "0"

# ---- 3: edit through $EDITOR --------------------------------------------------------
cat > "$T/editor.sh" <<'SH'
#!/bin/sh
printf '\nEDITED-BY-PERSON: run make build before make test.\n' >> "$1"
SH
chmod +x "$T/editor.sh"
out=$(EDITOR="$T/editor.sh" "$LOOM_BIN" evolve review edit "$name" --cwd "$T/proj")
assert_contains "edit: the file still reads" "$out" "edited $proposed"
check "edit: the change is in the file" grep -q "EDITED-BY-PERSON" "$file"
cat > "$T/breaker.sh" <<'SH'
#!/bin/sh
cp "$1" "$1.bak"; printf -- '---\nname: [unclosed\n---\n' > "$1"
SH
chmod +x "$T/breaker.sh"
EDITOR="$T/breaker.sh" "$LOOM_BIN" evolve review edit "$name" --cwd "$T/proj" >/dev/null 2>"$T/err" \
  && not_ok "a broken edit is refused" || ok "a broken edit is refused"
assert_contains "the refusal names the file" "$(cat "$T/err")" "$file"
mv "$file.bak" "$file"

# ---- 4: accepted, the Skill tool offers it --------------------------------------------
out=$("$LOOM_BIN" evolve review accept "$proposed" --cwd "$T/proj" --json)
check "accept moves it to .loom/skills/$name ($out)" test -f "$T/proj/.loom/skills/$name/SKILL.md"
check "nothing is left under proposed/" test ! -e "$T/proj/.loom/skills/proposed/$name"
: > "$MOCK_LOG"
run "SKILL-CALL: do the usual"
assert_contains "the Skill tool offers the accepted skill" "$(raw_req 1)" "$name"
assert_eq "the skill ran: its body reached the model" "$(last_payload | jq -r .result)" "USED-THE-SKILL"
check "skill.activated names it" jq -se --arg n "$name" 'any(.[]; .type == "skill.activated" and .payload.name == $n)' "$T/events"
stats=$("$LOOM_BIN" evolve stats --cwd "$T/proj" --json)
assert_eq "stats: one skill accepted" "$(jq -r .capability_growth.skills_accepted <<<"$stats")" "1"

# ---- 5: a rejected proposal is not proposed again ---------------------------------------
for i in 1 2 3; do run "LINT the sources"; done
lint=$(last_payload | jq -r '.evolve.proposed[0]')
assert_eq "a second pattern is proposed" "$lint" "skill/make-lint"
assert_contains "reject" "$("$LOOM_BIN" evolve review reject "$lint" --cwd "$T/proj")" "will not be proposed again"
check "the rejected proposal is removed" test ! -e "$T/proj/.loom/skills/proposed/make-lint"
run "LINT the sources"
assert_eq "the fourth run proposes nothing" "$(last_payload | jq -r '.evolve.proposed // [] | length')" "0"
check "and writes no proposal" test ! -e "$T/proj/.loom/skills/proposed/make-lint"
"$LOOM_BIN" evolve review accept nothing-here --cwd "$T/proj" 2>"$T/err" && not_ok "an unknown id fails" || ok "an unknown id fails"
assert_contains "naming the id" "$(cat "$T/err")" "no proposal nothing-here"

finish
