#!/usr/bin/env bash
# test.sh — the demo project's test: exits 0 when calc.sh is right.
cd "$(dirname "$0")"
source ./calc.sh
fail=0
check() {
  if [ "$2" == "$3" ]; then echo "ok   $1"; else echo "FAIL $1: expected $3, got $2"; fail=1; fi
}
check "add 2 3" "$(add 2 3)" 5
check "add -1 1" "$(add -1 1)" 0
check "mul 4 5" "$(mul 4 5)" 20
exit $fail
