#!/usr/bin/env bash
# The settings schema reaches the user: a key Loom does not know, in any of
# the three settings files, is a warning naming the file and the key with
# the nearest known key, and the run goes on; a known key of the wrong type
# is an error naming the file, the key and the type it must have, and no
# request is made; a torn file is an error naming it, never a crash. The
# same warnings reach `loom sandbox`, which reads the files itself.
source "$(dirname "$0")/_lib.sh"

lacks() { [[ "$1" != *"$2"* ]]; }

mkdir -p "$T/proj/.loom"
cat > "$T/s.json" <<'JSON'
{"turns": [{"reply": {"text": "Settings read."}}]}
JSON
start_mock "$T/s.json"
use_provider anthropic

# run NAME ARGS... — loom -p in the project; sets status, out, err.
run() {
  local name=$1; shift
  set +e
  out=$("$LOOM_BIN" -p "hello" --cwd "$T/proj" "$@" 2> "$T/$name.err")
  status=$?
  set -e
  err=$(cat "$T/$name.err")
}

# ---- 1. unknown keys: warnings, and the run goes on -------------------------
echo '{"modle": "claude-x", "max_turns": 5}' > "$LOOM_HOME/settings.json"
echo '{"permissions": {"deny": ["Bash(rm:*)"], "alow": ["Read"]}}' > "$T/proj/.loom/settings.json"
echo '{"zzqqxx": 1, "sandbox": {"enabeld": true}}' > "$T/proj/.loom/settings.local.json"
run unknown --output-format json
assert_eq "unknown keys: the run completed" "$status" "0"
assert_eq "unknown keys: the model's reply came back" "$(jq -r .result <<<"$out")" "Settings read."
assert_contains "the user file's unknown key is a warning naming file, key and the nearest key" "$err" \
  "loom: warning: $LOOM_HOME/settings.json: unknown key \"modle\" (did you mean \"model\"?)"
assert_contains "a nested unknown key names its whole path and the nearest member" "$err" \
  "loom: warning: $T/proj/.loom/settings.json: unknown key \"permissions.alow\" (did you mean \"permissions.allow\"?)"
assert_contains "the local file's unknown sandbox key is named too" "$err" \
  "loom: warning: $T/proj/.loom/settings.local.json: unknown key \"sandbox.enabeld\" (did you mean \"sandbox.enabled\"?)"
assert_contains "a key near nothing gets no guess" "$err" \
  "$T/proj/.loom/settings.local.json: unknown key \"zzqqxx\""
check "a key near nothing is not given a made-up nearest key" lacks "$err" '"zzqqxx" (did you mean'
check "the known keys are not warned about" lacks "$err" 'unknown key "max_turns"'
# The untrusted project's notices still come, after the schema's warnings.
assert_contains "the trust notices still reach the user" "$err" \
  "ignored .loom/settings.json: permissions.alow"
warn_line=$(grep -n 'unknown key "permissions.alow"' "$T/unknown.err" | cut -d: -f1)
notice_line=$(grep -n 'ignored .loom/settings.json: permissions.alow' "$T/unknown.err" | cut -d: -f1)
check "the schema's warnings come before the trust notices" test "$warn_line" -lt "$notice_line"

# The plain text format shows them the same way.
run unknown_text
assert_eq "text format: the run completed" "$status" "0"
assert_contains "text format: the warning reaches stderr" "$err" \
  "warning: $LOOM_HOME/settings.json: unknown key \"modle\" (did you mean \"model\"?)"

# `loom sandbox` reads the files on its own and says the same.
set +e
sb=$(cd "$T/proj" && "$LOOM_BIN" sandbox -- true 2>&1)
set -e
assert_contains "loom sandbox: the unknown key is named" "$sb" \
  "loom sandbox: $T/proj/.loom/settings.local.json: unknown key \"sandbox.enabeld\" (did you mean \"sandbox.enabled\"?)"

# ---- 2. a wrong type: an error, no request ------------------------------------
rm -f "$T/proj/.loom/settings.json" "$T/proj/.loom/settings.local.json"
echo '{"max_turns": [5]}' > "$LOOM_HOME/settings.json"
check "(the runs above reached the model, so an empty log below means no request)" \
  test -s "$MOCK_LOG"
: > "$MOCK_LOG"
run wrongtype --output-format json
check "a wrong type: loom exits with an error" test "$status" -ne 0
check "a wrong type: not a crash" test "$status" -lt 128
assert_contains "a wrong type names the file, the key and the type it must have" "$err" \
  "$LOOM_HOME/settings.json: max_turns must be a number or a string, not an array"
assert_eq "a wrong type: no request reached the model" "$(wc -l < "$MOCK_LOG" | tr -d ' ')" "0"

echo '{"model": "m"}' > "$LOOM_HOME/settings.json"
echo '{"sandbox": {"enabled": "yes"}}' > "$T/proj/.loom/settings.local.json"
run wrongnested
check "a nested wrong type: loom exits with an error" test "$status" -ne 0
assert_contains "a nested wrong type names the local file and the key path" "$err" \
  "$T/proj/.loom/settings.local.json: sandbox.enabled must be true or false, not a string"
rm -f "$T/proj/.loom/settings.local.json"

echo '{"permissions": {"allow": "Bash"}}' > "$T/proj/.loom/settings.json"
run wronglist
check "a rule list given as a string: an error" test "$status" -ne 0
assert_contains "it names the project file, the key and the type" "$err" \
  "$T/proj/.loom/settings.json: permissions.allow must be an array, not a string"

# ---- 3. a torn file: an error naming it, never a crash --------------------------
printf '{"model": "m", "permissions": {"allow": ["Bash' > "$T/proj/.loom/settings.json"
run torn
check "a torn file: loom exits with an error" test "$status" -ne 0
check "a torn file: not a crash" test "$status" -lt 128
assert_contains "a torn file is named" "$err" "invalid JSON in $T/proj/.loom/settings.json"
echo '[1, 2]' > "$T/proj/.loom/settings.json"
run array
check "settings that are not an object: an error" test "$status" -ne 0
assert_contains "it says so, naming the file" "$err" "$T/proj/.loom/settings.json is not a JSON object"
assert_eq "no request for any of the bad files" "$(wc -l < "$MOCK_LOG" | tr -d ' ')" "0"

finish
