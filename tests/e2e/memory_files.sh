#!/usr/bin/env bash
# Memory files reach the model: AGENTS.md from the repository root down to
# the working directory (outermost first), an @import expanded in place, the
# memory directory's MEMORY.md index resident, its other files named by path
# but not loaded until the model reads one.
source "$(dirname "$0")/_lib.sh"

mkdir -p "$T/repo/.git" "$T/repo/pkg/sub" "$T/repo/docs" "$LOOM_HOME/memory"
echo "ref: refs/heads/main" > "$T/repo/.git/HEAD"
printf 'Root rule: ROOT-MARKER.\n@docs/style.md\n' > "$T/repo/AGENTS.md"
echo "Imported style: IMPORT-MARKER." > "$T/repo/docs/style.md"
echo "Package rule: SUB-MARKER." > "$T/repo/pkg/sub/AGENTS.md"
echo "Fallback rule: CLAUDE-MARKER." > "$T/repo/pkg/CLAUDE.md"
echo "- [deploy](deploy.md): INDEX-MARKER how we deploy" > "$LOOM_HOME/memory/MEMORY.md"
echo "BODY-MARKER: the deploy steps" > "$LOOM_HOME/memory/deploy.md"

start_mock "$SCENARIOS/chat_two_turns.json"
use_provider anthropic
"$LOOM_BIN" -p "hi" --permission-mode bypassPermissions --cwd "$T/repo/pkg/sub" >/dev/null
sys=$(tail -n 1 "$MOCK_LOG" | jq -r '.body.system[1].text')

assert_contains "root AGENTS.md" "$sys" "ROOT-MARKER"
assert_contains "subdirectory AGENTS.md" "$sys" "SUB-MARKER"
assert_contains "CLAUDE.md where there is no AGENTS.md" "$sys" "CLAUDE-MARKER"
root_at=$(grep -n ROOT-MARKER <<<"$sys" | head -n 1 | cut -d: -f1)
claude_at=$(grep -n CLAUDE-MARKER <<<"$sys" | head -n 1 | cut -d: -f1)
sub_at=$(grep -n SUB-MARKER <<<"$sys" | head -n 1 | cut -d: -f1)
check "outermost first: root, then pkg, then pkg/sub" test "$root_at" -lt "$claude_at" -a "$claude_at" -lt "$sub_at"
assert_contains "the @import is expanded" "$sys" "IMPORT-MARKER"
check "the @import line itself is gone" bash -c '! grep -q "^@docs/style.md" <<<"$1"' _ "$sys"
assert_contains "MEMORY.md index is resident" "$sys" "INDEX-MARKER"
assert_contains "the other memory file is named by path" "$sys" "$LOOM_HOME/memory/deploy.md"
check "the other memory file's content is not loaded" bash -c '! grep -q BODY-MARKER <<<"$1"' _ "$sys"
assert_contains "the environment part is still there" "$sys" "Git branch: main"

# A memory file is loaded when the model asks for it (a Read of the path the
# index names), and only then.
jq -n --arg p "$LOOM_HOME/memory/deploy.md" '{turns: [
  {reply: {text: "Let me check the deploy notes.", tool_calls: [{id: "r1", name: "Read", input: {file_path: $p}}]}},
  {reply: {text: "Deploy as the notes say."}}]}' > "$T/ask.json"
start_mock "$T/ask.json"
"$LOOM_BIN" -p "how do we deploy?" --permission-mode bypassPermissions --cwd "$T/repo/pkg/sub" >/dev/null
check "before the Read, no request holds the memory file's body" \
  bash -c '! sed -n 1p "$1" | jq -r .raw_body | grep -q BODY-MARKER' _ "$MOCK_LOG"
assert_contains "after the Read, the body reaches the model as the tool result" \
  "$(sed -n 2p "$MOCK_LOG" | jq -r '.body.messages[-1].content[] | select(.type=="tool_result") | .content')" "BODY-MARKER"
finish
