#!/usr/bin/env bash
# "Always" saves exactly what the prompt shows, and that is the narrowest
# grant that covers the call: the whole command for a destructive program
# (rm -rf build), a wrapper (bash -c 'make test', sudo make install) or a
# push (git push origin feature); a prefix only for a harmless subcommand
# (npm run test --watch → Bash(npm run test:*)); one rule per part of a
# compound command; no "always" for a command that cannot be read for sure
# (eval). For a Write, "always" accepts edits inside the workspace for
# this session only: nothing is saved, a Write to ../outside still asks
# (and `a` does nothing there), and a new headless run does not inherit it.
source "$(dirname "$0")/repl_lib.sh"

mkdir -p "$T/proj/build" "$T/bin"
# sudo must not reach the real one (or a password prompt).
printf '#!/bin/sh\necho "fake sudo: $*"\n' > "$T/bin/sudo"
chmod +x "$T/bin/sudo"
export PATH="$T/bin:$PATH"
local_settings="$T/proj/.loom/settings.local.json"

B() { printf '{"reply": {"tool_calls": [{"id": "%s", "name": "Bash", "input": {"command": %s}}]}}' "$1" "$(jq -Rn --arg c "$2" '$c')"; }
W() { printf '{"reply": {"tool_calls": [{"id": "%s", "name": "Write", "input": {"file_path": "%s", "content": "%s\\n"}}]}}' "$1" "$2" "$1"; }
cat > "$T/scenario.json" <<JSON
{"turns": [
  $(B c1 'rm -rf build'),
  $(B c2 "bash -c 'make test'"),
  $(W c3 notes/a.txt),
  $(W c4 notes/b.txt),
  $(W c4b notes/.bashrc),
  $(W c5 ../outside.txt),
  $(B c6 'npm run test --watch'),
  $(B c7 'git push origin feature'),
  $(B c8 'sudo make install'),
  $(B c9 'mkdir -p out && touch out/done.txt'),
  $(B c10 "eval 'echo hi'"),
  {"reply": {"text": "All asked."}},
  {"match": {"last_user_contains": "again"}, "reply": {"tool_calls": [
     {"id": "d1", "name": "Bash", "input": {"command": "npm run test"}}]}},
  {"match": {"tool_results": 12}, "reply": {"tool_calls": [
     {"id": "d2", "name": "Bash", "input": {"command": "rm -rf src"}}]}},
  {"match": {"tool_results": 13}, "reply": {"text": "Second round done."}}
]}
JSON
jq -e . "$T/scenario.json" >/dev/null || { echo "bad scenario"; exit 1; }
start_mock "$T/scenario.json"
use_provider anthropic
repl_start "$T/proj"
wait_prompt

asked() { [ "$(screen | grep -cF -e 'allow? [y/a/n] ›' -e 'allow? [y/n] ›')" -ge "$1" ]; }
waiting() { [ "$(screen | grep -v '^[[:space:]]*$' | tail -n 1 | sed 's/[[:space:]]*$//')" == "$1" ]; }
saved() { jq -c '.permissions.allow' "$local_settings" 2>/dev/null || echo null; }
N=0
EXPECT='[]'
saved_is_expected() { [ "$(saved)" == "$EXPECT" ]; }
# always_case RULES... — the next approval shows exactly these rules; a
# saves exactly them, appended to settings.local.json.
always_case() {
  N=$((N + 1))
  wait_until "approval $N" 20 asked "$N" || return
  wait_until "approval $N waiting" 10 waiting 'allow? [y/a/n] ›' || return
  local label
  label=$(printf '%s, ' "$@"); label=${label%, }
  assert_eq "approval $N shows the exact rule" \
    "$(screen | grep -F 'a saves ' | tail -n 1 | sed 's/^ *a saves //; s/ in \.loom\/settings\.local\.json *$//')" "$label"
  answer -l a
  for r in "$@"; do EXPECT=$(jq -c --arg r "$r" '. + [$r]' <<<"$EXPECT"); done
  wait_until "rule $N saved" 10 saved_is_expected ||
    not_ok "saved: $(saved), expected $EXPECT"
  ok "a on approval $N saved exactly: $*"
}

type_line "do the things"
always_case 'Bash(rm -rf build)'
always_case "Bash(bash -c 'make test')"

