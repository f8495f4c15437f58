#!/usr/bin/env bash
# /agents stop, show and merge in the REPL (tmux) on a background agent:
# the main run starts a general-purpose agent in the background and ends;
# at the prompt /agents lists it running (with its tool), /agents stop ID
# stops it, /agents lists it cancelled; an unknown id and /agents merge
# with no worktree agent are clear messages, not crashes.
source "$(dirname "$0")/repl_lib.sh"

mkdir -p "$T/proj"
MARK="You are Loom's general-purpose agent"
cat > "$T/scenario.json" <<JSON
{"turns": [
  {"match": {"system_contains": "$MARK"}, "chunk_size": 1, "drip_ms": 400,
   "reply": {"text": "A very slow background report that goes on for a long while."}},
  {"reply": {"tool_calls": [{"id": "ag1", "name": "Agent", "input": {"description": "slow survey",
     "prompt": "Survey slowly.", "subagent_type": "general-purpose", "name": "slowpoke",
     "run_in_background": true}}]}},
  {"reply": {"text": "Started it in the background."}}
]}
JSON
start_mock "$T/scenario.json"
use_provider anthropic
repl_start "$T/proj" --agents on
wait_prompt

type_line "survey in the background"
wait_screen "the main run's answer" "Started it in the background." 20
wait_prompt
type_line "/agents"
wait_screen "the session's agents" "This session's agents" 10
wait_prompt
row=$(screen | grep -F "slowpoke" | grep -F " · running" | tail -n 1)
check "/agents lists the background agent running" test -n "$row"
assert_contains "it is marked background" "$row" "running (background)"
agent_id=$(grep -oE 'agent_[0-9]+' <<<"$row" | head -n 1)

type_line "/agents stop $agent_id"
wait_screen "the stop" "Stopped agent $agent_id and the agents it started." 10
wait_prompt
stopped() {
  type_line "/agents"
  sleep 0.5
  screen | grep -F "slowpoke" | tail -n 1 | grep -qF "cancelled"
}
wait_until "the agent listed as cancelled" 15 stopped
wait_prompt

type_line "/agents stop agent_99"
wait_screen "the unknown id" "no sub-agent agent_99 in this session" 10
wait_prompt
type_line "/agents merge"
wait_screen "an answer to /agents merge" "no finished worktree agent has changes to merge" 10
wait_prompt
s=$(screen)
assert_contains "the stop is confirmed" "$s" "Stopped agent $agent_id and the agents it started."
assert_contains "an unknown id is named" "$s" "no sub-agent agent_99 in this session (/agents lists them)"
keys C-d
assert_eq "loom exits 0" "$(wait_exit 20)" "0"
finish
