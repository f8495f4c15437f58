#!/usr/bin/env bash
# Sub-agents in the REPL (tmux): /agents lists the built-in roles (Explore)
# and the project's .loom/agents/reviewer.md with its source and
# description; a scripted Agent call shows the agent's line under the
# spinner while its (slow, dripping) model call runs — "⎿ … (reviewer) ·
# … tokens · Ns" — and, once it ends, a one-line completion in its place;
# /agents then lists it as completed, /agents show gives its result, and
# /cost breaks the run down by agent. With --agents off, /agents says how
# to turn them on.
source "$(dirname "$0")/repl_lib.sh"

mkdir -p "$T/proj/.loom/agents"
cat > "$T/proj/.loom/agents/reviewer.md" <<'MD'
---
name: reviewer
description: Reviews a change for bugs before it lands
tools: Read, Grep, Glob
---
REVIEWER-BODY-MARK. You review code and report what you find.
MD
# The workspace is trusted, so its agent files count.
printf '{"trustedWorkspaces": ["%s"]}\n' "$T/proj" > "$LOOM_HOME/settings.json"
cat > "$T/scenario.json" <<'JSON'
{"turns": [
  {"match": {"system_contains": "REVIEWER-BODY-MARK", "tool_results": 0},
   "reply": {"tool_calls": [{"id": "g1", "name": "Glob", "input": {"pattern": "*.md"}}],
             "usage": {"input_tokens": 1000, "output_tokens": 200}}},
  {"match": {"system_contains": "REVIEWER-BODY-MARK", "tool_results": 1},
   "chunk_size": 2, "drip_ms": 250,
   "reply": {"text": "REVIEW-RESULT: nothing wrong with it.",
             "usage": {"input_tokens": 1100, "output_tokens": 100}}},
  {"reply": {"tool_calls": [{"id": "ag1", "name": "Agent", "input": {"description": "review it",
     "prompt": "Review the change.", "subagent_type": "reviewer"}}]}},
  {"reply": {"text": "The reviewer is done."}}
]}
JSON
start_mock "$T/scenario.json"
use_provider anthropic
repl_start "$T/proj" --agents on
wait_prompt

type_line "/agents"
wait_screen "the catalog" "Agents the Agent tool can spawn"
s=$(screen)
assert_contains "/agents lists Explore" "$s" "Explore"
assert_contains "/agents lists the project's reviewer" "$s" "reviewer"
assert_contains "the reviewer's source is its file" "$s" ".loom/agents/reviewer.md"
assert_contains "the reviewer's description is shown" "$s" "Reviews a change for bugs"
assert_contains "no agent has run yet" "$s" "(none yet)"
wait_prompt

type_line "ask the reviewer"
# The tree line: under the spinner while the child's reply drips in.
tree_line() { screen | grep -F "⎿ " | grep -F "(reviewer)" | grep -qF "tokens ·"; }
wait_until "the agent's line under the spinner" 20 tree_line
assert_contains "the line names the agent by what it was asked" "$(screen | grep -F '(reviewer)')" "review it"
wait_screen "the final answer" "The reviewer is done." 30
wait_prompt
s=$(screen)
assert_contains "the completion line replaces it" "$s" "(reviewer) completed · 1 tool use"
assert_eq "the tree line is gone once it ended" "$(grep -cF '⎿ review it (reviewer) ·' <<<"$s")" "0"
check "the child's text stayed in its transcript" test "$(grep -c 'REVIEW-RESULT' <<<"$s")" -le 2

type_line "/agents"
catalog_twice() { [ "$(screen | grep -cF 'Agents the Agent tool can spawn')" -eq 2 ]; }
wait_until "the session's agents" 10 catalog_twice
wait_prompt
s=$(screen)
row=$(grep -F "reviewer" <<<"$s" | grep -F "completed" | tail -n 1)
check "/agents lists the ended agent as completed" test -n "$row"
agent_id=$(grep -oE 'agent_[0-9]+' <<<"$row" | head -n 1)
check "its row starts with its id" test -n "$agent_id"

type_line "/agents show $agent_id"
# Its transcript line, then the result whole under "Result" (indented by
# four, unlike the Agent call's own result line).
wait_screen "its transcript" "  transcript $LOOM_HOME/projects/" 10
wait_screen "its result" "    REVIEW-RESULT: nothing wrong with it." 10
wait_prompt

type_line "/cost"
wait_screen "the per-agent breakdown" "By agent (last run)" 10
s=$(screen)
assert_contains "the reviewer's tokens are its own" "$(grep -F 'reviewer' <<<"$s" | tail -n 1)" "2,400 tokens"
wait_prompt

type_line "/agents bogus"
wait_screen "the usage line" "usage: /agents lists them"
wait_prompt
keys C-d
assert_eq "loom exits 0" "$(wait_exit)" "0"

# With agents off, /agents says how to turn them on.
repl_start "$T/proj" --agents off
wait_prompt
type_line "/agents"
wait_screen "agents are off" "sub-agents are off: start loom with --agents on" 10
wait_prompt
keys C-d
assert_eq "loom exits 0 (agents off)" "$(wait_exit)" "0"
finish
