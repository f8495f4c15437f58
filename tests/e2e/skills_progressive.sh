#!/usr/bin/env bash
# Skills e2e (issue 15): progressive disclosure with 30 skills installed.
#  1. The first request carries only the skills' names and descriptions (no
#     body), and skill.offered reports the catalog's size.
#  2. A task matching one: the scripted model calls Skill, the next request
#     holds the body, and a Bash command the skill's allowed-tools name runs
#     without a prompt in headless -p — the same command without the skill
#     is denied. The run report says activated 1, used 1.
#  3. A task matching none: no body in any request, activated 0 (false-hit
#     check).
#  4. The skill survives a compaction: after a forced (reactive) one, the
#     body is in the request again.
#  5. `/skill-name args` as the -p prompt injects the body, args substituted.
#  6. A skill with paths is offered only after a matching file was read.
#  7. context: fork runs the skill as a sub-agent's task; the parent sees
#     only the answer.
source "$(dirname "$0")/_lib.sh"
source "$LOOM_SRC/tests/e2e/_mcp_lib.sh"

mkdir -p "$T/proj"
# 30 user skills: 29 of filler, one deploy-check with an allowed-tools rule.
for i in $(seq -w 1 29); do
  mkdir -p "$LOOM_HOME/skills/filler-$i"
  cat > "$LOOM_HOME/skills/filler-$i/SKILL.md" <<EOF
---
name: filler-$i
description: Handles TOPIC-$i chores. Use when a task mentions TOPIC-$i.
---
BODY-MARKER-$i: step one, step two.
EOF
done
mkdir -p "$LOOM_HOME/skills/deploy-check/scripts"
cat > "$LOOM_HOME/skills/deploy-check/SKILL.md" <<'EOF'
---
name: deploy-check
description: Checks that a deploy is ready. Use when asked to check a deploy.
allowed-tools: Bash(touch deploy-ready:*)
argument-hint: "[environment]"
---
BODY-MARKER-DEPLOY for [$ARGUMENTS]: run `touch deploy-ready` and report.
EOF
echo 'echo ok' > "$LOOM_HOME/skills/deploy-check/scripts/check.sh"
# A broken one beside them: a warning, the rest still load.
mkdir -p "$LOOM_HOME/skills/broken-one"
printf -- '---\nname: Broken_One\ndescription: x\n---\nBODY-MARKER-BROKEN\n' \
  > "$LOOM_HOME/skills/broken-one/SKILL.md"

last_payload() { tail -n 1 "$T/events" | jq -c .payload; }
run() { # run PROMPT — headless, default mode, events events in $T/events
  "$LOOM_BIN" -p "$1" --cwd "$T/proj" --output-format events >"$T/events" 2>"$T/err" || true
}
jqe() { jq -e "$@" >/dev/null; }
any_req_has() { grep -q -- "$1" <(jq -c .raw_body "$MOCK_LOG"); }

# ---- 1 + 2: a task matching one -------------------------------------------------
jq -n --arg script "$LOOM_HOME/skills/deploy-check/scripts/check.sh" '{turns: [
  {match: {assistant_turns: 0, last_user_contains: "TASK-DEPLOY"},
   reply: {tool_calls: [{id: "sk1", name: "Skill", input: {name: "deploy-check", args: "staging"}}]}},
  {match: {tool_results: 1, body_contains: "BODY-MARKER-DEPLOY"},
   reply: {tool_calls: [{id: "b1", name: "Bash", input: {command: "touch deploy-ready"}},
                        {id: "r1", name: "Read", input: {file_path: $script}}]}},
  {match: {tool_results: 3}, reply: {text: "DEPLOY-DONE"}}]}' > "$T/match.json"
start_mock "$T/match.json"
use_provider anthropic
run "TASK-DEPLOY: please check the deploy"
assert_eq "match: the run completed" "$(last_payload | jq -r .state)" "completed"
assert_eq "match: the answer" "$(last_payload | jq -r .result)" "DEPLOY-DONE"
first=$(raw_req 1)
for name in deploy-check filler-01 filler-29; do
  assert_contains "the first request lists $name" "$first" "$name"
done
assert_contains "the first request has the description" "$first" "Checks that a deploy is ready"
check_not "the first request holds no skill body" grep -q "BODY-MARKER" <<<"$first"
check_not "the broken skill is not offered" grep -q "Broken_One" <<<"$first"
assert_contains "the broken skill is a warning naming its file" "$(cat "$T/err" "$T/events")" \
  "broken-one/SKILL.md"
