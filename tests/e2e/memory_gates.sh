#!/usr/bin/env bash
# The extraction gates (docs/memory.md, "When extraction runs"): off by
# default in -p; the environment wins over the settings; never without a
# .loom/memory folder (and never creating one); nothing from a failed run, a
# trivial run, a run marked #private, or one where the agent wrote the memory
# folder itself; the cursor: a resumed session's next extraction reads only
# what is new.
source "$(dirname "$0")/_lib.sh"

R="$T/repo"
mkdir -p "$R/.git" "$R/.loom/memory"
echo "ref: refs/heads/main" > "$R/.git/HEAD"
X='{"memories":[{"action":"add","name":"Gate fact","description":"A fact","type":"project","body":"GATE-FACT"}]}'
scenario() {
  jq -n --arg a "$2" --arg x "$X" '{turns: [
    {match: {system_contains: "memory extractor"}, reply: {text: $x}},
    {reply: {text: $a}}]}' > "$1"
}
extractor_requests() { jq -s '[.[] | select(.body.system | tostring | contains("memory extractor"))] | length' "$MOCK_LOG"; }
run() { "$LOOM_BIN" -p "$@" --output-format json --permission-mode bypassPermissions --cwd "$R" 2>"$T/err"; }
long="Please rename the helper function parse_args to parse_options across the code base."
answer="Renamed parse_args to parse_options in every file that used it."

# Off by default in -p: no setting, no variable.
scenario "$T/s.json" "$answer"
start_mock "$T/s.json"
use_provider anthropic
out=$(run "$long")
assert_eq "-p by default: no extractor request" "$(extractor_requests)" 0
assert_eq "and nothing in the result" "$(jq -c .memory <<<"$out")" null
check "no entry" test ! -e "$R/.loom/memory/gate-fact.md"

# On in the settings, off by the environment.
echo '{"memory": {"extraction": true}}' > "$LOOM_HOME/settings.json"
start_mock "$T/s.json"
out=$(LOOM_MEMORY_EXTRACTION=0 run "$long")
assert_eq "LOOM_MEMORY_EXTRACTION=0 wins over the settings" "$(extractor_requests)" 0

# No memory folder: skipped, and not created.
mkdir -p "$T/bare/.git"
start_mock "$T/s.json"
out=$("$LOOM_BIN" -p "$long" --output-format json --permission-mode bypassPermissions --cwd "$T/bare" 2>/dev/null)
assert_eq "no .loom/memory: skipped" "$(jq -r .memory.reason <<<"$out")" "no .loom/memory folder in the project"
check "and the folder is not created" test ! -e "$T/bare/.loom/memory"
assert_eq "no extractor request" "$(extractor_requests)" 0

# A trivial run.
scenario "$T/hi.json" "Hello!"
start_mock "$T/hi.json"
out=$(run "hi")
assert_contains "a trivial run is skipped" "$(jq -r .memory.reason <<<"$out")" "trivial"
assert_eq "without a request" "$(extractor_requests)" 0

# A failed run: the turn cap ends it before its answer.
jq -n --arg x "$X" '{turns: [
  {match: {system_contains: "memory extractor"}, reply: {text: $x}},
  {reply: {text: "Looking.", tool_calls: [{id: "g1", name: "Glob", input: {pattern: "*.c"}}]}},
  {reply: {text: "Done."}}]}' > "$T/fail.json"
start_mock "$T/fail.json"
out=$(run "$long" --max-turns 1) || true
assert_eq "the run failed" "$(jq -r .state <<<"$out")" failed
assert_eq "a failed run is skipped" "$(jq -r .memory.reason <<<"$out")" "the run did not complete"
assert_eq "without a request" "$(extractor_requests)" 0

# Marked private.
start_mock "$T/s.json"
out=$(run "#private $long")
assert_contains "#private: skipped" "$(jq -r .memory.reason <<<"$out")" "#private"
assert_eq "without a request" "$(extractor_requests)" 0

# The agent wrote the memory folder itself (seed 001 §11.10 gate 6).
jq -n --arg x "$X" --arg p "$R/.loom/memory/own.md" '{turns: [
  {match: {system_contains: "memory extractor"}, reply: {text: $x}},
  {reply: {text: "Saving a note.", tool_calls: [{id: "w1", name: "Write", input: {file_path: $p, content: "---\nname: own\ndescription: own note\n---\nOWN"}}]}},
  {reply: {text: "Saved the note myself."}}]}' > "$T/own.json"
start_mock "$T/own.json"
out=$(run "Write down that parse_options replaced parse_args in a memory note.")
assert_eq "the agent's own write skips extraction" "$(jq -r .memory.reason <<<"$out")" \
  "the agent wrote the memory folder itself"
assert_eq "without a request" "$(extractor_requests)" 0

# <private> spans never reach the extractor; the cursor: a resumed session's
# extraction reads only the new part.
start_mock "$T/s.json"
out=$(run "$long The staging host is <private>SECRET-HOST-NAME</private> for now.")
sid=$(jq -r .session_id <<<"$out")
assert_eq "extracted" "$(jq -r .memory.status <<<"$out")" extracted
xbody=$(jq -s -r '[.[] | select(.body.system | tostring | contains("memory extractor"))][0].raw_body' "$MOCK_LOG")
check "a <private> span is cut from the extractor's request" bash -c '! grep -q SECRET-HOST-NAME <<<"$1"' _ "$xbody"
assert_contains "in its place: [private]" "$xbody" "[private]"
jq -n --arg x "$X" '{turns: [
  {match: {system_contains: "memory extractor"}, reply: {text: $x}},
  {match: {last_user_contains: "make_args"}, reply: {text: "Renamed make_args to make_options too."}}]}' > "$T/resume.json"
start_mock "$T/resume.json"
out=$(run "Now also rename the test helper make_args to make_options everywhere." --resume "$sid")
xbody=$(jq -s -r '[.[] | select(.body.system | tostring | contains("memory extractor"))][0].raw_body' "$MOCK_LOG")
assert_contains "the resumed run's extraction reads the new goal" "$xbody" "make_args to make_options"
check "but not the part read before (the cursor)" bash -c '! grep -q "parse_args to parse_options across" <<<"$1"' _ "$xbody"
finish
