#!/usr/bin/env bash
# Issue #10 class 20: a hook's `if` condition Bash(git push:*) means what the
# same settings rule means. A guard hook (exit 2: block) with that condition
# must fire for every wrapped spelling a deny rule would stop — sudo, env,
# bash -c, $( ), backticks, timeout, nice, command, subshells, global
# options, aliases, a shell fed on stdin, runners (submodule foreach, npx),
# GIT_EDITOR, git config aliases — and not for git status. Everything Bash is allowed and
# the mode is bypassPermissions, so the hook is the only thing in the way:
# the fake git must never see a push.
source "$(dirname "$0")/_lib.sh"
source "$LOOM_SRC/tests/e2e/_rules_lib.sh"

fake_git
mkdir -p "$T/proj"
cat > "$T/guard.sh" <<SH
#!/bin/sh
# Records that it fired, then blocks.
jq -r .tool_input.command >> "$T/hook.log"
echo "guard: no pushing" >&2
exit 2
SH
chmod +x "$T/guard.sh"
: > "$T/hook.log"
cat > "$LOOM_HOME/settings.json" <<JSON
{"permissions": {"allow": ["Bash"]},
 "hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
   {"type": "command", "command": "$T/guard.sh", "if": "Bash(git push:*)"}]}]}}
JSON
WRAPPED=(
  'git push'
  'sudo git push'
  'env X=1 git push'
  "bash -c 'git push'"
  'echo $(git push)'
  'echo `git push origin`'
  'timeout 5 git push'
  'nice -n 5 git push -f'
  'command git push'
  '(git push)'
  'cd . && git push'
  'FOO=1 git push'
  'git -C . push'
  'git -c alias.pp=push pp'
  'x=push; git $x'
  "trap 'git push' EXIT"
  "bash <<< 'git push'"
  'echo git push | sh'
  "alias p='git push'"
  'git submodule foreach git push'
  "GIT_EDITOR='git push' git commit"
  'npx git push'
  "git config alias.st '!git push'; git st"
)
bash_calls_scenario "$T/scenario.json" "${WRAPPED[@]}" 'git status'
start_mock "$T/scenario.json"
use_provider anthropic
run_calls bypassPermissions "$T/proj"
for i in "${!WRAPPED[@]}"; do
  assert_contains "[${WRAPPED[$i]}] blocked by the guard hook" "$(call_result "c$i")" "no pushing"
  check "[${WRAPPED[$i]}] the hook saw it" grep -qxF -- "${WRAPPED[$i]}" "$T/hook.log"
done
check "the hook did not fire for git status" bash -c "! grep -qx 'git status' '$T/hook.log'"
check "no push reached git" bash -c "! grep -q push '$T/git.log'"
check "git status ran" grep -qx status "$T/git.log"
finish
