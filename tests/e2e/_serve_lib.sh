# _serve_lib.sh — loom-serve for the e2e scenarios (sourced after _lib.sh).
#
# Owns: a temp config folder (the four YAML files of docs/server-config.md:
# profiles, policies, knowledge sources, tenants + tokens) pointing the
# profiles at this scenario's mockllm; starting loom-serve on an ephemeral
# loopback port (--listen 127.0.0.1:0 --port-file), stopping it (TERM, or
# kill -9 for the crash scenario) and restarting it on the same store; and
# running the scenario's Node script (tests/serve/*.mjs) with the server's
# address and the tokens in its environment. The store is SQLite in $T, or
# with LOOM_TEST_STORE=postgres a PostgreSQL server of the scenario's own
# (_store_lib.sh).
#
# Tokens (tenants.yaml): two tenants, acme (projects p1, p2) and globex
# (project main).
#   TOKEN_A       acme admin, audit, actor alice     — the main client
#   TOKEN_A2      acme approver, actor bob            — takeover; no audit
#   TOKEN_AP1     acme member bound to project p1     — project scope
#   TOKEN_AV      acme viewer
#   TOKEN_B       globex admin, audit, actor mallory  — the other tenant
# Threading: none (bash); one loom-serve per scenario at a time.

source "$(dirname "${BASH_SOURCE[0]}")/_store_lib.sh"

SERVE_BIN=${LOOM_SERVE_BIN:-$(dirname "$LOOM_BIN")/loom-serve}
SERVE_PID=
SERVE_PORT=
SERVE_URL=
SERVE_CONF=${SERVE_CONF:-$T/conf}      # a scenario may bring its own folder
SERVE_WORKSPACE=${SERVE_WORKSPACE:-$T/ws/acme-p1}
SERVE_STORE="$T/serve.db"
SERVE_LOG="$T/serve.log"
SERVE_WEBHOOK_URL=${SERVE_WEBHOOK_URL:-}
SERVE_WEBHOOK_SECRET=whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw
SERVE_QUOTA_RUNS=${SERVE_QUOTA_RUNS:-64}
export TOKEN_A=tok-acme-admin-7f3a TOKEN_A2=tok-acme-approver-91bd TOKEN_AP1=tok-acme-p1-member-c2 \
       TOKEN_AV=tok-acme-viewer-44 TOKEN_B=tok-globex-admin-e5

serve_cleanup() {
  if [ -n "$SERVE_PID" ]; then
    kill "$SERVE_PID" 2>/dev/null || true
    wait "$SERVE_PID" 2>/dev/null || true
    SERVE_PID=
  fi
  test_store_stop
  [ -n "${RECEIVER_PID:-}" ] && { kill "$RECEIVER_PID" 2>/dev/null; wait "$RECEIVER_PID" 2>/dev/null || true; }
  cleanup
}
trap serve_cleanup EXIT

