#!/usr/bin/env bash
# The Bash tool under the sandbox, driven by the model through the real loom:
# a write outside the workspace, a read under a denied path and a TCP
# connection are each blocked, and the result says so in
# providerData.toolResult.rawResponse and in a note; the same kinds of
# command work where the policy allows them. dangerouslyDisableSandbox is
# refused without approval.
source "$(dirname "$0")/_lib.sh"

# A kernel without Landlock cannot run these; say so rather than fail.
if out=$("$LOOM_BIN" sandbox -- true 2>&1); [[ "$out" == *"not supported here"* ]]; then
  echo "skipped: $out"
  finish
  exit 0
fi

mkdir -p "$T/proj/.loom" "$T/outside" "$T/fixture/secret" "$T/fixture/public"
echo "top secret" > "$T/fixture/secret/key"
echo "public words" > "$T/fixture/public/readme"
# The fixtures live under /tmp like the workspace, so the temp dirs are kept
# out of the writable set, or $T/outside would be writable as a temp dir.
settings() {
  cat > "$T/proj/.loom/settings.json" <<JSON
{"sandbox": {"enabled": true, "writableTempDirs": false, "network": "$1",
             "denyRead": ["$T/fixture/secret"]}}
JSON
}

# The port to connect to is the mock's own: a TCP listener the test started.
cat > "$T/scenario.json" <<JSON
{"turns": [
  {"reply": {"tool_calls": [{"id": "w_out", "name": "Bash",
     "input": {"command": "echo hi > $T/outside/x"}}]}},
  {"reply": {"tool_calls": [{"id": "r_secret", "name": "Bash",
     "input": {"command": "cat $T/fixture/secret/key"}}]}},
  {"reply": {"tool_calls": [{"id": "net", "name": "Bash",
     "input": {"command": "exec 3<>/dev/tcp/127.0.0.1/\$(cat $T/port) && echo connected"}}]}},
  {"reply": {"tool_calls": [{"id": "w_in", "name": "Bash",
     "input": {"command": "echo hi > inside.txt && cat inside.txt $T/fixture/public/readme"}}]}},
  {"reply": {"tool_calls": [{"id": "grand", "name": "Bash",
     "input": {"command": "bash -c 'sh -c \"echo x > $T/outside/g\"'; echo status \$?"}}]}},
  {"reply": {"tool_calls": [{"id": "escape", "name": "Bash",
     "input": {"command": "touch $T/outside/y", "dangerouslyDisableSandbox": true}}]}},
  {"reply": {"text": "Done."}}
]}
JSON

for provider in ${PROVIDERS:-anthropic openai}; do
  rm -f "$T/outside/"* "$T/proj/inside.txt"
  settings deny
  start_mock "$T/scenario.json"
  use_provider "$provider"
  json=$("$LOOM_BIN" -p "sandbox things" --permission-mode bypassPermissions --cwd "$T/proj" --output-format json)
  assert_eq "$provider: the run completed" "$(jq -r .subtype <<<"$json")" "success"
  file=$(session_file "$(jq -r .session_id <<<"$json")")
  sel='select(.type=="function_call_result" and .callId==$id)'
  result() { jq -r --arg id "$1" "$sel | .output" "$file"; }
  raw() { jq -c --arg id "$1" "$sel | .providerData.toolResult.rawResponse | $2" "$file"; }

  check "$provider: nothing was written outside" test ! -e "$T/outside/x"
  assert_eq "$provider: outside write: sandboxDenied" "$(raw w_out .sandboxDenied)" "true"
  assert_eq "$provider: outside write: the blocked path" "$(raw w_out .sandboxBlockedPaths)" "[\"$T/outside/x\"]"
  assert_eq "$provider: outside write: not a network block" "$(raw w_out .networkBlocked)" "false"
  assert_contains "$provider: outside write: the note" "$(result w_out)" "[sandbox] Loom's sandbox blocked this command"
  assert_contains "$provider: outside write: the way on" "$(result w_out)" "write inside the workspace ($T/proj)"

  assert_eq "$provider: secret read: sandboxDenied" "$(raw r_secret .sandboxDenied)" "true"
  assert_eq "$provider: secret read: the blocked path" "$(raw r_secret .sandboxBlockedPaths)" "[\"$T/fixture/secret/key\"]"
  assert_contains "$provider: secret read: the note names it protected" "$(result r_secret)" "a protected path"
  if [[ "$(result r_secret)" == *"top secret"* ]]; then not_ok "$provider: the secret leaked"; else ok "$provider: the secret did not leak"; fi

  assert_eq "$provider: TCP connect: networkBlocked" "$(raw net .networkBlocked)" "true"
  assert_eq "$provider: TCP connect: sandboxDenied" "$(raw net .sandboxDenied)" "true"
  assert_contains "$provider: TCP connect: the note" "$(result net)" "no network access"
  if [[ "$(result net)" == *connected* ]]; then not_ok "$provider: the connection was made"; else ok "$provider: no connection"; fi

  assert_eq "$provider: inside write: not denied" "$(raw w_in .sandboxDenied)" "false"
  assert_eq "$provider: inside write: exit 0" "$(raw w_in .exitCode)" "0"
  assert_contains "$provider: inside write: the public fixture was read" "$(result w_in)" "public words"
  check "$provider: inside.txt was written" test -s "$T/proj/inside.txt"

  check "$provider: a grandchild is confined too" test ! -e "$T/outside/g"
  assert_eq "$provider: grandchild: the blocked path" "$(raw grand .sandboxBlockedPaths)" "[\"$T/outside/g\"]"

  assert_contains "$provider: dangerouslyDisableSandbox needs approval" "$(result escape)" "needs a person to approve it (it runs outside the sandbox)"
  check "$provider: the unapproved escape did not run" test ! -e "$T/outside/y"
