#!/usr/bin/env bash
# A 100-turn run completes and the session holds every turn; --max-turns
# stops a run with exit status 3 and a stated reason, and it can be resumed.
source "$(dirname "$0")/_lib.sh"

mkdir -p "$T/proj"
jq -n '{turns: ([range(0; 99) | {reply: {text: "step \(.)", tool_calls: [{id: "t\(.)", name: "Bash", input: {command: "echo turn \(.)"}}]}}]
                + [{reply: {text: "All 100 turns done."}}])}' > "$T/long.json"
start_mock "$T/long.json"
use_provider anthropic
json=$("$LOOM_BIN" -p "go" --permission-mode bypassPermissions --cwd "$T/proj" --output-format json)
assert_eq "100 turns: completed" "$(jq -r .subtype <<<"$json")" "success"
assert_eq "100 turns: counted" "$(jq -r .num_turns <<<"$json")" "100"
file=$(session_file "$(jq -r .session_id <<<"$json")")
assert_eq "100 turns: 99 calls on disk" "$(jq -r 'select(.type=="function_call") | .name' "$file" | wc -l)" "99"
assert_eq "100 turns: 99 results on disk" "$(jq -r 'select(.type=="function_call_result") | .isError' "$file" | grep -c false)" "99"
assert_eq "100 turns: 100 assistant messages" "$(jq -r 'select(.type=="message" and .role=="assistant") | .id' "$file" | wc -l)" "100"
assert_contains "100 turns: the last result is turn 98" "$(jq -r 'select(.type=="function_call_result") | .output' "$file" | tail -n 1)" "turn 98"

set +e
json=$("$LOOM_BIN" -p "go" --permission-mode bypassPermissions --cwd "$T/proj" --max-turns 5 --output-format json 2>"$T/err")
status=$?
set -e
assert_eq "--max-turns: exit status 3" "$status" "3"
assert_eq "--max-turns: subtype" "$(jq -r .subtype <<<"$json")" "error_max_turns"
assert_eq "--max-turns: stop reason" "$(jq -r .stop_reason <<<"$json")" "max_turns"
assert_contains "--max-turns: reason on stderr" "$(cat "$T/err")" "stopped after 5 turns"
id=$(jq -r .session_id <<<"$json")
json=$("$LOOM_BIN" -p "go on" --resume "$id" --permission-mode bypassPermissions --cwd "$T/proj" --max-turns 3 --output-format json || true)
assert_eq "--max-turns: the resumed run picks up at turn 6" \
  "$(jq -r 'select(.type=="function_call") | .name' "$(session_file "$id")" | wc -l)" "8"
finish
