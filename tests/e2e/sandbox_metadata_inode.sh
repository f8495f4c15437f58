#!/usr/bin/env bash
# A sandboxed command cannot change the inode metadata the plain metadata
# calls do not reach (issue #10, class 7): inode flags (chattr's immutable,
# append-only, nodump), fsxattr flags and the inode generation of a file
# outside the writable area stay as they were — lsattr -v is compared before
# and after — however the change is spelled: chattr, file_setattr(2) by path,
# on a read-only descriptor with AT_EMPTY_PATH and with a NULL path,
# FS_IOC_SETFLAGS / FS_IOC_FSSETXATTR with garbage in the upper half of the
# request (the kernel reads 32 bits), FS_IOC32_SETFLAGS, FS_IOC_SETVERSION on
# a read-only descriptor. Inside the workspace chattr and file_setattr keep
# working, and the getters (lsattr, filefrag) work everywhere.
source "$(dirname "$0")/_lib.sh"

if out=$("$LOOM_BIN" sandbox -- true 2>&1); [[ "$out" == *"not supported here"* ]]; then
  echo "skipped: $out"
  finish
  exit 0
fi

mkdir -p "$T/proj/.loom" "$T/outside"
echo "plain" > "$T/outside/plain"
PL="$T/outside/plain"
if ! lsattr -v "$PL" >/dev/null 2>&1 || ! chattr +d "$PL" 2>/dev/null; then
  echo "skipped: this filesystem has no inode flags"
  finish
  exit 0
fi
chattr -d "$PL"
echo "inside" > "$T/proj/in.txt"
# $T is under /tmp: keep the temp dirs out of the writable set.
echo '{"sandbox": {"enabled": true, "writableTempDirs": false}}' > "$T/proj/.loom/settings.json"

state() { lsattr -v "$1" | awk '{print $1, $2}'; }

# The C structure of file_setattr(2) (struct file_attr, 32 bytes) with
# FS_XFLAG_NODUMP (0x80); syscall 469 on x86_64 and the unified table.
fsa='import ctypes,os,sys; libc=ctypes.CDLL(None, use_errno=True); attr=ctypes.create_string_buffer(32); ctypes.memmove(attr, (0x80).to_bytes(8, "little"), 8)'
spellings=(
  'chattr +d "$F"'
  'chattr +i "$F"'
  'python3 -c "$fsa; r=libc.syscall(469, -100, sys.argv[1].encode(), attr, 32, 0); sys.exit(0 if r == 0 else 1)" "$F"'
  'python3 -c "$fsa; fd=os.open(sys.argv[1], os.O_RDONLY); r=libc.syscall(469, fd, b\"\", attr, 32, 0x1000); sys.exit(0 if r == 0 else 1)" "$F"'
  'python3 -c "$fsa; fd=os.open(sys.argv[1], os.O_RDONLY); r=libc.syscall(469, fd, None, attr, 32, 0x1000); sys.exit(0 if r == 0 else 1)" "$F"'
  'python3 -c "import fcntl,os,struct,sys; fd=os.open(sys.argv[1], os.O_RDONLY); fcntl.ioctl(fd, 0x140086602, struct.pack(\"l\", 0x40))" "$F"'
  'python3 -c "import fcntl,os,struct,sys; fd=os.open(sys.argv[1], os.O_RDONLY); fcntl.ioctl(fd, 0xffffffff40086602, struct.pack(\"l\", 0x40))" "$F"'
  'python3 -c "import fcntl,os,struct,sys; fd=os.open(sys.argv[1], os.O_RDONLY); fcntl.ioctl(fd, 0x40046602, struct.pack(\"i\", 0x40))" "$F"'
  'python3 -c "import fcntl,os,struct,sys; fd=os.open(sys.argv[1], os.O_RDONLY); fcntl.ioctl(fd, 0x1401c5820, struct.pack(\"IIIII8x\", 0x80, 0, 0, 0, 0))" "$F"'
  'python3 -c "import fcntl,os,struct,sys; fd=os.open(sys.argv[1], os.O_RDONLY); fcntl.ioctl(fd, 0x40087602, struct.pack(\"l\", 4242))" "$F"'
  'python3 -c "import fcntl,os,struct,sys; fd=os.open(sys.argv[1], os.O_PATH); fcntl.ioctl(os.open(\"/proc/self/fd/%d\" % fd, os.O_RDONLY), 0x140086602, struct.pack(\"l\", 0x40))" "$F"'
)

turns='[]'
n=0
for s in "${spellings[@]}"; do
  cmd="F=$PL; fsa='$fsa'; $s; echo status \$?"
  turns=$(jq --arg id "PL$n" --arg c "$cmd" \
    '. + [{reply: {tool_calls: [{id: $id, name: "Bash", input: {command: $c}}]}}]' <<<"$turns")
  n=$((n + 1))
done
inside="chattr +d in.txt && lsattr in.txt && chattr -d in.txt && echo chattr-inside-ok
python3 -c '$fsa; r=libc.syscall(469, -100, b\"in.txt\", attr, 32, 0); print(\"file-setattr-inside\", r)'
lsattr -v '$PL' && echo lsattr-outside-ok
filefrag '$PL' && echo filefrag-outside-ok"
turns=$(jq --arg c "$inside" \
  '. + [{reply: {tool_calls: [{id: "inside", name: "Bash", input: {command: $c}}]}},
        {reply: {text: "Done."}}]' <<<"$turns")
jq -n --argjson t "$turns" '{turns: $t}' > "$T/scenario.json"

before=$(state "$PL")
start_mock "$T/scenario.json"
use_provider anthropic
json=$("$LOOM_BIN" -p "change inode flags" --permission-mode bypassPermissions --cwd "$T/proj" --output-format json)
assert_eq "the run completed" "$(jq -r .subtype <<<"$json")" "success"
file=$(session_file "$(jq -r .session_id <<<"$json")")
result() { jq -r --arg id "$1" 'select(.type=="function_call_result" and .callId==$id) | .output' "$file"; }

assert_eq "outside: inode flags and generation unchanged" "$(state "$PL")" "$before"
n=0
for s in "${spellings[@]}"; do
  out=$(result "PL$n")
  if [[ "$out" == *"status 0"* ]]; then not_ok "succeeded: $s"; else ok "refused: $s"; fi
  n=$((n + 1))
done
out=$(result inside)
assert_contains "inside: chattr works" "$out" "chattr-inside-ok"
assert_contains "inside: file_setattr works" "$out" "file-setattr-inside 0"
assert_contains "outside: lsattr (a getter) works" "$out" "lsattr-outside-ok"
assert_contains "outside: filefrag (FIEMAP) works" "$out" "filefrag-outside-ok"

# `loom sandbox` has the same filter and supervisor.
(cd "$T/proj" && "$LOOM_BIN" sandbox -- sh -c "chattr +d '$PL'; python3 -c \"import fcntl,os,struct; fd=os.open('$PL', os.O_RDONLY); fcntl.ioctl(fd, 0x140086602, struct.pack('l', 0x40))\"" \
  > "$T/cli.out" 2>&1) || true
assert_eq "loom sandbox: the outside file's flags are unchanged" "$(state "$PL")" "$before"
assert_contains "loom sandbox: chattr was refused" "$(cat "$T/cli.out")" "Operation not permitted"
chattr -i -d -a "$PL" 2>/dev/null || true
finish
