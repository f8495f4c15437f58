#!/usr/bin/env bash
# serve_sse_resume.sh — an SSE client that hangs up at random points (whole
# events or mid-event bytes) and reconnects with Last-Event-ID, 100 times,
# receives every event of a long run exactly once, in order; keep-alives;
# the visibility filter (tests/serve/sse_resume.mjs).
source "$(dirname "$0")/_lib.sh"
source "$LOOM_SRC/tests/e2e/_serve_lib.sh"

serve_up "$(serve_scenario serve_sse_resume)" --keepalive-ms 200
serve_node sse_resume.mjs
serve_finish
