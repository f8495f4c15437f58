#!/usr/bin/env bash
# Issue #12 item 4: every kind of request body Loom sends is checked against
# the official SDKs' TypeScript types. Each provider (Anthropic Messages,
# OpenAI Chat Completions, OpenAI Responses) runs a representative set of
# requests against mockllm — plain chat streamed and not, tool calls and
# their results, an image in a tool result, thinking / reasoning echoed back,
# the auto-mode permission classifier (with a gpt-5-class model on OpenAI),
# and a reactive compaction — and mockllm's log keeps every body. Each body
# becomes a .ts file `const body: <SDK request type> = <the body>;` and one
# `tsc --noEmit --strict` run checks them all: an unknown field is an excess
# property, a wrong type or a missing required field is named by tsc with
# its path. A failure prints tsc's message and the lines of the body around
# the field.
#
# The types: @anthropic-ai/sdk, openai and typescript, pinned in
# tests/validate/package.json + package-lock.json, installed by
# scripts/deps.sh (`npm ci` into tests/validate/node_modules). Nothing is
# skipped: without them the test fails, naming the command to run.
source "$(dirname "$0")/_lib.sh"

VALIDATE_DIR="$LOOM_SRC/tests/validate"
TSC="$VALIDATE_DIR/node_modules/.bin/tsc"
if [ ! -x "$TSC" ] || [ ! -d "$VALIDATE_DIR/node_modules/@anthropic-ai/sdk" ] ||
   [ ! -d "$VALIDATE_DIR/node_modules/openai" ]; then
  not_ok "the SDK types are not installed; run: bash scripts/deps.sh" \
         "(or: npm ci --prefix tests/validate)"
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

# What the types cannot say: the parameters a model family refuses. OpenAI's
# reasoning models (gpt-5 except gpt-5-chat, o1, o3, o4-mini, ...) refuse
# `temperature` (400 unsupported_value: issue #12's report of the live API)
# and, on Chat Completions, `max_tokens` ("not compatible with o-series
# models ... deprecated in favor of max_completion_tokens": openai-node
# resources/chat/completions/completions.d.ts, `max_tokens`, openai 7.59.0).
for f in "$BODIES"/*.json; do
  [ "$(basename "$f")" = tsconfig.json ] && continue
  api=$(cat "${f%.json}.api")
  [ "$api" = anthropic ] && continue
  jq -e '(.model // "") | test("^(gpt-5(?!-chat)|o[1-9])")' "$f" >/dev/null || continue
  name=$(basename "$f" .json)
  if jq -e 'has("temperature")' "$f" >/dev/null; then
    not_ok "$name: $(jq -r .model "$f") refuses \"temperature\" (it sends $(jq -c .temperature "$f"))"
  fi
  if [ "$api" = chat ] && jq -e 'has("max_tokens")' "$f" >/dev/null; then
    not_ok "$name: $(jq -r .model "$f") refuses \"max_tokens\" on Chat Completions (use max_completion_tokens)"
  fi
done

# One .ts file per body, typed with the SDK type for its API and stream flag.
# The packages are found through a node_modules link beside the files.
ln -s "$VALIDATE_DIR/node_modules" "$BODIES/node_modules"
cat > "$BODIES/tsconfig.json" <<'JSON'
{"compilerOptions": {"strict": true, "noEmit": true, "target": "es2022",
  "module": "esnext", "moduleResolution": "bundler", "skipLibCheck": true, "types": []},
 "include": ["*.ts"]}
JSON
for f in "$BODIES"/*.json; do
  [ "$(basename "$f")" = tsconfig.json ] && continue
  base=${f%.json}
  stream=$(jq -r 'if .stream == true then "Streaming" else "NonStreaming" end' "$f")
  case $(cat "$base.api") in
    anthropic) imp="import type Anthropic from '@anthropic-ai/sdk';"
               type="Anthropic.MessageCreateParams$stream" ;;
    chat) imp="import type OpenAI from 'openai';"
          type="OpenAI.ChatCompletionCreateParams$stream" ;;
    responses) imp="import type OpenAI from 'openai';"
               type="OpenAI.Responses.ResponseCreateParams$stream" ;;
  esac
  { echo "$imp"; printf 'export const body: %s = ' "$type"; cat "$f"; echo ';'; } > "$base.ts"
done

count=$(ls "$BODIES"/*.ts | wc -l)
if (cd "$BODIES" && "$TSC" -p tsconfig.json --pretty false) > "$T/tsc.txt" 2>&1; then
  ok "all $count request bodies match the SDK types"
else
  # tsc: FILE(LINE,COL): error TSnnnn: message. Show each with the body's lines.
  while IFS= read -r err; do
    file=${err%%(*}
    if [[ "$err" =~ ^([^\(]+)\(([0-9]+),([0-9]+)\):\ error ]]; then
      line=${BASH_REMATCH[2]}
      not_ok "$err"
      echo "  --- $file (lines $((line > 3 ? line - 3 : 1))-$((line + 3))):" >&2
      sed -n "$((line > 3 ? line - 3 : 1)),$((line + 3))p" "$BODIES/$file" | sed 's/^/  | /' >&2
    elif [ -n "$err" ]; then
      echo "  $err" >&2
    fi
  done < "$T/tsc.txt"
  [ "$FAILED" -gt 0 ] || not_ok "tsc failed: $(head -c 2000 "$T/tsc.txt")"
  # Keep the bodies for a look after the run.
  keep="$(dirname "$LOOM_BIN")/request-bodies"
  rm -rf "$keep" && cp -r "$BODIES" "$keep" && rm -f "$keep/node_modules" &&
    echo "the bodies and their .ts files are kept in $keep" >&2
fi
finish
