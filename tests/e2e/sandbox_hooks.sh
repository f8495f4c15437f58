#!/usr/bin/env bash
# sandbox.hooks: command hooks run under the same confinement as Bash when
# configured — a hook writing or chmod-ing outside the workspace is stopped,
# a chmod inside works (the hook has the supervisor too) — and run unconfined
# (as in Claude Code) when not.
source "$(dirname "$0")/_lib.sh"
mkdir -p "$T/proj/.loom" "$T/outside" "$LOOM_HOME"
cat > "$T/hook.sh" <<SH
#!/usr/bin/env bash
cat > /dev/null
echo from-hook > "$T/outside/hook-wrote-here" 2>/dev/null
echo inside > "$T/proj/hook-inside"
chmod 755 "$T/proj/hook-inside" && echo ok > "$T/proj/hook-chmod-ok"
chmod 777 "$T/outside/keep" 2>/dev/null
SH
chmod +x "$T/hook.sh"
jq -n --arg cmd "$T/hook.sh" '{hooks: {UserPromptSubmit: [{matcher: "", hooks: [{type: "command", command: $cmd}]}]}}' \
  > "$LOOM_HOME/settings.json"
start_mock "$SCENARIOS/chat_two_turns.json"
use_provider anthropic
for confine in true false; do
  rm -f "$T/outside/hook-wrote-here" "$T/proj/hook-inside" "$T/proj/hook-chmod-ok"
  echo keep > "$T/outside/keep"
  chmod 644 "$T/outside/keep"
  echo "{\"sandbox\": {\"enabled\": true, \"hooks\": $confine, \"writableTempDirs\": false}}" \
    > "$T/proj/.loom/settings.json"
  "$LOOM_BIN" -p "hi" --cwd "$T/proj" > /dev/null
  check "hooks=$confine: the hook ran (wrote inside the workspace)" test -e "$T/proj/hook-inside"
  if [ "$confine" = true ]; then
    check "hooks=true: the hook could not write outside" test ! -e "$T/outside/hook-wrote-here"
    check "hooks=true: the hook can chmod inside the workspace" test -e "$T/proj/hook-chmod-ok"
    assert_eq "hooks=true: the hook could not chmod outside" "$(stat -c %a "$T/outside/keep")" "644"
  else
    check "hooks=false: the hook is not confined" test -e "$T/outside/hook-wrote-here"
    assert_eq "hooks=false: the hook's chmod outside is not confined" "$(stat -c %a "$T/outside/keep")" "777"
  fi
done
finish
