#!/usr/bin/env bash
# Scripts written for Claude Code's `-p` work against loom unchanged (issue
# 16): tests/e2e/fixtures/cc_json_result.sh reads `--output-format json`
# and checks every field of Claude Code's result object;
# fixtures/cc_stream_json.sh reads `--output-format stream-json` line by
# line and checks system init, assistant, user and result. Each runs with
# CLAUDE=loom, against a scripted model that calls tools (one allowed, one
# denied by --disallowedTools).
source "$(dirname "$0")/_lib.sh"

FIX="$LOOM_SRC/tests/e2e/fixtures"
mkdir -p "$T/proj"
# Prices known, so total_cost_usd is a cost (docs/cli.md).
echo '{"price_input_per_mtok": 3, "price_output_per_mtok": 15}' > "$LOOM_HOME/settings.json"
cat > "$T/json.json" <<'JSON'
{"turns": [
  {"reply": {"text": "Checking.", "tool_calls": [
    {"id": "c1", "name": "Bash", "input": {"command": "echo hello-from-tool"}},
    {"id": "c2", "name": "Bash", "input": {"command": "rm -rf build"}}],
    "usage": {"input_tokens": 120, "output_tokens": 30}}},
  {"reply": {"text": "All done: hello-from-tool.", "usage": {"input_tokens": 200, "output_tokens": 10}}}
]}
JSON
cat > "$T/stream.json" <<'JSON'
{"turns": [
  {"reply": {"text": "Running it.", "tool_calls": [
    {"id": "s1", "name": "Bash", "input": {"command": "echo streamed"}}],
    "usage": {"input_tokens": 100, "output_tokens": 20}}},
  {"reply": {"text": "It printed streamed.", "usage": {"input_tokens": 150, "output_tokens": 8}}}
]}
JSON

cd "$T/proj"
for provider in ${PROVIDERS:-anthropic openai}; do
  start_mock "$T/json.json"
  use_provider "$provider"
  if out=$(CLAUDE="$LOOM_BIN" bash "$FIX/cc_json_result.sh" "tidy up" 2>"$T/err" </dev/null); then
    ok "$provider: the json script passes against loom"
  else
    not_ok "$provider: the json script passes against loom: $(cat "$T/err")"
  fi
  assert_contains "$provider: the json script saw the final reply" "$out" "All done: hello-from-tool."
  check "$provider: the allowed echo ran" grep -q '"hello-from-tool' "$MOCK_LOG"

  start_mock "$T/stream.json"
  use_provider "$provider"
  if out=$(CLAUDE="$LOOM_BIN" bash "$FIX/cc_stream_json.sh" "run it" 2>"$T/err" </dev/null); then
    ok "$provider: the stream-json script passes against loom"
  else
    not_ok "$provider: the stream-json script passes against loom: $(cat "$T/err")"
  fi
  assert_eq "$provider: the stream-json script saw the messages in order" \
    "$(grep -v '^init' <<<"$out")" \
    "text: Running it.
tool: Bash echo streamed
result: s1 ok
text: It printed streamed.
done: It printed streamed.
OK"
  assert_contains "$provider: the init line named the model" "$out" "init model="
done
finish
