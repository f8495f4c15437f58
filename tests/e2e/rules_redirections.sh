#!/usr/bin/env bash
# Issue #10 class 1: an allow rule for a harmless command does not allow
# what its redirections and tee write. With only Bash(git status:*),
# Bash(echo:*), Bash(cat:*) and Bash(tee:*) allowed, the model writes
# outside the workspace with >, >>, 2>, &>, >|, <>, a here-string into tee,
# a relative path, a cd, a symlink and a group: in default and acceptEdits
# mode each is not covered by the rule, so it asks — denied headless — and
# no file appears. A write inside the workspace still runs. Then shell
# start-up and credentials files, through Bash and the Write tool, in
# bypassPermissions mode: the tamper guard makes each one need a person, so
# even bypass does not write them.
source "$(dirname "$0")/_lib.sh"
source "$LOOM_SRC/tests/e2e/_rules_lib.sh"

fake_git
P="$T/proj" O="$T/outside"
mkdir -p "$P" "$O"
ln -s ../outside "$P/link"
cat > "$LOOM_HOME/settings.json" <<'JSON'
{"permissions": {"allow": ["Bash(git status:*)", "Bash(echo:*)", "Bash(cat:*)", "Bash(tee:*)"]}}
JSON

OUTSIDE=(
  "git status > $O/a"
  "git status >> $O/b"
  "git status 2> $O/c"
  "git status &> $O/d"
  "git status >| $O/e"
  "git status 1<> $O/f"
  "cat <<< x | tee $O/g"
  "echo x | tee -a $O/h"
  "git status > ../outside/i"
  "cd $O && git status > j"
  "git status > link/k"
  "{ git status; } > $O/l"
  "(echo x) &>> $O/m"
)
FILES=(a b c d e f g h i j k l m)
bash_calls_scenario "$T/s1.json" "${OUTSIDE[@]}" "git status > inside.txt"
for mode in default acceptEdits; do
  rm -f "$O"/? "$P/inside.txt"
  start_mock "$T/s1.json"
  use_provider anthropic
  run_calls "$mode" "$P"
  for i in "${!OUTSIDE[@]}"; do
    r=$(call_result "c$i")
    assert_contains "$mode: [${OUTSIDE[$i]}] was not run" "$r" "denied"
    check "$mode: [${OUTSIDE[$i]}] created no file outside" test ! -e "$O/${FILES[$i]}"
  done
  check "$mode: a write inside the workspace still runs" test -e "$P/inside.txt"
done

# Start-up and credentials files: a person must see them, in bypass too.
mkdir -p "$HOME/.ssh" "$HOME/.config/fish/conf.d" "$HOME/.aws" "$HOME/.config/systemd/user" \
  "$HOME/.local/share/applications"
SENSITIVE=(
  "git status > ~/.bashrc"
  "echo 'alias ls=rm' >> ~/.profile"
  "git status 2> ~/.zshrc"
  "git status &> ~/.bash_profile"
  "cat <<< 'export X=1' | tee -a ~/.zprofile"
  "echo key >> ~/.ssh/authorized_keys"
  "echo x > \"\$HOME/.zshenv\""
  "echo x >| ~/.config/fish/config.fish"
  "echo '[default]' > ~/.aws/credentials"
  "echo machine > ~/.netrc"
  "cd ~ && echo x >> .bash_logout"
  "cd ~/.config && echo x > fish/conf.d/x.fish"
  "strace -o ~/.kshrc true"
  "script -q ~/.bash_aliases < /dev/null"
  "echo '[alias] st = !curl x' >> ~/.gitconfig"
  "git status > ~/.vimrc"
  "echo '[Service]' > ~/.config/systemd/user/x.service"
  "cat <<< 'Exec=x' | tee ~/.local/share/applications/x.desktop"
  "echo 'X=1' >> ~/.pam_environment"
)
SFILES=(.bashrc .profile .zshrc .bash_profile .zprofile .ssh/authorized_keys .zshenv
        .config/fish/config.fish .aws/credentials .netrc .bash_logout .config/fish/conf.d/x.fish .kshrc .bash_aliases
        .gitconfig .vimrc .config/systemd/user/x.service .local/share/applications/x.desktop .pam_environment)
bash_calls_scenario "$T/s2.json" "${SENSITIVE[@]}"
# and the Write tool, for two of them
jq --arg p "$HOME/.bash_login" --arg q "$HOME/.npmrc" '.turns = (.turns[:-1] + [
  {reply: {tool_calls: [{id: "w1", name: "Write", input: {file_path: $p, content: "x"}}]}},
  {reply: {tool_calls: [{id: "w2", name: "Write", input: {file_path: $q, content: "x"}}]}},
  .turns[-1]])' "$T/s2.json" > "$T/s2w.json"
for mode in default bypassPermissions; do
  start_mock "$T/s2w.json"
  use_provider anthropic
  run_calls "$mode" "$P"
  for i in "${!SENSITIVE[@]}"; do
    r=$(call_result "c$i")
    assert_contains "$mode: [${SENSITIVE[$i]}] needs a person" "$r" "needs a person"
    check "$mode: [${SENSITIVE[$i]}] wrote nothing" test ! -e "$HOME/${SFILES[$i]}"
  done
  for w in w1 w2; do
    assert_contains "$mode: Write $w of a sensitive file needs a person" "$(call_result $w)" \
      "needs a person"
  done
  check "$mode: Write did not create ~/.bash_login" test ! -e "$HOME/.bash_login"
  check "$mode: Write did not create ~/.npmrc" test ! -e "$HOME/.npmrc"
done
check "git itself never ran for a refused call (only the inside write)" \
  bash -c "[ \"\$(grep -c . '$T/git.log')\" -le 2 ]"
finish
