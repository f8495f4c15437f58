# _lib.sh — shared helpers for the e2e scenarios (sourced, not run).
#
# Each scenario gets its own temp dir with LOOM_HOME inside it, starts
# mockllm on an ephemeral loopback port, and drives the real loom binary.
set -euo pipefail

LOOM_BIN=${LOOM_BIN:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)/build/loom}
MOCKLLM_BIN=${MOCKLLM_BIN:-$(dirname "$LOOM_BIN")/mockllm}
LOOM_SRC=${LOOM_SRC:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
SCENARIOS="$LOOM_SRC/tests/scenarios"

# `loom -p` reads piped stdin into the prompt (docs/cli.md): a scenario's
# runs get stdin only where it pipes some, whatever ctest's stdin is.
exec < /dev/null

T=$(mktemp -d /tmp/loom-e2e.XXXXXX)
export LOOM_HOME="$T/home"
export HOME="$T/userhome"
mkdir -p "$LOOM_HOME" "$HOME" "$T/work"
cd "$T/work"
# Loopback only: never let a proxy from the environment see test traffic.
unset http_proxy https_proxy HTTP_PROXY HTTPS_PROXY all_proxy ALL_PROXY
export no_proxy='*' NO_PROXY='*'
unset ANTHROPIC_API_KEY ANTHROPIC_BASE_URL OPENAI_API_KEY OPENAI_BASE_URL LOOM_PROVIDER \
      LOOM_MODEL LOOM_BASE_URL LOOM_API_KEY LOOM_CASSETTE
# The suite-wide request check (tests/validate/check_suite.sh): every mockllm
# this scenario starts copies its request log under the capture dir.
# (A scenario run a second time on another store, e2e.pg.*, keeps its own.)
if [ -n "${LOOM_REQUEST_CAPTURE_DIR:-}" ]; then
  export MOCKLLM_CAPTURE_DIR="$LOOM_REQUEST_CAPTURE_DIR/$(basename "$0" .sh)${LOOM_TEST_STORE:+.$LOOM_TEST_STORE}"
  rm -rf "$MOCKLLM_CAPTURE_DIR" && mkdir -p "$MOCKLLM_CAPTURE_DIR"
fi
export LOOM_RETRY_BASE_MS=${LOOM_RETRY_BASE_MS:-200}
# Every request loom builds is also made from the session's records and the
# two encodings compared (docs/context.md, "The request kept"); a difference
# aborts loom and leaves a report that finish() fails on.
export LOOM_CHECK_REQUEST_ENCODING=1 LOOM_CHECK_REQUEST_ENCODING_REPORT="$T/request_encoding_check"
# Under sanitizers, reports go to files that finish() checks, so a report
# from a run whose exit status the scenario expects to be non-zero still fails.
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}log_path=$T/sanitizer"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:+$UBSAN_OPTIONS:}log_path=$T/sanitizer"

PASSED=0
FAILED=0
MOCK_PID=
MOCK_PORT=
MOCK_LOG=
CURRENT_PROVIDER=

LISTEN_PID=
cleanup() {
  [ -n "$MOCK_PID" ] && kill "$MOCK_PID" 2>/dev/null && wait "$MOCK_PID" 2>/dev/null
  # A listener ends by the signal (status 143): not the scenario's failure.
  if [ -n "$LISTEN_PID" ]; then kill "$LISTEN_PID" 2>/dev/null; wait "$LISTEN_PID" 2>/dev/null || true; fi
  # A scenario that set -e ended early (loom aborted) still says why.
  if [ -e "$T/request_encoding_check" ]; then
    echo "not ok - the kept request differs from one made from the records: $(head -c 4000 "$T/request_encoding_check")" >&2
    # An abort that the scenario's own checks let pass must still fail it.
    rm -rf "$T"
    exit 1
  fi
  rm -rf "$T"
}
trap cleanup EXIT