# serve_config — (re)writes $SERVE_CONF for the current $MOCK_URL. A second
# call after start_mock points the profiles at the new mock.
serve_config() {
  mkdir -p "$SERVE_CONF/docs" "$T/ws/acme-p1" "$T/ws/acme-p2" "$T/ws/globex"
  for w in "$T/ws/acme-p1" "$T/ws/acme-p2" "$T/ws/globex"; do
    [ -d "$w/.git" ] || git -C "$w" init -q 2>/dev/null || true
    echo "hello" > "$w/README.md"
  done
  cat > "$SERVE_CONF/docs/deploy.md" <<'EOF'
# Deploying the service

The deploy script rolls the service out one host at a time.
Rollback: run the deploy script with the previous tag.
EOF

  mk() { # profile ID TOOLS
    cat <<EOF
  $1:
    provider: anthropic
    base_url: $MOCK_URL
    api_key_env: SERVE_MOCK_KEY
    tools:
      allow: [$2]
    policies: [policy_safe_default, policy_fast_expiry, policy_no_curl, policy_no_bash]
    runtime:
      max_depth: 0
      max_turns: 40
EOF
  }
  {
    echo "profiles:"
    mk coding_default "bash, file_read, file_edit, file_write, grep, glob"
    mk needs_teleport "bash, file_read, teleport"
  } > "$SERVE_CONF/profiles.yaml"
  cat > "$SERVE_CONF/policies.yaml" <<'EOF'
policies:
  policy_safe_default:
    permissions:
      mode: acceptEdits
      allow: ["echo", "sleep", "true"]
      deny: ["git push --force origin main", "git reset --hard"]
      ask: ["rm -rf"]
    approvals:
      timeout_seconds: 600
  policy_fast_expiry:
    permissions:
      mode: acceptEdits
      allow: ["echo", "sleep", "true"]
      ask: ["rm -rf"]
    approvals:
      timeout_seconds: 1
  policy_no_curl:
    permissions:
      mode: acceptEdits
      allow: ["echo", "sleep", "true"]
      deny: ["curl"]
  policy_no_bash:
    permissions:
      mode: acceptEdits
      deny: [Bash]
EOF
  cat > "$SERVE_CONF/knowledge_sources.yaml" <<'EOF'
knowledge_sources:
  repo_docs:
    type: filesystem
    scope: tenant
    tenant: acme
    path: docs
    trust_tier: high
    retrieval_policy:
      allow_search: true
      allow_quote: true
EOF
  {
    cat <<EOF
tenants:
  acme:
    projects:
      p1:
        workspace: $T/ws/acme-p1
      p2:
        workspace: $T/ws/acme-p2
    quotas:
      concurrent_runs: $SERVE_QUOTA_RUNS
EOF
    if [ -n "$SERVE_WEBHOOK_URL" ]; then
      cat <<EOF
    webhooks:
      - id: wh_e2e
        url: $SERVE_WEBHOOK_URL
        secret: $SERVE_WEBHOOK_SECRET
        events: [run.completed, approval.requested, artifact.created, policy.denied]
EOF
    fi
    cat <<EOF
  globex:
    projects:
      main:
        workspace: $T/ws/globex
    quotas:
      concurrent_runs: $SERVE_QUOTA_RUNS
tokens:
  - {token: $TOKEN_A, tenant: acme, role: admin, audit: true, actor_id: alice}
  - {token: $TOKEN_A2, tenant: acme, role: approver, actor_id: bob}
  - {token: $TOKEN_AP1, tenant: acme, role: member, project: p1, actor_id: carol}
  - {token: $TOKEN_AV, tenant: acme, role: viewer, actor_id: victor}
  - {token: $TOKEN_B, tenant: globex, role: admin, audit: true, actor_id: mallory}
EOF
  } > "$SERVE_CONF/tenants.yaml"
}

# start_serve [EXTRA ARGS…] — starts loom-serve on the same store and config
# (a restart after stop_serve/kill9_serve keeps both); sets SERVE_PORT and
# SERVE_URL (exported for the Node scripts).
start_serve() {
  [ -x "$SERVE_BIN" ] || { echo "loom-serve not found at $SERVE_BIN" >&2; exit 1; }
  export SERVE_MOCK_KEY=test-key
  rm -f "$T/serve.port"
  test_store_use "$SERVE_STORE"
  "$SERVE_BIN" --listen 127.0.0.1:0 --port-file "$T/serve.port" --store "$TEST_STORE_SPEC" \
    --config "$SERVE_CONF" --workspace "$SERVE_WORKSPACE" "$@" >> "$SERVE_LOG" 2>&1 &
  SERVE_PID=$!
  for _ in $(seq 1 500); do
    [ -s "$T/serve.port" ] && break
    kill -0 "$SERVE_PID" 2>/dev/null || break
    sleep 0.02
  done
  if ! [ -s "$T/serve.port" ]; then
    echo "loom-serve did not start (log follows):" >&2
    tail -n 40 "$SERVE_LOG" >&2
    exit 1
  fi
  SERVE_PORT=$(cat "$T/serve.port")
  export SERVE_URL="http://127.0.0.1:$SERVE_PORT"
}

stop_serve() {
  [ -n "$SERVE_PID" ] || return 0
  kill "$SERVE_PID" 2>/dev/null || true
  wait "$SERVE_PID" 2>/dev/null || true
  SERVE_PID=
}

