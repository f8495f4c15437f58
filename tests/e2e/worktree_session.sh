#!/usr/bin/env bash
# EnterWorktree / ExitWorktree (docs/tools.md): the session moves into a new
# git worktree under .loom/worktrees/ on a new branch, and every later call
# works there (Bash's pwd, a relative Write); the project stays untouched.
# ExitWorktree "remove" refuses while the worktree holds changes, "keep"
# leaves it and its branch on disk and returns to the project; a clean
# worktree is removed with its branch; discard_changes removes one with
# changes. Entering twice, leaving when not in one, a bad name and a
# directory that is no git repository are error results the run goes on
# from. The next runs of the session stay in the worktree until it leaves.
source "$(dirname "$0")/_lib.sh"

new_repo() {
  rm -rf "$T/proj" && mkdir -p "$T/proj/src"
  git -C "$T/proj" init -q -b main
  git -C "$T/proj" config user.email parent@example.invalid
  git -C "$T/proj" config user.name parent
  echo base > "$T/proj/src/a.txt"
  git -C "$T/proj" add -A && git -C "$T/proj" commit -q -m base
}
cat > "$T/scenario.json" <<'JSON'
{"turns": [
  {"reply": {"tool_calls": [{"id": "bad", "name": "EnterWorktree", "input": {"name": "../up"}},
                            {"id": "en1", "name": "EnterWorktree", "input": {"name": "feature"}}]}},
  {"reply": {"tool_calls": [{"id": "pwd1", "name": "Bash", "input": {"command": "pwd"}},
                            {"id": "w1", "name": "Write", "input": {"file_path": "notes.txt", "content": "in the worktree\n"}}]}},
  {"reply": {"tool_calls": [{"id": "rm1", "name": "ExitWorktree", "input": {"action": "remove"}},
                            {"id": "en2", "name": "EnterWorktree", "input": {"name": "again"}}]}},
  {"reply": {"tool_calls": [{"id": "keep", "name": "ExitWorktree", "input": {"action": "keep"}}]}},
  {"reply": {"tool_calls": [{"id": "pwd2", "name": "Bash", "input": {"command": "pwd"}},
                            {"id": "en3", "name": "EnterWorktree", "input": {}}]}},
  {"reply": {"tool_calls": [{"id": "rm2", "name": "ExitWorktree", "input": {"action": "remove"}}]}},
  {"reply": {"tool_calls": [{"id": "none", "name": "ExitWorktree", "input": {"action": "keep"}},
                            {"id": "en4", "name": "EnterWorktree", "input": {"name": "scratch"}}]}},
  {"reply": {"tool_calls": [{"id": "w2", "name": "Write", "input": {"file_path": "junk.txt", "content": "junk\n"}}]}},
  {"reply": {"tool_calls": [{"id": "rm3", "name": "ExitWorktree", "input": {"action": "remove", "discard_changes": true}}]}},
  {"reply": {"text": "WT-DONE"}}
]}
JSON
for provider in ${PROVIDERS:-anthropic openai}; do
  new_repo
  start_mock "$T/scenario.json"
  use_provider "$provider"
  proj=$(realpath "$T/proj")
  json=$("$LOOM_BIN" -p "work in a worktree" --permission-mode bypassPermissions --cwd "$T/proj/src" --output-format json)
  assert_eq "$provider: the run completed" "$(jq -r .result <<<"$json")" "WT-DONE"
  file=$(session_file "$(jq -r .session_id <<<"$json")")
  result() { jq -r --arg id "$1" 'select(.type=="function_call_result" and .callId==$id) | .output' "$file"; }
  raw() { jq -r --arg id "$1" "select(.type==\"function_call_result\" and .callId==\$id) | .providerData.toolResult.rawResponse.$2" "$file"; }
  is_error() { jq -r --arg id "$1" 'select(.type=="function_call_result" and .callId==$id) | .isError' "$file"; }

  assert_contains "$provider: a name with a slash is refused" "$(result bad)" "name must be 1 to 64 letters, digits"
  wt=$(raw en1 worktreePath)
  branch=$(raw en1 worktreeBranch)
  check "$provider: the worktree is under .loom/worktrees ($wt)" bash -c '[[ "$1" == "$2"/.loom/worktrees/feature-* ]]' _ "$wt" "$proj"
  check "$provider:   on a new branch ($branch)" bash -c '[[ "$1" == loom/feature-* ]] && git -C "$2" rev-parse -q --verify "refs/heads/$1" >/dev/null' _ "$branch" "$proj"
  assert_contains "$provider:   the model is told where it works" "$(result en1)" "The session now works in $wt/src"
  assert_eq "$provider: Bash runs in the worktree's src" "$(result pwd1)" "$wt/src"
  check "$provider: a relative Write lands in the worktree" test -s "$wt/src/notes.txt"
  check "$provider:   and not in the project" test ! -e "$proj/src/notes.txt"
  assert_contains "$provider: remove refuses while it has changes" "$(result rm1)" "has 1 changed file and 0 commits on branch $branch"
  assert_eq "$provider:   as an error" "$(is_error rm1)" "true"
  assert_contains "$provider: entering twice is refused" "$(result en2)" "already in worktree $wt"
  assert_contains "$provider: keep leaves it on disk" "$(result keep)" "Left worktree $wt; it and its branch $branch are kept"
  check "$provider:   the kept worktree has the file" test -s "$wt/src/notes.txt"
  check "$provider:   and its branch" git -C "$proj" rev-parse -q --verify "refs/heads/$branch"
  assert_eq "$provider: back in the project" "$(result pwd2)" "$proj/src"
  wt3=$(raw en3 worktreePath)
  check "$provider: without a name one is made ($wt3)" bash -c '[[ "$1" == */.loom/worktrees/session-* ]]' _ "$wt3"
  assert_contains "$provider: a clean worktree is removed" "$(result rm2)" "Removed worktree $wt3 and its branch"
  check "$provider:   its folder is gone" test ! -e "$wt3"
  check "$provider:   and its branch" bash -c '! git -C "$1" rev-parse -q --verify "refs/heads/$2" >/dev/null' _ "$proj" "$(raw en3 worktreeBranch)"
  assert_contains "$provider: leaving when not in one is an error" "$(result none)" "No worktree to leave"
  wt4=$(raw en4 worktreePath)
  assert_contains "$provider: discard_changes removes one with changes" "$(result rm3)" "Removed worktree $wt4 and its branch $(raw en4 worktreeBranch) (its changes discarded)"
  check "$provider:   its folder is gone" test ! -e "$wt4"
  assert_eq "$provider: the project's tree is untouched" "$(git -C "$proj" status --porcelain --untracked-files=all -- src)" ""
  assert_eq "$provider: the kept worktree is the only one left" \
    "$(git -C "$proj" worktree list --porcelain | grep -c '^worktree ')" "2"
  stop_mock
