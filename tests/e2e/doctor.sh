#!/usr/bin/env bash
# loom doctor (docs/cli.md) lists every configuration file it found, with
# what counted of it: loaded, partial (an untrusted workspace's files,
# Claude Code's with compat off) or skipped with why (a CLAUDE.md with
# compat off, an instructions file reaching out of an untrusted
# repository, a .mcp.json that is not JSON); it says whether the workspace
# is trusted, whether Claude Code's files count, whether the sandbox is
# available, and that no provider is configured — and still exits 0. Only
# settings that cannot be loaded make it fail, naming the file.
source "$(dirname "$0")/_lib.sh"

P="$T/proj"
mkdir -p "$P/.git" "$P/.claude" "$P/.loom" "$HOME/.claude" "$T/elsewhere"
echo '{"model": "claude-user-model"}' > "$HOME/.claude/settings.json"
echo '{"max_turns": 40}' > "$LOOM_HOME/settings.json"
echo '{"permissions": {"deny": ["Read(./secret.txt)"], "allow": ["Bash(ls)"]}}' > "$P/.claude/settings.json"
echo '{"permissions": {"deny": ["Bash(rm:*)"]}}' > "$P/.loom/settings.json"
echo "claude notes" > "$P/CLAUDE.md"
echo "agents notes" > "$P/AGENTS.md"
echo "outside" > "$T/elsewhere/notes.md"
ln -s "$T/elsewhere/notes.md" "$P/.claude/CLAUDE.md"
echo '{"mcpServers": ' > "$P/.mcp.json"

set +e
out=$(cd "$P" && "$LOOM_BIN" doctor 2>&1)
status=$?
set -e
assert_eq "doctor exits 0 with no provider configured" "$status" "0"
assert_contains "it says no provider is configured" "$out" "Provider  none: no model provider is configured"
assert_contains "it says the workspace is not trusted" "$out" "the workspace is not trusted"
assert_contains "it says Claude Code's files count" "$out" "Claude Code files on"
check "it says whether the sandbox is available" grep -qE "^Sandbox   (supported|not supported)" <<<"$out"
# state kind level origin path, then why.
line() { grep -E "^  $1 +$2 +$3 +$4 +$5\$" <<<"$out" >/dev/null; }
check "the user's ~/.claude/settings.json: loaded" line loaded settings user claude "$HOME/.claude/settings.json"
check "the user's Loom settings: loaded" line loaded settings user loom "$LOOM_HOME/settings.json"
check "the project's .claude/settings.json: partial" line partial settings project claude "$P/.claude/settings.json"
check "the project's .loom/settings.json: partial" line partial settings project loom "$P/.loom/settings.json"
assert_contains "partial, because the workspace is not trusted" "$out" \
  "the workspace is not trusted: only what tightens the user's limits counts"
check "CLAUDE.md: loaded" line loaded memory project claude "$P/CLAUDE.md"
check "AGENTS.md: loaded" line loaded memory project loom "$P/AGENTS.md"
check "the .claude/CLAUDE.md pointing outside: skipped" line skipped memory project claude "$P/.claude/CLAUDE.md"
assert_contains "... because it is outside the untrusted repository" "$out" "is outside the repository"
check "the broken .mcp.json: skipped" line skipped mcp project loom "$P/.mcp.json"
assert_contains "... because it is not JSON" "$out" "invalid JSON in $P/.mcp.json"
assert_contains "the dropped allow is a trust notice" "$out" \
  'ignored .claude/settings.json: permissions.allow[0] "Bash(ls)"'

# --json: the same, as data.
json=$(cd "$P" && "$LOOM_BIN" doctor --json)
state() { jq -r --arg p "$1" '.sources.files[] | select(.path == $p) | .state' <<<"$json"; }
assert_eq "--json: .claude/settings.json is partial" "$(state "$P/.claude/settings.json")" "partial"
assert_eq "--json: CLAUDE.md is loaded" "$(state "$P/CLAUDE.md")" "loaded"
assert_eq "--json: trusted is false" "$(jq -r .sources.trusted <<<"$json")" "false"
assert_eq "--json: compat_claude is true" "$(jq -r .sources.compat_claude <<<"$json")" "true"

# Trusted and with a provider: the model of ~/.claude/settings.json.
echo "{\"max_turns\": 40, \"trustedWorkspaces\": [\"$P\"]}" > "$LOOM_HOME/settings.json"
json=$(cd "$P" && ANTHROPIC_API_KEY=test-key "$LOOM_BIN" doctor --json)
assert_eq "trusted: the model is ~/.claude's" "$(jq -r .model <<<"$json")" "claude-user-model"
assert_eq "trusted: .claude/settings.json is loaded" "$(state "$P/.claude/settings.json")" "loaded"
assert_eq "trusted: .claude/CLAUDE.md (outside) is loaded, listed by the file it is" \
  "$(state "$(realpath "$T/elsewhere/notes.md")")" "loaded"

# compat off: Claude Code's settings partial, its CLAUDE.md files skipped.
out=$(cd "$P" && LOOM_COMPAT_CLAUDE=0 "$LOOM_BIN" doctor)
assert_contains "compat off: it says so" "$out" "Claude Code files off (their deny and ask rules still apply)"
check "compat off: .claude/settings.json is partial" line partial settings project claude "$P/.claude/settings.json"
assert_contains "... because only its deny and ask rules apply" "$out" \
  "compat.claude is off: only its permissions.deny and permissions.ask rules (and sandbox.denyRead) apply"
check "compat off: CLAUDE.md is skipped" line skipped memory project claude "$P/CLAUDE.md"
assert_contains "... because only AGENTS.md files load" "$out" "compat.claude is off: only AGENTS.md files load"

# Settings that cannot be loaded: exit 1, naming the file.
echo '{"permissions": ' > "$P/.claude/settings.local.json"
set +e
out=$(cd "$P" && "$LOOM_BIN" doctor 2>&1)
status=$?
set -e
assert_eq "a malformed settings file makes doctor fail" "$status" "1"
assert_contains "... naming it" "$out" "$P/.claude/settings.local.json"
finish
