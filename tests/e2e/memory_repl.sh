#!/usr/bin/env bash
# /memory in the REPL shows what recall put in front of the model this
# session and why (the file, its kind, the score, the matched terms, its
# age), and the last extraction's outcome; "#private …" is a message marked
# private, not a `# note` (which would write it into AGENTS.md for good).
source "$(dirname "$0")/repl_lib.sh"

R="$T/proj"
mkdir -p "$R/.git" "$R/.loom/memory"
echo "ref: refs/heads/main" > "$R/.git/HEAD"
cat > "$R/.loom/memory/staging-deploy.md" <<'MD'
---
name: "Staging deploy"
description: "Deploys to staging go through make stage"
type: project
---

Run make stage. STAGING-MARKER
MD
touch -d "3 days ago" "$R/.loom/memory/staging-deploy.md"
echo '{"memory": {"extraction": {"enabled": true}}}' > "$LOOM_HOME/settings.json"
cat > "$T/scenario.json" <<'JSON'
{"turns": [
  {"match": {"system_contains": "memory extractor"}, "reply": {"text": "{\"memories\": []}"}},
  {"match": {"last_user_contains": "deploy to staging"}, "reply": {"text": "Use make stage, as the notes say."}},
  {"match": {"last_user_contains": "salary"}, "reply": {"text": "Noted, and kept private."}}]}
JSON
start_mock "$T/scenario.json"
use_provider anthropic
repl_start "$R"
wait_prompt

type_line "/memory"
wait_screen "/memory before a run" "Recalled this session"
assert_contains "nothing recalled before the first run" "$(screen)" "nothing yet"

type_line "How do we deploy to staging these days?"
wait_screen "the answer" "Use make stage, as the notes say."
wait_prompt
check "the request held the entry" bash -c 'sed -n 1p "$1" | jq -r .raw_body | grep -q STAGING-MARKER' _ "$MOCK_LOG"

type_line "/memory"
wait_screen "/memory after the run" "Last extraction"
s=$(screen)
check "/memory names the recalled file, its kind and score" \
  grep -qE "^  staging-deploy.md  memory · score [0-9.]+ · matched: deploy, staging; 3 days old" <<<"$s"
assert_contains "and the last extraction" "$s" "extracted · written 0, merged 0, replaced 0, dropped 0"

type_line "#private my salary is 100k, do not remember it"
wait_screen "the private message is a message" "Noted, and kept private."
wait_prompt
check "it is not a note in AGENTS.md" test ! -e "$R/AGENTS.md"
type_line "/memory"
wait_screen "/memory after the private run" "#private"
assert_contains "extraction skipped it" "$(screen)" "skipped: a message since the last extraction is marked #private"
type_line "/exit"
wait_exit
finish
