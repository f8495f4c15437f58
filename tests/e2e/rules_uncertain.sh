#!/usr/bin/env bash
# Issue #10 class 3: when the parser cannot be sure what runs, a deny rule
# wins. With `Bash` allowed and `Bash(git push:*)` denied, the model asks
# for git push spelled through expansions, unknown-to-the-old-parser
# wrappers, trap strings and xargs placeholders. In default,
# bypassPermissions and fullAccess mode every one is denied by the deny
# rule (the result names it and says why the command could be it) and the
# fake git never sees a push; a plain `git status` still runs. Interpreter
# code that can start programs (python -c "os.system(…)", perl -e, awk
# system()) counts as uncertain too.
source "$(dirname "$0")/_lib.sh"
source "$LOOM_SRC/tests/e2e/_rules_lib.sh"

fake_git
mkdir -p "$T/proj"
cat > "$LOOM_HOME/settings.json" <<'JSON'
{"permissions": {"allow": ["Bash"], "deny": ["Bash(git push:*)"]}}
JSON
# Expansions in the program or subcommand slot: the command only could be
# git push, and the reason says so.
COULD=(
  'x=push; git $x'
  'git $(echo push)'
  'git `echo push`'
  'SUB=push; git "$SUB" origin main'
  'G=git; $G push'
  '$(echo git) push'
  'echo push | xargs -I{} git {}'
  'echo push | xargs git'
  'eval "git $(echo push)"'
  'nice -n 1 timeout 5 git pu?h'
  "python3 -c \"import os; os.system('git push')\""
  "perl -e 'system(\"git push\")'"
  "awk 'BEGIN { system(\"git push\") }'"
)
# Wrappers and script strings the parser now follows: plainly git push.
WRAPPED=(
  'taskset -c 0 git push'
  'chrt -o 0 git push'
  "flock $T/lock git push"
  "flock $T/lock -c 'git push'"
  "script -qc 'git push' /dev/null"
  'strace -f -o /dev/null git push'
  "trap 'git push' EXIT"
  'unshare -r git push'
  'busybox sh -c "git push"'
)
CMDS=("${COULD[@]}" "${WRAPPED[@]}")
bash_calls_scenario "$T/scenario.json" "${CMDS[@]}" 'git status'
for mode in default bypassPermissions fullAccess; do
  : > "$T/git.log"
  start_mock "$T/scenario.json"
  use_provider anthropic
  run_calls "$mode" "$T/proj"
  check "$mode: a session was written" test -s "$SESSION_FILE"
  for i in "${!CMDS[@]}"; do
    r=$(call_result "c$i")
    assert_contains "$mode: [${CMDS[$i]}] denied by the deny rule" "$r" \
      "denied by settings rule Bash(git push:*)"
    if [ "$i" -lt "${#COULD[@]}" ]; then
      assert_contains "$mode: [${CMDS[$i]}] the reason says why it could be it" "$r" "could"
    fi
  done
  check "$mode: no push reached git" bash -c "! grep -q push '$T/git.log'"
  check "$mode: git status did run" grep -qx status "$T/git.log"
done
finish
