#!/usr/bin/env bash
# Secrets in tool results are masked (issue 25, item 6): a workspace file
# holds an Anthropic key, a GitHub token, an AWS key id and a private key;
# the model reads it with Read and with Bash (cat, and grep through a pipe).
# None of the values reaches a request to the model (the mock's request log)
# or the session file; the model sees [REDACTED:<kind>] and a note, and the
# raw metadata counts the values masked. A PostToolUse hook sees the masked
# output too.
source "$(dirname "$0")/_lib.sh"

mkdir -p "$T/proj"
K1='sk-ant-api03-Ab3dEf9hIjKlMnOpQrStUvWxYz0123456789_-AA'
K2='ghp_1234567890abcdefghijABCDEFGHIJ123456'
K3='AKIAIOSFODNN7EXAMPLE'
PEM_BODY='b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW'
{
  echo "ANTHROPIC_API_KEY=$K1"
  echo "GITHUB_TOKEN=$K2"
  echo "AWS_ACCESS_KEY_ID=$K3"
  echo "-----BEGIN OPENSSH PRIVATE KEY-----"
  echo "$PEM_BODY"
  echo "-----END OPENSSH PRIVATE KEY-----"
  echo "PLAIN=hello"
} > "$T/proj/creds.env"

mkdir -p "$T/proj/.loom"
cat > "$T/hook.sh" <<SH
#!/bin/sh
cat >> "$T/hook.log"
SH
chmod +x "$T/hook.sh"
echo "{\"trustedWorkspaces\": [\"$T/proj\"], \"hooks\": {\"PostToolUse\": [{\"matcher\": \"*\", \"hooks\": [{\"type\": \"command\", \"command\": \"$T/hook.sh\"}]}]}}" \
  > "$LOOM_HOME/settings.json"

jq -n --arg f "$T/proj/creds.env" '{sequence: true, turns: [
  {reply: {tool_calls: [{id: "read", name: "Read", input: {file_path: $f}}]}},
  {reply: {tool_calls: [{id: "cat", name: "Bash", input: {command: "cat creds.env"}}]}},
  {reply: {tool_calls: [{id: "grep", name: "Bash", input: {command: "grep -h TOKEN creds.env | tr a-z a-z"}}]}},
  {reply: {text: "Done."}}]}' > "$T/scenario.json"
start_mock "$T/scenario.json"
use_provider anthropic
json=$("$LOOM_BIN" -p "look at the credentials" --permission-mode bypassPermissions --cwd "$T/proj" \
       --output-format json)
file=$(session_file "$(jq -r .session_id <<<"$json")")
result() { jq -r --arg id "$1" 'select(.type=="function_call_result" and .callId==$id) | .output' "$file"; }

assert_eq "the run completed" "$(jq -r .subtype <<<"$json")" "success"
for k in "$K1" "$K2" "$K3" "$PEM_BODY"; do
  check "no request to the model holds ${k:0:12}…" test -z "$(grep -F -- "$k" "$MOCK_LOG" || true)"
  check "the session file does not hold ${k:0:12}…" test -z "$(grep -F -- "$k" "$file" || true)"
  check "the PostToolUse hook did not see ${k:0:12}…" test -z "$(grep -F -- "$k" "$T/hook.log" || true)"
done
check "the hook ran (it saw the masked output)" grep -q "REDACTED" "$T/hook.log"
out=$(result cat)
assert_contains "Bash: the key is masked" "$out" "ANTHROPIC_API_KEY=[REDACTED:"
assert_contains "Bash: the private key is masked" "$out" "REDACTED:private_key"
assert_contains "Bash: other text is untouched" "$out" "PLAIN=hello"
assert_contains "Bash: the model is told" "$out" "masked as [REDACTED"
assert_contains "Read: masked too" "$(result read)" "GITHUB_TOKEN=[REDACTED:"
assert_contains "a pipe's output: masked" "$(result grep)" "GITHUB_TOKEN=[REDACTED:"
assert_eq "the raw metadata counts what was masked" \
  "$(jq -r 'select(.type=="function_call_result" and .callId=="cat") | .providerData.toolResult.rawResponse.secretsMasked' "$file")" "4"
check "the requests did reach the mock (the log is not empty)" grep -q "REDACTED" "$MOCK_LOG"
finish
