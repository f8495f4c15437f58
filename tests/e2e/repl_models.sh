#!/usr/bin/env bash
# /model, /cost, /config and /doctor in the REPL (docs/repl.md): /model lists
# the alias table (alias → id, window, price) with the current model marked
# and switches by alias, the next request carrying the id; /cost says the
# dollars and the dated prices they came from; /config shows which layer
# set each key and `/config set` writes the local settings; /doctor prints
# the doctor's report; a refused key is said once, naming the variable.
source "$(dirname "$0")/repl_lib.sh"

mkdir -p "$T/proj/.loom"
echo '{"permissions": {"allow": ["Read"]}}' > "$T/proj/.loom/settings.local.json"
printf '{"trustedWorkspaces": ["%s"], "max_turns": 40}\n' "$(realpath "$T/proj")" > "$LOOM_HOME/settings.json"
cat > "$T/scenario.json" <<'JSON'
{"turns": [{"reply": {"text": "First answer.", "usage": {"input_tokens": 1000000, "output_tokens": 100000}}},
           {"reply": {"text": "Second answer.", "usage": {"input_tokens": 10, "output_tokens": 1}}}],
 "sequence": true}
JSON
start_mock "$T/scenario.json"
use_provider anthropic
repl_start "$T/proj" --model sonnet
wait_prompt
assert_contains "the header shows the alias's id" "$(screen | grep -m1 '^loom 0.1.0')" "claude-sonnet-5-5"

type_line "/model"
wait_screen "the model list" "/model NAME switches"
s=$(screen)
assert_contains "the list maps sonnet to its id" "$s" "sonnet      → claude-sonnet-5-5"
assert_contains "the list marks the current model" "$s" "● sonnet"
assert_contains "the list shows the window and price" "$s" '$2 in · $10 out'
assert_contains "the list has OpenAI's models" "$s" "gpt-5-mini"
assert_contains "the list is dated" "$s" "aliases and prices as of 20"

type_line "hello"
wait_screen "the first answer" "First answer."
wait_prompt
type_line "/cost"
wait_screen "the cost" "Since this REPL opened the session."
s=$(screen)
# Sonnet 5.5: 1M input at $2 + 100k output at $10/M = $3.
assert_contains "/cost is in dollars" "$s" 'Cost     $3.0000'
assert_contains "/cost names the prices and their date" "$s" "Prices   claude-sonnet-5-5 per million tokens as of"

type_line "/model haiku"
wait_screen "the switch" "Model: claude-haiku-5-5 (anthropic) · haiku"
type_line "again"
wait_screen "the second answer" "Second answer."
wait_prompt
assert_eq "after /model haiku the request carries haiku's id" \
  "$(tail -n 1 "$MOCK_LOG" | jq -r .body.model)" "claude-haiku-5-5"

type_line "/config"
wait_screen "the settings" "/config set KEY VALUE writes"
s=$(screen)
check "max_turns comes from the user settings" grep -qE "max_turns +40 +user" <<<"$s"
check "permissions come from the local settings" grep -qE "permissions +.*local" <<<"$s"
check "model comes from the command line" grep -qE "model +(haiku|claude-haiku-5-5) +command line" <<<"$s"
assert_contains "the local file is listed" "$s" "$(realpath "$T/proj")/.loom/settings.local.json"

type_line "/config set max_turns 7"
wait_screen "the write" "Set max_turns = 7"
assert_eq "/config set writes the key" "$(jq -r .max_turns "$T/proj/.loom/settings.local.json")" "7"
assert_eq "the local settings' other keys are kept" \
  "$(jq -r '.permissions.allow[0]' "$T/proj/.loom/settings.local.json")" "Read"
type_line "/config"
wait_until "the new layer" 10 bash -c 'tmux -L "$1" capture-pane -p -J -S -2000 -t repl | grep -qE "max_turns +7 +local \(over user\)"' _ "$TMUX_SOCKET"
type_line "/config set output_style"
wait_screen "the usage line" "usage: /config shows the settings"

type_line "/doctor"
wait_screen "the doctor's report" "Terminal  xterm-256color"
s=$(screen)
assert_contains "/doctor names the provider" "$s" "Provider  anthropic"
assert_contains "/doctor lists the settings files" "$s" "settings.local.json"

[ -n "${SHOW:-}" ] && screen > "${SHOW}"
type_line "/exit"
assert_eq "the REPL exits" "$(wait_exit)" "0"

# A refused key in the REPL: one message, naming the variable.
cat > "$T/auth.json" <<'JSON'
{"turns": [{"reply": {"text": "x"}, "faults": [{"status": 401, "times": 100}]}]}
JSON
start_mock "$T/auth.json"
repl_start "$T/proj"
wait_prompt
type_line "hi"
wait_screen "the refusal" "was refused"
wait_prompt
assert_eq "the refusal is said once" "$(screen | grep -c 'was refused')" "1"
assert_contains "it names ANTHROPIC_API_KEY" "$(screen)" "the API key in ANTHROPIC_API_KEY was refused"
keys C-d
wait_exit >/dev/null
finish