# The Write: a session grant, shown as such, nothing saved.
N=$((N + 1))
wait_until "the Write approval" 20 asked "$N"
s=$(screen)
assert_contains "the Write's always is session-only edits in the workspace" "$s" \
  "a: accept edits inside $T/proj for this session (not saved)"
answer -l a
wait_screen "the session grant confirmed" "accepted for the rest of this session" 10
check "notes/a.txt was written" wait_until "notes/a.txt" 10 test -s "$T/proj/notes/a.txt"
check "notes/b.txt was written without asking (inside the workspace)" \
  wait_until "notes/b.txt" 10 test -s "$T/proj/notes/b.txt"
# A risky edit inside the workspace (a shell start-up file) still asks.
N=$((N + 1))
wait_until "the .bashrc Write approval" 20 asked "$N"
wait_until "it waits" 10 waiting 'allow? [y/n] ›'
assert_contains "the grant does not cover a shell start-up file" "$(screen)" "writes a shell start-up file"
answer -l n
keys Enter
check "notes/.bashrc was not written" test ! -e "$T/proj/notes/.bashrc"
# ../outside: asked, and no "always" on offer.
N=$((N + 1))
wait_until "the outside Write approval" 20 asked "$N"
wait_until "it waits" 10 waiting 'allow? [y/n] ›'
assert_contains "outside the workspace, no always is offered" "$(screen)" "the file is outside the workspace"
answer -l a
sleep 1
check "a does nothing when always is not offered" waiting 'allow? [y/n] ›'
answer -l n
keys Enter
check "the outside file was not written" test ! -e "$T/outside.txt"
check "the session grant saved nothing" saved_is_expected

always_case 'Bash(npm run test:*)'
always_case 'Bash(git push origin feature)'
always_case 'Bash(sudo make install)'
always_case 'Bash(mkdir -p out)' 'Bash(touch out/done.txt)'

# eval cannot be read for sure: y or n only.
N=$((N + 1))
wait_until "the eval approval" 20 asked "$N"
wait_until "it waits" 10 waiting 'allow? [y/n] ›'
assert_contains "an uncertain parse gets no always" "$(screen)" "the command could not be read for sure"
answer -l n
keys Enter
wait_screen "the end of the run" "All asked." 20
wait_prompt
check "rm -rf build ran" test ! -e "$T/proj/build"
check "the compound command ran" test -e "$T/proj/out/done.txt"
assert_eq "settings.local.json holds exactly the rules shown, in order" "$(saved)" "$EXPECT"
check "no Write or Edit rule was saved" bash -c "! jq -e '.permissions.allow | any(test(\"^(Write|Edit)\"))' '$local_settings' >/dev/null"

type_line "/status"
wait_screen "the status" "Mode      acceptEdits"
# The saved prefix covers a later npm run test; rm -rf src is not covered.
type_line "again"
N=$((N + 1))
wait_until "rm -rf src asks" 20 asked "$N"
check "npm run test ran (without asking: the next question is rm's)" screen_has "Bash(npm run test)"
assert_contains "rm -rf src would be saved as itself" "$(screen | grep -F 'a saves ' | tail -n 1)" "Bash(rm -rf src)"
answer -l n
keys Enter
wait_screen "the second round" "Second round done." 20
assert_eq "no other question was asked" "$(screen | grep -cF -e 'allow? [y/a/n] ›' -e 'allow? [y/n] ›')" "$N"
keys C-d
wait_exit >/dev/null

# A new headless run does not inherit the session's edit grant.
cat > "$T/headless.json" <<'JSON'
{"turns": [
  {"reply": {"tool_calls": [{"id": "h1", "name": "Write", "input": {"file_path": "notes/c.txt", "content": "c"}},
                            {"id": "h2", "name": "Write", "input": {"file_path": "../outside2.txt", "content": "o"}}]}},
  {"reply": {"text": "headless done"}}
]}
JSON
start_mock "$T/headless.json"
"$LOOM_BIN" -p "write" --cwd "$T/proj" --output-format json > "$T/h.json" 2>/dev/null || true
check "headless: the Write inside the workspace is denied (no grant carried over)" test ! -e "$T/proj/notes/c.txt"
check "headless: the Write outside is denied" test ! -e "$T/outside2.txt"
id=$(jq -r .session_id "$T/h.json")
hfile=$(session_file "$id")
assert_contains "headless: the model is told it was denied" \
  "$(jq -r 'select(.type=="function_call_result" and .callId=="h1") | .output' "$hfile")" "denied"
finish
