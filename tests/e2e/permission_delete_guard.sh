#!/usr/bin/env bash
# Delete protection (issue 25, item 6): even in bypassPermissions, a Bash
# call that deletes recursively .git, the workspace root or a path outside
# the workspace needs a person — headless it is denied, the model is told
# why, and nothing is deleted — while deleting a build directory runs. An
# allow rule for the command does not skip the question; fullAccess does.
source "$(dirname "$0")/_lib.sh"

setup_ws() {
  rm -rf "$T/proj" "$T/outside"
  mkdir -p "$T/proj/.git" "$T/proj/build" "$T/outside/data"
  echo keep > "$T/proj/.git/HEAD"; echo o > "$T/proj/build/x.o"; echo d > "$T/outside/data/f"
}
jq -n --arg out "$T/outside/data" '{sequence: true, turns: [
  {reply: {tool_calls: [{id: "git", name: "Bash", input: {command: "sudo -n true; rm -rf .git"}}]}},
  {reply: {tool_calls: [{id: "root", name: "Bash", input: {command: "cd build && rm -rf .."}}]}},
  {reply: {tool_calls: [{id: "out", name: "Bash", input: {command: ("find " + $out + " -delete")}}]}},
  {reply: {tool_calls: [{id: "build", name: "Bash", input: {command: "rm -rf build && echo gone"}}]}},
  {reply: {text: "Done."}}]}' > "$T/scenario.json"
result() { jq -r --arg id "$1" 'select(.type=="function_call_result" and .callId==$id) | .output' "$file"; }
run() {
  start_mock "$T/scenario.json"
  use_provider anthropic
  json=$("$LOOM_BIN" -p "clean up" --cwd "$T/proj" --output-format json "$@" 2>/dev/null)
  file=$(session_file "$(jq -r .session_id <<<"$json")")
}

setup_ws
run --permission-mode bypassPermissions
assert_eq "the run completed" "$(jq -r .subtype <<<"$json")" "success"
check ".git survives bypassPermissions" test -f "$T/proj/.git/HEAD"
assert_contains "the model is told why (.git)" "$(result git)" "git's repository data"
assert_contains "and that nobody could approve it" "$(result git)" "nobody can approve"
check "the workspace root survives" test -d "$T/proj"
assert_contains "the workspace root needs a person" "$(result root)" "workspace root"
check "outside the workspace survives" test -f "$T/outside/data/f"
assert_contains "outside the workspace needs a person" "$(result out)" "outside the workspace"
assert_contains "a build directory is deleted" "$(result build)" "gone"
check "build is gone" test ! -e "$T/proj/build"

# An allow rule for the very command does not skip the question.
setup_ws
mkdir -p "$LOOM_HOME"
echo '{"permissions": {"allow": ["Bash(rm -rf .git)", "Bash"]}}' \
  > "$LOOM_HOME/settings.json"
run --permission-mode acceptEdits
check "an allow rule does not let .git go" test -f "$T/proj/.git/HEAD"
rm -f "$LOOM_HOME/settings.json"

# fullAccess is "everything": the guard does not hold there (documented).
setup_ws
run --permission-mode fullAccess
check "fullAccess: .git is deleted" test ! -e "$T/proj/.git"
finish
