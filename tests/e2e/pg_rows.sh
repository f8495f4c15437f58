#!/usr/bin/env bash
# pg_rows.sh — a loom session's records as PostgreSQL rows (issue 20 item
# 1; docs/server-store.md, "Session records"), on its own PostgreSQL with
# 2 s leases and workers that share no session folder (a LOOM_HOME each).
# The runs are pg_takeover's (tests/serve/takeover.mjs: a reply asking for
# two Bash calls, the first sleeping).
#  1. While worker 0 runs the first call: the session's rows are exactly
#     its JSONL file, byte for byte.
#  2. SIGKILL of worker 0; worker 1 (its own, empty LOOM_HOME) takes the
#     run over and resumes it from the rows: the call only the session
#     showed is recorded as interrupted (takeover.mjs kill), worker 1's
#     working copy is the rows byte for byte and begins with worker 0's
#     file, and GET /runs/{id}/transcript (from the rows) shows the run.
#  3. SIGSTOP of worker 1 mid-call until its lease expired; worker 2 claims
#     the run and finishes it from the rows; then SIGCONT: worker 1's
#     appends are refused (its log says so: by the lease's epoch in the
#     database, or before that by the worker itself when its renewal found
#     the run gone first), the rows do not change, and worker 1's copy is a
#     prefix of them (it wrote nothing the rows lack). The database's fence
#     alone: unit.test_server_store_pg (test_session_records).
source "$(dirname "$0")/_lib.sh"
export LOOM_TEST_STORE=postgres
source "$LOOM_SRC/tests/e2e/_serve_lib.sh"
trap node_cleanup EXIT

start_mock "$(serve_scenario pg_takeover)"
use_provider anthropic
serve_config
export SERVE_MOCK_KEY=test-key NODE_LEASE_MS=2000
test_store_use "$SERVE_STORE"
q() { psql "$TEST_STORE_SPEC" -tAc "$1" 2>/dev/null; }
# rows SID OUT — the session's rows as JSONL (a line and '\n' per row).
rows() { q "SELECT line FROM loom_session_records WHERE session_id = '$1' ORDER BY seq" > "$2"; }
# is_prefix A B — file A's bytes begin file B.
is_prefix() { [ -s "$1" ] && cmp -s -n "$(stat -c %s "$1")" "$1" "$2"; }
node_file() { find "$T/home$1/projects" -name "$2.jsonl" 2>/dev/null | head -n 1; }
on_node() { local i=$1; shift; LOOM_HOME="$T/home$i" start_node "$i" "$@"; }
mkdir -p "$T/home0" "$T/home1" "$T/home2"
export LOOM_SRC T

# 1. the rows while the first call runs.
on_node 0 --slots 2
export SERVE_URL=$NODE_URL_0
serve_node takeover.mjs start kill
kill_id=$(cat "$T/kill.id")
sid=$(q "SELECT DISTINCT session_id FROM loom_session_records")
check "one loom session has rows ($sid)" test -n "$sid" -a "$(echo "$sid" | wc -l)" -eq 1
f0=$(node_file 0 "$sid")
rows "$sid" "$T/rows1.jsonl"
check "worker 0 keeps a working copy of the session" test -s "$f0"
check "the rows are the JSONL file, byte for byte ($(wc -l < "$T/rows1.jsonl") records)" \
  cmp "$T/rows1.jsonl" "$f0"
check "the rows hold the reply's calls" grep -q '"type":"function_call"' "$T/rows1.jsonl"

# 2. SIGKILL; worker 1 resumes from the rows.
kill -9 "${NODE_PIDS[0]}"
wait "${NODE_PIDS[0]}" 2>/dev/null || true
NODE_PIDS[0]=
check "worker 1 starts with no copy of the session" test -z "$(node_file 1 "$sid")"
on_node 1 --slots 2
export SERVE_URL=$NODE_URL_1
serve_node takeover.mjs kill
f1=$(node_file 1 "$sid")
rows "$sid" "$T/rows2.jsonl"
check "worker 1 made its copy from the rows" test -s "$f1"
check "worker 1's copy is the rows, byte for byte" cmp "$T/rows2.jsonl" "$f1"
check "and begins with worker 0's file, byte for byte" is_prefix "$f0" "$T/rows2.jsonl"
check "the resumed run added records" test "$(wc -l < "$T/rows2.jsonl")" -gt "$(wc -l < "$T/rows1.jsonl")"
curl -fsS -H "Authorization: Bearer $TOKEN_A" "$NODE_URL_1/runs/$kill_id/transcript" \
  -o "$T/transcript.json"
check "GET /runs/{id}/transcript reads the rows (the goal and both calls)" \
  jq -e '([.items[] | select(.kind == "tool_call")] | length) == 2 and
         ([.items[] | select(.kind == "user" and (.text | test("TAKEOVER-RUN kill")))] | length) == 1' \
  "$T/transcript.json"

# 3. SIGSTOP past the lease; worker 2 finishes the run; SIGCONT.
serve_node takeover.mjs start stall
id=$(cat "$T/stall.id")
kill -STOP "${NODE_PIDS[1]}"
# (Bounds, not timing checks: the lease expires 2 s after its last renewal.)
for _ in $(seq 1 600); do
  [ "$(q "SELECT count(*) FROM loom_leases WHERE run_id = '$id' AND expires_at < now()")" = 1 ] && break
  sleep 0.1
done
check "the stopped worker's lease expired" \
  test "$(q "SELECT count(*) FROM loom_leases WHERE run_id = '$id' AND expires_at < now()")" = 1
for _ in $(seq 1 600); do
  grep -qx done1 "$SERVE_WORKSPACE/stall_calls.txt" && break
  sleep 0.1
done
check "the first call ended while its worker was stopped" grep -qx done1 "$SERVE_WORKSPACE/stall_calls.txt"
on_node 2 --slots 2
export SERVE_URL=$NODE_URL_2
serve_node takeover.mjs stall
check "worker 2 holds no lease of a finished run" \
  test "$(q "SELECT count(*) FROM loom_leases WHERE run_id = '$id'")" = 0
sid=$(q "SELECT DISTINCT session_id FROM loom_session_records WHERE session_id <> '$sid'")
check "the stalled run's session has rows ($sid)" test -n "$sid" -a "$(echo "$sid" | wc -l)" -eq 1
rows "$sid" "$T/rows3.jsonl"
f2=$(node_file 2 "$sid")
check "worker 2's copy is the rows, byte for byte" cmp "$T/rows3.jsonl" "$f2"
kill -CONT "${NODE_PIDS[1]}"
for _ in $(seq 1 600); do
  grep -q "node1 abandons run $id" "$T/node1.log" && grep -q "node1: record .* of session $sid (run $id) not stored" "$T/node1.log" && break
  sleep 0.1
done
check "the woken worker gave the run up" grep -q "node1 abandons run $id" "$T/node1.log"
check "its appends were refused" grep -q "node1: record .* of session $sid (run $id) not stored" "$T/node1.log"
grep "node1: record" "$T/node1.log" | sed 's/^/# /'
check "worker 1 still answers" curl -fsS "$NODE_URL_1/healthz" -o /dev/null
rows "$sid" "$T/rows4.jsonl"
check "nothing the fenced worker wrote is in the rows" cmp "$T/rows3.jsonl" "$T/rows4.jsonl"
[ "$FAILED" -eq 0 ] || { echo "# worker 1's log:"; tail -n 40 "$T/node1.log"; echo "# worker 2's log:"; tail -n 20 "$T/node2.log"; }
finish
