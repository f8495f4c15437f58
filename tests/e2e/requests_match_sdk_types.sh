#!/usr/bin/env bash
# Issue #12 item 4: every kind of request body Loom sends is checked against
# the official SDKs' TypeScript types. Each provider (Anthropic Messages,
# OpenAI Chat Completions, OpenAI Responses) runs a representative set of
# requests against mockllm — plain chat streamed and not, tool calls and
# their results, an image in a tool result, thinking / reasoning echoed back,
# the auto-mode permission classifier (with a gpt-5-class model on OpenAI),
# extended thinking (--thinking), and a reactive compaction — and mockllm's log keeps every body. Each body
# becomes a .ts file `const body: <SDK request type> = <the body>;` and one
# `tsc --noEmit --strict` run checks them all (tests/validate/check_bodies.sh):
# an unknown field is an excess property, a wrong type or a missing required
# field is named by tsc with its path, and parameters a model family refuses
# are named too. A failure prints tsc's message and the lines of the body
# around the field.
#
# The types: @anthropic-ai/sdk, openai and typescript, pinned in
# tests/validate/package.json + package-lock.json, installed by
# scripts/deps.sh (`npm ci` into tests/validate/node_modules). Nothing is
# skipped: without them the test fails, naming the command to run.
source "$(dirname "$0")/_lib.sh"

VALIDATE_DIR="$LOOM_SRC/tests/validate"
# This scenario keeps its own bodies; the suite-wide capture need not.
unset MOCKLLM_CAPTURE_DIR
if [ ! -x "$VALIDATE_DIR/node_modules/.bin/tsc" ]; then
  not_ok "the SDK types are not installed; run: bash scripts/deps.sh (or: npm ci --prefix tests/validate)"
  finish
  exit 1
fi

BODIES="$T/bodies"
mkdir -p "$BODIES" "$T/proj"
N=0
# collect LABEL — copies every request body of $MOCK_LOG into $BODIES as
# NNN-LABEL-K.json, with its API (anthropic, chat, responses) in a sidecar.
collect() {
  local k=0 line fmt
  while IFS= read -r line; do
    fmt=$(jq -r .format <<<"$line")
    [ "$fmt" = null ] && continue
    N=$((N + 1)); k=$((k + 1))
    local f; f=$(printf '%s/%03d-%s-%d' "$BODIES" "$N" "$1" "$k")
    jq .body <<<"$line" > "$f.json"
    echo "$fmt" > "$f.api"
  done < "$MOCK_LOG"
  check "$1: captured request bodies" test "$k" -gt 0
}

# A 1x1 PNG, for Read to return as an image.
base64 -d > "$T/proj/dot.png" <<<'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=='
echo "hello" > "$T/proj/notes.txt"

cat > "$T/chat.json" <<'JSON'
{"turns": [{"reply": {"text": "Hello there."}}]}
JSON
# Tools and their results, an image in a result, an error result, and
# thinking / reasoning that the next request has to carry back.
cat > "$T/tools.json" <<'JSON'
{"turns": [
  {"reply": {"thinking": "I should look at the files.", "thinking_signature": "c2lnX3Rvb2xz",
             "text": "Looking.",
             "tool_calls": [{"id": "call_a1", "name": "Bash", "input": {"command": "ls"}},
                            {"id": "call_a2", "name": "Read", "input": {"file_path": "notes.txt"}}]}},
  {"reply": {"tool_calls": [{"id": "call_b1", "name": "Read", "input": {"file_path": "dot.png"}}]}},
  {"reply": {"tool_calls": [{"id": "call_c1", "name": "Read", "input": {"file_path": "missing.txt"}}]}},
  {"reply": {"text": "Done."}}
]}
JSON
# Auto mode: the permission classifier judges the Bash call.
cat > "$T/auto.json" <<'JSON'
{"turns": [
  {"match": {"system_contains": "security monitor"},
   "reply": {"text": "{\"decision\": \"allow\", \"reason\": \"harmless\"}"}},
  {"reply": {"tool_calls": [{"id": "call_d1", "name": "Bash", "input": {"command": "echo one > one.txt"}}]}},
  {"reply": {"text": "Written."}}
]}
JSON
# A 413 on the second turn: Loom compacts (a request without tools) and retries.
SUMMARY='<analysis>ok</analysis><summary>1. Primary Request and Intent: say hi.</summary>'
jq -n --arg s "$SUMMARY" '{sequence: true, turns: [
  {match: {no_tools: true}, reply: {text: $s}},
  {reply: {tool_calls: [{id: "call_e1", name: "Bash", input: {command: "echo hi"}}]}},
  {faults: [{status: 413, times: 1}], reply: {text: "Done after compaction."}}]}' > "$T/compact.json"

