#!/usr/bin/env bash
# Model aliases (docs/providers.md): --model sonnet, the "model" setting,
# /model's reopen and a command's model: all send the table's id in the
# request body; an OpenAI name is its own id; a name the table does not
# know is sent as it is. A priced model's run has a cost in dollars from
# the dated table (settings prices override it); an unpriced one has none.
source "$(dirname "$0")/_lib.sh"

mkdir -p "$T/proj"
cat > "$T/scenario.json" <<'JSON'
{"turns": [{"reply": {"text": "ok", "usage": {"input_tokens": 1000000, "output_tokens": 100000}}}]}
JSON
start_mock "$T/scenario.json"
use_provider anthropic
sent_model() { tail -n 1 "$MOCK_LOG" | jq -r .body.model; }

"$LOOM_BIN" -p "hi" --model sonnet --cwd "$T/proj" >/dev/null 2>"$T/err"
assert_eq "--model sonnet sends the table's id" "$(sent_model)" "claude-sonnet-5-5"
"$LOOM_BIN" -p "hi" --model opus --cwd "$T/proj" >/dev/null 2>"$T/err"
assert_eq "--model opus sends the table's id" "$(sent_model)" "claude-opus-5-5"
"$LOOM_BIN" -p "hi" --model haiku --cwd "$T/proj" >/dev/null 2>"$T/err"
assert_eq "--model haiku sends the table's id" "$(sent_model)" "claude-haiku-5-5"
"$LOOM_BIN" -p "hi" --model claude-brand-new-9 --cwd "$T/proj" >/dev/null 2>"$T/err"
assert_eq "a name the table does not know is sent as it is" "$(sent_model)" "claude-brand-new-9"

echo '{"model": "opus"}' > "$LOOM_HOME/settings.json"
"$LOOM_BIN" -p "hi" --cwd "$T/proj" >/dev/null 2>"$T/err"
assert_eq "the model setting's alias is resolved" "$(sent_model)" "claude-opus-5-5"
LOOM_MODEL=haiku "$LOOM_BIN" -p "hi" --model sonnet --cwd "$T/proj" >/dev/null 2>"$T/err"
assert_eq "the flag wins over the setting and the environment" "$(sent_model)" "claude-sonnet-5-5"
rm "$LOOM_HOME/settings.json"

# A command's model: alias runs that command on the alias's id.
mkdir -p "$T/proj/.loom/commands"
printf -- '---\nmodel: haiku\ndescription: quick\n---\nQUICK-CMD $ARGUMENTS\n' > "$T/proj/.loom/commands/quick.md"
printf '{"trustedWorkspaces": ["%s"]}\n' "$(realpath "$T/proj")" > "$LOOM_HOME/settings.json"
"$LOOM_BIN" -p "/quick now" --cwd "$T/proj" >/dev/null 2>"$T/err"
assert_eq "a command's model: haiku runs on haiku's id" "$(sent_model)" "claude-haiku-5-5"
check "no warning that the alias is not resolved" bash -c '! grep -q "alias" "$1"' _ "$T/err"

