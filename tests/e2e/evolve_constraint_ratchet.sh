#!/usr/bin/env bash
# Self-evolution E1 + E3 (issue 24, docs/evolve.md): the constraint ratchet
# and its audit, against the real binary and mockllm.
#  1. Three runs fail for the same root cause (`make deploy` exits 2):
#     one failure entry under .loom/mf/failures/ with seen 1, 2, 3 and
#     three sessions; from the second run on, the request holds the
#     failure, recalled by the memory recall (docs/memory.md); after the
#     third, a constraint proposal.
#  2. Proposed, nothing is enforced yet; accepted, the rule is in
#     .loom/settings.json and the next run's `make deploy` is refused
#     before it runs (the Makefile's marker is not touched).
#  3. The audit shows the hit: one, with the task it blocked.
#  4. The user removes the rule and the action runs again: the audit shows
#     an override and proposes retiring the constraint, with both reasons.
#  5. With evolve off, nothing is written.
#  6. A .loom that is a symlink out of the project gets nothing written.
source "$(dirname "$0")/_lib.sh"
source "$LOOM_SRC/tests/e2e/_mcp_lib.sh"

mkdir -p "$T/proj"
git -C "$T/proj" init -q
printf 'deploy:\n\t@touch deploy-attempted\n\t@echo "error: no credentials for deploy" >&2; exit 3\n' \
  > "$T/proj/Makefile"
cat > "$LOOM_HOME/settings.json" <<'JSON'
{"permissions": {"allow": ["Bash"]}, "evolve": {"enabled": true}}
JSON

jq -n '{turns: [
  {match: {assistant_turns: 0}, reply: {tool_calls: [{id: "d1", name: "Bash", input: {command: "make deploy"}}]}},
  {match: {tool_results: 1}, reply: {text: "DEPLOY-FAILED"}}]}' > "$T/deploy.json"
start_mock "$T/deploy.json"
use_provider anthropic

last_payload() { tail -n 1 "$T/events" | jq -c .payload; }
run() {
  "$LOOM_BIN" -p "$1" --cwd "$T/proj" --output-format events >"$T/events" 2>"$T/err" || true
}
fm() { sed -n '/^---$/,/^---$/p' "$1" | grep "^$2:" | sed "s/^$2: //"; }

# ---- 1: three failures with one root cause ---------------------------------
for i in 1 2 3; do
  rm -f "$T/proj/deploy-attempted"
  : > "$MOCK_LOG"
  run "deploy the app to staging"
  assert_eq "run $i: completed" "$(last_payload | jq -r .state)" "completed"
  check "run $i: make deploy ran" test -e "$T/proj/deploy-attempted"
  assert_eq "run $i: the result says a failure was distilled" "$(last_payload | jq -r .evolve.kind)" "failure"
  assert_eq "run $i: seen $i" "$(last_payload | jq -r .evolve.seen)" "$i"
  if [ "$i" -ge 2 ]; then
    assert_contains "run $i: the request recalls the failure" "$(raw_req 1)" \
      "Bash(make deploy) fails: exit 2: Failure: Bash(make deploy) ends in exit 2"
    assert_contains "run $i: with its root cause" "$(raw_req 1)" "Root cause: \`Bash(make deploy)\` fails"
  else
    check_not "run 1: nothing to recall yet" grep -q "Relevant memories" <<<"$(raw_req 1)"
  fi
done
entries=("$T/proj/.loom/mf/failures/"*.md)
assert_eq "one failure entry for one root cause" "${#entries[@]}" "1"
entry=${entries[0]}
assert_eq "entry kind" "$(fm "$entry" kind)" "failure"
assert_eq "entry signature" "$(fm "$entry" signature)" '"Bash(make deploy) -> exit 2"'
assert_eq "entry seen" "$(fm "$entry" seen)" "3"
assert_eq "entry names three sessions" "$(fm "$entry" sessions | tr ',' '\n' | wc -l | tr -d ' ')" "3"
check "entry has first_seen and last_seen" grep -q '^last_seen: "20' "$entry"
assert_contains "entry body: the root cause" "$(cat "$entry")" "Root cause: \`Bash(make deploy)\` fails with exit 2: error: no credentials for deploy"
assert_contains "entry body: the revealing step" "$(cat "$entry")" "Revealed by step 1 of 1 (turn 1)"
recall=$(tail -n 1 "$T/proj/.loom/mf/recall.jsonl")
check "recall.jsonl names the entry, its kind and why ($recall)" \
  jq -e --arg p "$entry" '.items[0].path == $p and .items[0].kind == "failure" and .session and .run' <<<"$recall"
proposed=$(last_payload | jq -r '.evolve.proposed[0]')
assert_eq "the third run proposes a constraint" "${proposed%%/*}" "constraint"
review=$("$LOOM_BIN" evolve review --cwd "$T/proj" --json)
check "review lists it with its rule" \
  jq -e '.[0].kind == "constraint" and .[0].rule == "Bash(make deploy:*)"' <<<"$review"
