#!/usr/bin/env bash
# Model text cannot drive the terminal. Escape sequences and other controls
# — OSC 0/2 (window title), OSC 52 (clipboard), CSI 2J (clear), SGR, C1
# controls as UTF-8 (8-bit CSI U+009B, OSC U+009D), bidi
# overrides (U+202E, U+2066…U+2069), BEL, DEL, a lone CR that would
# overwrite the line, numeric entities that decode to ESC — arrive through
# every door: the model's text, a tool's output, a file name, a hook's
# message, a tool name, the server's error message, an approval's command,
# a session's first prompt in /resume.
# None reaches the terminal raw: `loom -p` stdout/stderr bytes are checked
# directly, and the REPL's raw pty output is recorded with tmux pipe-pane;
# each spelling must show in its visible form (^[, ^G, ^M, <U+202E>).
source "$(dirname "$0")/repl_lib.sh"

mkdir -p "$T/proj"

# raw_clean FILE — no byte a terminal would act on (newline and tab aside),
# and the file is valid UTF-8 (a lone 0x9b is not).
raw_clean() {
  ! LC_ALL=C grep -qaP '[\x00-\x08\x0b-\x1f\x7f]|\xc2[\x80-\x9f]|\xe2\x80[\xaa-\xae\x8e\x8f\xa8\xa9]|\xe2\x81[\xa6-\xa9]|\xd8\x9c' "$1" &&
    iconv -f UTF-8 -t UTF-8 "$1" >/dev/null 2>&1
}

