#!/usr/bin/env bash
# A sandboxed command cannot change the metadata of files outside the
# writable area (issue #10, class 7): mode, owner, times and extended
# attributes of a fake ~/.ssh/authorized_keys (a denied path) and of a plain
# file outside the workspace stay as they were — stat and the xattr list are
# compared before and after — however the change is spelled: chmod, chmod -R,
# find -exec chmod, chown to the file's own owner (still a change: ctime),
# touch -d / -t / -r, python3 os.utime / os.chmod / os.chown / os.setxattr /
# os.removexattr, fchmod on a read-only descriptor, chmod through
# /proc/self/fd, /dev/fd, a symlink in the workspace, perl chmod/utime.
# Inside the workspace the same operations keep working (chmod +x, touch -d,
# cp -p, tar x with modes, setxattr).
source "$(dirname "$0")/_lib.sh"

if out=$("$LOOM_BIN" sandbox -- true 2>&1); [[ "$out" == *"not supported here"* ]]; then
  echo "skipped: $out"
  finish
  exit 0
fi

mkdir -p "$T/proj/.loom" "$T/outside" "$HOME/.ssh"
echo "ssh-ed25519 AAAA test" > "$HOME/.ssh/authorized_keys"
chmod 600 "$HOME/.ssh/authorized_keys"
echo "plain" > "$T/outside/plain"
chmod 644 "$T/outside/plain"
python3 -c "import os,sys; [os.setxattr(p, 'user.keep', b'1') for p in sys.argv[1:]]" \
  "$HOME/.ssh/authorized_keys" "$T/outside/plain"
echo '#!/bin/sh
echo script-ran' > "$T/proj/script.sh"
chmod 644 "$T/proj/script.sh"
# chattr +A then -A on a file (FS_IOC_GETFLAGS, SETFLAGS with
# FS_NOATIME_FL added, SETFLAGS back): read-modify-write as chattr does,
# since clearing a flag the filesystem owns (ext4's extents flag) is refused
# with EPERM sandbox or not.
cat > "$T/proj/setflags.py" <<'PY'
import fcntl, os, struct, sys
fd = os.open(sys.argv[1], os.O_RDONLY)
try:
    g = struct.unpack("l", fcntl.ioctl(fd, 0x80086601, struct.pack("l", 0)))[0]
    fcntl.ioctl(fd, 0x40086602, struct.pack("l", g | 0x80))
    fcntl.ioctl(fd, 0x40086602, struct.pack("l", g))
    print("setflags-ok")
except OSError as e:
    print("setflags-error: " + os.strerror(e.errno))
PY
# What this filesystem allows without a sandbox: tmpfs before Linux 6.0 and
# some overlay or network filesystems have no inode flags at all (ENOTTY,
# EOPNOTSUPP). There the ioctl cannot work inside either; the check is then
# that the sandbox adds no refusal of its own (the same error as outside).
# Where the kernel supports the flags, the ioctl must work inside.
setflags_here=$(cd "$T/proj" && cp script.sh probe.sh && python3 setflags.py probe.sh; rm -f probe.sh)
# $T is under /tmp: keep the temp dirs out of the writable set, or the
# outside file would be writable as a temp file.
echo '{"sandbox": {"enabled": true, "writableTempDirs": false}}' > "$T/proj/.loom/settings.json"

AK="$HOME/.ssh/authorized_keys"
PL="$T/outside/plain"
state() { # mode owner group mtime ctime, and the xattr names
  stat -c '%a %u %g %Y %Z' "$1"
  python3 -c "import os,sys; print(sorted(os.listxattr(sys.argv[1])))" "$1"
}

# Every spelling is tried on both targets ($F).
spellings=(
  'chmod 777 "$F"'
  'chmod -R 777 "$(dirname "$F")"'
  'find "$(dirname "$F")" -type f -exec chmod 666 {} +'
  'chown "$(stat -c %u:%g "$F")" "$F"'
  'touch -d "2001-02-03 04:05" "$F"'
  'touch -t 200102030405 "$F"'
  'touch -r /etc/hostname "$F"'
  'python3 -c "import os,sys; os.utime(sys.argv[1], (0, 0))" "$F"'
  'python3 -c "import os,sys; os.utime(sys.argv[1], ns=(1, 1), follow_symlinks=False)" "$F"'
  'python3 -c "import os,sys; os.chmod(sys.argv[1], 0o777)" "$F"'
  'python3 -c "import os,sys; st=os.stat(sys.argv[1]); os.chown(sys.argv[1], st.st_uid, st.st_gid)" "$F"'
  'python3 -c "import os,sys; os.setxattr(sys.argv[1], \"user.evil\", b\"1\")" "$F"'
  'python3 -c "import os,sys; os.removexattr(sys.argv[1], \"user.keep\")" "$F"'
  'python3 -c "import os,sys; fd=os.open(sys.argv[1], os.O_RDONLY); os.fchmod(fd, 0o777); os.fchown(fd, 0, 0)" "$F"'
  'python3 -c "import os,sys; fd=os.open(sys.argv[1], os.O_RDONLY); os.chmod(\"/proc/self/fd/%d\" % fd, 0o777)" "$F"'
  'python3 -c "import os,sys; fd=os.open(sys.argv[1], os.O_RDONLY); os.chmod(\"/dev/fd/%d\" % fd, 0o777)" "$F"'
  'ln -sf "$F" ./via-link && chmod 777 ./via-link && touch -d 2001-01-01 ./via-link'
  'chmod 777 /proc/self/cwd/../"$(realpath --relative-to=.. "$F")"'
  'perl -e "chmod(0777, \$ARGV[0]) + utime(0, 0, \$ARGV[0]) or exit 1" "$F"'
  # chattr +A's ioctl on a read-only descriptor: FS_IOC_GETFLAGS, then
  # FS_IOC_SETFLAGS with FS_NOATIME_FL added. Read-modify-write, as chattr
  # does: setting a bare 0x80 would clear ext4's extents flag, which ext4
  # refuses (EPERM) sandbox or not, and the refusal would prove nothing.
  'python3 -c "import fcntl,os,struct,sys; fd=os.open(sys.argv[1], os.O_RDONLY); g=struct.unpack(\"l\", fcntl.ioctl(fd, 0x80086601, struct.pack(\"l\", 0)))[0]; fcntl.ioctl(fd, 0x40086602, struct.pack(\"l\", g | 0x80))" "$F"'
)

