#!/usr/bin/env bash
# pg_cluster.sh — three `loom serve --cluster` workers on one PostgreSQL
# (tests/pg/start.sh, stopped on exit) and one mockllm (issue 20):
#  1. many queued runs, each doing one Bash call that appends a line to
#     calls.txt; one worker is SIGKILLed mid-way: every run completes
#     exactly once, no tool call ran twice, every run's events are stored
#     once (seq 1..n, no hole, no duplicate), SSE clients on a surviving
#     node see their runs' events in order without gaps;
#  1b. fencing: worker 0 is SIGSTOPped while it holds runs whose calls
#     run, until worker 2 reclaimed them (their leases expired), then
#     SIGCONTed: it abandons them and writes nothing more of them (no event
#     of theirs refused as a rewrite in its log), and every run still
#     completes exactly once with its events 1..n, no Bash call ran twice
#     (the stalled worker checks its lease right before each call) and none
#     was lost (a call its session left open is recorded as interrupted);
#     GET /metrics of the two live workers then matches what happened;
#  2. a client on an --api-only node approves an approval of a run a
#     worker holds, and the run proceeds; a cancel there stops a run a
#     worker is running;
#  3. SIGTERM of a worker hands its runs back: they finish on the others;
#  4. a --worker-only node serves /healthz and no API.
# The checks are tests/serve/cluster.mjs's.
source "$(dirname "$0")/_lib.sh"
export LOOM_TEST_STORE=postgres
source "$LOOM_SRC/tests/e2e/_serve_lib.sh"
trap node_cleanup EXIT

# The issue's number: 300 queued runs (the plain build runs them). Under
# ASan+UBSan the workers are several times slower: 300 runs took 168 s of
# ctest's 180 on a loaded machine, 50 s unloaded, while 100 took 34 s, of
# which ~26 s are the fixed phases (stall, SIGTERM, approvals). What the
# sanitizers add is memory and UB checking of the same code paths, and 100
# runs take every one of them: the tenant's cap of 20 still binds over the
# 3 x 8 slots, the SIGKILL still lands with half the calls made and runs
# held by the killed worker, and the stall and SIGTERM batches are the
# same. So the ASan build runs 100 (detected from the binary, as other
# scenarios do); PG_CLUSTER_RUNS still sets any number.
if grep -qa __asan_init "$SERVE_BIN"; then default_runs=100; else default_runs=300; fi
N=${PG_CLUSTER_RUNS:-$default_runs}
echo "# $N runs"
start_mock "$(serve_scenario pg_cluster)"
use_provider anthropic
SERVE_QUOTA_RUNS=20 serve_config # under the 3 × 8 slots: the cap binds
export SERVE_MOCK_KEY=test-key
test_store_use "$SERVE_STORE"

lines() { [ -f "$1" ] && wc -l < "$1" || echo 0; }

for i in 0 1 2; do start_node $i --slots 8; done
export SERVE_URL=$NODE_URL_0 LOOM_SRC T N
for i in 0 1 2; do
  check "worker $i answers /healthz" curl -fsS "$(eval echo \$NODE_URL_$i)/healthz" -o /dev/null
done

# 1. the SIGKILL case.
node "$LOOM_SRC/tests/serve/cluster.mjs" load > "$T/load.out" 2>&1 &
LOAD=$!
calls="$SERVE_WORKSPACE/calls.txt"
held_acme() { psql "$TEST_STORE_SPEC" -tAc "SELECT count(*) FROM loom_leases l JOIN loom_documents d ON d.kind = 'runs' AND d.id = l.run_id WHERE d.tenant_id = 'acme' AND l.expires_at >= now()" 2>/dev/null || echo 0; }
most=0
for _ in $(seq 1 3000); do
  h=$(held_acme)
  [ "$h" -gt "$most" ] && most=$h
  [ -s "$T/cluster_ids.json" ] && [ "$(lines "$calls")" -ge $((N / 2)) ] && break
  kill -0 "$LOAD" 2>/dev/null || break
  sleep 0.02
done
check "the three workers ran several runs at once (at most $most)" test "$most" -ge 4
check "never more than the tenant's concurrent_runs (20) over the cluster (at most $most)" test "$most" -le 20
check "every run was made, and half made their call, before the kill" \
  test -s "$T/cluster_ids.json" -a "$(lines "$calls")" -ge $((N / 2))
kill -9 "${NODE_PIDS[1]}"
wait "${NODE_PIDS[1]}" 2>/dev/null || true
NODE_PIDS[1]=
rc=0
wait "$LOAD" || rc=$?
cat "$T/load.out"
assert_eq "the load phase (create, stream, wait for every run) held" "$rc" "0"
serve_node cluster.mjs check

