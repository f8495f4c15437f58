#!/usr/bin/env bash
# Every model call has an overall deadline (LOOM_REQUEST_TIMEOUT_MS) that
# keep-alive pings do not extend (issue #10, class 14): a server that sends
# `event: ping` every 100 ms for ever — far inside the idle timeout — ends
# `loom -p` with a clear model_timeout error, not retried; on both HTTP
# transports, streaming or not, before or after some of the reply. SIGINT
# ends such a call too. A slow stream that keeps progressing and finishes
# inside the deadline still succeeds. `timeout 60` is only a hang guard.
source "$(dirname "$0")/_lib.sh"

# ping_scenario FILE AFTER_EVENTS — a reply whose stream turns into pings.
ping_scenario() {
  cat > "$1" <<JSON
{"turns": [{"reply": {"text": "partial words before the pings"},
            "faults": [{"ping_every_ms": 100, "after_events": $2, "times": 100}]}]}
JSON
}
run_loom() {
  set +e
  timeout 60 "$LOOM_BIN" -p "hi" --output-format json "$@" > "$T/out" 2>"$T/err"
  RC=$?
  set -e
  ERR=$(cat "$T/err")
}

export LOOM_REQUEST_TIMEOUT_MS=1500 LOOM_IDLE_TIMEOUT_MS=1000 LOOM_MAX_RETRIES=3
ping_scenario "$T/ping0.json" 0
ping_scenario "$T/ping3.json" 3
ping_scenario "$T/ping-late.json" 1000
for provider in anthropic openai openai-responses; do
  for client in plain curl; do
    for sc in ping0 ping3 ping-late; do
      for mode in stream no-stream; do
        # A JSON body is one "event": only after_events 0 differs from the end.
        [ "$mode" = no-stream ] && [ "$sc" != ping0 ] && continue
        # Keep the matrix small where the code path is the same.
        [ "$client" = curl ] && { [ "$sc" = ping-late ] || [ "$provider" = openai-responses ]; } && continue
        what="$provider/$client/$sc/$mode"
        start_mock "$T/$sc.json"
        use_provider "$provider"
        extra=()
        [ "$mode" = no-stream ] && extra=(--no-stream)
        if [ "$client" = curl ]; then export LOOM_HTTP_CLIENT=curl; else unset LOOM_HTTP_CLIENT; fi
        run_loom "${extra[@]}"
        check "$what: loom -p ended by itself (exit $RC)" test "$RC" -ne 0 -a "$RC" -ne 124
        assert_contains "$what: the error names the deadline" "$ERR" "overall deadline of 1500 ms"
        assert_eq "$what: error code" "$(jq -r .error.code "$T/out" 2>/dev/null)" "model_timeout"
        assert_eq "$what: not retried" "$(wc -l < "$MOCK_LOG" | tr -d ' ')" "1"
        assert_contains "$what: the mock was pinging" "$(jq -r .fault "$MOCK_LOG")" "ping every 100ms"
      done
    done
  done
done
unset LOOM_HTTP_CLIENT

# SIGINT during a call that pings for ever (the deadline far away): the run
# is cancelled at once, by the signal, not the deadline or the hang guard.
export LOOM_REQUEST_TIMEOUT_MS=600000 LOOM_IDLE_TIMEOUT_MS=300000
for client in plain curl; do
  if [ "$client" = curl ]; then export LOOM_HTTP_CLIENT=curl; else unset LOOM_HTTP_CLIENT; fi
  start_mock "$T/ping0.json"
  use_provider anthropic
  set +e
  timeout 60 "$LOOM_BIN" -p "hi" --output-format json > "$T/out" 2>"$T/err" &
  tpid=$!
  for _ in $(seq 1 400); do [ -s "$MOCK_LOG" ] && break; sleep 0.05; done
  sleep 0.3
  kill -INT "$(pgrep -P $tpid)"
  wait $tpid
  RC=$?
  set -e
  check "$client sigint: the request had started" test -s "$MOCK_LOG"
  check "$client sigint: loom ended on SIGINT, not by the hang guard (exit $RC)" test "$RC" -ne 124 -a "$RC" -ne 0
  assert_eq "$client sigint: cancelled" "$(jq -r .subtype "$T/out" 2>/dev/null)" "error_cancelled"
  check "$client sigint: not the deadline" bash -c "! grep -q 'overall deadline' '$T/err'"
done
unset LOOM_HTTP_CLIENT

# A slow stream that keeps making progress and ends inside the deadline:
# success on both transports (each gap, 100 ms, is inside the idle timeout,
# the whole, about a second, inside the request deadline).
cat > "$T/drip.json" <<'JSON'
{"turns": [{"reply": {"text": "slow but steady wins"}, "chunk_size": 2, "drip_ms": 100}]}
JSON
export LOOM_REQUEST_TIMEOUT_MS=50000 LOOM_IDLE_TIMEOUT_MS=5000
for provider in anthropic openai; do
  for client in plain curl; do
    if [ "$client" = curl ]; then export LOOM_HTTP_CLIENT=curl; else unset LOOM_HTTP_CLIENT; fi
    start_mock "$T/drip.json"
    use_provider "$provider"
    run_loom
    assert_eq "$provider/$client drip: success" "$RC" "0"
    assert_eq "$provider/$client drip: the whole answer" "$(jq -r .result "$T/out")" "slow but steady wins"
  done
done
unset LOOM_HTTP_CLIENT

# The default deadline is on: without LOOM_REQUEST_TIMEOUT_MS a drip still
# succeeds (the default is ten minutes, not zero).
unset LOOM_REQUEST_TIMEOUT_MS
start_mock "$T/drip.json"
use_provider anthropic
run_loom
assert_eq "default deadline: a normal reply succeeds" "$(jq -r .result "$T/out")" "slow but steady wins"

# The mock's fault is validated like the others.
echo '{"turns": [{"faults": [{"ping_every_ms": 0}]}]}' > "$T/bad1.json"
echo '{"turns": [{"faults": [{"ping_every_ms": 100, "stall_ms": 5}]}]}' > "$T/bad2.json"
for bad in bad1 bad2; do
  set +e
  "$MOCKLLM_BIN" --scenario "$T/$bad.json" --port 0 > /dev/null 2> "$T/bad.err"
  st=$?
  set -e
  assert_eq "mockllm $bad: refused at start-up" "$st" "2"
  assert_contains "mockllm $bad: names the fault" "$(cat "$T/bad.err")" "faults[0]"
done

finish
