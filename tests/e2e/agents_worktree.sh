#!/usr/bin/env bash
# Issue 14 item 8 and Done when 8c (the -p half; agents_merge.sh has the
# REPL's /agents merge): isolation "worktree" runs each child in a fresh git
# worktree under .loom/worktrees/ on its own branch. A child's writes land
# in its worktree only; `git -C <parent>`, GIT_DIR=<parent>/.git and a
# plain write to the parent's tree fail from inside it; at the end a
# worktree with changes is kept (committed on its branch, reported in the
# result's worktreePath/worktreeBranch) and one with none is removed. With
# agents.merge "auto", two worktree agents editing different files are
# merged into the parent's tree when the last one ends.
source "$(dirname "$0")/_lib.sh"
# jtrue JQ_ARGS... — the filter's last output is true (no input is a failure:
# jq 1.6 -e exits 0 on empty input).
jtrue() { local out; out=$(jq -e "$@" 2>/dev/null) && [ "$(tail -n 1 <<<"$out")" = true ]; }

mkdir -p "$T/proj" "$LOOM_HOME"
new_repo() {
  rm -rf "$T/proj" && mkdir -p "$T/proj"
  git -C "$T/proj" init -q -b main
  git -C "$T/proj" config user.email parent@example.invalid
  git -C "$T/proj" config user.name parent
  printf 'a1\na2\na3\n' > "$T/proj/a.txt"
  printf 'b1\nb2\nb3\n' > "$T/proj/b.txt"
  printf '.loom/\n' > "$T/proj/.gitignore"
  git -C "$T/proj" add -A && git -C "$T/proj" commit -q -m base
}
G="You are Loom's general-purpose agent"
cat > "$T/scenario.json" <<JSON
{"turns": [
  {"match": {"system_contains": "$G", "last_user_contains": "EDIT-A"},
   "reply": {"tool_calls": [{"name": "Bash", "input": {"command": "printf 'a1\\\\nA2 by agent\\\\na3\\\\n' > a.txt && pwd"}}]}},
  {"match": {"system_contains": "$G", "last_user_contains": "EDIT-B"},
   "reply": {"tool_calls": [{"name": "Bash", "input": {"command": "printf 'b1\\\\nb2\\\\nB3 by agent\\\\n' > b.txt && pwd"}}]}},
  {"match": {"system_contains": "$G", "last_user_contains": "LOOK-ONLY"},
   "reply": {"tool_calls": [{"name": "Bash", "input": {"command": "cat a.txt"}}]}},
  {"match": {"system_contains": "$G", "last_user_contains": "ESCAPE"},
   "reply": {"tool_calls": [
     {"id": "e1", "name": "Bash", "input": {"command": "git -C $T/proj commit -q --allow-empty -m ESCAPED-C"}},
     {"id": "e2", "name": "Bash", "input": {"command": "GIT_DIR=$T/proj/.git GIT_WORK_TREE=$T/proj git commit -q --allow-empty -m ESCAPED-D"}},
     {"id": "e3", "name": "Bash", "input": {"command": "echo out > $T/proj/outside.txt"}}]}},
  {"match": {"system_contains": "$G", "assistant_turns": 1}, "reply": {"text": "CHILD-DONE"}},
  {"match": {"assistant_turns": 0, "last_user_contains": "ISOLATE"},
   "reply": {"tool_calls": [
     {"id": "wa", "name": "Agent", "input": {"description": "edit a", "prompt": "EDIT-A", "name": "ed-a", "isolation": "worktree"}},
     {"id": "wl", "name": "Agent", "input": {"description": "look", "prompt": "LOOK-ONLY", "name": "looker", "isolation": "worktree"}},
     {"id": "we", "name": "Agent", "input": {"description": "escape", "prompt": "ESCAPE", "name": "escaper", "isolation": "worktree"}}]}},
  {"match": {"assistant_turns": 0, "last_user_contains": "AUTO-MERGE"},
   "reply": {"tool_calls": [
     {"id": "wa", "name": "Agent", "input": {"description": "edit a", "prompt": "EDIT-A", "name": "ed-a", "isolation": "worktree"}},
     {"id": "wb", "name": "Agent", "input": {"description": "edit b", "prompt": "EDIT-B", "name": "ed-b", "isolation": "worktree"}}]}},
  {"match": {"assistant_turns": 0, "last_user_contains": "SWEEP"}, "reply": {"text": "SWEPT"}},
  {"match": {"assistant_turns": 1}, "reply": {"text": "PARENT-DONE"}}
]}
JSON
run() { # PROMPT
  start_mock "$T/scenario.json"
  use_provider anthropic
  "$LOOM_BIN" -p "$1" --permission-mode bypassPermissions --cwd "$T/proj" \
    --output-format events > "$T/events" 2> "$T/err" || true
  last=$(tail -n 1 "$T/events")
  file=$(session_file "$(jq -r .payload.session_id <<<"$last")")
}
raw() { jq -c "select(.type==\"function_call_result\" and .callId==\"$1\") | .providerData.toolResult.rawResponse" "$file"; }