# 1b. fencing: SIGSTOP worker 0 past its leases, SIGCONT it after worker 2
# reclaimed them.
export SERVE_URL=$NODE_URL_2
held_by() { psql "$TEST_STORE_SPEC" -tAc "SELECT count(*) FROM loom_leases WHERE worker_id = '$1'" 2>/dev/null || echo 0; }
node "$LOOM_SRC/tests/serve/cluster.mjs" stall_load > "$T/stall.out" 2>&1 &
STALL_LOAD=$!
for _ in $(seq 1 3000); do
  [ "$(lines "$SERVE_WORKSPACE/stall_calls.txt")" -ge 4 ] && [ "$(held_by node0)" -ge 1 ] && break
  kill -0 "$STALL_LOAD" 2>/dev/null || break
  sleep 0.02
done
stalled=$(held_by node0)
check "worker 0 holds runs of the stall batch while their calls run ($stalled)" test "$stalled" -ge 1
log_at=$(wc -c < "$T/node0.log")
kill -STOP "${NODE_PIDS[0]}"
# (A bound, not a timing check: its leases expire after 3 s, and the
# database ends a transaction it was stopped in after 5 s.)
until_s=$(( $(date +%s) + 60 ))
while [ "$(date +%s)" -lt "$until_s" ]; do
  [ "$(held_by node0)" -eq 0 ] && break
  sleep 0.1
done
check "worker 2 reclaimed every run of the stalled worker 0" test "$(held_by node0)" -eq 0
kill -CONT "${NODE_PIDS[0]}"
rc=0
wait "$STALL_LOAD" || rc=$?
cat "$T/stall.out"
assert_eq "the stall batch (every run completed once, elsewhere) held" "$rc" "0"
tail -c +$((log_at + 1)) "$T/node0.log" > "$T/node0.stall.log"
abandoned=$(grep -c "node0 abandons run" "$T/node0.stall.log" || true)
check "the stalled worker abandoned the reclaimed runs on waking ($abandoned)" test "$abandoned" -ge 1
check "the stalled worker wrote none of their events after waking (none refused as out of order)" \
  bash -c "! grep -E 'events [0-9]+\\.\\.[0-9]+ of .* not stored' '$T/node0.stall.log'"
check "worker 0 still answers after its stall" curl -fsS "$NODE_URL_0/healthz" -o /dev/null
# Every abandonment of the worker's life (a slow machine may make one in
# phase 1 too: a renewal late past the lease), against its counter.
abandoned0=$(grep -c "node0 abandons run" "$T/node0.log" || true)
abandoned2=$(grep -c "node2 abandons run" "$T/node2.log" || true)
RUNS_DONE=$((N + 12)) ABANDONED_0=$abandoned0 ABANDONED_2=$abandoned2 serve_node cluster.mjs metrics

# 2. approval across nodes: node 3 takes no runs, so node 0 or 2 holds it.
start_node 3 --api-only
export SERVE_URL=$NODE_URL_3
serve_node cluster.mjs approve

# 3. SIGTERM of worker 0 while it holds runs: they finish on worker 2.
export SERVE_URL=$NODE_URL_2
held0() { psql "$TEST_STORE_SPEC" -tAc "SELECT count(*) FROM loom_leases WHERE worker_id = 'node0'" 2>/dev/null || echo 0; }
node "$LOOM_SRC/tests/serve/cluster.mjs" term_load > "$T/term.out" 2>&1 &
TERM_LOAD=$!
for _ in $(seq 1 3000); do
  [ "$(lines "$SERVE_WORKSPACE/term_calls.txt")" -ge 4 ] && [ "$(held0)" -ge 1 ] && break
  kill -0 "$TERM_LOAD" 2>/dev/null || break
  sleep 0.02
done
check "worker 0 holds runs of the SIGTERM batch while their calls run" test "$(held0)" -ge 1
kill -TERM "${NODE_PIDS[0]}"
rc=0
wait "${NODE_PIDS[0]}" || rc=$?
NODE_PIDS[0]=
assert_eq "worker 0 stopped by SIGTERM exits 0" "$rc" "0"
rc=0
wait "$TERM_LOAD" || rc=$?
cat "$T/term.out"
assert_eq "the SIGTERM batch (every run completed on the others) held" "$rc" "0"
check "worker 0 released every lease it held" test "$(held0)" -eq 0

# --worker-only: /healthz and nothing else.
start_node 4 --worker-only
check "a --worker-only node answers /healthz" curl -fsS "$NODE_URL_4/healthz" -o /dev/null
code=$(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $TOKEN_A" "$NODE_URL_4/runs")
assert_eq "a --worker-only node serves no API (GET /runs)" "$code" "404"
finish
