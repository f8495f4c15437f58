#!/usr/bin/env bash
# The loop's safety nets and context: tool-call loop detection, the fallback
# model after repeated overload, the token budget from settings, AGENTS.md
# and the cache boundary in the system prompt.
source "$(dirname "$0")/_lib.sh"
mkdir -p "$T/proj"

# Loop detection: the same call three times → a reminder at the tail of the next request.
jq -n '{turns: ([range(0; 3) | {reply: {tool_calls: [{id: "same\(.)", name: "Bash", input: {command: "echo same"}}]}}]
                + [{reply: {text: "I will stop repeating myself."}}])}' > "$T/loop.json"
start_mock "$T/loop.json"
use_provider anthropic
"$LOOM_BIN" -p "loop" --permission-mode bypassPermissions --cwd "$T/proj" --output-format events > "$T/events"
assert_eq "loop: one warning event" "$(jq -r 'select(.type=="warning.emitted") | .payload.kind' "$T/events")" "tool_loop"
assert_contains "loop: the 4th request carries the reminder" \
  "$(tail -n 1 "$MOCK_LOG" | jq -r '.body.messages[-1].content[-2].text')" "same input 3 times in a row"
assert_eq "loop: the run still completes" "$(tail -n 1 "$T/events" | jq -r .payload.state)" "completed"

# Fallback model: the main model stays overloaded through its retries.
cat > "$T/overload.json" <<'JSON'
{"turns": [{"reply": {"text": "Answered by the fallback."}, "faults": [{"status": 529, "times": 4}]}]}
JSON
start_mock "$T/overload.json"
json=$("$LOOM_BIN" -p "hi" --permission-mode bypassPermissions --cwd "$T/proj" --fallback-model fallback-x --output-format json 2>"$T/err")
assert_eq "fallback: the run completed" "$(jq -r .subtype <<<"$json")" "success"
assert_eq "fallback: answered" "$(jq -r .result <<<"$json")" "Answered by the fallback."
assert_eq "fallback: the last request used the fallback model" "$(tail -n 1 "$MOCK_LOG" | jq -r .body.model)" "fallback-x"
assert_contains "fallback: the switch is reported" "$(cat "$T/err")" "fallback"

# Token budget from the project's settings file.
mkdir -p "$T/proj/.loom"
echo '{"max_tokens_total": 100}' > "$T/proj/.loom/settings.json"
jq -n '{turns: [range(0; 10) | {reply: {tool_calls: [{id: "b\(.)", name: "Bash", input: {command: "echo \(.)"}}],
                                        usage: {input_tokens: 30, output_tokens: 20}}}]}' > "$T/budget.json"
start_mock "$T/budget.json"
set +e
json=$("$LOOM_BIN" -p "spend" --permission-mode bypassPermissions --cwd "$T/proj" --output-format json 2>/dev/null)
status=$?
set -e
assert_eq "budget: exit status 3" "$status" "3"
assert_eq "budget: stop reason" "$(jq -r .stop_reason <<<"$json")" "token_budget"
assert_eq "budget: stopped after two turns (50 tokens each)" "$(jq -r .num_turns <<<"$json")" "2"
rm -rf "$T/proj/.loom"

# AGENTS.md reaches the model, after the cacheable static prompt.
echo "Project rule: always answer in haiku." > "$T/proj/AGENTS.md"
start_mock "$SCENARIOS/chat_two_turns.json"
"$LOOM_BIN" -p "hi" --permission-mode bypassPermissions --cwd "$T/proj" >/dev/null
req=$(tail -n 1 "$MOCK_LOG")
assert_eq "system: static part carries the cache breakpoint" "$(jq -r '.body.system[0].cache_control.type' <<<"$req")" "ephemeral"
assert_contains "system: static part has the working rules" "$(jq -r '.body.system[0].text' <<<"$req")" "Read a file before you edit it"
assert_contains "system: AGENTS.md in the dynamic part" "$(jq -r '.body.system[1].text' <<<"$req")" "always answer in haiku"
assert_contains "system: the working directory is stated" "$(jq -r '.body.system[1].text' <<<"$req")" "$T/proj"
assert_eq "tools: sent in a stable order" "$(jq -r '[.body.tools[].name] | join(",")' <<<"$req")" \
  "Read,Write,Edit,Glob,Grep,Bash,TaskOutput,TaskStop,TodoWrite,WebFetch,AskUserQuestion,Renew,AcknowledgeEvent,NotebookEdit,ExitPlanMode,TaskCreate,TaskGet,TaskUpdate,TaskList,EnterWorktree,ExitWorktree,Agent,SendMessage"
finish
