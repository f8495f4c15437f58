#!/usr/bin/env bash
# serve_controls.sh — run controls over HTTP: cancel, pause/resume (the seq
# goes on), multitask_strategy reject/enqueue/interrupt, sync ?wait=
# (tests/serve/controls.mjs).
source "$(dirname "$0")/_lib.sh"
source "$LOOM_SRC/tests/e2e/_serve_lib.sh"

serve_up "$(serve_scenario serve_controls)"
serve_node controls.mjs
serve_finish
