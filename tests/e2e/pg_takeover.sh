#!/usr/bin/env bash
# pg_takeover.sh — a cluster run's tool calls when its worker is lost
# (issue 20), on its own PostgreSQL (tests/pg/start.sh) with 2 s leases.
# Each run's reply asks for two Bash calls; the first sleeps meanwhile.
#  1. SIGKILL of the holder while the first call runs: the worker that
#     takes the run over records both as interrupted — the first from its
#     stored tool.started, the second (asked for, never started) from the
#     session's records — and runs neither again;
#  2. SIGSTOP of the holder (now the only worker) until its lease expired,
#     the first call ending meanwhile, then SIGCONT: the lease checked right
#     before the second call finds it lost (an expired lease is never
#     renewed), so the call never starts; the run is handed back and goes on
#     from its session, completed once;
#  3. a claim that waits (the test holds the claim's advisory lock for
#     longer than two leases) does not cost a worker its leases: they are
#     renewed on a thread and connection of their own, so the run's long
#     call and the next one run, nothing abandoned.
# The checks are tests/serve/takeover.mjs's.
source "$(dirname "$0")/_lib.sh"
export LOOM_TEST_STORE=postgres
source "$LOOM_SRC/tests/e2e/_serve_lib.sh"
trap node_cleanup EXIT

start_mock "$(serve_scenario pg_takeover)"
use_provider anthropic
serve_config
export SERVE_MOCK_KEY=test-key NODE_LEASE_MS=2000
test_store_use "$SERVE_STORE"
q() { psql "$TEST_STORE_SPEC" -tAc "$1" 2>/dev/null || echo 0; }

# 1. SIGKILL mid-call.
start_node 0 --slots 2
export SERVE_URL=$NODE_URL_0 LOOM_SRC T
serve_node takeover.mjs start kill
check "worker 0 holds the run" test "$(q "SELECT count(*) FROM loom_leases WHERE worker_id = 'node0'")" -eq 1
kill -9 "${NODE_PIDS[0]}"
wait "${NODE_PIDS[0]}" 2>/dev/null || true
NODE_PIDS[0]=
start_node 1 --slots 2
export SERVE_URL=$NODE_URL_1
serve_node takeover.mjs kill

# 2. SIGSTOP past the lease's expiry, no other worker to claim it.
serve_node takeover.mjs start stall
id=$(cat "$T/stall.id")
kill -STOP "${NODE_PIDS[1]}"
# (Bounds, not timing checks: the lease expires 2 s after its last renewal.)
for _ in $(seq 1 600); do
  [ "$(q "SELECT count(*) FROM loom_leases WHERE run_id = '$id' AND expires_at < now()")" -eq 1 ] && break
  sleep 0.1
done
check "the stalled worker's lease expired" \
  test "$(q "SELECT count(*) FROM loom_leases WHERE run_id = '$id' AND expires_at < now()")" -eq 1
for _ in $(seq 1 600); do
  grep -qx done1 "$SERVE_WORKSPACE/stall_calls.txt" && break
  sleep 0.1
done
check "the first call ended while its worker was stopped" grep -qx done1 "$SERVE_WORKSPACE/stall_calls.txt"
kill -CONT "${NODE_PIDS[1]}"
serve_node takeover.mjs stall
check "the woken worker gave the run up (its log says so)" grep -q "node1 abandons run $id" "$T/node1.log"
check "worker 1 still answers" curl -fsS "$NODE_URL_1/healthz" -o /dev/null

# 3. the claim lock held elsewhere while a long call runs.
serve_node takeover.mjs start long
id=$(cat "$T/long.id")
psql "$TEST_STORE_SPEC" -qtAc "BEGIN; SELECT pg_advisory_xact_lock(7309475736900714498); SELECT pg_sleep(7); COMMIT" \
  > "$T/lock.out" 2>&1 &
LOCKER=$!
waited=0
for _ in $(seq 1 300); do
  [ "$(q "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND wait_event = 'advisory' AND application_name = 'loom-serve'")" -ge 1 ] && { waited=1; break; }
  sleep 0.05
done
rc=0
wait "$LOCKER" || rc=$?
assert_eq "the test held the claim lock ($(tr '\n' ' ' < "$T/lock.out"))" "$rc" "0"
check "worker 1's claim waited behind it" test "$waited" -eq 1
serve_node takeover.mjs long
check "worker 1 abandoned nothing of the long run" bash -c "! grep -q 'abandons run $id' '$T/node1.log'"
[ "$FAILED" -eq 0 ] || { echo "# worker 1's log:"; tail -n 40 "$T/node1.log"; }
finish