run_loom() { "$LOOM_BIN" --cwd "$T/proj" "$@" > "$T/out.txt" 2> "$T/err.txt" || true; }

for provider in anthropic openai openai-responses; do
  case $provider in
    anthropic) small=claude-haiku-4-5 ;;
    *) small=gpt-5 ;;
  esac
  start_mock "$T/chat.json"; use_provider "$provider"
  run_loom -p "say hello" --permission-mode bypassPermissions
  collect "$provider-chat-stream"

  start_mock "$T/chat.json"
  run_loom -p "say hello" --permission-mode bypassPermissions --no-stream
  collect "$provider-chat-nostream"

  start_mock "$T/tools.json"
  run_loom -p "look at the files" --permission-mode bypassPermissions
  check "$provider: the tool run finished" grep -q "Done." "$T/out.txt"
  collect "$provider-tools"

  # Extended thinking asked for: the thinking config (Anthropic) and the
  # signed thinking carried back across the tool calls.
  start_mock "$T/tools.json"
  run_loom -p "look at the files" --permission-mode bypassPermissions --thinking 2048
  check "$provider: the thinking run finished" grep -q "Done." "$T/out.txt"
  collect "$provider-thinking"

  rm -f "$T/proj/one.txt"
  start_mock "$T/auto.json"
  run_loom -p "write one" --permission-mode auto
  check "$provider: the classifier allowed the command" test -e "$T/proj/one.txt"
  collect "$provider-classifier"

  rm -f "$T/proj/one.txt"
  start_mock "$T/auto.json"
  run_loom -p "write one" --permission-mode auto --model "$small"
  collect "$provider-classifier-$small"

  start_mock "$T/compact.json"
  run_loom -p "say hi" --permission-mode bypassPermissions
  check "$provider: the run compacted and finished" grep -q "Done after compaction." "$T/out.txt"
  collect "$provider-compaction"
done

# The checker itself: a planted body with a misspelt field and one with a
# wrong type fail, each named; a good one passes.
mkdir -p "$T/planted"
echo '{"model": "claude-sonnet-4-5", "max_tokens": 10, "messages": [{"role": "user", "content": "hi"}]}' \
  > "$T/planted/good.json"
echo '{"model": "claude-sonnet-4-5", "max_tokens": 10, "temprature": 1, "messages": []}' > "$T/planted/typo.json"
echo '{"model": "gpt-4.1", "messages": [{"role": "tool", "content": "x"}]}' > "$T/planted/wrong.json"
echo anthropic > "$T/planted/good.api"; echo anthropic > "$T/planted/typo.api"; echo chat > "$T/planted/wrong.api"
bash "$VALIDATE_DIR/check_bodies.sh" "$T/planted" > "$T/planted.out" 2>&1 && rc=0 || rc=$?
assert_eq "the checker fails on planted bad bodies" "$rc" "1"
assert_contains "it names the misspelt field" "$(cat "$T/planted.out")" "typo.ts(2,"
assert_contains "and the field" "$(cat "$T/planted.out")" "'\"temprature\"' does not exist"
assert_contains "it names the missing one" "$(cat "$T/planted.out")" "tool_call_id"
check "it passes the good one" bash -c '! grep -q "good.ts" "$1"' _ "$T/planted.out"

# The bodies are kept beside the loom binary when a check fails.
keep="$(dirname "$LOOM_BIN")/request-bodies"
if bash "$VALIDATE_DIR/check_bodies.sh" "$BODIES"; then
  ok "every request body matches the SDK types"
else
  not_ok "request bodies that do not match the SDK types (above)"
  rm -rf "$keep" && cp -r "$BODIES" "$keep" &&
    echo "the bodies and their .ts files are kept in $keep" >&2
fi
finish