# ---- isolation, escape attempts, keep and remove --------------------------------
new_repo
echo '{"agents": {"enabled": true}}' > "$LOOM_HOME/settings.json"
a_before=$(sha1sum < "$T/proj/a.txt")
run "ISOLATE"
assert_eq "isolate: the run completed" "$(jq -r .payload.state <<<"$last")" "completed"
ra=$(raw wa); rl=$(raw wl); re=$(raw we)
wt_a=$(jq -r '.worktreePath // empty' <<<"$ra")
check "isolate: the editing agent reports its worktree and branch ($ra)" \
  jtrue '(.worktreePath|type=="string") and (.worktreeBranch|type=="string" and length>0)' <<<"$ra"
assert_contains "isolate: the worktree is under .loom/worktrees/" "$wt_a" "$T/proj/.loom/worktrees/"
assert_eq "isolate: the parent's a.txt is untouched" "$(sha1sum < "$T/proj/a.txt")" "$a_before"
check "isolate: the changed worktree is kept" test -d "${wt_a:-/nonexistent}"
br=$(jq -r '.worktreeBranch // empty' <<<"$ra")
assert_eq "isolate: the change is committed on the agent's branch" \
  "$(git -C "$T/proj" show "${br:-none}:a.txt" 2>/dev/null | sed -n 2p)" "A2 by agent"
check "isolate: the child's Bash ran in its worktree" \
  grep -qF "$wt_a" <<<"$(jq -r '.body.messages[-1].content | arrays | .[] | select(.type=="tool_result") | .content | tostring' "$MOCK_LOG")"
wt_l=$(jq -r '.worktreePath // empty' <<<"$rl")
check "isolate: the agent without changes had a worktree ($rl)" test -n "$wt_l"
check "isolate: ... which is removed" test ! -e "${wt_l:-/nonexistent}"
check "isolate: ... and its branch too" \
  bash -c "[ -z \"\$(git -C '$T/proj' branch --list '$(jq -r '.worktreeBranch // "none"' <<<"$rl")')\" ]"
assert_eq "isolate: git -C and GIT_DIR could not commit in the parent" \
  "$(git -C "$T/proj" log --format=%s | grep -c ESCAPED || true)" "0"
check "isolate: no write outside the worktree" test ! -e "$T/proj/outside.txt"
escapes=$(jq -c '.body.messages[-1].content | arrays | .[] | select(.type=="tool_result" and (.tool_use_id=="e1" or .tool_use_id=="e2" or .tool_use_id=="e3"))' "$MOCK_LOG")
check "isolate: the three escape attempts came back as errors" \
  jtrue -s 'length == 3 and all(.is_error == true)' <<<"$escapes"
assert_eq "isolate: the parent's status is clean" "$(git -C "$T/proj" status --porcelain)" ""

# ---- merge "auto" ------------------------------------------------------------------
new_repo
echo '{"agents": {"enabled": true, "merge": "auto"}}' > "$LOOM_HOME/settings.json"
run "AUTO-MERGE"
assert_eq "auto: the run completed" "$(jq -r .payload.state <<<"$last")" "completed"
assert_eq "auto: agent A's line is in the parent's a.txt" "$(sed -n 2p "$T/proj/a.txt")" "A2 by agent"
assert_eq "auto: agent B's line is in the parent's b.txt" "$(sed -n 3p "$T/proj/b.txt")" "B3 by agent"
assert_eq "auto: two merge commits" "$(git -C "$T/proj" log --merges --format=%s | wc -l | tr -d ' ')" "2"
assert_eq "auto: the parent's status is clean" "$(git -C "$T/proj" status --porcelain)" ""

# ---- a crashed run's worktrees: swept at the next session's start -------------------
# Two worktrees whose owner (pid 999999, started long ago) is gone: the clean
# one is removed with its branch, the one holding unsaved work is kept.
new_repo
echo '{"agents": {"enabled": true}}' > "$LOOM_HOME/settings.json"
base=$(git -C "$T/proj" rev-parse HEAD)
for tag in clean dirty; do
  git -C "$T/proj" worktree add -q -b "loom/old-$tag" "$T/proj/.loom/worktrees/agent_9-$tag" HEAD
  printf '{"pid":999999,"started":1,"branch":"loom/old-%s","base":"%s"}' "$tag" "$base" \
    > "$T/proj/.loom/worktrees/agent_9-$tag/.loom-owner"
done
printf '/.loom-owner\n' >> "$(git -C "$T/proj" rev-parse --path-format=absolute --git-common-dir)/info/exclude"
echo unsaved > "$T/proj/.loom/worktrees/agent_9-dirty/work.txt"
run "SWEEP"
assert_eq "sweep: the run completed" "$(jq -r .payload.state <<<"$last")" "completed"
check "sweep: the dead owner's clean worktree is gone" test ! -e "$T/proj/.loom/worktrees/agent_9-clean"
check "sweep: ... and its branch" bash -c "[ -z \"\$(git -C '$T/proj' branch --list loom/old-clean)\" ]"
check "sweep: the one with unsaved work is kept" test -f "$T/proj/.loom/worktrees/agent_9-dirty/work.txt"
finish
