#!/usr/bin/env bash
# serve_tenancy.sh — two tenants: B tries every operation of /openapi.json
# on A's ids and sees nothing of A; no token → 401 but /healthz and
# /openapi.json; project-bound tokens, roles, audit visibility
# (tests/serve/tenancy.mjs).
source "$(dirname "$0")/_lib.sh"
source "$LOOM_SRC/tests/e2e/_serve_lib.sh"

serve_up "$(serve_scenario serve_tenancy)"
serve_node tenancy.mjs
serve_finish
