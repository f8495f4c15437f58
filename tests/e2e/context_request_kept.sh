#!/usr/bin/env bash
# The request kept, not rebuilt (docs/context.md "The request kept"): on
# each wire format a 40-turn run of Reads keeps its history from turn to
# turn — the log's last turn has the settled messages kept and the keep
# started once — and a run that compacts starts over after the compaction
# and still completes. _lib.sh sets LOOM_CHECK_REQUEST_ENCODING, so every
# request here is also compared byte for byte with one made from the
# records, and finish() fails on any difference.
source "$(dirname "$0")/_lib.sh"

mkdir -p "$T/proj"
seq 1 200 | sed 's/^/line /' > "$T/proj/small.txt"
jq -n --arg f "$T/proj/small.txt" '{turns: ([range(0; 39) | {reply: {text: "Reading on.",
    tool_calls: [{name: "Read", input: {file_path: $f, offset: (. + 1), limit: 3}}]}}]
    + [{reply: {text: "Forty turns done."}}])}' > "$T/reads.json"

last_turn() { # LOG FIELD — FIELD of the log's last "turn" line
  jq -s -r --arg f "$2" '[.[] | select(.module == "turn")] | last | .[$f]' "$1"
}

for provider in anthropic openai openai-responses; do
  start_mock "$T/reads.json"
  use_provider "$provider"
  LOOM_LOG="$T/$provider.log" "$LOOM_BIN" -p "read small.txt" --permission-mode bypassPermissions \
    --cwd "$T/proj" --output-format json > "$T/out-$provider" 2>"$T/err-$provider"
  assert_eq "$provider: completed" "$(jq -r .subtype "$T/out-$provider")" "success"
  assert_eq "$provider: 40 turns logged" \
    "$(jq -s '[.[] | select(.module == "turn")] | length' "$T/$provider.log")" "40"
  kept=$(last_turn "$T/$provider.log" kept_messages)
  # 40 turns make 80 messages; all but the last runs are kept.
  check "$provider: the last turn kept $kept of the history's messages" test "$kept" -ge 76
  assert_eq "$provider: the keep started once" "$(last_turn "$T/$provider.log" history_rebuilds)" "1"
  # The next run on the session starts the keep over from the records once.
  sid=$(jq -r .session_id "$T/out-$provider")
  stop_mock
  start_mock "$T/reads.json"
  LOOM_LOG="$T/$provider-2.log" "$LOOM_BIN" -p "again" --resume "$sid" --max-turns 3 \
    --permission-mode bypassPermissions --cwd "$T/proj" --output-format json \
    > "$T/out2-$provider" 2>"$T/err2-$provider" || true
  kept2=$(jq -s '[.[] | select(.module == "turn")] | first | .kept_messages' "$T/$provider-2.log")
  check "$provider: a resumed run keeps the earlier history ($kept2 messages)" test "$kept2" -ge 76
  stop_mock
done

# A compaction (a 16k window the mock enforces, ~750 tokens per result)
# changes the history under the keep: it starts over, and the run goes on.
head -c 2999 < <(yes 'lorem ipsum dolor sit amet consectetur') > "$T/proj/big.txt"
SUMMARY='<analysis>Reading a file.</analysis><summary>1. Primary Request and Intent: read big.txt.
2. Key Technical Concepts: none.
3. Files and Code Sections: big.txt.
4. Errors and Fixes: none.
5. Problem Solving: reading.
6. All User Messages: the goal.</summary>'
jq -n --arg summary "$SUMMARY" --arg f "$T/proj/big.txt" '{sequence: true, context_window: 16000,
  turns: [
    {match: {no_tools: true}, reply: {text: $summary}},
    {repeat: 30, reply: {tool_calls: [{name: "Bash", input: {command: "cat big.txt"}}]}},
    {reply: {text: "All reads done."}}]}' > "$T/compact.json"
start_mock "$T/compact.json"
use_provider anthropic
LOOM_CONTEXT_WINDOW=16000 LOOM_MAX_OUTPUT_TOKENS=2000 LOOM_LOG="$T/compact.log" \
  "$LOOM_BIN" -p "Read big.txt again and again." --permission-mode bypassPermissions \
  --cwd "$T/proj" --output-format json > "$T/out-compact" 2>"$T/err-compact"
assert_eq "compacting run: completed" "$(jq -r .subtype "$T/out-compact")" "success"
file=$(session_file "$(jq -r .session_id "$T/out-compact")")
n_compact=$(jq -r 'select((.type == "summary" and .providerData.compactType == "auto")
  or (.type == "context-edit")) | .id' "$file" | wc -l)
check "the run compacted ($n_compact summaries or edits)" test "$n_compact" -ge 1
rebuilds=$(last_turn "$T/compact.log" history_rebuilds)
check "the keep started over after compacting ($rebuilds starts)" test "$rebuilds" -ge 2
finish
