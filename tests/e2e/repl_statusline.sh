#!/usr/bin/env bash
# The statusLine setting (docs/repl.md): the user's command's first line
# shows under the prompt instead of the built-in footer, after the mode
# when the mode is not default; the command gets Claude Code's JSON on
# stdin (each field checked); a failing command leaves the built-in
# footer (without colours under NO_COLOR); an untrusted project's statusLine (.loom or .claude settings)
# never runs.
source "$(dirname "$0")/repl_lib.sh"

mkdir -p "$T/proj" "$T/evil/.loom" "$T/evil/.claude"
cat > "$T/scenario.json" <<'JSON'
{"turns": [{"reply": {"text": "Hello there."}}]}
JSON
start_mock "$T/scenario.json"
use_provider anthropic
# The footer is the command's line here, which screen() does not know: the
# prompt is the line above the last.
footer() { screen_all | grep -v '^[[:space:]]*$' | tail -n 1; }
footer_has() { footer | grep -qF -- "$1"; }
prompt_ready() { [ "$(screen_all | grep -v '^[[:space:]]*$' | tail -n 2 | head -n 1 | sed 's/[[:space:]]*$//')" == "›" ]; }

# ---- 1. the user's command ---------------------------------------------------------
jq -n --arg cmd "cat > '$T/status-input.json'; echo 'STATUS-FROM-COMMAND'; echo 'second line'" \
  '{statusLine: {type: "command", command: $cmd, padding: 0}}' > "$LOOM_HOME/settings.json"
repl_start "$T/proj" --model status-model
wait_prompt
wait_until "the command's line in the footer" 10 footer_has "STATUS-FROM-COMMAND"
check "only the first line of its output is shown" bash -c '! grep -qF "second line" <<<"$1"' _ "$(screen_all)"
id=$(header_session_id)
in="$T/status-input.json"
check "the command got JSON on stdin" bash -c 'jq -e . "$1" >/dev/null' _ "$in"
assert_eq "session_id" "$(jq -r .session_id "$in")" "$id"
assert_eq "transcript_path is the session file" "$(jq -r .transcript_path "$in")" "$(session_file "$id")"
assert_eq "cwd" "$(jq -r .cwd "$in")" "$T/proj"
assert_eq "model.id" "$(jq -r .model.id "$in")" "status-model"
assert_eq "model.display_name" "$(jq -r .model.display_name "$in")" "status-model"
assert_eq "workspace.current_dir" "$(jq -r .workspace.current_dir "$in")" "$T/proj"
assert_eq "workspace.project_dir" "$(jq -r .workspace.project_dir "$in")" "$T/proj"
assert_eq "version" "$(jq -r .version "$in")" "0.1.0"
assert_eq "output_style.name" "$(jq -r .output_style.name "$in")" "default"
check "cost.total_cost_usd is a number or null" bash -c 'jq -e ".cost | has(\"total_cost_usd\")" "$1" >/dev/null' _ "$in"

# It runs again after a run: the JSON follows the session.
rm -f "$in"
type_line "hi"
wait_screen "the answer" "Hello there." 15
wait_prompt
wait_until "the command ran again after the run" 10 test -s "$in"
check "the context window is reported" bash -c 'jq -e ".context_window.context_window_size > 0" "$1" >/dev/null' _ "$in"

# A mode other than default stays in sight before the command's line.
keys BTab
wait_until "the mode before the command's line" 5 footer_has "⏵⏵ acceptEdits · STATUS-FROM-COMMAND"
keys C-d
assert_eq "exit status 0" "$(wait_exit)" "0"

# ---- 2. a failing command: the built-in footer ---------------------------------------
echo '{"statusLine": {"type": "command", "command": "echo broken; exit 1"}}' > "$LOOM_HOME/settings.json"
NO_COLOR=1 repl_start "$T/proj" --model status-model
wait_prompt
wait_until "the built-in footer" 10 footer_has "status-model"
check "with NO_COLOR the footer has no colour" bash -c '! grep -q $'"'"'\x1b\['"'"' <<<"$1"' _ \
  "$(tm capture-pane -p -e -t repl | grep -F 'status-model' | tail -n 1)"
check "the failing command's output is not shown" bash -c '! grep -qF "broken" <<<"$1"' _ "$(screen_all)"
keys C-d
wait_exit >/dev/null

# ---- 3. an untrusted project's statusLine does not run ---------------------------------
echo '{}' > "$LOOM_HOME/settings.json"
for f in .loom/settings.json .claude/settings.json; do
  jq -n --arg cmd "touch '$T/evil-status-ran'; echo EVIL-STATUS" \
    '{statusLine: {type: "command", command: $cmd}}' > "$T/evil/$f"
done
repl_launch "$T/evil" --model status-model
wait_until "the trust question or the header" 10 bash -c "$(declare -f tm screen_all); TMUX_SOCKET=$TMUX_SOCKET; screen_all | grep -qE 'Do you trust the files|loom 0.1.0'"
if screen_has "Do you trust the files in this folder?"; then keys n; fi
wait_screen "the header" "loom 0.1.0"
wait_prompt
wait_until "the built-in footer" 10 footer_has "status-model"
check "the untrusted project's statusLine command did not run" test ! -e "$T/evil-status-ran"
check "its output is nowhere" bash -c '! grep -qF "EVIL-STATUS" <<<"$1"' _ "$(screen_all)"
keys C-d
wait_exit >/dev/null
finish
