#!/usr/bin/env bash
# A hook answering "continue": false ends the run (docs/hooks.md), whatever
# else it says and whichever event it answers: PreToolUse (the tool does not
# run), PostToolUse and PostToolUseFailure (the run ends after the tool),
# UserPromptSubmit and SessionStart (the prompt never reaches the model),
# Stop (the agent stops, even with "decision": "block"). The stopReason
# reaches the user on stderr and in the JSON result, and the model is not
# asked again.
# suppressOutput: true keeps a hook's stdout out of the verbose output and
# the event stream (hook.output), while the rest of its answer applies.
source "$(dirname "$0")/_lib.sh"
mkdir -p "$T/proj"

# write_hook NAME JSON — a command hook that drains stdin and prints JSON.
write_hook() {
  printf '%s' "$2" > "$T/$1.out"
  printf '#!/usr/bin/env bash\ncat > /dev/null\ncat %q\n' "$T/$1.out" > "$T/$1.sh"
  chmod +x "$T/$1.sh"
}
# settings EVENT MATCHER HOOKNAME — the user settings with that one hook.
settings() {
  cat > "$LOOM_HOME/settings.json" <<JSON
{"permissions": {"defaultMode": "bypassPermissions"},
 "hooks": {"$1": [{"matcher": "$2", "hooks": [{"type": "command", "command": "$T/$3.sh"}]}]}}
JSON
}
# run_loom [ARGS...] — loom -p in the project, json output; sets JSON, ERR, RC.
run_loom() {
  set +e
  JSON=$(timeout 60 "$LOOM_BIN" -p "go" --cwd "$T/proj" --output-format json "$@" 2>"$T/err")
  RC=$?
  set -e
  ERR=$(cat "$T/err")
}
requests() { wc -l < "$MOCK_LOG" | tr -d ' '; }

cat > "$T/tool.json" <<'JSON'
{"turns": [
  {"reply": {"tool_calls": [{"id": "t1", "name": "Bash", "input": {"command": "touch ran.txt"}}]}},
  {"reply": {"text": "SHOULD NOT BE ASKED AGAIN"}}
]}
JSON
start_mock "$T/tool.json"
use_provider anthropic

# --- PreToolUse: five spellings of continue:false; the tool never runs. ---
i=0
for out in '{"continue": false, "stopReason": "PRE-STOP-PLAIN"}' \
           '{"continue": false, "stopReason": "PRE-STOP-BLOCK", "decision": "block", "reason": "for the model"}' \
           '{"continue": false, "stopReason": "PRE-STOP-ALLOW", "hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "allow"}}' \
           '   
  {"stopReason": "PRE-STOP-SPACED", "continue": false, "suppressOutput": true}' \
           '{"continue": false, "systemMessage": "a note", "stopReason": "PRE-STOP-APPROVE", "decision": "approve"}' \
           '{"continue": false}'; do
  i=$((i + 1))
  rm -f "$T/proj/ran.txt"
  start_mock "$T/tool.json"
  write_hook pre "$out"
  settings PreToolUse Bash pre
  run_loom
  reason=$(jq -r '.stopReason // empty' <<<"$out")
  assert_eq "pre $i: the run ended with exit status 1" "$RC" "1"
  check "pre $i: the tool did not run" test ! -e "$T/proj/ran.txt"
  assert_eq "pre $i: the model was not asked again" "$(requests)" "1"
  assert_eq "pre $i: stop_reason" "$(jq -r .stop_reason <<<"$JSON" 2>/dev/null)" "hook_stopped"
  if [ -n "$reason" ]; then
    assert_contains "pre $i: stopReason on stderr" "$ERR" "$reason"
    assert_contains "pre $i: stopReason in the JSON result" "$JSON" "$reason"
  else
    assert_contains "pre $i: stderr says a hook stopped the run" "$ERR" "PreToolUse hook stopped the run"
  fi
  assert_contains "pre $i: the result names the event" "$JSON" "PreToolUse hook stopped the run"
  file=$(session_file "$(jq -r .session_id <<<"$JSON")")
  assert_contains "pre $i: the call got a not-run result" \
    "$(jq -r 'select(.type=="function_call_result") | .output' "$file")" "Not run: a PreToolUse hook ended the run"
  check "pre $i: the stopReason never went to the model" \
    bash -c "! grep -q 'PRE-STOP' '$MOCK_LOG'"
done

# --- PostToolUse: the tool ran, then the run ends. ---
for out in '{"continue": false, "stopReason": "POST-STOP"}' \
           '{"continue": false, "stopReason": "POST-STOP-BLOCK", "decision": "block", "reason": "look again"}'; do
  rm -f "$T/proj/ran.txt"
  start_mock "$T/tool.json"
  write_hook post "$out"
  settings PostToolUse Bash post
  run_loom
  reason=$(jq -r .stopReason <<<"$out")
  check "post $reason: the tool ran" test -e "$T/proj/ran.txt"
  assert_eq "post $reason: the model was not asked again" "$(requests)" "1"
  assert_contains "post $reason: stopReason on stderr" "$ERR" "$reason"
  assert_contains "post $reason: the event is named" "$ERR" "PostToolUse hook stopped the run"
  assert_eq "post $reason: stop_reason" "$(jq -r .stop_reason <<<"$JSON")" "hook_stopped"
