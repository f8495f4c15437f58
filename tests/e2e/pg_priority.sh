#!/usr/bin/env bash
# pg_priority.sh — run priorities on a `loom serve --cluster` worker of a
# PostgreSQL store (its own, tests/pg/start.sh): with its one slot busy,
# runs queued with priorities are claimed highest first, then oldest
# first; a priority outside -1000..1000 or not an integer is refused
# (tests/serve/priority.mjs).
source "$(dirname "$0")/_lib.sh"
export LOOM_TEST_STORE=postgres
source "$LOOM_SRC/tests/e2e/_serve_lib.sh"

start_mock "$(serve_scenario pg_cluster)"
use_provider anthropic
serve_config
start_serve --cluster --worker-id prio1 --slots 1
serve_node priority.mjs
serve_finish
