#!/usr/bin/env bash
# Heartbeat events on the surfaces: with a "heartbeat" block in the
# project's settings, a watched file changed from outside while a Bash
# runs shows in the REPL as one "⚡ event high · filesystem: … (ev_…)" line,
# the Bash is stopped by the harness, the run goes on to the model's final
# text, and /events lists the event as projected (pending: the model gave
# no disposition). SIGUSR1 at the prompt does not end the REPL; during a
# run, `loom signal SESSION USR1` reaches its heartbeat as an event. Then
# `loom -p` (text) prints a file event as one "loom: event high
# filesystem: …" line on stderr, leaving stdout to the model's text.
source "$(dirname "$0")/repl_lib.sh"

mkdir -p "$T/proj/src" "$T/proj/.loom"
echo "int main(void) { return 0; }" > "$T/proj/src/a.c"
# Project settings are read without trusting the workspace (trust is for
# hooks); the heartbeat is not a hook.
cat > "$T/proj/.loom/settings.json" <<'JSON'
{"heartbeat": {"T_hb": 0.2, "T_hb_act": 0.2,
  "watch_sources": [{"type": "filesystem", "paths": ["src"], "method": "hash"},
                    {"type": "external_signal"}]}}
JSON
cat > "$T/scenario.json" <<'JSON'
{"turns": [
  {"reply": {"text": "Building.", "tool_calls": [{"id": "b1", "name": "Bash", "input": {"command": "sleep 41"}}]}},
  {"reply": {"text": "The source changed while I built; stopping here."}},
  {"reply": {"text": "Testing.", "tool_calls": [{"id": "b2", "name": "Bash", "input": {"command": "sleep 42"}}]}},
  {"reply": {"text": "Signalled; stopping the tests."}}
]}
JSON
start_mock "$T/scenario.json"
use_provider anthropic
repl_start "$T/proj" --permission-mode bypassPermissions
wait_prompt

type_line "/events"
wait_screen "/events before any run" "No events."

type_line "build it"
wait_screen "the tool call" "● Bash(sleep 41)"
sleeping() { pgrep -f "^sleep 41$" >/dev/null; }
wait_until "the sleep to run" 10 sleeping
echo x >> "$T/proj/src/a.c"
wait_screen "the event line" "⚡ event high · filesystem: " 10
line=$(screen | grep -m1 '⚡ event')
assert_contains "the event line names the file" "$line" "a.c"
check "the event line ends with the event id" grep -qE '\(ev_[0-9a-f-]+\)$' <<<"$line"
ev=$(grep -oE 'ev_[0-9a-f-]+' <<<"$line" | tail -n 1)
wait_screen "the final text" "stopping here." 10
wait_prompt
s=$(screen)
assert_contains "the Bash was stopped by the harness" "$s" "stopped by the harness"
check "the sleep is gone" bash -c '! pgrep -f "^sleep 41$" >/dev/null'
check "the call's line is repeated above its result" \
  test "$(grep -c '● Bash(sleep 41)' <<<"$s")" -ge 2
assert_eq "two model requests" "$(wc -l < "$MOCK_LOG")" "2"
assert_contains "the second request carries the event" \
  "$(sed -n 2p "$MOCK_LOG" | jq -r '.raw_body')" "$ev"

type_line "/events"
wait_screen "/events lists the event" "Events (1)"
row=$(screen | grep -F "$ev" | grep -F 'projected' | tail -n 1)
assert_contains "/events: state projected" "$row" "projected"
assert_contains "/events: urgency" "$row" "high"
assert_contains "/events: source and summary" "$row" "filesystem: src/a.c"
check "/events: no disposition yet" bash -c "! grep -qF ' · ' <<<\"\$1\"" _ "$row"

type_line "/help"
wait_screen "/help lists /events" "/events"
check "no model call for the commands" test "$(wc -l < "$MOCK_LOG")" -eq 2

# SIGUSR1 between runs is nothing; during a run it is the heartbeat's.
loom_pid=$(pgrep -f "^$LOOM_BIN --cwd $T/proj" | head -n 1)
kill -USR1 "$loom_pid"
sleep 0.3
check "SIGUSR1 at the prompt leaves the REPL running" kill -0 "$loom_pid"
type_line "run the tests"
wait_screen "the second tool call" "● Bash(sleep 42)"
sleeping42() { pgrep -f "^sleep 42$" >/dev/null; }
wait_until "the second sleep to run" 10 sleeping42
assert_contains "loom signal finds the REPL's run" \
  "$("$LOOM_BIN" signal "$(header_session_id)" USR1)" "sent SIGUSR1 to process $loom_pid"
wait_screen "the signal's event line" "⚡ event high · external_signal: SIGUSR1 received" 10
wait_screen "the final text of the second run" "stopping the tests." 10
wait_prompt
type_line "/events"
wait_screen "/events lists both" "Events (2)"
type_line "/exit"
assert_eq "/exit leaves with status 0" "$(wait_exit)" "0"

# ---- loom -p, text output: the event on stderr ---------------------------------
start_mock "$T/scenario.json"
"$LOOM_BIN" -p "build it" --permission-mode bypassPermissions --cwd "$T/proj" \
  > "$T/p.out" 2> "$T/p.err" &
pid=$!
wait_until "the headless sleep to run" 10 sleeping
echo y >> "$T/proj/src/a.c"
status=0
wait "$pid" || status=$?
assert_eq "loom -p completed" "$status" "0"
err_line=$(grep -m1 '^loom: event ' "$T/p.err" || true)
check "stderr has one event line ($err_line)" \
  grep -qE '^loom: event high filesystem: src/a\.c modified.* \(ev_[0-9a-f-]+\)$' <<<"$err_line"
assert_eq "only one" "$(grep -c '^loom: event ' "$T/p.err")" "1"
assert_contains "stdout has the model's text" "$(cat "$T/p.out")" "stopping here."
check "stdout has no event line" bash -c "! grep -q 'loom: event' '$T/p.out'"
assert_eq "the scripted turns were used as written" "$(wc -l < "$MOCK_LOG")" "2"
finish
