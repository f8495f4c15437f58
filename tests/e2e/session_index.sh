#!/usr/bin/env bash
# The session index (<id>.idx beside <id>.jsonl, docs/session-format.md):
# a resume through it sends the same request bytes as reading the file
# whole (LOOM_SESSION_INDEX=0), whether the index is missing (built then),
# valid, stale (the file appended by another writer: caught up), or
# corrupt (rebuilt, with a log line, never a crash); and a fork after a
# lazy resume copies every record, not only the ones the resume read.
source "$(dirname "$0")/_lib.sh"

cat > "$T/s.json" <<'JSON'
{"sequence": true, "turns": [{"reply": {"text": "going on."}, "repeat": 100}]}
JSON
start_mock "$T/s.json"
use_provider anthropic
sid=0190a000-0000-7000-8000-000000000000
dir="$LOOM_HOME/projects/$(printf '%s' "$PWD" | tr -c 'A-Za-z0-9' '-')"
mkdir -p "$dir"
file="$dir/$sid.jsonl" idx="$dir/$sid.idx"
# 2,000 records: compaction summaries every 600 records, a rewind branch
# every 40 turns, file-history snapshots.
python3 "$LOOM_SRC/bench/gen_session.py" "$T/pristine.jsonl" 2000 600 40
check "fixture: has summaries" grep -q '"type":"summary"' "$T/pristine.jsonl"

# resume NAME [VAR=VALUE | --flag]...: one `loom --resume` turn with those
# environment variables and flags; its request body goes to $T/body.NAME,
# its log to $T/log.NAME.
resume() {
  local name=$1 a
  shift
  local vars=() flags=()
  for a in "$@"; do
    case $a in [A-Z]*=*) vars+=("$a") ;; *) flags+=("$a") ;; esac
  done
  : > "$T/log.$name"
  env "${vars[@]}" LOOM_LOG="$T/log.$name" "$LOOM_BIN" --resume "$sid" -p "go on" \
    "${flags[@]}" > "$T/out.$name" 2> "$T/err.$name"
  check "$name: loom answered" grep -q "going on." "$T/out.$name"
  tail -n 1 "$MOCK_LOG" | jq -c .body > "$T/body.$name"
}
# put STATE: the session file (and its index, when the state has one) as
# saved. cp onto the existing file keeps its inode, which the index names;
# the index is copied after the file so it is not older than it.
put() {
  cp "$T/$1.jsonl" "$file"
  rm -f "$idx"
  if [ -f "$T/$1.idx" ]; then cp "$T/$1.idx" "$idx"; fi
}
same_body() { check "$1: the request is the same bytes as the whole read's" cmp "$T/body.$2" "$T/body.$3"; }
logged() { check "$1: the log says so" grep -q "$2" "$T/log.$3"; }

# No index yet: the first resume builds it.
put pristine
resume whole0 LOOM_SESSION_INDEX=0
check "whole read: writes no index" test ! -e "$idx"
put pristine
resume built
same_body "no index" built whole0
check "no index: one is built beside the file" test -s "$idx"
logged "no index" '"indexed ' built
cp "$file" "$T/warm.jsonl"
cp "$idx" "$T/warm.idx"

# A valid index: used, and nothing past it to scan.
put warm
resume whole1 LOOM_SESSION_INDEX=0
put warm
resume indexed
same_body "valid index" indexed whole1
logged "valid index" 'through its index: [0-9]* records, 0 of them past' indexed
check "valid index: no rebuild" bash -c "! grep -q 'cannot be used' '$T/log.indexed'"
check "valid index: kept up with the turn just appended" test "$(stat -c %s "$idx")" -gt \
  "$(stat -c %s "$T/warm.idx")"

