#!/usr/bin/env bash
# `loom evolve stats` and `loom evolve audit` over a checked-in history
# (tests/e2e/fixtures/evolve_history, docs/evolve.md "Metrics"). The
# expected values, worked out by hand from the fixture:
#   constraint growth  2 accepted: 2026-10-30 (+1 = 1), 2026-10-31 (+1 = 2)
#   capability growth  2 skills: 2026-10-31 (lint-fix), 2026-11-02 (release);
#                      one rejected, one proposal line; a line that is not
#                      an object is skipped
#   mis-injection      recall lines for 5 runs; the one of session …003 has
#                      no session file (1 item left out); of the other 7
#                      items 4 were used:
#                        run ra  pattern build-test  used (make build ran)
#                                failure deploy      unused (never mentioned)
#                        run rb  memory tabs         used ("tabs", "indentation" in the answer)
#                                skill lint-fix      used (Skill invoked)
#                        run rc  pattern build-test  unused
#                                failure gone-…      unused (its file is gone; "gone" never said)
#                        run re  failure deploy      used (the run read its file)
#                      rate 3/7 = 0.4286
#   audit              c-0000dep1: 1 hit (task "earlier run: deploy"), kept;
#                      c-0000push: no hit in 2 sessions, retireAfterSessions 2:
#                      proposed for retiring
source "$(dirname "$0")/_lib.sh"

cp -r "$LOOM_SRC/tests/e2e/fixtures/evolve_history/proj" "$T/proj"
rm -rf "$LOOM_HOME" && cp -r "$LOOM_SRC/tests/e2e/fixtures/evolve_history/home" "$LOOM_HOME"

stats=$("$LOOM_BIN" evolve stats --cwd "$T/proj" --json)
assert_eq "constraint growth" "$(jq -c .constraint_growth <<<"$stats")" \
  '{"accepted":2,"by_day":[{"day":"2026-10-30","accepted":1,"total":1},{"day":"2026-10-31","accepted":1,"total":2}]}'
assert_eq "capability growth" "$(jq -c '.capability_growth | del(.agents_by_day)' <<<"$stats")" \
  '{"skills_accepted":2,"agents_accepted":0,"by_day":[{"day":"2026-10-31","accepted":1,"total":1},{"day":"2026-11-02","accepted":1,"total":2}]}'
assert_eq "mis-injection" "$(jq -c '.mis_injection | del(.by_kind)' <<<"$stats")" \
  '{"runs":4,"items":7,"used":4,"unused":3,"sessions_missing":1,"rate":0.4286}'
assert_eq "mis-injection by kind" "$(jq -Sc .mis_injection.by_kind <<<"$stats")" \
  '{"failure":{"items":3,"used":1},"memory":{"items":1,"used":1},"pattern":{"items":2,"used":1},"skill":{"items":1,"used":1}}'
assert_eq "proposals decided" "$(jq -c .proposals <<<"$stats")" '{"proposed":1,"rejected":1}'

text=$("$LOOM_BIN" evolve stats --cwd "$T/proj")
assert_contains "text: constraint growth" "$text" "constraint growth: 2 accepted"
assert_contains "text: capability growth" "$text" "capability growth: 2 skills accepted, 0 agents"
assert_contains "text: mis-injection rate" "$text" \
  "mis-injection rate: 0.4286 (3 of 7 recalled items unused, over 4 runs)"
assert_contains "text: the left-out items" "$text" "1 items left out: their session files were not found"

audit=$("$LOOM_BIN" evolve audit --cwd "$T/proj" --json)
assert_eq "audit: the deploy constraint is kept" \
  "$(jq -c '.[0] | [.id, .hits, .overrides, .sessions_since, .last_blocked.task, .present, .retire]' <<<"$audit")" \
  '["c-0000dep1",1,0,2,"earlier run: deploy",true,false]'
assert_eq "audit: the push constraint never fired and is proposed for retiring" \
  "$(jq -c '.[1] | [.id, .hits, .sessions_since, .retire, .retire_why]' <<<"$audit")" \
  '["c-0000push",0,2,true,["never fired in 2 sessions (the limit is 2)"]]'
check "audit: ages in days from the acceptance" jq -e '.[0].age_days >= 30 and .[1].age_days >= 30' <<<"$audit"
assert_contains "audit text: retiring" "$("$LOOM_BIN" evolve audit --cwd "$T/proj")" \
  "proposed for retiring: never fired in 2 sessions (the limit is 2)"

# Bad input is named, never a crash.
"$LOOM_BIN" evolve frobnicate --cwd "$T/proj" 2>"$T/err" && not_ok "an unknown command fails" || ok "an unknown command fails"
assert_contains "with the usage" "$(cat "$T/err")" "usage: loom evolve"
"$LOOM_BIN" evolve review show --cwd "$T/proj" 2>"$T/err" && not_ok "show without an id fails" || ok "show without an id fails"
assert_contains "saying what is missing" "$(cat "$T/err")" "needs a proposal id"
printf -- '---\nname: [\n---\n' > "$T/proj/.loom/mf/patterns/broken.md"
echo '{"ts":"2026-11-04T00:00:00.000Z","session":"s","run":"r","items":"not a list"}' >> "$T/proj/.loom/mf/recall.jsonl"
stats2=$("$LOOM_BIN" evolve stats --cwd "$T/proj" --json)
assert_eq "a broken entry and a bad recall line change nothing" "$(jq -c '.mis_injection | [.items, .used]' <<<"$stats2")" "[7,4]"

finish
