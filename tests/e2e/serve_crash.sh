#!/usr/bin/env bash
# serve_crash.sh — kill -9 of loom-serve while 20 runs stream; restart on
# the same store: every run completed or failed with run_resumable, every
# event a client saw still there with the same seq and bytes, no hole;
# :resume continues one to completed (tests/serve/crash.mjs).
source "$(dirname "$0")/_lib.sh"
source "$LOOM_SRC/tests/e2e/_serve_lib.sh"

serve_up "$(serve_scenario serve_crash)"
export LOOM_SRC T
node "$LOOM_SRC/tests/serve/crash.mjs" phase1 > "$T/phase1.out" 2>&1 &
PHASE1=$!
for _ in $(seq 1 1500); do
  [ -e "$T/crash_ready" ] && break
  kill -0 "$PHASE1" 2>/dev/null || break
  sleep 0.02
done
check "the 20 runs are streaming before the kill" test -e "$T/crash_ready"
kill9_serve
rc=0
wait "$PHASE1" || rc=$?
cat "$T/phase1.out"
assert_eq "phase 1 (start and stream 20 runs) held" "$rc" "0"
start_serve
serve_node crash.mjs phase2
stop_serve
# And once more, with --resume-on-restart: the recovered run that is still
# failed is left alone (it ended before this start), nothing is renumbered.
start_serve --resume-on-restart
check "the restarted server answers /healthz" curl -fsS "$SERVE_URL/healthz" -o /dev/null
serve_finish
