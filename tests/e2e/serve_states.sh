#!/usr/bin/env bash
# serve_states.sh — the ten run states reached and observed over HTTP, and
# invalid_state_transition for the moves the machine lacks
# (tests/serve/states.mjs).
source "$(dirname "$0")/_lib.sh"
source "$LOOM_SRC/tests/e2e/_serve_lib.sh"

serve_up "$(serve_scenario serve_states)"
serve_node states.mjs
serve_finish
