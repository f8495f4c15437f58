#!/usr/bin/env bash
# --add-dir makes a folder workspace for the sandbox too: with the sandbox
# on, a Bash command may write in an added folder (as an edit may), and
# still nowhere else outside the workspace; without the flag the same write
# is blocked. A settings file's additionalDirectories adds reading only.
source "$(dirname "$0")/_lib.sh"

if out=$("$LOOM_BIN" sandbox -- true 2>&1); [[ "$out" == *"not supported here"* ]]; then
  echo "skipped: $out"
  finish
  exit 0
fi

mkdir -p "$T/proj/.loom" "$T/extra" "$T/outside"
cat > "$T/proj/.loom/settings.json" <<JSON
{"sandbox": {"enabled": true, "writableTempDirs": false},
 "permissions": {"additionalDirectories": ["$T/outside"]}}
JSON
cat > "$T/scenario.json" <<JSON
{"turns": [
  {"reply": {"tool_calls": [{"id": "w_extra", "name": "Bash", "input": {"command": "echo hi > $T/extra/x"}}]}},
  {"reply": {"tool_calls": [{"id": "w_out", "name": "Bash", "input": {"command": "echo hi > $T/outside/y"}}]}},
  {"reply": {"text": "Done."}}
]}
JSON
# The mock is started here, not inside $(…): a subshell's exit would end it.
run() {
  LOOM_TRUST_WORKSPACE=1 "$LOOM_BIN" -p "write" --permission-mode bypassPermissions --cwd "$T/proj" \
    --output-format json "$@"
}
denied() {
  jq -c --arg id "$2" 'select(.type=="function_call_result" and .callId==$id) | .providerData.toolResult.rawResponse.sandboxDenied' \
    "$(session_file "$(jq -r .session_id <<<"$1")")"
}
start_mock "$T/scenario.json"
use_provider anthropic
json=$(run)
assert_eq "without --add-dir: the run completed" "$(jq -r .subtype <<<"$json")" "success"
assert_eq "without --add-dir the sandbox blocked the write to the extra folder" "$(denied "$json" w_extra)" "true"
check "…and nothing was written there" test ! -e "$T/extra/x"
start_mock "$T/scenario.json"
json=$(run --add-dir "$T/extra")
assert_eq "with --add-dir: the run completed" "$(jq -r .subtype <<<"$json")" "success"
assert_eq "with --add-dir the write was not blocked" "$(denied "$json" w_extra)" "false"
check "…and the command wrote in the added folder" test -s "$T/extra/x"
assert_eq "a folder the settings add for reading is still blocked for commands" "$(denied "$json" w_out)" "true"
check "…and nothing was written there" test ! -e "$T/outside/y"
finish