done

# --- PostToolUseFailure: a failing tool, then the run ends. ---
cat > "$T/fail.json" <<'JSON'
{"turns": [
  {"reply": {"tool_calls": [{"id": "f1", "name": "Bash", "input": {"command": "touch ran.txt; exit 3"}}]}},
  {"reply": {"text": "SHOULD NOT BE ASKED AGAIN"}}
]}
JSON
rm -f "$T/proj/ran.txt"
start_mock "$T/fail.json"
write_hook postfail '{"continue": false, "stopReason": "FAIL-STOP"}'
settings PostToolUseFailure Bash postfail
run_loom
check "post-failure: the tool ran" test -e "$T/proj/ran.txt"
assert_eq "post-failure: the model was not asked again" "$(requests)" "1"
assert_contains "post-failure: stopReason on stderr" "$ERR" "FAIL-STOP"

# --- A batch: the stop on the first call keeps the second from running. ---
cat > "$T/batch.json" <<'JSON'
{"turns": [
  {"reply": {"tool_calls": [{"id": "b1", "name": "Bash", "input": {"command": "touch first.txt"}},
                            {"id": "b2", "name": "Write", "input": {"file_path": "second.txt", "content": "x"}}]}},
  {"reply": {"text": "SHOULD NOT BE ASKED AGAIN"}}
]}
JSON
rm -f "$T/proj"/*.txt
start_mock "$T/batch.json"
write_hook post '{"continue": false, "stopReason": "BATCH-STOP"}'
settings PostToolUse Bash post
run_loom
check "batch: the first call ran" test -e "$T/proj/first.txt"
check "batch: the call after the stop did not run" test ! -e "$T/proj/second.txt"
assert_eq "batch: the model was not asked again" "$(requests)" "1"
file=$(session_file "$(jq -r .session_id <<<"$JSON")")
assert_contains "batch: the second call has a not-run result" \
  "$(jq -r 'select(.type=="function_call_result" and .callId=="b2") | .output' "$file")" "Not run"

# --- UserPromptSubmit: the prompt is never sent. ---
for out in '{"continue": false, "stopReason": "UPS-STOP"}' \
           '{"continue": false, "stopReason": "UPS-STOP-BLOCK", "decision": "block", "reason": "other"}' \
           '{"continue": false, "stopReason": "UPS-STOP-CTX", "hookSpecificOutput": {"hookEventName": "UserPromptSubmit", "additionalContext": "ctx"}}'; do
  start_mock "$T/tool.json"
  write_hook ups "$out"
  settings UserPromptSubmit "" ups
  run_loom
  reason=$(jq -r .stopReason <<<"$out")
  assert_eq "ups $reason: no model request at all" "$(requests)" "0"
  assert_eq "ups $reason: exit status 1" "$RC" "1"
  assert_contains "ups $reason: stopReason on stderr" "$ERR" "$reason"
  assert_contains "ups $reason: the event is named" "$ERR" "UserPromptSubmit hook stopped the run"
  assert_eq "ups $reason: stop_reason" "$(jq -r .stop_reason <<<"$JSON")" "hook_stopped"
done

# --- SessionStart: the session starts, the prompt is never sent. ---
start_mock "$T/tool.json"
write_hook ss '{"continue": false, "stopReason": "SESSION-STOP"}'
settings SessionStart "" ss
run_loom
assert_eq "session start: no model request at all" "$(requests)" "0"
assert_eq "session start: exit status 1" "$RC" "1"
assert_contains "session start: stopReason on stderr" "$ERR" "SessionStart hook stopped the run: SESSION-STOP"

# --- Stop: continue:false outranks decision:block; the answer stands. ---
cat > "$T/answer.json" <<'JSON'
{"turns": [
  {"reply": {"text": "THE ANSWER"}},
  {"reply": {"text": "SHOULD NOT BE ASKED AGAIN"}}
]}
JSON
for out in '{"continue": false, "stopReason": "STOP-STOP", "decision": "block", "reason": "keep working"}' \
           '{"continue": false, "stopReason": "STOP-PLAIN"}'; do
  start_mock "$T/answer.json"
  write_hook stop "$out"
  settings Stop "" stop
  run_loom
  reason=$(jq -r .stopReason <<<"$out")
  assert_eq "stop $reason: the model was not sent back to work" "$(requests)" "1"
  assert_eq "stop $reason: exit 0 (the answer stands)" "$RC" "0"
  assert_eq "stop $reason: the answer" "$(jq -r .result <<<"$JSON")" "THE ANSWER"
  assert_eq "stop $reason: stop_reason" "$(jq -r .stop_reason <<<"$JSON")" "hook_stopped"
  assert_contains "stop $reason: stopReason on stderr" "$ERR" "$reason"
done
# Control: decision:block alone still sends the agent back (one more request).
start_mock "$T/answer.json"
write_hook stop '{"decision": "block", "reason": "keep working"}'
settings Stop "" stop
run_loom
check "stop control: block without continue:false asks the model again" test "$(requests)" -ge 2

# --- events carries the stop reason too. ---
start_mock "$T/tool.json"
write_hook pre '{"continue": false, "stopReason": "STREAM-STOP"}'
settings PreToolUse Bash pre
set +e
timeout 60 "$LOOM_BIN" -p "go" --cwd "$T/proj" --output-format events > "$T/stream" 2>"$T/err"
set -e
assert_contains "events: the stop reason is in the stream" "$(cat "$T/stream")" "STREAM-STOP"
check "events: every line is JSON" valid_jsonl "$T/stream"

# --- suppressOutput: the hook's stdout stays out of the verbose output and
# the event stream; the rest of its answer still applies. Each spelling is
# paired with a control that prints the same without suppressOutput. ---
cat > "$T/two.json" <<'JSON'
{"turns": [
  {"reply": {"tool_calls": [{"id": "s1", "name": "Bash", "input": {"command": "touch ran.txt"}}]}},
  {"reply": {"text": "ALL DONE"}}
]}
JSON
# suppress_case NAME EVENT MATCHER JSON_WITH_MARKER MARKER CONTEXT
suppress_case() {
  local name=$1 event=$2 matcher=$3 out=$4 marker=$5 ctx=$6
  for variant in suppressed shown; do
    local body=$out
    [ "$variant" = shown ] && body=$(jq -c 'del(.suppressOutput)' <<<"$out")
    rm -f "$T/proj/ran.txt"
    start_mock "$T/two.json"
    write_hook sup "$body"
    settings "$event" "$matcher" sup
    set +e
    timeout 60 "$LOOM_BIN" -p "go" --cwd "$T/proj" --verbose > "$T/out" 2>"$T/err"
    local rc=$?
    timeout 60 "$LOOM_BIN" -p "go" --cwd "$T/proj" --output-format events > "$T/stream" 2>/dev/null
    set -e
    assert_eq "suppress $name/$variant: the run completed" "$rc" "0"
    if [ "$variant" = suppressed ]; then
      check "suppress $name: not in the verbose output" bash -c "! grep -q '$marker' '$T/err' '$T/out'"
      check "suppress $name: not in the event stream" bash -c "! grep -q '$marker' '$T/stream'"
    else
      assert_contains "suppress $name/control: shown in verbose mode" "$(cat "$T/err")" "$marker"
      assert_contains "suppress $name/control: a hook.output event" \
        "$(jq -r 'select(.type=="hook.output") | .payload.output' "$T/stream")" "$marker"
    fi
    [ -n "$ctx" ] && assert_contains "suppress $name/$variant: the answer still applied" "$(cat "$MOCK_LOG")" "$ctx"
    assert_contains "suppress $name/$variant: the answer" "$(cat "$T/out")" "ALL DONE"
  done
}
suppress_case post PostToolUse Bash \
  '{"suppressOutput": true, "marker": "SECRET-OUT-POST", "hookSpecificOutput": {"hookEventName": "PostToolUse", "additionalContext": "CTX-FROM-POST"}}' \
  SECRET-OUT-POST CTX-FROM-POST
suppress_case pre PreToolUse Bash \
  '{"continue": true, "suppressOutput": true, "marker": "SECRET-OUT-PRE", "hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "allow"}}' \
  SECRET-OUT-PRE ""
suppress_case ups UserPromptSubmit "" \
  '{"suppressOutput": true, "marker": "SECRET-OUT-UPS", "hookSpecificOutput": {"hookEventName": "UserPromptSubmit", "additionalContext": "CTX-FROM-UPS"}}' \
  SECRET-OUT-UPS CTX-FROM-UPS
suppress_case stop Stop "" '{"suppressOutput": true, "marker": "SECRET-OUT-STOP"}' SECRET-OUT-STOP ""
suppress_case approve PreToolUse Bash \
  '{"decision": "approve", "suppressOutput": true, "reason": "SECRET-OUT-APPROVE"}' SECRET-OUT-APPROVE ""
# Plain stdout (no JSON, so nothing to suppress it) is shown in verbose mode.
start_mock "$T/two.json"
write_hook plain 'PLAIN-HOOK-STDOUT'
settings PostToolUse Bash plain
set +e
timeout 60 "$LOOM_BIN" -p "go" --cwd "$T/proj" --verbose > "$T/out" 2>"$T/err"
set -e
assert_contains "plain stdout: shown in verbose mode" "$(cat "$T/err")" "PLAIN-HOOK-STDOUT"
timeout 60 "$LOOM_BIN" -p "go" --cwd "$T/proj" > "$T/out" 2>"$T/err" || true
check "plain stdout: not shown without --verbose" bash -c "! grep -q PLAIN-HOOK-STDOUT '$T/err'"

finish
