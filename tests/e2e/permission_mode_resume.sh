#!/usr/bin/env bash
# The permission mode is kept with the session (issue 25, item 6): a session
# started in acceptEdits notes it in its file ("permission-mode" records),
# and `--resume ID` / `--continue` without a mode flag bring it back — shown
# on the run (run.started's permission_mode) and in effect (a Write runs
# headless, which default mode would deny). A mode named again on the
# command line wins and is noted in turn; bypassPermissions is never carried
# over silently; a mode the managed settings disable is not restored.
source "$(dirname "$0")/_lib.sh"

mkdir -p "$T/proj"
write_turns() { # $1 file to write (relative to the workspace)
  jq -n --arg f "$1" '{sequence: true, turns: [
    {reply: {tool_calls: [{id: "w1", name: "Write", input: {file_path: $f, content: "x\n"}}]}},
    {reply: {text: "Done."}}]}' > "$T/scenario.json"
}
run() { # $1 prompt, rest: flags; sets events, session id
  start_mock "$T/scenario.json"
  use_provider anthropic
  local p=$1; shift
  "$LOOM_BIN" -p "$p" --cwd "$T/proj" --output-format events "$@" > "$T/events" 2> "$T/err" || true
  sid=$(jq -r 'select(.type=="run.state_changed" and .payload.state=="running") | .payload.session_id // empty' "$T/events" | head -n 1)
  [ -n "$sid" ] || sid=$(jq -r '.session_id // empty' "$T/events" | head -n 1)
}
shown() { jq -r 'select(.payload.permission_mode != null) | .payload.permission_mode' "$T/events" | head -n 1; }

write_turns a.txt
run "first" --permission-mode acceptEdits
SID=$sid
check "the first run has a session id" test -n "$SID"
assert_eq "first run: acceptEdits shown" "$(shown)" "acceptEdits"
check "first run: the Write ran" test -f "$T/proj/a.txt"
file=$(session_file "$SID")
assert_eq "the session file notes the mode" \
  "$(jq -r 'select(.type=="permission-mode") | .permissionMode' "$file" | tail -n 1)" "acceptEdits"

write_turns b.txt
run "second" --resume "$SID"
assert_eq "resume: the mode shown is the session's" "$(shown)" "acceptEdits"
check "resume: acceptEdits is in effect (the Write ran headless)" test -f "$T/proj/b.txt"

write_turns c.txt
run "third" --continue
assert_eq "continue: the mode shown is the session's" "$(shown)" "acceptEdits"
check "continue: the Write ran" test -f "$T/proj/c.txt"

# A mode named on the command line wins, and the session keeps that one.
write_turns d.txt
run "fourth" --resume "$SID" --permission-mode default
assert_eq "a flag on resume wins" "$(shown)" "default"
check "a flag on resume wins: default denies the headless Write" test ! -e "$T/proj/d.txt"
write_turns e.txt
run "fifth" --resume "$SID"
assert_eq "the mode the flag chose is the one restored next" "$(shown)" "default"
check "and it is in effect" test ! -e "$T/proj/e.txt"

# bypassPermissions is chosen at each start, never carried over.
write_turns f.txt
run "bypass" --dangerously-skip-permissions
BYP=$sid
assert_eq "bypass session: shown" "$(shown)" "bypassPermissions"
write_turns g.txt
run "bypass again" --resume "$BYP"
assert_eq "bypass is not restored" "$(shown)" "default"
assert_contains "and the person is told" "$(cat "$T/err")" "is not restored"
check "the resumed bypass session asks (denied headless)" test ! -e "$T/proj/g.txt"

# auto is restored — unless the managed settings disable it meanwhile.
write_turns h.txt
run "auto" --permission-mode auto
AUTO=$sid
echo '{"permissions": {"disableAutoMode": "disable"}}' > "$T/managed.json"
export LOOM_MANAGED_SETTINGS="$T/managed.json"
write_turns i.txt
run "auto again" --resume "$AUTO"
assert_eq "a mode disabled by managed settings is not restored" "$(shown)" "default"
assert_contains "the warning names the managed file" "$(cat "$T/err")" "$T/managed.json"
unset LOOM_MANAGED_SETTINGS
finish
