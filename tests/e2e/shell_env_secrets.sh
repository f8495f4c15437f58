#!/usr/bin/env bash
# Commands the model runs do not inherit credentials: Loom's own API key and
# any variable whose name says it holds one (KEY, SECRET, TOKEN, PASSWORD,
# CREDENTIAL) are left out of the Bash environment, so `env` or
# `printenv ANTHROPIC_API_KEY` cannot hand them to the model.
# LOOM_SHELL_ENV_KEEP names the ones a user's commands need.
source "$(dirname "$0")/_lib.sh"

mkdir -p "$T/proj"
cat > "$T/scenario.json" <<'JSON'
{"turns": [
  {"reply": {"tool_calls": [{"id": "e1", "name": "Bash", "input": {"command": "env | sort"}}]}},
  {"reply": {"tool_calls": [{"id": "e2", "name": "Bash", "input": {"command": "printenv ANTHROPIC_API_KEY OPENAI_API_KEY; echo \"gh=${GITHUB_TOKEN:-none} aws=${AWS_SECRET_ACCESS_KEY:-none} db=${DB_PASSWORD:-none} np=${npm_config__authToken:-none} my=${MY_SETTING:-none} loom=${LOOM:-none}\""}}]}},
  {"reply": {"tool_calls": [{"id": "e3", "name": "Bash", "input": {"command": "cat /proc/self/environ | tr '\\0' '\\n'; bash -c 'echo sub=${GITHUB_TOKEN:-none}'"}}]}},
  {"reply": {"text": "Looked."}}
]}
JSON
export GITHUB_TOKEN=ghp_secret_value_1 AWS_SECRET_ACCESS_KEY=aws_secret_value_2 \
       DB_PASSWORD=db_secret_value_3 npm_config__authToken=npm_secret_value_4 MY_SETTING=plain-value
for provider in ${PROVIDERS:-anthropic openai}; do
  start_mock "$T/scenario.json"
  use_provider "$provider"
  json=$("$LOOM_BIN" -p "look at the environment" --cwd "$T/proj" --permission-mode bypassPermissions \
         --output-format json 2>/dev/null)
  file=$(session_file "$(jq -r .session_id <<<"$json")")
  all=$(jq -r 'select(.type=="function_call_result") | .output' "$file")
  for v in test-key ghp_secret_value_1 aws_secret_value_2 db_secret_value_3 npm_secret_value_4; do
    check "$provider: $v is not in any command's output" bash -c '! grep -qF "$1" <<<"$2"' _ "$v" "$all"
  done
  check "$provider: the model never saw a credential" \
    bash -c '! grep -qE "ghp_secret|aws_secret|db_secret|npm_secret" "$1"' _ "$MOCK_LOG"
  e2=$(jq -r 'select(.type=="function_call_result" and .callId=="e2") | .output' "$file")
  assert_contains "$provider: ordinary variables still pass" "$e2" "my=plain-value"
  assert_contains "$provider: LOOM=1 is set" "$e2" "loom=1"
  assert_contains "$provider: a child shell has none either" \
    "$(jq -r 'select(.type=="function_call_result" and .callId=="e3") | .output' "$file")" "sub=none"
  assert_contains "$provider: env still lists PATH" \
    "$(jq -r 'select(.type=="function_call_result" and .callId=="e1") | .output' "$file")" "PATH="
done

# LOOM_SHELL_ENV_KEEP: the user's own choice of what their commands need.
start_mock "$T/scenario.json"
use_provider anthropic
json=$(LOOM_SHELL_ENV_KEEP=GITHUB_TOKEN,DB_PASSWORD "$LOOM_BIN" -p "look" --cwd "$T/proj" \
       --permission-mode bypassPermissions --output-format json 2>/dev/null)
file=$(session_file "$(jq -r .session_id <<<"$json")")
e2=$(jq -r 'select(.type=="function_call_result" and .callId=="e2") | .output' "$file")
assert_contains "keep: a listed variable passes" "$e2" "gh=ghp_secret_value_1"
assert_contains "keep: the second listed one too" "$e2" "db=db_secret_value_3"
assert_contains "keep: an unlisted one still does not" "$e2" "aws=none"
check "keep: Loom's own key still does not" bash -c '! grep -qF test-key <<<"$1"' _ "$e2"
finish