check "the first request declares the Skill tool" grep -qw Skill <<<"$(tool_names 1)"
offered=$(jq -c 'select(.type=="skill.offered") | .payload' "$T/events" | head -n 1)
assert_eq "skill.offered lists the 30 skills" "$(jq -r '.skills | length' <<<"$offered")" "30"
check "skill.offered reports the catalog's size in tokens ($(jq -r .tokens <<<"$offered"))" \
  jqe '.tokens > 100 and .truncated == false' <<<"$offered"
assert_contains "the second request holds the body" "$(raw_req 2)" "BODY-MARKER-DEPLOY for [staging]"
assert_contains "the body names its base directory" "$(raw_req 2)" \
  "Base directory for this skill: $LOOM_HOME/skills/deploy-check"
assert_contains "the bundled script is listed" "$(raw_req 2)" "scripts/check.sh"
check_not "no other body came with it" grep -q "BODY-MARKER-0" <<<"$(raw_req 2)"
check "the allowed Bash ran without a prompt ($(tool_result b1))" test -e "$T/proj/deploy-ready"
assert_contains "the bundled script is readable once the skill is active" "$(tool_result r1)" "echo ok"
activated=$(jq -c 'select(.type=="skill.activated") | .payload' "$T/events")
assert_eq "skill.activated: one" "$(jq -s length <<<"$activated")" "1"
check "skill.activated names the skill, the tool and its rule" \
  jqe '.name=="deploy-check" and .via=="tool" and .scope=="user" and .allowed_tools==["Bash(touch deploy-ready:*)"] and .tokens > 0' <<<"$activated"
report=$(last_payload | jq -c .skills)
check "the report: 30 offered, 1 activated, 1 used ($report)" \
  jqe '.offered_count==30 and .activated_count==1 and .used_count==1 and .activated[0].name=="deploy-check" and .activated[0].used' <<<"$report"

# The same command without the skill is not allowed in headless -p.
rm -f "$T/proj/deploy-ready"
jq -n '{turns: [
  {match: {assistant_turns: 0}, reply: {tool_calls: [{id: "b2", name: "Bash", input: {command: "touch deploy-ready"}}]}},
  {match: {tool_results: 1}, reply: {text: "NO-SKILL-DONE"}}]}' > "$T/noskill.json"
start_mock "$T/noskill.json"
run "TASK-BASH-ONLY"
check_not "without the skill the same command is not run in -p ($(tool_result b2 | head -c 120))" test -e "$T/proj/deploy-ready"

# ---- 3: a task matching none ----------------------------------------------------------
jq -n '{turns: [{reply: {text: "NOTHING-NEEDED"}}]}' > "$T/none.json"
start_mock "$T/none.json"
run "TASK-NONE: what is two plus two"
assert_eq "none: the answer" "$(last_payload | jq -r .result)" "NOTHING-NEEDED"
check_not "none: no body in any request" any_req_has "BODY-MARKER"
check "none: the report says 30 offered, 0 activated" \
  jqe '.offered_count==30 and .activated_count==0 and .used_count==0' <<<"$(last_payload | jq -c .skills)"
assert_eq "none: no skill.activated" "$(jq -s '[.[] | select(.type=="skill.activated")] | length' "$T/events")" "0"

# ---- 4: the skill survives a compaction ---------------------------------------------
# After Skill, the next request is refused as too long once: Loom compacts
# (the summary request has no tools) and retries; the retry carries the
# summary, and the skill's body must be in it still.
SUMMARY='<analysis>ok</analysis><summary>1. Primary Request and Intent: SUMMARY-OF-RUN.</summary>'
jq -n --arg s "$SUMMARY" '{turns: [
  {match: {no_tools: true}, reply: {text: $s}},
  {match: {body_contains: "SUMMARY-OF-RUN"}, reply: {text: "AFTER-COMPACT"}},
  {match: {tool_results: 1}, faults: [{status: 413, times: 1}], reply: {text: "NOT-REACHED"}},
  {match: {assistant_turns: 0, last_user_contains: "TASK-COMPACT"},
   reply: {tool_calls: [{id: "sk3", name: "Skill", input: {name: "filler-07"}}]}}]}' > "$T/compact.json"