turns='[]'
n=0
for target in AK PL; do
  for s in "${spellings[@]}"; do
    cmd="F=${!target}; $s; echo status \$?"
    turns=$(jq --arg id "$target$n" --arg c "$cmd" \
      '. + [{reply: {tool_calls: [{id: $id, name: "Bash", input: {command: $c}}]}}]' <<<"$turns")
    n=$((n + 1))
  done
done
# Inside the workspace the same kinds of change still work.
inside='chmod +x script.sh && ./script.sh && touch -d "2001-02-03 04:05" script.sh && stat -c "%Y" script.sh
cp -p script.sh copy.sh && test -x copy.sh && echo cp-p-kept-mode
mkdir -p unpack && tar cf t.tar script.sh && tar xpf t.tar -C unpack && test -x unpack/script.sh && echo tar-kept-mode
python3 -c "import os; os.setxattr(\"script.sh\", \"user.ok\", b\"1\"); print(os.listxattr(\"script.sh\"))"
python3 setflags.py script.sh
mkdir -p sub && chmod 700 sub && stat -c "%a" sub'
turns=$(jq --arg c "$inside" \
  '. + [{reply: {tool_calls: [{id: "inside", name: "Bash", input: {command: $c}}]}},
        {reply: {text: "Done."}}]' <<<"$turns")
jq -n --argjson t "$turns" '{turns: $t}' > "$T/scenario.json"

before_ak=$(state "$AK")
before_pl=$(state "$PL")
start_mock "$T/scenario.json"
use_provider anthropic
json=$("$LOOM_BIN" -p "change metadata" --permission-mode bypassPermissions --cwd "$T/proj" --output-format json)
assert_eq "the run completed" "$(jq -r .subtype <<<"$json")" "success"
file=$(session_file "$(jq -r .session_id <<<"$json")")
result() { jq -r --arg id "$1" 'select(.type=="function_call_result" and .callId==$id) | .output' "$file"; }
raw() { jq -c --arg id "$1" "select(.type==\"function_call_result\" and .callId==\$id) | .providerData.toolResult.rawResponse | $2" "$file"; }

# After each call, nothing changed. The whole state is compared once at the
# end (any spelling that got through would show), and each call's own exit
# status must be a failure.
assert_eq "authorized_keys: mode, owner, times, xattrs unchanged" "$(state "$AK")" "$before_ak"
assert_eq "a file outside the workspace: mode, owner, times, xattrs unchanged" "$(state "$PL")" "$before_pl"
n=0
for target in AK PL; do
  for s in "${spellings[@]}"; do
    out=$(result "$target$n")
    if [[ "$out" == *"status 0"* ]]; then not_ok "$target: succeeded: $s"; else ok "$target: refused: $s"; fi
    n=$((n + 1))
  done
done
# The model is told what was refused.
assert_eq "chmod outside: sandboxDenied" "$(raw PL${#spellings[@]} .sandboxDenied)" "true"
assert_contains "chmod outside: the note names the file" "$(result PL${#spellings[@]})" "$PL: outside the writable area"

out=$(result inside)
assert_contains "inside: chmod +x made the script runnable" "$out" "script-ran"
assert_contains "inside: touch -d set the time" "$out" "$(date -d '2001-02-03 04:05' +%s)"
assert_contains "inside: cp -p kept the mode" "$out" "cp-p-kept-mode"
assert_contains "inside: tar x kept the mode" "$out" "tar-kept-mode"
assert_contains "inside: setxattr works" "$out" "user.ok"
assert_contains "inside: chmod on a new directory" "$out" "700"
if [ "$setflags_here" = setflags-ok ]; then
  assert_contains "inside: the inode-flag ioctl (chattr +A/-A) works" "$out" "setflags-ok"
else
  echo "# no inode flags on this filesystem outside the sandbox either: $setflags_here"
  assert_contains "inside: the inode-flag ioctl fails only as it does outside the sandbox" "$out" "$setflags_here"
fi
check "inside: the script is executable on disk" test -x "$T/proj/script.sh"

# `loom sandbox` has a supervisor of its own: the same split.
chmod 644 "$T/proj/script.sh"
(cd "$T/proj" && "$LOOM_BIN" sandbox -- sh -c "chmod +x script.sh && chmod 777 '$PL'; touch -d 2001-01-01 '$AK'; python3 -c 'import os; os.setxattr(\"$PL\", \"user.evil\", b\"1\")'" \
  > "$T/cli.out" 2>&1) || true
check "loom sandbox: chmod +x inside works" test -x "$T/proj/script.sh"
assert_eq "loom sandbox: the outside file is unchanged" "$(state "$PL")" "$before_pl"
assert_eq "loom sandbox: authorized_keys is unchanged" "$(state "$AK")" "$before_ak"
assert_contains "loom sandbox: chmod was refused" "$(cat "$T/cli.out")" "Operation not permitted"
finish