assert_contains "review as text" "$("$LOOM_BIN" evolve review --cwd "$T/proj")" "$proposed"
assert_contains "show prints the file" "$("$LOOM_BIN" evolve review show "$proposed" --cwd "$T/proj")" \
  'rule: "Bash(make deploy:*)"'

# ---- 2: accepted, it blocks the action ---------------------------------------
check "a proposal is not enforced" test ! -e "$T/proj/.loom/settings.json"
out=$("$LOOM_BIN" evolve review accept "$proposed" --cwd "$T/proj" --json)
cid=$(jq -r .constraint <<<"$out")
check "accept names the constraint id ($out)" test -n "$cid"
check "the rule is in the project settings" \
  jq -e '.permissions.deny == ["Bash(make deploy:*)"]' "$T/proj/.loom/settings.json"
check "the proposal is gone from the review" jq -e 'length == 0' \
  <<<"$("$LOOM_BIN" evolve review --cwd "$T/proj" --json)"
rm -f "$T/proj/deploy-attempted"
: > "$MOCK_LOG"
run "deploy the app to staging"
check "the next run's make deploy never ran" test ! -e "$T/proj/deploy-attempted"
assert_contains "the model was told which rule refused it" "$(tool_result d1)" \
  "denied by settings rule Bash(make deploy:*) (project settings)"
assert_eq "the run reports the hit" "$(last_payload | jq -r .evolve.hits)" "1"

# ---- 3: the audit shows the hit ----------------------------------------------
audit=$("$LOOM_BIN" evolve audit --cwd "$T/proj" --json)
check "audit: one constraint, one hit, the blocked task ($audit)" \
  jq -e --arg id "$cid" '.[0].id == $id and .[0].hits == 1 and .[0].overrides == 0 and .[0].age_days == 0 and .[0].last_blocked.task == "deploy the app to staging" and .[0].present and (.[0].retire | not)' <<<"$audit"
hit=$(tail -n 1 "$T/proj/.loom/mf/constraint_hits.jsonl")
check "the hit line: ts, session, constraint, tool, input ($hit)" \
  jq -e --arg id "$cid" '.kind == "hit" and .constraint == $id and .tool == "Bash" and (.input | test("make deploy")) and .ts and .session' <<<"$hit"
assert_contains "audit as text" "$("$LOOM_BIN" evolve audit --cwd "$T/proj")" \
  "last blocked: \"deploy the app to staging\""

# ---- 4: the user overrides it ---------------------------------------------------
echo '{"permissions": {"deny": []}}' > "$T/proj/.loom/settings.json"
run "deploy the app to staging"
check "without the rule the action ran again" test -e "$T/proj/deploy-attempted"
audit=$("$LOOM_BIN" evolve audit --cwd "$T/proj" --json)
check "audit: an override and a retiring proposal with both reasons ($audit)" \
  jq -e '.[0].overrides == 1 and .[0].retire and (.[0].present | not) and (.[0].retire_why | length == 2) and (.[0].retire_why[1] | test("let through"))' <<<"$audit"

# ---- 5: off by default -----------------------------------------------------------
rm -rf "$T/proj2" && mkdir -p "$T/proj2" && cp "$T/proj/Makefile" "$T/proj2/"
echo '{"permissions": {"allow": ["Bash"]}}' > "$LOOM_HOME/settings.json"
"$LOOM_BIN" -p "deploy the app" --cwd "$T/proj2" --output-format events >"$T/events" 2>"$T/err" || true
check "evolve off: nothing under .loom" test ! -e "$T/proj2/.loom"
assert_eq "evolve off: no evolve key in the result" "$(last_payload | jq -r '.evolve // "none"')" "none"
LOOM_EVOLVE=1 "$LOOM_BIN" -p "deploy the app" --cwd "$T/proj2" --output-format events >"$T/events" 2>"$T/err" || true
assert_eq "LOOM_EVOLVE=1 turns it on" "$(last_payload | jq -r .evolve.kind)" "failure"

# ---- 6: a .loom that leads elsewhere gets nothing written through it -------------
mkdir -p "$T/proj3" "$T/elsewhere" && cp "$T/proj/Makefile" "$T/proj3/"
ln -s "$T/elsewhere" "$T/proj3/.loom"
LOOM_EVOLVE=1 "$LOOM_BIN" -p "deploy the app" --cwd "$T/proj3" --output-format events >"$T/events" 2>"$T/err" || true
assert_contains "a symlinked .loom is refused, named" "$(last_payload | jq -r .evolve.error)" \
  "proj3/.loom leads outside the project: nothing distilled"
check "nothing was written through it" test -z "$(ls -A "$T/elsewhere")"

finish