# Cost in dollars from the table: sonnet 5.5 is $2 in, $10 out per MTok:
# 1M input + 100k output = $2 + $1 = $3.
"$LOOM_BIN" -p "hi" --model sonnet --cwd "$T/proj" --output-format json >"$T/out" 2>"$T/err"
cost=$(jq -r '.total_cost_usd // .cost_usd' "$T/out")
assert_eq "a sonnet run costs the table's price" "$cost" "3"
# Settings prices override the table: $1 in, $1 out → $1.10.
cat > "$LOOM_HOME/settings.json" <<'JSON'
{"price_input_per_mtok": 1, "price_output_per_mtok": 1}
JSON
"$LOOM_BIN" -p "hi" --model sonnet --cwd "$T/proj" --output-format json >"$T/out" 2>"$T/err"
assert_eq "configured prices override the table" "$(jq -r '(.total_cost_usd // .cost_usd) * 100 | round' "$T/out")" "110"
# A model's own settings entry prices it ($1 in, $2 out → $1.20), under
# its id or its alias; a model without a row gets a price this way.
echo '{"models": {"claude-sonnet-5-5": {"price": {"input": 1, "output": 2}}}}' > "$LOOM_HOME/settings.json"
"$LOOM_BIN" -p "hi" --model sonnet --cwd "$T/proj" --output-format json >"$T/out" 2>"$T/err"
assert_eq "models.<id>.price overrides the table" "$(jq -r '(.total_cost_usd // .cost_usd) * 100 | round' "$T/out")" "120"
echo '{"models": {"claude-brand-new-9": {"price": {"input": 3, "output": 5}}}}' > "$LOOM_HOME/settings.json"
"$LOOM_BIN" -p "hi" --model claude-brand-new-9 --cwd "$T/proj" --output-format json >"$T/out" 2>"$T/err"
assert_eq "models.<id>.price prices a model the table lacks" "$(jq -r '(.total_cost_usd // .cost_usd) * 100 | round' "$T/out")" "350"
rm "$LOOM_HOME/settings.json"
"$LOOM_BIN" -p "hi" --model claude-brand-new-9 --cwd "$T/proj" --output-format json >"$T/out" 2>"$T/err"
check "an unpriced model's run has no cost (not -1)" \
  jq -e '(.total_cost_usd // .cost_usd) == null' "$T/out"

# An agent file's model: haiku runs the sub-agent on haiku's id; on an
# OpenAI endpoint the same file runs on the session's model (a Claude id
# there could only be refused).
mkdir -p "$T/proj/.loom/agents"
printf -- '---\nname: quick\ndescription: a quick helper\nmodel: haiku\n---\nQUICK-AGENT-BODY\n' \
  > "$T/proj/.loom/agents/quick.md"
printf '{"trustedWorkspaces": ["%s"], "agents": {"enabled": true}}\n' "$(realpath "$T/proj")" > "$LOOM_HOME/settings.json"
cat > "$T/agents.json" <<'JSON'
{"turns": [
  {"match": {"system_contains": "QUICK-AGENT-BODY"}, "reply": {"text": "CHILD-DONE"}},
  {"match": {"tool_results": 0}, "reply": {"tool_calls": [{"id": "a1", "name": "Agent", "input":
     {"description": "quick", "prompt": "do it", "subagent_type": "quick"}}]}},
  {"match": {"tool_results": 1}, "reply": {"text": "PARENT-DONE"}}]}
JSON
child_model() { jq -r 'select((.body|tostring)|contains("QUICK-AGENT-BODY")) | .body.model' "$MOCK_LOG" | tail -n 1; }
for provider in anthropic openai; do
  start_mock "$T/agents.json"
  use_provider "$provider"
  model=$([ "$provider" = anthropic ] && echo claude-sonnet-5-5 || echo gpt-5)
  "$LOOM_BIN" -p "go" --model "$model" --permission-mode bypassPermissions --cwd "$T/proj" >"$T/out" 2>"$T/err" || cat "$T/err" >&2
  assert_eq "$provider: the parent answered" "$(tail -n 1 "$T/out")" "PARENT-DONE"
  if [ "$provider" = anthropic ]; then
    assert_eq "anthropic: an agent file's model: haiku runs on haiku's id" "$(child_model)" "claude-haiku-5-5"
  else
    assert_eq "openai: an agent file's Claude alias runs on the session's model" "$(child_model)" "gpt-5"
  fi
done
rm -r "$T/proj/.loom/agents" "$LOOM_HOME/settings.json"

stop_mock
start_mock "$T/scenario.json"
use_provider openai
"$LOOM_BIN" -p "hi" --model gpt-5 --cwd "$T/proj" >/dev/null 2>"$T/err"
assert_eq "openai: gpt-5 is its own id" "$(sent_model)" "gpt-5"
"$LOOM_BIN" -p "hi" --model gpt-5-mini --cwd "$T/proj" >/dev/null 2>"$T/err"
assert_eq "openai: gpt-5-mini is its own id" "$(sent_model)" "gpt-5-mini"
finish