# Stale: another writer (here a loom reading the file whole, so it writes
# no index entries) appended a turn after the index was written.
put warm
resume other LOOM_SESSION_INDEX=0
cp "$file" "$T/grown.jsonl"
cp "$T/warm.idx" "$T/grown.idx"
rm -f "$T/grown.idx.tmp"
put grown
rm -f "$idx"
resume whole2 LOOM_SESSION_INDEX=0
put grown
resume stale
same_body "stale index" stale whole2
logged "stale index" 'through its index: [0-9]* records, [1-9][0-9]* of them past' stale

# Corrupt indexes: each is rebuilt with a log line, and the request holds.
corrupt() { # NAME: a damaged copy of warm.idx made by the command that follows
  local name=$1
  shift
  put warm
  "$@"
  resume "$name"
  same_body "corrupt index ($name)" "$name" whole1
  logged "corrupt index ($name)" 'cannot be used' "$name"
  logged "corrupt index ($name): rebuilt" '"indexed ' "$name"
}
half() { truncate -s $(($(stat -c %s "$idx") / 2)) "$idx"; }
corrupt truncated half
garbage() { head -c 4096 /dev/urandom > "$idx"; }
corrupt garbage garbage
# An entry's offset moved: byte 24 + 4 is the first entry's offset.
shifted() { printf '\x07' | dd of="$idx" bs=1 seek=28 conv=notrunc status=none; }
corrupt shifted shifted
noheader() { printf 'LOOMIDX1' > "$idx"; }
corrupt header-only noheader
# Well-formed but wrong: the last message's entry names another parent (an
# id of the same length), so the tree it describes is not the file's. The
# lines a resume reads are checked against their entries.
forged() {
  python3 - "$idx" <<'PY'
import struct, sys
p = sys.argv[1]
b = bytearray(open(p, "rb").read())
pos, entries = 24, []
while pos < len(b):
    (n,) = struct.unpack_from("<I", b, pos)
    entries.append(pos)
    pos += 4 + n
def strings(at):
    q, out = at + 4 + 20, []
    for _ in range(4):
        (n,) = struct.unpack_from("<I", b, q)
        out.append((q + 4, n))
        q += 4 + (0 if n == 0xFFFFFFFF else n + 1)
    return out
msgs = [e for e in entries if bytes(b[strings(e)[0][0]:][:7]) == b"message"]
(pq, pn), other = strings(msgs[-1])[2], strings(msgs[-5])[1]
assert pn == other[1]
b[pq:pq + pn] = b[other[0]:other[0] + pn]
open(p, "wb").write(b)
PY
}
put warm
forged
resume forged
same_body "forged index" forged whole1
logged "forged index" 'does not match the lines' forged

# A damaged session file is read whole, with its warning, and gets no index.
put warm
printf 'not json\n' >> "$file"
resume damaged
check "damaged file: its index is removed" test ! -e "$idx"
assert_contains "damaged file: the bad line is warned about" "$(cat "$T/err.damaged")" "not JSON"

# A fork after a lazy resume copies the whole tree: the same records as a
# fork of the file read whole, and the same first request.
put warm
resume fork-whole LOOM_SESSION_INDEX=0 --fork-session --output-format=json
put warm
resume fork --fork-session --output-format=json
logged "fork" 'through its index' fork
same_body "fork after a lazy resume" fork fork-whole
types() { jq -r .type "$(session_file "$(jq -r .session_id "$T/out.$1")")" | paste -sd,; }
check "fork: a new session" test -n "$(types fork)"
assert_eq "fork: every record of the source is copied" "$(types fork)" "$(types fork-whole)"
assert_eq "fork: as many records as the source, a session-meta of its own and the turn" \
  "$(types fork | tr , '\n' | wc -l)" "$(($(wc -l < "$T/warm.jsonl") + 2))"

# Last, as it changes the file's inode: the session file replaced by an
# editor's save (same bytes, a new file) is not the one the index names.
replaced() { cp "$file" "$T/copy" && mv "$T/copy" "$file"; }
corrupt replaced replaced
[ -n "${KEEP:-}" ] && cp -r "$T" /tmp/si_keep; finish
