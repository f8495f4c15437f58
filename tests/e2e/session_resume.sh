#!/usr/bin/env bash
# Sessions: --resume sends the stored history, --continue picks the latest,
# --fork-session continues in a copy; kill -9 mid-stream then --resume loads
# every completed record; a torn last line is dropped with a warning.
source "$(dirname "$0")/_lib.sh"

start_mock "$SCENARIOS/chat_two_turns.json"
use_provider anthropic
json=$("$LOOM_BIN" -p "first question" --output-format json)
id=$(jq -r .session_id <<<"$json")
out=$("$LOOM_BIN" -p "second question" --resume "$id")
assert_eq "resume: the model saw the first turn" "$out" "Second turn: I remember the first."
last=$(tail -n 1 "$MOCK_LOG")
assert_eq "resume: history sent in order" \
  "$(jq -r '[.body.messages[].role] | join(",")' <<<"$last")" "user,assistant,user"
assert_eq "resume: thinking sent back with its signature" \
  "$(jq -r '.body.messages[1].content[0].signature' <<<"$last")" "sig-mock-1"
out=$("$LOOM_BIN" -p "third" --continue)
assert_eq "continue: latest session continued" "$out" "Third turn."
file=$(session_file "$id")
assert_eq "continue: same file grew" "$(jq -r 'select(.type=="message") | .role' "$file" | paste -sd,)" \
  "user,assistant,user,assistant,user,assistant"

json=$("$LOOM_BIN" -p "forked question" --resume "${id:0:13}" --fork-session --output-format json)
assert_eq "fork: answered" "$(jq -r .result <<<"$json")" "Forked reply."
fork=$(jq -r .session_id <<<"$json")
check "fork: a new session id" test "$fork" != "$id"
assert_eq "fork: meta names its origin" \
  "$(jq -r 'select(.type=="session-meta") | .forkedFrom' "$(session_file "$fork")")" "$id"
assert_eq "fork: original untouched" "$(jq -r 'select(.type=="message") | .role' "$file" | wc -l)" "6"

# kill -9 in the middle of a streamed reply.
start_mock "$SCENARIOS/slow_drip.json"
json=$("$LOOM_BIN" -p "quick one" --output-format json)
id=$(jq -r .session_id <<<"$json")
file=$(session_file "$id")
before=$(wc -l < "$file")
# events: text mode holds a reply off a terminal until the call succeeds
# (docs/cli.md), and this needs to see the stream under way.
"$LOOM_BIN" -p "slow one" --resume "$id" --output-format events >"$T/partial" 2>&1 &
pid=$!
for _ in $(seq 1 100); do grep -q '"token.delta"' "$T/partial" && break; sleep 0.05; done
sleep 0.3
kill -9 "$pid"
wait "$pid" 2>/dev/null || true
check "crash: some of the reply had streamed" grep -q '"token.delta"' "$T/partial"
check "crash: every line on disk is whole JSON" valid_jsonl "$file"
assert_eq "crash: prompt recorded, no half reply" "$(wc -l < "$file")" "$((before + 1))"
out=$("$LOOM_BIN" -p "continue after the crash" --resume "$id" 2>"$T/err")
assert_eq "crash: resume works" "$out" "Resumed after the crash."
last=$(tail -n 1 "$MOCK_LOG")
assert_eq "crash: every completed record was loaded and sent" \
  "$(jq -r '[.body.messages[].role] | join(",")' <<<"$last")" "user,assistant,user"

# A torn final line (a write cut off by power loss) is dropped with a warning.
printf '{"type":"message","id":"0190-torn' >> "$file"
out=$("$LOOM_BIN" -p "continue after the crash" --resume "$id" 2>"$T/err")
assert_eq "torn: resume still answers" "$out" "Resumed after the crash."
assert_contains "torn: warning printed" "$(cat "$T/err")" "torn"
check "torn: file is whole JSONL again" valid_jsonl "$file"
finish
