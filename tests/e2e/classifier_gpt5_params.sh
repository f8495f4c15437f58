#!/usr/bin/env bash
# Issue 12: auto mode's classifier asks the agent's own model. gpt-5-class
# models refuse `temperature` (400 unsupported_value) and `max_tokens`, so
# with --model gpt-5 the classifier request carries neither; a model that
# takes temperature (gpt-4.1) still gets temperature 0, and no Claude
# request carries it (the current @anthropic-ai/sdk has no such field).
source "$(dirname "$0")/_lib.sh"
mkdir -p "$T/proj"
cat > "$T/scenario.json" <<'JSON'
{"turns": [
  {"match": {"system_contains": "security monitor"},
   "reply": {"text": "{\"decision\": \"allow\", \"reason\": \"a file in the project\"}"}},
  {"reply": {"tool_calls": [{"id": "c1", "name": "Bash", "input": {"command": "echo one > one.txt"}}]}},
  {"reply": {"text": "Done."}}
]}
JSON
classifier_bodies() {
  jq -c 'select(.body | tostring | contains("security monitor")) | .body' "$MOCK_LOG"
}
run_auto() { # PROVIDER MODEL
  rm -f "$T/proj"/*.txt
  start_mock "$T/scenario.json"
  use_provider "$1"
  "$LOOM_BIN" -p "go" --model "$2" --permission-mode auto --cwd "$T/proj" >"$T/out" 2>"$T/err"
}

run_auto openai gpt-5
assert_eq "gpt-5: one classifier call" "$(classifier_bodies | wc -l)" "1"
check "gpt-5: the classifier allowed the command" test -e "$T/proj/one.txt"
assert_eq "gpt-5: the classifier request has no temperature" \
  "$(classifier_bodies | jq -r 'has("temperature")')" "false"
assert_eq "gpt-5: nor max_tokens" "$(classifier_bodies | jq -r 'has("max_tokens")')" "false"
assert_eq "gpt-5: its cap is max_completion_tokens" \
  "$(classifier_bodies | jq -r '.max_completion_tokens')" "300"
assert_eq "gpt-5: no request of the run has temperature" \
  "$(jq -r '.body | has("temperature")' "$MOCK_LOG" | sort -u | paste -sd,)" "false"

run_auto openai gpt-4.1
assert_eq "gpt-4.1: the classifier still asks for temperature 0" \
  "$(classifier_bodies | jq -r '.temperature')" "0"

run_auto anthropic claude-sonnet-5-5
assert_eq "claude: one classifier call" "$(classifier_bodies | wc -l)" "1"
assert_eq "claude: the classifier request has no temperature" \
  "$(classifier_bodies | jq -r 'has("temperature")')" "false"
finish
