#!/usr/bin/env bash
# The command line itself: version, usage errors, configuration errors, the
# offline replay provider, a prompt from stdin.
source "$(dirname "$0")/_lib.sh"

assert_contains "--version" "$("$LOOM_BIN" --version)" "loom 0."
set +e
"$LOOM_BIN" --output-format yaml -p hi 2>"$T/err"; status=$?
set -e
assert_eq "bad --output-format exits 2" "$status" "2"
assert_contains "bad --output-format says why" "$(cat "$T/err")" "text, json, stream-json or events"

set +e
"$LOOM_BIN" -p "hi" 2>"$T/err"; status=$?
set -e
assert_eq "no provider configured exits 2" "$status" "2"
assert_contains "no provider: says what to set" "$(cat "$T/err")" "ANTHROPIC_API_KEY"

set +e
"$LOOM_BIN" -p "hi" --resume 01234567-dead-beef 2>"$T/err" --provider replay \
  --cassette "$LOOM_SRC/examples/cassettes/demo.json"; status=$?
set -e
check "unknown session exits non-zero" test "$status" -ne 0
assert_contains "unknown session named" "$(cat "$T/err")" "01234567-dead-beef"

cassette="$LOOM_SRC/examples/cassettes/demo.json"
want=$(jq -r '.turns[0].text' "$cassette")
assert_eq "replay provider answers offline" \
  "$("$LOOM_BIN" -p "What is Loom?" --provider replay --cassette "$cassette")" "$want"
assert_eq "prompt from stdin" \
  "$(echo "What is Loom?" | "$LOOM_BIN" -p --provider replay --cassette "$cassette")" "$want"
"$LOOM_BIN" -p "What is Loom?" --provider replay --cassette "$cassette" \
  --permission-mode acceptEdits --output-format events > "$T/events"
first=$(head -n 1 "$T/events")
assert_eq "--permission-mode is recorded on the run" "$(jq -r .payload.permission_mode <<<"$first")" "acceptEdits"
set +e
"$LOOM_BIN" -p hi --permission-mode sometimes 2>"$T/err"; status=$?
set -e
assert_eq "an unknown permission mode exits 2" "$status" "2"
assert_contains "an unknown permission mode lists the modes" "$(cat "$T/err")" "bypassPermissions"
finish