done

# Across the runs of one session (stream-json input: a run per line) the
# session stays in its worktree until it leaves.
new_repo
cat > "$T/runs.json" <<'JSON'
{"turns": [
  {"match": {"last_user_contains": "RUN-ONE"}, "reply": {"tool_calls": [{"id": "e", "name": "EnterWorktree", "input": {"name": "across"}}]}},
  {"match": {"tool_results": 1, "assistant_turns": 1}, "reply": {"text": "Entered."}},
  {"match": {"last_user_contains": "RUN-TWO"}, "reply": {"tool_calls": [{"id": "pa", "name": "Bash", "input": {"command": "pwd"}}, {"id": "k", "name": "ExitWorktree", "input": {"action": "keep"}}]}},
  {"match": {"tool_results": 3, "assistant_turns": 3}, "reply": {"text": "Left."}},
  {"match": {"last_user_contains": "RUN-THREE"}, "reply": {"tool_calls": [{"id": "pb", "name": "Bash", "input": {"command": "pwd"}}]}},
  {"match": {"tool_results": 4, "assistant_turns": 5}, "reply": {"text": "Back."}}
]}
JSON
start_mock "$T/runs.json"
use_provider anthropic
proj=$(realpath "$T/proj")
printf '%s\n' '{"type":"user","message":{"role":"user","content":"RUN-ONE"}}' \
  '{"type":"user","message":{"role":"user","content":"RUN-TWO"}}' \
  '{"type":"user","message":{"role":"user","content":"RUN-THREE"}}' |
  "$LOOM_BIN" -p --input-format stream-json --output-format stream-json --permission-mode bypassPermissions \
    --cwd "$T/proj" > "$T/runs.out" 2>"$T/runs.err"
assert_eq "three runs, one session" "$(jq -r 'select(.type=="result") | .result' "$T/runs.out" | paste -sd,)" "Entered.,Left.,Back."
file=$(session_file "$(jq -r 'select(.type=="result") | .session_id' "$T/runs.out" | head -n 1)")
out_of() { jq -r --arg id "$1" 'select(.type=="function_call_result" and .callId==$id) | .output' "$file"; }
check "the next run works in the worktree" bash -c '[[ "$1" == "$2"/.loom/worktrees/across-* ]]' _ "$(out_of pa)" "$proj"
assert_eq "after leaving, the run after is back in the project" "$(out_of pb)" "$proj"
stop_mock

# Outside a git repository the worktree cannot be made; the run goes on.
rm -rf "$T/plain" && mkdir -p "$T/plain"
cat > "$T/plain.json" <<'JSON'
{"turns": [
  {"reply": {"tool_calls": [{"id": "en", "name": "EnterWorktree", "input": {"name": "x"}}]}},
  {"reply": {"text": "OK."}}
]}
JSON
start_mock "$T/plain.json"
use_provider anthropic
json=$("$LOOM_BIN" -p "try" --permission-mode bypassPermissions --cwd "$T/plain" --output-format json)
file=$(session_file "$(jq -r .session_id <<<"$json")")
assert_contains "outside a repository EnterWorktree explains" \
  "$(jq -r 'select(.type=="function_call_result" and .callId=="en") | .output' "$file")" "Could not create a worktree"
assert_eq "  and the run completes" "$(jq -r .result <<<"$json")" "OK."
stop_mock
finish
