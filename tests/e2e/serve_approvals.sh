#!/usr/bin/env bash
# serve_approvals.sh — approvals as objects over HTTP: reject (the model is
# told, the run completes), expiry (1 s policy timeout → expired, answering
# → 410 run_approval_expired), takeover by a second token of the tenant,
# answering twice → 409, a cancelled run's approval cancelled
# (tests/serve/approvals.mjs).
source "$(dirname "$0")/_lib.sh"
source "$LOOM_SRC/tests/e2e/_serve_lib.sh"

serve_up "$(serve_scenario serve_approvals)"
mkdir -p "$T/ws/acme-p1/cache" && echo keep > "$T/ws/acme-p1/cache/keep"
serve_node approvals.mjs
check "the rejected and expired rm -rf never ran: the cache folder is untouched" \
  test -d "$T/ws/acme-p1/cache"
serve_finish
