#!/usr/bin/env bash
# Done when 8c (issue item 14, merge-back), in the REPL under tmux: two
# worktree agents editing different files are merged cleanly by
# `/agents merge` (both changes in the parent's files, one --no-ff merge
# each, a summary naming which agent brought which file, their worktrees
# gone). Two editing the same line: the first merges, the second is
# reported as a conflict on a.txt, and the parent is left exactly as the
# clean merge made it — a.txt's hash is the first agent's version, no
# conflict markers, no merge in progress, `git status --porcelain` clean.
source "$(dirname "$0")/repl_lib.sh"

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
new_repo
printf '{"trustedWorkspaces": ["%s"], "agents": {"enabled": true}, "permissions": {"defaultMode": "bypassPermissions"}}\n' \
  "$T/proj" > "$LOOM_HOME/settings.json"
G="You are Loom's general-purpose agent"
edit() { # PROMPT_MARK FILE CONTENT — a child turn writing FILE in its worktree
  jq -cn --arg g "$G" --arg m "$1" --arg f "$2" --arg c "$3" \
    '{match: {system_contains: $g, last_user_contains: $m},
      reply: {tool_calls: [{name: "Bash", input: {command: ("printf \u0027" + $c + "\u0027 > " + $f)}}]}}'
}
spawn2() { # USER_MARK PROMPT1 PROMPT2
  jq -cn --arg u "$1" --arg p "$2" --arg q "$3" \
    '{match: {assistant_turns: 0, last_user_contains: $u},
      reply: {tool_calls: [
        {name: "Agent", input: {description: "first", prompt: $p, name: "first", isolation: "worktree"}},
        {name: "Agent", input: {description: "second", prompt: $q, name: "second", isolation: "worktree"}}]}}'
}
jq -n --argjson t1 "$(edit EDIT-A a.txt 'a1\nA2 by agent\na3\n')" \
      --argjson t2 "$(edit EDIT-B b.txt 'b1\nb2\nB3 by agent\n')" \
      --argjson t3 "$(edit SAME-1 a.txt 'a1\nFIRST\na3\n')" \
      --argjson t4 "$(edit SAME-2 a.txt 'a1\nSECOND\na3\n')" \
      --argjson s1 "$(spawn2 CLEAN-MERGE EDIT-A EDIT-B)" \
      --argjson s2 "$(spawn2 SAME-LINES SAME-1 SAME-2)" \
      --arg g "$G" \
  '{turns: [$t1, $t2, $t3, $t4,
            {match: {system_contains: $g, assistant_turns: 1}, reply: {text: "CHILD-DONE"}},
            $s1, $s2,
            {match: {assistant_turns: 1}, reply: {text: "PARENT-DONE"}}]}' > "$T/scenario.json"
start_mock "$T/scenario.json"
use_provider anthropic

# ---- different files: both merged ------------------------------------------------
repl_start "$T/proj" --agents on
wait_prompt
type_line "CLEAN-MERGE"
wait_screen "the parent's answer" "PARENT-DONE" 30
wait_prompt
check "clean: before the merge the parent's files are untouched" \
  bash -c "[ \"\$(sed -n 2p '$T/proj/a.txt')\" = a2 ] && [ \"\$(sed -n 3p '$T/proj/b.txt')\" = b3 ]"
type_line "/agents merge"
merged_twice() { [ "$(screen | grep -cF 'merged agent_')" -ge 2 ]; }
wait_until "two merged lines" 20 merged_twice
wait_prompt
s=$(screen)
assert_contains "clean: the summary names a.txt" "$(grep -F 'merged agent_' <<<"$s")" "a.txt"
assert_contains "clean: the summary names b.txt" "$(grep -F 'merged agent_' <<<"$s")" "b.txt"
check "clean: no conflict reported" bash -c "! grep -qF 'conflict' <<<'$s'"
assert_eq "clean: agent A's line is in the parent's a.txt" "$(sed -n 2p "$T/proj/a.txt")" "A2 by agent"
assert_eq "clean: agent B's line is in the parent's b.txt" "$(sed -n 3p "$T/proj/b.txt")" "B3 by agent"
assert_eq "clean: one --no-ff merge per agent" "$(git -C "$T/proj" log --merges --format=%s | wc -l | tr -d ' ')" "2"
assert_eq "clean: the parent's status is clean" "$(git -C "$T/proj" status --porcelain)" ""
assert_eq "clean: the merged worktrees are gone" \
  "$(git -C "$T/proj" worktree list | grep -c '.loom/worktrees' || true)" "0"
type_line "/exit"
wait_exit 10 >/dev/null || true

# ---- the same line: one merged, one conflict, the parent untouched by it ----------
new_repo
repl_start "$T/proj" --agents on
wait_prompt
type_line "SAME-LINES"
wait_screen "the parent's answer" "PARENT-DONE" 30
wait_prompt
branches=$(git -C "$T/proj" branch --list 'loom/*' --format='%(refname:short)')
assert_eq "same: two agent branches with changes" "$(wc -l <<<"$branches" | tr -d ' ')" "2"
type_line "/agents merge"
wait_screen "the conflict" "conflict, not merged:" 20
wait_prompt
s=$(screen)
assert_contains "same: the conflict names a.txt" "$(grep -F 'conflict, not merged:' <<<"$s")" "a.txt"
assert_eq "same: exactly one branch merged" "$(grep -cF 'merged agent_' <<<"$s")" "1"
assert_contains "same: the user is told the files are unchanged" "$s" "your files are unchanged"
# Which agent merged: the parent's a.txt must be that branch's a.txt, whole.
merged_branch=$(grep -F 'merged agent_' <<<"$s" | grep -oE 'loom/[A-Za-z0-9._/-]+' | head -n 1)
check "same: the merged branch is named ($merged_branch)" test -n "$merged_branch"
# (A merged branch is deleted with its worktree; its name says which it was:
# agent "first" wrote FIRST, "second" SECOND.)
who=$(sed -E 's#^loom/([a-z]+)-.*#\1#' <<<"$merged_branch" | tr a-z A-Z)
assert_eq "same: a.txt's hash is the merged agent's version, whole" \
  "$(sha1sum < "$T/proj/a.txt")" "$(printf 'a1\n%s\na3\n' "$who" | sha1sum)"
check "same: the conflicting branch is kept for the user" \
  bash -c "git -C '$T/proj' branch --list 'loom/*' --format='%(refname:short)' | grep -qv '^$merged_branch\$'"
check "same: no conflict markers in a.txt" bash -c "! grep -q '^<<<<<<<\|^>>>>>>>' '$T/proj/a.txt'"
check "same: no merge left in progress" test ! -e "$T/proj/.git/MERGE_HEAD"
assert_eq "same: the parent's status is clean" "$(git -C "$T/proj" status --porcelain)" ""
assert_eq "same: one merge commit" "$(git -C "$T/proj" log --merges --format=%s | wc -l | tr -d ' ')" "1"
type_line "/exit"
wait_exit 10 >/dev/null || true
finish
