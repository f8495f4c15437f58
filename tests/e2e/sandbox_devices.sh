#!/usr/bin/env bash
# A sandboxed command cannot make a device node anywhere, the writable area
# included (issue #10, class 7): run as root, `mknod ./disk b 8 0` in the
# workspace would open the raw disk (and every file's data and metadata on
# it) to the command. Spellings: mknod b / c in the workspace, in a
# writablePaths entry and beneath a temp dir, python os.mknod, cp -a of
# /dev/null, tar x of an archive that holds a device node. A FIFO is still
# made (the control). Needs root (CAP_MKNOD): without it the kernel refuses
# device nodes anyway, and the test says so.
source "$(dirname "$0")/_lib.sh"

if out=$("$LOOM_BIN" sandbox -- true 2>&1); [[ "$out" == *"not supported here"* ]]; then
  echo "skipped: $out"
  finish
  exit 0
fi
mkdir -p "$T/proj/.loom" "$T/extra" "$T/devsrc"
if [ "$(id -u)" != 0 ] || ! mknod "$T/devsrc/null" c 1 3 2>/dev/null; then
  echo "skipped: not root, device nodes cannot be made here at all"
  finish
  exit 0
fi
tar cf "$T/dev.tar" -C "$T/devsrc" null
rm -f "$T/devsrc/null"
TMPD=$(mktemp -d /tmp/loom-dev-XXXXXX)
echo "{\"sandbox\": {\"enabled\": true, \"writablePaths\": [\"$T/extra\"]}}" > "$T/proj/.loom/settings.json"
export LOOM_TRUST_WORKSPACE=1

spellings=(
  "mknod ./blk b 7 0"
  "mknod ./chr c 1 3"
  "mknod $T/extra/blk b 7 0"
  "mknod $TMPD/chr c 1 3"
  "python3 -c 'import os, stat; os.mknod(\"./py\", 0o600 | stat.S_IFCHR, os.makedev(1, 3))'"
  "cp -a /dev/null ./copied"
  "mkdir -p untar && tar xf $T/dev.tar -C untar"
)
turns='[]'
for i in "${!spellings[@]}"; do
  turns=$(jq --arg id "m$i" --arg c "${spellings[$i]}; echo status \$?" \
    '. + [{reply: {tool_calls: [{id: $id, name: "Bash", input: {command: $c}}]}}]' <<<"$turns")
done
turns=$(jq '. + [{reply: {tool_calls: [{id: "fifo", name: "Bash", input: {command: "mkfifo ./fifo && test -p ./fifo && echo fifo-made"}}]}},
                {reply: {text: "Done."}}]' <<<"$turns")
jq -n --argjson t "$turns" '{turns: $t}' > "$T/scenario.json"
start_mock "$T/scenario.json"
use_provider anthropic
json=$("$LOOM_BIN" -p "make devices" --permission-mode bypassPermissions --cwd "$T/proj" --output-format json)
assert_eq "the run completed" "$(jq -r .subtype <<<"$json")" "success"
file=$(session_file "$(jq -r .session_id <<<"$json")")
result() { jq -r --arg id "$1" 'select(.type=="function_call_result" and .callId==$id) | .output' "$file"; }
for i in "${!spellings[@]}"; do
  out=$(result "m$i")
  if [[ "$out" == *"status 0"* ]]; then not_ok "made a device node: ${spellings[$i]}"
  else ok "refused: ${spellings[$i]}"; fi
done
found=$(find "$T/proj" "$T/extra" "$TMPD" \( -type b -o -type c \) 2>/dev/null)
assert_eq "no device node exists anywhere the command could write" "$found" ""
assert_contains "a FIFO is still made" "$(result fifo)" "fifo-made"

# `loom sandbox` builds the same ruleset.
(cd "$T/proj" && "$LOOM_BIN" sandbox -- mknod ./cli b 7 0 > "$T/cli.out" 2>&1) && rc=0 || rc=$?
check "loom sandbox: mknod refused (exit $rc)" test "$rc" -ne 0
check "loom sandbox: no node" test ! -e "$T/proj/cli"
rm -rf "$TMPD"
finish
