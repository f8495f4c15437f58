#!/usr/bin/env bash
# `loom stats` (docs/cli.md) over 100 generated sessions and 10 sub-agent
# sidechains (tests/e2e/stats_fixture.py writes them with known token
# counts, days, models, projects and tool failures, and the totals they must
# give): --json equals the expected document for every --by and for
# --since; the table has the key lines; bad lines are skipped and counted;
# an unpriced model's cost is "unknown", never 0.
source "$(dirname "$0")/_lib.sh"

fixture="$LOOM_SRC/tests/e2e/stats_fixture.py"
models_c="$LOOM_SRC/src/provider/models.c"
# Costs are sums of floating-point numbers added in another order here than
# in Loom: compared to the nano-dollar.
norm='walk(if type == "number" then (. * 1e9 | round) else . end)'

for by in day model project agent; do
  python3 "$fixture" "$LOOM_HOME" "$models_c" "$by" - "$T/expected-$by.json"
  "$LOOM_BIN" stats --json --by "$by" >"$T/got-$by.json" 2>"$T/err"
  assert_eq "stats --by $by --json is the fixture's totals" \
    "$(jq -S "$norm" "$T/got-$by.json")" "$(jq -S "$norm" "$T/expected-$by.json")"
done

python3 "$fixture" "$LOOM_HOME" "$models_c" day 2026-11-30 "$T/expected-since.json"
"$LOOM_BIN" stats --json --since 2026-11-30 >"$T/got-since.json"
assert_eq "stats --since leaves earlier days out" \
  "$(jq -S "$norm" "$T/got-since.json")" "$(jq -S "$norm" "$T/expected-since.json")"
assert_eq "--since: two days left" "$(jq -c '[.rows[].key]' "$T/got-since.json")" \
  '["2026-11-30","2026-12-01"]'

# Sanity of the fixture itself, so an empty or degenerate one cannot pass.
g="$T/got-model.json"
assert_eq "110 session files read" "$(jq .sessions "$g")" "110"
assert_eq "4 bad lines in 4 files counted" "$(jq -c .unreadable "$g")" '{"records":8,"files":4}'
assert_eq "the unpriced model's cost is null" \
  "$(jq '.rows[] | select(.key == "local-unpriced-7b") | .cost_usd' "$g")" "null"
assert_eq "a priced model's cost is positive" \
  "$(jq '.rows[] | select(.key == "gpt-4.1") | .cost_usd > 0' "$g")" "true"
assert_eq "some tool calls failed" "$(jq '.total.tool_failures > 0' "$g")" "true"
assert_eq "agents: main and Explore" "$(jq -c '[.rows[].key]' "$T/got-agent.json")" \
  '["Explore","main"]'

# The table (not a terminal: no bars).
"$LOOM_BIN" stats --by model >"$T/table" 2>"$T/err"
assert_eq "table: header" "$(head -n 1 "$T/table" | awk '{print $1, $2, $3}')" "model runs calls"
assert_eq "table: the unpriced model's cost is unknown" \
  "$(awk '$1 == "local-unpriced-7b" {print $8}' "$T/table")" "unknown"
total_runs=$(jq .total.runs "$g")
assert_eq "table: the total line's runs" "$(awk '$1 == "total" {print $2}' "$T/table")" "$total_runs"
assert_eq "table: the unreadable records are said" \
  "$(grep -c '^8 unreadable records in 4 files' "$T/table")" "1"
assert_eq "table: no block characters when piped" "$(grep -c '[▏▎▍▌▋▊▉█]' "$T/table")" "0"
# On a terminal (script(1) gives it one) each day's row has a bar.
script -qec "$LOOM_BIN stats" /dev/null >"$T/tty" </dev/null
assert_eq "terminal: a bar on each of the 4 day rows" \
  "$(grep -c '^2026-[0-9-]* .*[▏▎▍▌▋▊▉█]' "$T/tty")" "4"

rc=0; "$LOOM_BIN" stats --by week >/dev/null 2>"$T/err" || rc=$?
assert_eq "a bad --by is an error" "$rc" "2"
assert_eq "which names what is expected" "$(grep -c 'expected day, model, project or agent' "$T/err")" "1"
rc=0; "$LOOM_BIN" stats --since yesterday >/dev/null 2>"$T/err" || rc=$?
assert_eq "a bad --since is an error" "$rc" "2"
finish