# The spellings, as JSON string text, and the visible form each must take.
P='T0 \u001b]0;PWNED0\u0007 T2 \u001b]2;PWNED2\u001b\\ CLIP \u001b]52;c;ZXZpbA==\u0007 CLS \u001b[2J\u001b[H C1 \u009b2J OSC8 \u009d0;PWNED9\u009c SGR \u001b[31mRED\u001b[0m RLO \u202eexe.txt LRI \u2066x\u2069 BEL \u0007 DEL \u007f safe\rEVIL'
VISIBLE=('^[]0;PWNED0^G' '^[]2;PWNED2^[\' '^[]52;c;ZXZpbA==^G' '^[[2J^[[H' '<U+009B>2J'
         '<U+009D>0;PWNED9<U+009C>' '^[[31mRED^[[0m' '<U+202E>exe.txt' '<U+2066>x<U+2069>'
         'BEL ^G' 'DEL ^?' 'safe^MEVIL')

# ---- loom -p, text mode: stdout and stderr bytes --------------------------------
cat > "$T/hook.sh" <<'SH'
#!/usr/bin/env bash
cat > /dev/null
printf '%s\n' '{"systemMessage": "HOOK \u001b]0;HOOKTITLE\u0007 \u001b[2J \u202eKOOH x\ry"}'
SH
chmod +x "$T/hook.sh"
cat > "$LOOM_HOME/settings.json" <<JSON
{"permissions": {"allow": ["Bash(true)", "Bash(printf:*)"]},
 "hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "$T/hook.sh"}]}]}}
JSON

cat > "$T/print.json" <<JSON
{"turns": [
  {"reply": {"text": "$P\n", "tool_calls": [
     {"id": "t1", "name": "Bash", "input": {"command": "true"}},
     {"id": "t2", "name": "Ev\u001b]0;TOOLNAME\u0007il", "input": {}}]}, "chunk_size": 3},
  {"reply": {"text": "after \u001b]0;SECOND\u0007 \u00e9t\u00e9 \u2713"}, "chunk_size": 1}
]}
JSON
start_mock "$T/print.json"
use_provider anthropic
"$LOOM_BIN" -p "go" --cwd "$T/proj" --verbose > "$T/out" 2> "$T/err" || true
check "-p stdout holds no raw control" raw_clean "$T/out"
check "-p stderr holds no raw control" raw_clean "$T/err"
out=$(cat "$T/out")
for v in "${VISIBLE[@]}"; do
  assert_contains "-p text shows ${v} visibly" "$out" "$v"
done
assert_contains "-p: a delta cut in one-byte pieces still shows visibly" "$out" "after ^[]0;SECOND^G"
assert_contains "-p: UTF-8 cut in one-byte pieces comes out whole" "$out" "été ✓"
err=$(cat "$T/err")
assert_contains "-p: the hook's message shows visibly on stderr" "$err" "HOOK ^[]0;HOOKTITLE^G ^[[2J <U+202E>KOOH x^My"
assert_contains "-p --verbose: a tool name the model made up shows visibly" "$err" "Ev^[]0;TOOLNAME^Gil"

# The server's error message.
cat > "$T/fault.json" <<'JSON'
{"turns": [{"reply": {"text": "never"}, "faults": [{"status": 400, "body":
  {"type": "error", "error": {"type": "invalid_request_error",
   "message": "bad \u001b]0;ERRTITLE\u0007 \u001b[2J \u009b2J \u202eRORRE"}}}]}]}
JSON
start_mock "$T/fault.json"
"$LOOM_BIN" -p "go" --cwd "$T/proj" > "$T/out2" 2> "$T/err2" || true
check "-p error: stderr holds no raw control" raw_clean "$T/err2"
assert_contains "-p error: the server's message shows visibly" "$(cat "$T/err2")" \
  "bad ^[]0;ERRTITLE^G ^[[2J <U+009B>2J <U+202E>RORRE"
"$LOOM_BIN" -p "go" --cwd "$T/proj" --output-format events > "$T/out3" 2>/dev/null || true
# A session whose first prompt carries an OSC title: /resume lists it below.
"$LOOM_BIN" -p "$(printf 'first \033]0;RESUMETITLE\007 \342\200\256prompt')" --cwd "$T/proj" \
  > /dev/null 2>&1 || true
check "events stays JSON (its own escaping), no raw control" raw_clean "$T/out3"

# ---- the REPL: the raw bytes written to the pty -----------------------------------
# A Bash call whose output carries raw controls (allowed by Bash(printf:*)),
# a Write whose file name does, and a Bash call whose command does (asked:
# the approval shows it), then the model's text, rendered as markdown.
cat > "$T/repl.json" <<JSON
{"turns": [
  {"reply": {"tool_calls": [{"id": "r1", "name": "Bash", "input": {"command": "printf 'OUT \\\\033]0;OUTTITLE\\\\007 \\\\033[2J \\\\302\\\\233 \\\\342\\\\200\\\\256TUO a\\\\rb\\\\n'"}}]}},
  {"reply": {"tool_calls": [{"id": "r2", "name": "Write", "input": {"file_path": "name\u001b]0;FILETITLE\u0007.txt", "content": "x"}}]}},
  {"reply": {"tool_calls": [{"id": "r3", "name": "Bash", "input": {"command": "echo \u001b]0;CMDTITLE\u0007 \u202eDMC safe\rEVIL"}}]}},
  {"reply": {"text": "$P\n\nentity &#27;]0;ENTITY&#7; &#x9b;2J\n\n- item \u001b]52;c;eA==\u0007\n"}}
]}
JSON
start_mock "$T/repl.json"
repl_start "$T/proj"
tm pipe-pane -o -t repl "cat >> $(printf %q "$T/pty.raw")"
wait_prompt
type_line "show me"
asked() { [ "$(screen | grep -cF -e 'allow? [y/a/n] ›' -e 'allow? [y/n] ›')" -ge "$1" ]; }
wait_until "the Write approval" 15 asked 1
assert_contains "the Write approval shows the file name visibly" "$(screen)" "name^[]0;FILETITLE^G.txt"
answer -l y
wait_until "the Bash approval" 15 asked 2
s=$(screen)
assert_contains "the Bash approval shows ESC visibly" "$s" "echo ^[]0;CMDTITLE^G"
assert_contains "the Bash approval shows the bidi override" "$s" "<U+202E>DMC"
assert_contains "the Bash approval shows the CR, not an overwritten line" "$s" "safe^MEVIL"
answer -l n
keys Enter
wait_screen "the model's text" "entity" 15
wait_prompt
s=$(screen)
for v in "${VISIBLE[@]}"; do
  assert_contains "REPL text shows ${v} visibly" "$s" "$v"
done
assert_contains "REPL: an entity that decodes to ESC shows visibly" "$s" "entity ^[]0;ENTITY^G <U+009B>2J"
assert_contains "REPL: a list item's OSC 52 shows visibly" "$s" "item ^[]52;c;eA==^G"
assert_contains "REPL: the tool's output shows visibly" "$s" "OUT ^[]0;OUTTITLE^G ^[[2J"
assert_contains "REPL: the tool's C1 and bidi output shows visibly" "$s" "^[[2J <U+009B> <U+202E>TUO a^Mb"
assert_contains "REPL: the file name in the tool line shows visibly" "$s" "Write(name^[]0;FILETITLE^G.txt)"
assert_contains "REPL: the hook's message shows visibly" "$s" "⚠ HOOK ^[]0;HOOKTITLE^G ^[[2J <U+202E>KOOH x^My"
type_line "/resume"
wait_screen "the session list" "Recent sessions in" 10
assert_contains "/resume shows a session's first prompt visibly" "$(screen)" "first ^[]0;RESUMETITLE^G <U+202E>prompt"
keys Escape
wait_screen "the picker closed" "Cancelled" 10
keys C-d
wait_exit >/dev/null
raw=$(LC_ALL=C cat "$T/pty.raw")
check "the pty saw no OSC sequence (title, clipboard)" bash -c "! LC_ALL=C grep -qaF $'\\x1b]' '$T/pty.raw'"
check "the pty saw no clear-screen" bash -c "! LC_ALL=C grep -qaF $'\\x1b[2J' '$T/pty.raw'"
check "the pty saw no C1 control or bidi override" \
  bash -c "! LC_ALL=C grep -qaP '\\xc2[\\x80-\\x9f]|\\xe2\\x80[\\xaa-\\xae]|\\xe2\\x81[\\xa6-\\xa9]' '$T/pty.raw'"
check "the pty saw valid UTF-8 only (no lone 0x9b)" iconv -f UTF-8 -t UTF-8 "$T/pty.raw" -o /dev/null
check "the pty saw no SGR red from the model" bash -c "! LC_ALL=C grep -qaF $'\\x1b[31mRED' '$T/pty.raw'"
check "the pty saw the visible form" bash -c "LC_ALL=C grep -qaF '^[]0;PWNED0^G' '$T/pty.raw'"
title=$(tm display -p -t repl '#{pane_title}' 2>/dev/null || true)
check "the pane title was not set by the model (or a session title)" bash -c "[[ '$title' != *PWNED* && '$title' != *TITLE* ]]"
[ -n "$raw" ] || not_ok "pipe-pane recorded nothing"
finish