done

# With the network allowed in the settings, the same connection is made.
cat > "$T/scenario2.json" <<JSON
{"turns": [
  {"reply": {"tool_calls": [{"id": "net", "name": "Bash",
     "input": {"command": "exec 3<>/dev/tcp/127.0.0.1/\$(cat $T/port) && echo connected"}}]}},
  {"reply": {"tool_calls": [{"id": "escape", "name": "Bash",
     "input": {"command": "touch $T/outside/y", "dangerouslyDisableSandbox": true}}]}},
  {"reply": {"text": "Done."}}
]}
JSON
settings allow
# A PreToolUse hook that approves the escape by handing back its input
# (seed 000: a hook's allow with updatedInput stands in for the person).
cat > "$T/approve.sh" <<'SH'
#!/usr/bin/env bash
jq -c 'if .tool_input.dangerouslyDisableSandbox then {hookSpecificOutput: {hookEventName: "PreToolUse",
  permissionDecision: "allow", updatedInput: .tool_input}} else empty end'
SH
chmod +x "$T/approve.sh"
# The project's network "allow" loosens the sandbox: it counts only in a
# trusted workspace (docs/permissions.md, "Workspace trust").
echo "{\"trustedWorkspaces\": [\"$T/proj\"], \"hooks\": {\"PreToolUse\": [{\"matcher\": \"Bash\", \"hooks\": [{\"type\": \"command\", \"command\": \"$T/approve.sh\"}]}]}}" \
  > "$LOOM_HOME/settings.json"
start_mock "$T/scenario2.json"
use_provider anthropic
json=$("$LOOM_BIN" -p "network" --permission-mode bypassPermissions --cwd "$T/proj" --output-format json)
file=$(session_file "$(jq -r .session_id <<<"$json")")
assert_contains "network allowed: connected" "$(result net)" "connected"
assert_eq "network allowed: not blocked" "$(raw net .networkBlocked)" "false"
check "an escape approved by a hook runs outside the sandbox" test -e "$T/outside/y"
rm -f "$LOOM_HOME/settings.json"

# Where the kernel cannot sandbox (simulated), the command is refused by
# default; background commands are refused while the sandbox is on (they
# cannot be confined yet).
cat > "$T/scenario3.json" <<JSON
{"turns": [
  {"reply": {"tool_calls": [{"id": "unsup", "name": "Bash",
     "input": {"command": "touch $T/outside/unsup"}}]}},
  {"reply": {"text": "Done."}}
]}
JSON
settings deny
start_mock "$T/scenario3.json"
json=$(LOOM_SANDBOX_ABI=0 "$LOOM_BIN" -p "unsupported" --permission-mode bypassPermissions --cwd "$T/proj" --output-format json)
file=$(session_file "$(jq -r .session_id <<<"$json")")
assert_contains "unsupported: refused" "$(result unsup)" "not supported on this system"
check "unsupported: the command did not run" test ! -e "$T/outside/unsup"

cat > "$T/scenario4.json" <<JSON
{"turns": [
  {"reply": {"tool_calls": [{"id": "bg", "name": "Bash",
     "input": {"command": "touch $T/outside/bg", "run_in_background": true}}]}},
  {"reply": {"text": "Done."}}
]}
JSON
start_mock "$T/scenario4.json"
json=$("$LOOM_BIN" -p "background" --permission-mode bypassPermissions --cwd "$T/proj" --output-format json)
file=$(session_file "$(jq -r .session_id <<<"$json")")
assert_contains "background: refused under the sandbox" "$(result bg)" "run_in_background is not available"
check "background: the command did not run" test ! -e "$T/outside/bg"
finish