kill9_serve() {
  [ -n "$SERVE_PID" ] || return 0
  kill -9 "$SERVE_PID" 2>/dev/null || true
  wait "$SERVE_PID" 2>/dev/null || true
  SERVE_PID=
}

# serve_up SCENARIO_JSON [EXTRA ARGS…] — mockllm + config + loom-serve.
serve_up() {
  local scen=$1; shift
  start_mock "$scen"
  use_provider anthropic
  serve_config
  start_serve "$@"
}

# serve_node SCRIPT [ARGS…] — runs tests/serve/SCRIPT with the server's
# environment; its ok/not ok lines are the scenario's assertions. A failing
# script counts as one failure here (its own lines say which).
serve_node() {
  local script=$1; shift
  local what="tests/serve/$script${*:+ $*}"
  export LOOM_SRC T MOCK_LOG SERVE_LOG SERVE_WEBHOOK_SECRET
  if node "$LOOM_SRC/tests/serve/$script" "$@"; then
    ok "$what: every assertion held"
  else
    not_ok "$what failed (server log: $(tail -n 15 "$SERVE_LOG" 2>/dev/null | tr '\n' '|'))"
  fi
}

# serve_finish — the server's own sanitizer reports and a clean stop
# (SIGTERM ends it with status 0) before finish.
serve_finish() {
  if [ -n "$SERVE_PID" ]; then
    kill "$SERVE_PID" 2>/dev/null || true
    local rc=0
    wait "$SERVE_PID" 2>/dev/null || rc=$?
    SERVE_PID=
    assert_eq "loom-serve stopped by SIGTERM exits 0" "$rc" "0"
  fi
  finish
}

# serve_scenario NAME — tests/scenarios/NAME.json with the workspace paths
# filled in (@WS_P1@, @WS_P2@, @WS_GLOBEX@: Write needs absolute paths);
# prints the path of the filled copy.
serve_scenario() {
  sed -e "s|@WS_P1@|$T/ws/acme-p1|g" -e "s|@WS_P2@|$T/ws/acme-p2|g" -e "s|@WS_GLOBEX@|$T/ws/globex|g" \
    "$SCENARIOS/$1.json" > "$T/$1.json"
  echo "$T/$1.json"
}

# Workers of one shared store (--cluster; pg_cluster.sh, pg_takeover.sh).
# start_node I [ARGS…] — worker I (--worker-id nodeI, leases of
# NODE_LEASE_MS, default 3000) on $TEST_STORE_SPEC; NODE_URL_I exported,
# its pid in NODE_PIDS[I], its log $T/nodeI.log. node_cleanup (for the
# EXIT trap) kills every worker still there, then as serve_cleanup.
NODE_PIDS=()
node_cleanup() {
  for p in "${NODE_PIDS[@]}"; do [ -n "$p" ] && kill -9 "$p" 2>/dev/null; done
  for p in "${NODE_PIDS[@]}"; do [ -n "$p" ] && { wait "$p" 2>/dev/null || true; }; done
  serve_cleanup
}
start_node() {
  local i=$1; shift
  rm -f "$T/node$i.port"
  "$SERVE_BIN" --listen 127.0.0.1:0 --port-file "$T/node$i.port" --store "$TEST_STORE_SPEC" \
    --config "$SERVE_CONF" --workspace "$SERVE_WORKSPACE" --cluster --worker-id "node$i" \
    --lease-ms "${NODE_LEASE_MS:-3000}" "$@" >> "$T/node$i.log" 2>&1 &
  NODE_PIDS[$i]=$!
  for _ in $(seq 1 500); do
    [ -s "$T/node$i.port" ] && break
    kill -0 "${NODE_PIDS[$i]}" 2>/dev/null || break
    sleep 0.02
  done
  [ -s "$T/node$i.port" ] || { echo "node $i did not start:" >&2; tail -n 30 "$T/node$i.log" >&2; exit 1; }
  export "NODE_URL_$i=http://127.0.0.1:$(cat "$T/node$i.port")"
}
