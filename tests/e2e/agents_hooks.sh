#!/usr/bin/env bash
# Done when 8b and issue item 6/13: a SubagentStart hook rewrites the
# delegation through updatedInput and the rewrite is what the sub-agent
# receives (its first request's user text), not the original prompt; every
# hook fired inside a sub-agent carries agent_id and agent_type (Claude
# Code's fields), the main agent's own hooks do not; SubagentStart has the
# prompt, SubagentStop the transcript path and last assistant message.
source "$(dirname "$0")/_lib.sh"
# jtrue JQ_ARGS... — the filter's last output is true (no input is a failure:
# jq 1.6 -e exits 0 on empty input).
jtrue() { local out; out=$(jq -e "$@" 2>/dev/null) && [ "$(tail -n 1 <<<"$out")" = true ]; }

mkdir -p "$T/proj" "$LOOM_HOME"
# Every hook appends its payload to one log; SubagentStart also rewrites.
cat > "$T/log.sh" <<SH
#!/usr/bin/env bash
input=\$(cat)
printf '%s\n' "\$(jq -c . <<<"\$input")" >> "$T/hooks.jsonl"
SH
cat > "$T/start.sh" <<SH
#!/usr/bin/env bash
input=\$(cat)
printf '%s\n' "\$(jq -c . <<<"\$input")" >> "$T/hooks.jsonl"
jq -n '{hookSpecificOutput: {hookEventName: "SubagentStart",
        updatedInput: {description: "rewritten", subagent_type: "general-purpose",
                       prompt: "REWRITTEN by the SubagentStart hook"}}}'
SH
chmod +x "$T"/*.sh
hook() { jq -n --arg c "$1" '[{matcher: "", hooks: [{type: "command", command: $c}]}]'; }
jq -n --argjson log "$(hook "$T/log.sh")" --argjson start "$(hook "$T/start.sh")" \
  '{agents: {enabled: true},
    hooks: {SubagentStart: $start, SubagentStop: $log, PreToolUse: $log, PostToolUse: $log,
            UserPromptSubmit: $log, Stop: $log}}' > "$LOOM_HOME/settings.json"
cat > "$T/scenario.json" <<'JSON'
{"turns": [
  {"match": {"system_contains": "You are Loom's general-purpose agent", "assistant_turns": 0},
   "reply": {"text": "Child works.", "tool_calls": [{"id": "cb1", "name": "Bash", "input": {"command": "echo child-bash"}}]}},
  {"match": {"system_contains": "You are Loom's general-purpose agent", "assistant_turns": 1},
   "reply": {"text": "CHILD-LAST-MESSAGE"}},
  {"match": {"assistant_turns": 0},
   "reply": {"tool_calls": [{"id": "ag1", "name": "Agent", "input": {
     "description": "original", "subagent_type": "general-purpose", "prompt": "ORIGINAL-PROMPT do the thing"}}]}},
  {"match": {"assistant_turns": 1}, "reply": {"text": "PARENT-DONE"}}
]}
JSON
start_mock "$T/scenario.json"
use_provider anthropic
"$LOOM_BIN" -p "HOOKS-GOAL" --permission-mode bypassPermissions --cwd "$T/proj" \
  --output-format events > "$T/events" 2> "$T/err" || true
last=$(tail -n 1 "$T/events")
assert_eq "the run completed" "$(jq -r .payload.state <<<"$last")" "completed"

child_first=$(jq -c 'select((.body.system|tostring|contains("general-purpose agent")) and (.body.messages|length)==1)' "$MOCK_LOG" | sed -n 1p)
user_text=$(jq -r '[.body.messages[0].content | if type=="string" then . else .[] | .text end] | join("\n")' <<<"$child_first")
assert_contains "the child received the rewritten prompt" "$user_text" "REWRITTEN by the SubagentStart hook"
check "the original prompt never reached the child" \
  bash -c "! jq -r 'select(.body.system|tostring|contains(\"general-purpose agent\")) | .raw_body' '$MOCK_LOG' | grep -q ORIGINAL-PROMPT"
raw=$(jq -c 'select(.body.messages|length==3) | .body.messages[-1].content[] | select(.type=="tool_result" and .tool_use_id=="ag1")' "$MOCK_LOG" | tail -n 1)
assert_contains "the parent got the child's answer" "$(jq -r '.content|tostring' <<<"$raw")" "CHILD-LAST-MESSAGE"

[ -s "$T/hooks.jsonl" ] || not_ok "no hook fired at all ($(head -c 300 "$T/err"))"
start=$(jq -c 'select(.hook_event_name=="SubagentStart")' "$T/hooks.jsonl" | sed -n 1p)
check "SubagentStart fired with agent_id, agent_type and the prompt ($start)" \
  jtrue '(.agent_id|startswith("agent_")) and .agent_type=="general-purpose" and (.prompt|contains("ORIGINAL-PROMPT"))' <<<"$start"
stop=$(jq -c 'select(.hook_event_name=="SubagentStop")' "$T/hooks.jsonl" | sed -n 1p)
check "SubagentStop fired with the transcript path and last message ($stop)" \
  jtrue '(.agent_id|startswith("agent_")) and .agent_type=="general-purpose" and (.agent_transcript_path|type=="string" and length>0) and .last_assistant_message=="CHILD-LAST-MESSAGE"' <<<"$stop"
agent_id=$(jq -r .agent_id <<<"$start")
# Inside the child: its Bash call's PreToolUse and PostToolUse.
inside=$(jq -c 'select(.tool_name=="Bash")' "$T/hooks.jsonl")
assert_eq "the child's Bash fired PreToolUse and PostToolUse" \
  "$(jq -r .hook_event_name <<<"$inside" | sort | paste -sd,)" "PostToolUse,PreToolUse"
check "every hook inside the child carries agent_id and agent_type" \
  jtrue -s --arg id "$agent_id" 'length > 0 and all(.agent_id==$id and .agent_type=="general-purpose")' <<<"$inside"
# Everything the child's own governance fired (its session id is the agent's).
own=$(jq -c --arg id "$agent_id" 'select(.session_id == $id)' "$T/hooks.jsonl")
check "hooks fired inside the child: $(jq -r .hook_event_name <<<"$own" | sort -u | paste -sd,)" test -n "$own"
check "... every one with agent_id and agent_type" \
  jtrue -s --arg id "$agent_id" 'length >= 2 and all(.agent_id==$id and .agent_type=="general-purpose")' <<<"$own"
check "the main agent's own hooks carry no agent_id (its Agent call, its prompt)" \
  jtrue -s 'map(select(.tool_name=="Agent" or .hook_event_name=="UserPromptSubmit")) | length > 0 and all(.agent_id == null)' "$T/hooks.jsonl"
finish
