#!/usr/bin/env bash
# serve_sequence.sh — the seed's end-to-end sequence (000 §10.8) over HTTP
# against loom-serve: session → task → run → running → approval.requested
# on the SSE stream → approve → tool.finished → artifact.created (the
# patch) → completed; the events page equals the stream. Node does the
# talking (tests/serve/sequence.mjs); every answer is checked against
# /openapi.json.
source "$(dirname "$0")/_lib.sh"
source "$LOOM_SRC/tests/e2e/_serve_lib.sh"

serve_up "$(serve_scenario serve_sequence)"
serve_node sequence.mjs
check "the model's Write really made notes.txt in the project's workspace" \
  grep -qx beta "$T/ws/acme-p1/notes.txt"
check "mockllm answered every model request with a scripted turn" \
  bash -c "! jq -e 'select(.error != null)' '$MOCK_LOG' | grep -q ."
serve_finish
