#!/usr/bin/env bash
# Grep and Glob rooted at a workspace symlink to the home directory (h → ~,
# h2 → h) never look inside a credential store, whatever spelling the model
# uses: a trailing slash, doubled slashes, "./", a chain of links, a glob
# parameter naming .ssh, a pattern whose literal part ends at the link.
# Run in bypassPermissions mode, where the search's own fence is all that
# stands between the model and the key (the "outside the workspace"
# question is skipped there): no result names or quotes a key, while an
# ordinary file under the same root is still found. Then: the credential
# files the risk classifier names (~/.pgpass, ~/.my.cnf, ~/.vault-token,
# ~/.cargo/credentials.toml, ~/.config/git/credentials, …) are secret paths
# to Read as well, directly and through the link.
source "$(dirname "$0")/_lib.sh"

mkdir -p "$HOME/.ssh" "$HOME/.aws" "$T/ws"
echo "KEYMARK-SSH" > "$HOME/.ssh/id_rsa"
echo "KEYMARK-AWS" > "$HOME/.aws/credentials"
echo "KEYMARK-NOTE plain file" > "$HOME/notes.txt"
ln -s "$HOME" "$T/ws/h"
ln -s "$T/ws/h" "$T/ws/h2"

cat > "$T/s.json" <<'JSON'
{"turns": [
 {"reply": {"tool_calls": [{"id": "grep_slash", "name": "Grep", "input": {"pattern": "KEYMARK", "path": "h/", "glob": ".ssh/*", "output_mode": "content"}}]}},
 {"reply": {"tool_calls": [{"id": "grep_deep", "name": "Grep", "input": {"pattern": "KEYMARK", "path": "h", "glob": "**/*", "output_mode": "content"}}]}},
 {"reply": {"tool_calls": [{"id": "grep_chain", "name": "Grep", "input": {"pattern": "KEYMARK", "path": "h2", "output_mode": "content"}}]}},
 {"reply": {"tool_calls": [{"id": "grep_dots", "name": "Grep", "input": {"pattern": "KEYMARK", "path": "./h//", "output_mode": "files_with_matches"}}]}},
 {"reply": {"tool_calls": [{"id": "grep_aws", "name": "Grep", "input": {"pattern": "KEYMARK", "path": "h2/", "glob": ".aws/**", "output_mode": "content"}}]}},
 {"reply": {"tool_calls": [{"id": "glob_class", "name": "Glob", "input": {"pattern": "h/.ss[h]/*"}}]}},
 {"reply": {"tool_calls": [{"id": "glob_deep", "name": "Glob", "input": {"pattern": "**/id_rsa", "path": "h"}}]}},
 {"reply": {"tool_calls": [{"id": "glob_chain", "name": "Glob", "input": {"pattern": "h2/**/*"}}]}},
 {"reply": {"tool_calls": [{"id": "glob_aws", "name": "Glob", "input": {"pattern": ".a?s/*", "path": "h2/"}}]}},
 {"reply": {"text": "done"}}
]}
JSON
start_mock "$T/s.json"
use_provider anthropic
json=$("$LOOM_BIN" -p "search" --permission-mode bypassPermissions --cwd "$T/ws" \
       --output-format json 2>/dev/null) || true
file=$(session_file "$(jq -r .session_id <<<"$json")")
result() { jq -r --arg id "$1" 'select(.type=="function_call_result" and .callId==$id) | .output' "$file"; }

for id in grep_slash grep_deep grep_chain grep_dots grep_aws glob_class glob_deep glob_chain glob_aws; do
  r=$(result "$id")
  check "$id: ran" test -n "$r"
  check "$id: no key quoted or named ($r)" \
    bash -c '[[ "$1" != *KEYMARK-SSH* && "$1" != *KEYMARK-AWS* && "$1" != *id_rsa* && "$1" != *credentials* ]]' _ "$r"
done
assert_contains "an ordinary file under the link is still searched" "$(result grep_deep)" "KEYMARK-NOTE"
assert_contains "and found by name through the chain" "$(result glob_chain)" "notes.txt"
check "no request to the model carries a key" \
  bash -c '! grep -q "KEYMARK-SSH\|KEYMARK-AWS" "$1"' _ "$MOCK_LOG"

CREDS=(.pgpass .my.cnf .vault-token .cargo/credentials.toml .cargo/credentials .gem/credentials
       .config/git/credentials .terraform.d/credentials.tfrc.json)
{
  echo '{"turns": ['
  i=0
  for c in "${CREDS[@]}"; do
    mkdir -p "$(dirname "$HOME/$c")"
    echo "CREDMARK-$i" > "$HOME/$c"
    jq -nc --arg p "~/$c" --arg id "c$i" '{reply:{tool_calls:[{id:$id,name:"Read",input:{file_path:$p}}]}}'
    echo ,
    jq -nc --arg p "h/$c" --arg id "l$i" '{reply:{tool_calls:[{id:$id,name:"Read",input:{file_path:$p}}]}}'
    echo ,
    i=$((i + 1))
  done
  echo '{"reply": {"text": "done"}}]}'
} > "$T/creds.json"
start_mock "$T/creds.json"
json=$("$LOOM_BIN" -p "read" --permission-mode bypassPermissions --cwd "$T/ws" \
       --output-format json 2>/dev/null) || true
file=$(session_file "$(jq -r .session_id <<<"$json")")
for ((i = 0; i < ${#CREDS[@]}; i++)); do
  for k in c l; do
    r=$(result "$k$i")
    if [ "$k" = c ]; then via="~"; else via="h"; fi
    check "Read $via/${CREDS[$i]}: denied as a credential store" \
      bash -c '[[ "$1" == *"secret path"* && "$1" != *CREDMARK* ]]' _ "$r"
  done
done
check "no request to the model carries a credential file" \
  bash -c '! grep -q "CREDMARK" "$1"' _ "$MOCK_LOG"
finish
