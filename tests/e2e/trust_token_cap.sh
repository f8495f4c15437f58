#!/usr/bin/env bash
# max_tokens_total and token_budget are one token cap spelled two ways, and
# an untrusted repository may not raise it by using the other spelling:
# over the user's token_budget, a project max_tokens_total that is larger,
# 0 (unlimited) or a larger amount in text is ignored with a notice naming
# file and key, a smaller one is kept; the same over the user's
# max_tokens_total for a project token_budget ("1b", "+5m"). And the cap
# binds for real: with the user's tiny token_budget — in settings or as
# "+10" in the prompt — the run stops on it although the project says
# max_tokens_total 1000000000.
source "$(dirname "$0")/_lib.sh"

lacks() { [[ "$1" != *"$2"* ]]; }
R="$T/repo"
mkdir -p "$R/.loom"
start_mock "$SCENARIOS/chat_two_turns.json"
use_provider anthropic

run_with() { # $1 user settings, $2 project settings → stderr in $T/err, stdout json in $T/out
  echo "$1" > "$LOOM_HOME/settings.json"
  echo "$2" > "$R/.loom/settings.json"
  "$LOOM_BIN" -p "hi" --cwd "$R" --output-format json > "$T/out" 2> "$T/err" || true
}

for doc in '{"max_tokens_total": 1000000000}' '{"max_tokens_total": 0}' \
           '{"max_tokens_total": "2m"}' '{"max_tokens_total": "1e9"}'; do
  run_with '{"token_budget": "100k"}' "$doc"
  assert_contains "over the user's token_budget, $doc is ignored" "$(cat "$T/err")" \
    "ignored .loom/settings.json: max_tokens_total"
done
run_with '{"token_budget": "100k"}' '{"max_tokens_total": 50000}'
check "a smaller max_tokens_total is kept" lacks "$(cat "$T/err")" "ignored"

for doc in '{"token_budget": "1b"}' '{"token_budget": "+5m"}' '{"token_budget": 200000}'; do
  run_with '{"max_tokens_total": 100000}' "$doc"
  assert_contains "over the user's max_tokens_total, $doc is ignored" "$(cat "$T/err")" \
    "ignored .loom/settings.json: token_budget"
done
run_with '{"max_tokens_total": 100000}' '{"token_budget": "50k"}'
check "a smaller token_budget is kept" lacks "$(cat "$T/err")" "ignored"

# The user's cap binds: a budget of 10 tokens stops the run after its first
# call (a tool call that would need a second).
cat > "$T/two.json" <<'JSON'
{"turns": [
 {"reply": {"tool_calls": [{"id": "t1", "name": "TodoWrite", "input": {"todos": [{"content": "x", "status": "pending", "activeForm": "xing"}]}}]}},
 {"reply": {"text": "second turn"}}
]}
JSON
start_mock "$T/two.json"
run_with '{"token_budget": "10"}' '{"max_tokens_total": 1000000000}'
assert_eq "the user's token_budget stops the run" "$(jq -r .stop_reason "$T/out")" "token_budget"
# A budget typed in the prompt ("+10") binds too: the project's larger
# max_tokens_total (kept: the user's settings set no cap) does not raise it.
echo '{}' > "$LOOM_HOME/settings.json"
echo '{"max_tokens_total": 1000000000}' > "$R/.loom/settings.json"
start_mock "$T/two.json"
"$LOOM_BIN" -p "+10 hi" --cwd "$R" --output-format json > "$T/out" 2> "$T/err" || true
assert_eq "the prompt's +10 stops the run" "$(jq -r .stop_reason "$T/out")" "token_budget"
finish
