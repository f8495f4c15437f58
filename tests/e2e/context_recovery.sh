#!/usr/bin/env bash
# Compaction that recovers (seed 001 §8.3, §8.5). A person pastes a log far
# larger than the window of a server whose limit Loom was never told: the
# server refuses the prompt; reactive compaction cannot help (its own
# request carries the user's words verbatim and is refused too, so renew
# stands in, carrying the pasted prompt over whole), and the compacted
# request is refused again. The 9-dimension recovery summary then replaces
# the whole history — the pasted prompt shortened inside it — and the run
# goes on and completes. After the summary, the file the task was working
# on is re-read from disk (its current text, not the one in the
# transcript) into the next request's tail, as a data-role="file"
# reminder; so are the standing reminders (a SessionStart hook's context).
source "$(dirname "$0")/_lib.sh"
export LOOM_TRUST_WORKSPACE=1

mkdir -p "$T/proj/.loom"
printf 'version one of the notes\n' > "$T/proj/notes.txt"
# The pasted log: ~60 kB, far over the 8,000-token window (~32 kB).
PASTE=$(for _ in $(seq 800); do echo 'ERROR 2026-12-04 worker-7 connection reset by peer while flushing the queue'; done)
cat > "$T/proj/.loom/settings.json" <<'JSON'
{"hooks": {"SessionStart": [{"hooks": [{"type": "command",
  "command": "echo '{\"hookSpecificOutput\": {\"hookEventName\": \"SessionStart\", \"additionalContext\": \"House rule: tabs, never spaces.\"}}'"}]}]}}
JSON

RECOVERY='Summary:
1. Primary Request and Intent: the user pasted a long log and asked what failed.
8. Current Work: reading the pasted log for the failing worker.'
jq -n --arg r "$RECOVERY" '{context_window: 8000, turns: [
  {match: {no_tools: true, body_contains: "Optional Next Step"}, reply: {text: $r}},
  {match: {no_tools: true}, reply: {text: "<summary>a compaction summary</summary>"}},
  {match: {body_contains: "Current Work: reading the pasted log"}, reply: {text: "worker-7 lost its connection."}},
  {reply: {tool_calls: [{name: "Read", input: {file_path: "notes.txt"}}]}},
  {reply: {tool_calls: [{name: "Bash", input: {command: "printf \"version two of the notes\\n\" > notes.txt"}}]}},
  {reply: {text: "Noted."}}]}' > "$T/scenario.json"
start_mock "$T/scenario.json"
use_provider anthropic
json=$("$LOOM_BIN" -p "read notes.txt, then update it" --permission-mode bypassPermissions \
  --cwd "$T/proj" --output-format json 2>"$T/err1")
id=$(jq -r .session_id <<<"$json")
assert_eq "first run: completes" "$(jq -r .result <<<"$json")" "Noted."
assert_eq "first run: the file changed on disk after it was read" "$(cat "$T/proj/notes.txt")" "version two of the notes"

: > "$MOCK_LOG"
json=$("$LOOM_BIN" -p "What failed here?
$PASTE" --resume "$id" --permission-mode bypassPermissions --cwd "$T/proj" \
  --output-format json 2>"$T/err2")
assert_eq "pasted log: the run completes" "$(jq -r .subtype <<<"$json")" "success"
assert_eq "pasted log: answered from the recovery summary" "$(jq -r .result <<<"$json")" "worker-7 lost its connection."
refused=$(jq -s '[.[] | select(.window_exceeded)] | length' "$MOCK_LOG")
check "pasted log: the server refused the prompt, the compaction and the compacted prompt ($refused)" \
  test "$refused" -ge 3
recovery_req=$(jq -s -r '[.[] | select(.status == 200 and .body.tools == null)] | last | .body.messages[-1].content | map(.text) | join("")' "$MOCK_LOG")
assert_contains "recovery: the request asks for the nine sections" "$recovery_req" "9. Optional Next Step"
assert_contains "recovery: the eighth is Current Work" "$recovery_req" "8. Current Work"
assert_contains "recovery: the pasted prompt is in it, shortened" "$recovery_req" "of this message"
file=$(session_file "$id")
assert_eq "recovery: the session holds a max_token summary" \
  "$(jq -r 'select(.type=="summary" and .providerData.compactType=="max_token") | .providerData.compactType' "$file")" "max_token"
last=$(tail -n 1 "$MOCK_LOG")
assert_eq "the request after recovery fits the window" "$(jq -r .window_exceeded <<<"$last")" "false"
tail_text=$(jq -r '.body.messages[-1].content | map(.text // "") | join("")' <<<"$last")
assert_contains "after recovery: the file is re-read into the tail" "$tail_text" '<system-reminder data-role="file">'
assert_contains "after recovery: with its text as it is on disk now" "$tail_text" "version two of the notes"
check "after recovery: not the text the transcript holds" \
  bash -c '! grep -q "version one" <<<"$1"' _ "$tail_text"
assert_contains "after recovery: the file is named" "$tail_text" "<file path=\"$T/proj/notes.txt\">"
check "after recovery: the pasted log is not carried over whole" \
  bash -c '[ "$(grep -o "connection reset by peer" <<<"$1" | wc -l)" -lt 100 ]' _ "$(jq -r .raw_body <<<"$last")"
assert_eq "after recovery: the SessionStart context is repeated, once" \
  "$(grep -o 'data-role="session-hook">' <<<"$tail_text" | wc -l | tr -d ' ')" "1"
assert_contains "after recovery: with its text" "$tail_text" "House rule: tabs, never spaces."
assert_eq "after recovery: one file block" \
  "$(grep -o 'data-role="file">' <<<"$tail_text" | wc -l | tr -d ' ')" "1"
finish
