#!/usr/bin/env bash
# The peers bench (bench/peers.sh, `make bench-peers`) with Loom alone, so no
# npm is needed: it runs the three tasks in a network namespace with only
# loopback, checks they completed, and prints the table; an agent that fakes
# its answers without the model is reported as failed and fails the bench.
# Also bench_tree_rusage, which charges a run for its whole process tree.
source "$(dirname "$0")/_lib.sh"
build=$(dirname "$LOOM_BIN")
rusage="$build/bench_tree_rusage"
quiet() { "$@" >/dev/null; }

# --- bench_tree_rusage ----------------------------------------------------
# An orphan's CPU counts: the parent exits at once, its child busy-loops on.
"$rusage" "$T/orphan.json" -- sh -c \
  '(i=0; while [ $i -lt 300000 ]; do i=$((i+1)); done) & exit 0'
"$rusage" "$T/alone.json" -- sh -c 'exit 0'
check "rusage: an orphan's CPU is counted" quiet \
  jq -e --slurpfile a "$T/alone.json" '.cpu_ms > 50 and $a[0].cpu_ms < 50' "$T/orphan.json"
# A helper left running is killed after the grace time; the exit status is kept.
set +e
"$rusage" "$T/linger.json" -- sh -c 'sleep 600 & exit 3'
status=$?
set -e
assert_eq "rusage: the command's exit status" "$status" "3"
assert_eq "rusage: the lingering helper was killed" "$(jq .lingering_killed "$T/linger.json")" "1"
check "rusage: fields" quiet jq -e '.wall_ms > 0 and .max_rss_kb > 0 and .exit == 3' "$T/linger.json"
set +e
"$rusage" "$T/x.json" 2>"$T/usage.err"
status=$?
set -e
assert_eq "rusage: bad usage is status 2" "$status" "2"
assert_contains "rusage: usage names the form" "$(cat "$T/usage.err")" "OUT.json -- CMD"

# --- the bench with Loom --------------------------------------------------
set +e
BENCH_PEERS_AGENTS=loom BENCH_PEERS_RUNS=1 BENCH_RESULTS="$T/results" \
  bash "$LOOM_SRC/bench/peers.sh" "$build" >"$T/out" 2>"$T/err"
status=$?
set -e
assert_eq "bench: exit status 0" "$status" "0"
[ "$status" -eq 0 ] || cat "$T/err" >&2
row() { grep -E "^$1 +loom " "$T/out" || true; }
assert_contains "bench: the chat baseline completed" "$(row chat)" "ok          1"
assert_contains "bench: the fix task completed in 5 turns" "$(row fix)" "ok          5"
assert_contains "bench: the long task completed in 150 turns" "$(row long)" "ok        150"
per_turn_is_a_number() { [[ $(row "$1" | awk '{print $6}') =~ ^[0-9]+(\.[0-9]+)?$ ]]; }
check "bench: harness CPU per turn printed for fix" per_turn_is_a_number fix
check "bench: harness CPU per turn printed for long" per_turn_is_a_number long
check "bench: results kept as JSON lines" quiet jq -se \
  'length == 3 and all(.ok and .cpu_ms > 0 and .max_rss_kb > 0 and .request_bytes > 0)
   and (map(.turns) == [1, 5, 150]) and (map(.requests) == [1, 5, 150])' "$T/results/peers.jsonl"
check "bench: the table is saved" cmp -s <(cat "$T/out") "$T/results/peers.txt"
assert_contains "bench: ratios section" "$(cat "$T/out")" "ratios (harness CPU per turn"

# --- an agent that fakes its answers ----------------------------------------
# It prints every final answer without asking the model, and records which
# network interfaces it could see.
cat > "$T/fake-agent" <<EOF
#!/usr/bin/env bash
awk -F: 'NR > 2 { gsub(/ /, "", \$1); print \$1 }' /proc/net/dev > "$T/netdevs"
echo "Hello from the mock."
echo "Fixed: add in calc.sh subtracted instead of adding; bash test.sh passes."
echo "FINAL: read notes.txt 149 times, it says hello."
EOF
chmod +x "$T/fake-agent"
set +e
BENCH_PEERS_AGENTS=loom BENCH_PEERS_TASKS="chat fix" BENCH_PEERS_RUNS=1 BENCH_RESULTS="$T/fake" \
  BENCH_PEERS_LOOM="$T/fake-agent" bash "$LOOM_SRC/bench/peers.sh" "$build" >"$T/fake.out" 2>"$T/fake.err"
status=$?
set -e
assert_eq "fake: the bench fails" "$status" "1"
assert_contains "fake: chat reported failed" "$(grep -E '^chat ' "$T/fake.out")" "FAILED"
assert_contains "fake: the missing turns named" "$(grep -E '^chat ' "$T/fake.out")" "0 of 1 turns"
assert_contains "fake: the unfixed test named" "$(grep -E '^fix ' "$T/fake.out")" "test still fails"
assert_contains "fake: no per-turn figure for a failed task" "$(grep -E '^fix ' "$T/fake.out")" " - "
assert_contains "fake: the failure is explained" "$(cat "$T/fake.err")" "some tasks failed"
check "fake: the failed run's files are kept" test -s "$T/fake/peers-failed/loom-fix-1/mock.jsonl" -o -e "$T/fake/peers-failed/loom-fix-1/scenario.json"
assert_eq "fake: the agent saw only loopback" "$(cat "$T/netdevs")" "lo"
finish