start_mock "$T/compact.json"
run "TASK-COMPACT: TOPIC-07 chores please"
assert_eq "compact: the answer after the compaction" "$(last_payload | jq -r .result)" "AFTER-COMPACT"
assert_eq "compact: one summary request" \
  "$(jq -s '[.[] | select(.body.tools == null or (.body.tools | length) == 0)] | length' "$MOCK_LOG")" "1"
retry=$(jq -c 'select((.raw_body|contains("SUMMARY-OF-RUN")) and (.body.tools|length) > 0) | .raw_body' "$MOCK_LOG" | tail -n 1)
assert_contains "compact: the retry after the compaction holds the skill's body" "$retry" "BODY-MARKER-07"

# ---- 5: /skill-name args as the prompt -------------------------------------------
jq -n '{turns: [{reply: {text: "SLASH-DONE"}}]}' > "$T/slash.json"
start_mock "$T/slash.json"
run "/deploy-check production eu-west"
assert_eq "slash: the run completed" "$(last_payload | jq -r .result)" "SLASH-DONE"
assert_contains "slash: the request holds the body with the arguments" "$(raw_req 1)" \
  "BODY-MARKER-DEPLOY for [production eu-west]"
check "slash: skill.activated via user" \
  jqe -s '[.[] | select(.type=="skill.activated")] | length == 1 and .[0].payload.via == "user" and .[0].payload.name == "deploy-check"' "$T/events"

# ---- 6: a paths skill is offered once a matching file was touched -------------
mkdir -p "$LOOM_HOME/skills/pdf-helper"
printf -- '---\nname: pdf-helper\ndescription: Works with PDF files.\npaths: "**/*.pdf"\n---\nBODY-MARKER-PDF\n' \
  > "$LOOM_HOME/skills/pdf-helper/SKILL.md"
echo "not really a pdf" > "$T/proj/doc.pdf"
jq -n '{turns: [
  {match: {assistant_turns: 0}, reply: {tool_calls: [{id: "r6", name: "Read", input: {file_path: "doc.pdf"}}]}},
  {match: {tool_results: 1}, reply: {tool_calls: [{id: "sk6", name: "Skill", input: {name: "pdf-helper"}}]}},
  {match: {tool_results: 2}, reply: {text: "PDF-DONE"}}]}' > "$T/paths.json"
start_mock "$T/paths.json"
run "TASK-PDF: look at doc.pdf"
assert_eq "paths: the run completed" "$(last_payload | jq -r .result)" "PDF-DONE"
check_not "paths: not offered before a .pdf was touched" grep -q "pdf-helper" <<<"$(raw_req 1)"
assert_contains "paths: offered at the next request" "$(raw_req 2)" "- pdf-helper: Works with PDF files."
assert_contains "paths: then activated" "$(raw_req 3)" "BODY-MARKER-PDF"
rm -rf "$LOOM_HOME/skills/pdf-helper"

# ---- 7: context: fork runs the skill in a sub-agent ----------------------------
echo '{"agents": {"enabled": true}}' > "$LOOM_HOME/settings.json"
mkdir -p "$LOOM_HOME/skills/forked-review"
printf -- '---\nname: forked-review\ndescription: Reviews apart.\ncontext: fork\nagent: Explore\n---\nBODY-MARKER-FORK review [$ARGUMENTS]\n' \
  > "$LOOM_HOME/skills/forked-review/SKILL.md"
jq -n '{turns: [
  {match: {assistant_turns: 0, last_user_contains: "BODY-MARKER-FORK"}, reply: {text: "CHILD-RESULT"}},
  {match: {assistant_turns: 0}, reply: {tool_calls: [{id: "sk7", name: "Skill", input: {name: "forked-review"}}]}},
  {match: {tool_results: 1}, reply: {text: "FORK-DONE"}}]}' > "$T/fork.json"
start_mock "$T/fork.json"
run "TASK-FORK: review this"
assert_eq "fork: the run completed" "$(last_payload | jq -r .result)" "FORK-DONE"
assert_contains "fork: the Skill result is the sub-agent's answer" "$(tool_result sk7)" "CHILD-RESULT"
assert_eq "fork: one sub-agent" "$(jq -s '[.[] | select(.type=="agent.spawned")] | length' "$T/events")" "1"
check_not "fork: the body never entered the parent's context" grep -q "BODY-MARKER-FORK" <<<"$(raw_req "$(nreq)")"
check "fork: skill.activated says fork" \
  jqe -s '[.[] | select(.type=="skill.activated")] | .[0].payload.fork == true' "$T/events"
rm -f "$LOOM_HOME/settings.json"
finish
