#!/usr/bin/env bash
# sandbox.hooks: command hooks run under the same confinement as Bash when
# configured — a hook writing outside the workspace is stopped — and run
# unconfined (as in Claude Code) when not.
source "$(dirname "$0")/_lib.sh"
mkdir -p "$T/proj/.loom" "$T/outside" "$LOOM_HOME"
cat > "$T/hook.sh" <<SH
#!/usr/bin/env bash
cat > /dev/null
echo from-hook > "$T/outside/hook-wrote-here" 2>/dev/null
echo inside > "$T/proj/hook-inside"
SH
chmod +x "$T/hook.sh"
jq -n --arg cmd "$T/hook.sh" '{hooks: {UserPromptSubmit: [{matcher: "", hooks: [{type: "command", command: $cmd}]}]}}' \
  > "$LOOM_HOME/settings.json"
start_mock "$SCENARIOS/chat_two_turns.json"
use_provider anthropic
for confine in true false; do
  rm -f "$T/outside/hook-wrote-here" "$T/proj/hook-inside"
  echo "{\"sandbox\": {\"enabled\": true, \"hooks\": $confine, \"writableTempDirs\": false}}" \
    > "$T/proj/.loom/settings.json"
  "$LOOM_BIN" -p "hi" --cwd "$T/proj" > /dev/null
  check "hooks=$confine: the hook ran (wrote inside the workspace)" test -e "$T/proj/hook-inside"
  if [ "$confine" = true ]; then
    check "hooks=true: the hook could not write outside" test ! -e "$T/outside/hook-wrote-here"
  else
    check "hooks=false: the hook is not confined" test -e "$T/outside/hook-wrote-here"
  fi
done
finish
