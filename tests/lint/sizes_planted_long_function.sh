#!/usr/bin/env bash
# The size check (.ci/sizes.py) must fail on a function over 150 lines and
# a file over 1,000 lines that give no reason, name them, and accept them
# once the reason is written ("Long:" above the function, "Size:" in the
# file's opening comment). Runs on a copy of src/.
set -euo pipefail
root="${LOOM_SRC:?LOOM_SRC is the repository}"
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
cp -r "$root/src" "$work/src"
fail() { echo "FAIL: $*" >&2; exit 1; }
python3 "$root/.ci/sizes.py" "$work" >"$work/out" || fail "the tree as it is fails: $(cat "$work/out")"

long_fn() {  # name lines
    printf 'int %s(int x)\n{\n' "$1"
    for _ in $(seq 1 "$2"); do printf '    x += 1;\n'; done
    printf '    return x;\n}\n'
}
{ printf '/* planted.c — a test file. */\n'; long_fn planted_long 160; } > "$work/src/base/planted.c"
python3 "$root/.ci/sizes.py" "$work" >"$work/out" && fail "a 160-line function passed"
grep -q 'src/base/planted.c:2: planted_long() is 16[0-9] lines' "$work/out" || fail "not named: $(cat "$work/out")"

{ printf '/* planted.c — a test file. */\n/* Long: one table. */\n'; long_fn planted_long 160; } > "$work/src/base/planted.c"
python3 "$root/.ci/sizes.py" "$work" >"$work/out" || fail "a Long: reason was not taken: $(cat "$work/out")"

{ printf '/* planted.c — a test file. */\n'; for i in $(seq 1 30); do long_fn "f$i" 40; done; } > "$work/src/base/planted.c"
python3 "$root/.ci/sizes.py" "$work" >"$work/out" && fail "a file over 1,000 lines passed"
grep -q 'src/base/planted.c: 1[0-9]* lines (over 1000)' "$work/out" || fail "not named: $(cat "$work/out")"

{ printf '/* planted.c — a test file.\n * Size: a parser kept whole. */\n'; for i in $(seq 1 30); do long_fn "f$i" 40; done; } > "$work/src/base/planted.c"
python3 "$root/.ci/sizes.py" "$work" >"$work/out" || fail "a Size: reason was not taken: $(cat "$work/out")"
echo "size check: planted long function and long file are caught, reasons are taken"