# start_mock SCENARIO_FILE — starts mockllm, sets MOCK_PORT, MOCK_URL, MOCK_LOG.
start_mock() {
  stop_mock
  MOCK_LOG="$T/mock-$RANDOM.jsonl"
  : > "$MOCK_LOG"
  rm -f "$T/port"
  "$MOCKLLM_BIN" --scenario "$1" --port 0 --port-file "$T/port" --log "$MOCK_LOG" \
    > "$T/mock.out" 2>&1 &
  MOCK_PID=$!
  for _ in $(seq 1 200); do
    [ -s "$T/port" ] && break
    sleep 0.02
  done
  [ -s "$T/port" ] || { cat "$T/mock.out" >&2; echo "mockllm did not start" >&2; exit 1; }
  MOCK_PORT=$(cat "$T/port")
  MOCK_URL="http://127.0.0.1:$MOCK_PORT"
  # A new mock has a new port: re-point the provider chosen before, if any.
  [ -n "$CURRENT_PROVIDER" ] && use_provider "$CURRENT_PROVIDER"
  return 0
}

# start_listener [BIND_ADDRESS] — a loopback HTTP listener (http_listener.py)
# that logs each request it gets to $LISTEN_LOG; sets LISTEN_PORT. Ended by
# cleanup.
start_listener() {
  LISTEN_LOG="$T/listener.log"
  : > "$LISTEN_LOG"
  rm -f "$T/listen.port"
  python3 "$LOOM_SRC/tests/e2e/http_listener.py" "$LISTEN_LOG" "$T/listen.port" \
    "${1:-127.0.0.1}" &
  LISTEN_PID=$!
  for _ in $(seq 1 250); do [ -s "$T/listen.port" ] && break; sleep 0.02; done
  [ -s "$T/listen.port" ] || { echo "the HTTP listener did not start" >&2; exit 1; }
  LISTEN_PORT=$(cat "$T/listen.port")
}

stop_mock() {
  if [ -n "$MOCK_PID" ]; then
    kill "$MOCK_PID" 2>/dev/null || true
    wait "$MOCK_PID" 2>/dev/null || true
    MOCK_PID=
  fi
}

# use_provider anthropic|openai|openai-responses — points loom at the mock.
use_provider() {
  CURRENT_PROVIDER=$1
  unset ANTHROPIC_BASE_URL ANTHROPIC_API_KEY OPENAI_BASE_URL OPENAI_API_KEY LOOM_PROVIDER
  case "$1" in
    anthropic) export ANTHROPIC_BASE_URL="$MOCK_URL" ANTHROPIC_API_KEY=test-key ;;
    openai) export OPENAI_BASE_URL="$MOCK_URL/v1" OPENAI_API_KEY=test-key ;;
    openai-responses) export OPENAI_BASE_URL="$MOCK_URL/v1" OPENAI_API_KEY=test-key \
                             LOOM_PROVIDER=openai-responses ;;
  esac
}

ok() { PASSED=$((PASSED + 1)); echo "ok - $*"; }
not_ok() { FAILED=$((FAILED + 1)); echo "not ok - $*" >&2; }

# check DESCRIPTION COMMAND... — passes when the command succeeds.
check() {
  local what=$1; shift
  if "$@"; then ok "$what"; else not_ok "$what"; fi
}

assert_eq() {
  if [ "$2" == "$3" ]; then ok "$1"; else not_ok "$1: expected [$3], got [$2]"; fi
}

assert_contains() {
  if [[ "$2" == *"$3"* ]]; then ok "$1"; else not_ok "$1: [$2] does not contain [$3]"; fi
}

# session_file ID — the path of a session's JSONL under LOOM_HOME.
session_file() { find "$LOOM_HOME/projects" -name "$1.jsonl" | head -n 1; }

finish() {
  stop_mock
  local report
  for report in "$T"/sanitizer.*; do
    [ -e "$report" ] || continue
    not_ok "sanitizer report: $(head -c 4000 "$report")"
  done
  if [ -e "$T/request_encoding_check" ]; then
    not_ok "the kept request differs from one made from the records: $(head -c 4000 "$T/request_encoding_check")"
  fi
  echo "$(basename "$0" .sh): $PASSED passed, $FAILED failed"
  [ "$FAILED" -eq 0 ]
}

# valid_jsonl FILE — every line of FILE is a JSON value (silent).
valid_jsonl() { jq -e . "$1" >/dev/null 2>&1; }
