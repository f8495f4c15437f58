#!/usr/bin/env bash
# The layer check (.ci/layers.py) must fail on an include that goes up the
# order of DESIGN.md §1, name the file and line, and pass again once the
# include is gone. It runs on a copy of src/, so the tree is never touched.
set -euo pipefail
root="${LOOM_SRC:?LOOM_SRC is the repository}"
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
cp -r "$root/src" "$work/src"
fail() { echo "FAIL: $*" >&2; exit 1; }

python3 "$root/.ci/layers.py" "$work" >"$work/clean.out" \
  || fail "the check fails on the tree as it is: $(cat "$work/clean.out")"

plant() {  # file line-to-insert expected-words...
    local file=$1 inc=$2; shift 2
    cp "$work/src/$file" "$work/orig"
    sed -i "3i $inc" "$work/src/$file"
    if python3 "$root/.ci/layers.py" "$work" >"$work/out"; then
        fail "a planted '$inc' in src/$file passed the check"
    fi
    grep -q "^src/$file:3: " "$work/out" || fail "the report does not name src/$file:3: $(cat "$work/out")"
    for w in "$@"; do grep -q -- "$w" "$work/out" || fail "the report lacks '$w': $(cat "$work/out")"; done
    cp "$work/orig" "$work/src/$file"
}

plant base/str.c '#include "runtime/loop.h"' upward
plant session/record.c '#include "governance/pipeline.h"' upward
plant context/tokens.c '#include "tools/tool.h"' sideways "context -> tools"
plant shell/bash_parse.c '#include "policy/rules.h"' sideways
plant policy/decision.c '#include "loom.h"' 'loom.h'
plant surfaces/cli/main.c '#include "runtime/loop.h"' 'a surface includes'

python3 "$root/.ci/layers.py" "$work" >/dev/null || fail "the restored copy fails the check"
echo "layer check: planted upward and sideways includes are caught"
