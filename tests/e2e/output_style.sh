#!/usr/bin/env bash
# Output styles reach the model: the static system prompt holds the chosen
# style's section in place of the default one — a built-in picked by
# "outputStyle" in the settings (Claude Code's key, its spelling of the
# name), a project's own style file in a trusted workspace, the local file
# over the project's; an untrusted workspace's style files are not loaded
# (a notice), and an unknown name is a warning naming it, the default used.
source "$(dirname "$0")/_lib.sh"

mkdir -p "$T/proj/.loom/output-styles"
cat > "$T/proj/.loom/output-styles/pirate.md" <<'MD'
---
name: pirate
description: Talks like a pirate
---

Answer like a pirate would: PIRATE-MARKER.
MD

# The static part: Anthropic's first system block, OpenAI's system message.
static_text() {
  local req
  req=$(tail -n 1 "$MOCK_LOG")
  case "$1" in
    anthropic) jq -r '.body.system[0].text' <<<"$req" ;;
    *) jq -r '.body.messages[0].content | if type == "string" then . else map(.text) | join("") end' <<<"$req" ;;
  esac
}
run() { "$LOOM_BIN" -p "hi" --permission-mode bypassPermissions --cwd "$T/proj" 2>"$T/err" >/dev/null; }

for provider in ${PROVIDERS:-anthropic openai}; do
  start_mock "$SCENARIOS/chat_two_turns.json"
  use_provider "$provider"
  rm -f "$LOOM_HOME/settings.json" "$T/proj/.loom/settings.json" "$T/proj/.loom/settings.local.json"

  run
  sys=$(static_text "$provider")
  assert_contains "$provider: no style set: the default section" "$sys" "then you answer briefly"
  check "$provider: no style set: no style section" bash -c '! grep -q "^# Output style" <<<"$1"' _ "$sys"

  echo '{"outputStyle": "Explanatory"}' > "$LOOM_HOME/settings.json"
  run
  sys=$(static_text "$provider")
  assert_contains "$provider: outputStyle Explanatory: its section" "$sys" "# Output style"
  assert_contains "$provider: outputStyle Explanatory: its insights" "$sys" "Insight:"
  check "$provider: outputStyle Explanatory: not the default section" \
    bash -c '! grep -q "then you answer briefly" <<<"$1"' _ "$sys"
  assert_contains "$provider: a built-in keeps the coding rules" "$sys" "Read a file before you edit it"
  check "$provider: a known style: no warning" bash -c '! grep -q "output style" "$1"' _ "$T/err"

  # The project's own style file, picked by the project settings, trusted.
  echo '{"outputStyle": "pirate"}' > "$T/proj/.loom/settings.json"
  LOOM_TRUST_WORKSPACE=1 run
  sys=$(static_text "$provider")
  assert_contains "$provider: a trusted project's style file: its body" "$sys" "PIRATE-MARKER"
  check "$provider: a custom style drops the coding rules" \
    bash -c '! grep -q "Read a file before you edit it" <<<"$1"' _ "$sys"
  assert_contains "$provider: honesty stays with any style" "$sys" "Report honestly"
  check "$provider: the explanatory section is gone" bash -c '! grep -q "Insight:" <<<"$1"' _ "$sys"

  # The local file wins over the project's.
  echo '{"outputStyle": "learning"}' > "$T/proj/.loom/settings.local.json"
  LOOM_TRUST_WORKSPACE=1 run
  sys=$(static_text "$provider")
  assert_contains "$provider: the local settings' style wins" "$sys" "TODO(human)"
  rm -f "$T/proj/.loom/settings.local.json"

  # Untrusted: the folder's style files are not loaded, the name is unknown.
  run
  sys=$(static_text "$provider")
  check "$provider: untrusted: the project's style file is not used" \
    bash -c '! grep -q PIRATE-MARKER <<<"$1"' _ "$sys"
  assert_contains "$provider: untrusted: the default is used" "$sys" "then you answer briefly"
  assert_contains "$provider: untrusted: the unknown name is named in a warning" "$(cat "$T/err")" \
    'output style "pirate" not found'
  assert_contains "$provider: untrusted: the skipped folder is named" "$(cat "$T/err")" \
    ".loom/output-styles"

  echo '{"outputStyle": "no-such-style"}' > "$LOOM_HOME/settings.json"
  rm -f "$T/proj/.loom/settings.json"
  run
  sys=$(static_text "$provider")
  assert_contains "$provider: an unknown style is a warning naming it" "$(cat "$T/err")" \
    'output style "no-such-style" not found'
  assert_contains "$provider: an unknown style: the default is used" "$sys" "then you answer briefly"
done
finish
