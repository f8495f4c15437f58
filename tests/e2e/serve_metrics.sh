#!/usr/bin/env bash
# serve_metrics.sh — GET /metrics of one `loom serve` (SQLite; and as
# e2e.pg.serve_metrics on PostgreSQL, the same checks): an admin token only
# (401 without a token, 403 for a viewer), the Prometheus text format 0.0.4
# read by a strict parser (tests/serve/prom.mjs, which is first shown to
# refuse malformed texts), and the values checked against what the test
# did: runs per state, queue depth and pending approvals of the tenant, the
# other tenant's admin seeing only its own (zero) counts, no worker
# counters without --cluster (tests/serve/metrics.mjs).
source "$(dirname "$0")/_lib.sh"
source "$LOOM_SRC/tests/e2e/_serve_lib.sh"

serve_up "$(serve_scenario pg_cluster)"
serve_node metrics.mjs
serve_finish
