#!/usr/bin/env bash
# serve_heartbeat.sh — a server profile's `heartbeat` block (the settings'
# block, docs/heartbeat.md): a served run of that profile runs a heartbeat,
# whose filesystem watch sees a file the run's Bash call writes, and the
# run's events hold the heartbeat.event; a profile without the block has no
# heartbeat; a bad block stops loom-serve at load, naming the file, the
# profile and the key.
source "$(dirname "$0")/_lib.sh"
source "$LOOM_SRC/tests/e2e/_serve_lib.sh"

start_mock "$LOOM_SRC/tests/scenarios/serve_heartbeat.json"
use_provider anthropic
serve_config
cat >> "$SERVE_CONF/profiles.yaml" <<YAML
  with_heartbeat:
    provider: anthropic
    base_url: $MOCK_URL
    api_key_env: SERVE_MOCK_KEY
    policies: [policy_safe_default]
    heartbeat:
      T_hb: 0.2
      T_hb_act: 0.2
      watch_sources:
        - {type: filesystem, paths: ["."], method: hash, urgency: high}
      interrupt_policy: {high: queue}
YAML
start_serve

api() { # METHOD PATH [BODY]
  curl -s -X "$1" -H "Authorization: Bearer $TOKEN_A" -H 'Content-Type: application/json' \
    ${3:+-d "$3"} "$SERVE_URL$2"
}
run_profile() { # PROFILE GOAL → run id
  local sid tid
  sid=$(api POST /sessions '{"project_id":"p1","app_id":"e2e","user_id":"u_hb"}' | jq -r .session_id)
  tid=$(api POST /tasks "{\"session_id\":\"$sid\",\"goal\":\"$2\",\"agent_profile\":\"$1\"}" | jq -r .task_id)
  api POST /runs "{\"task_id\":\"$tid\"}" | jq -r .run_id
}
wait_end() { # RUN → its final state
  local st=
  for _ in $(seq 1 300); do
    st=$(api GET "/runs/$1" | jq -r .state)
    case $st in completed|failed|cancelled) break ;; esac
    sleep 0.1
  done
  echo "$st"
}

assert_eq "GET /profiles/with_heartbeat serves the block" \
  "$(api GET /profiles/with_heartbeat | jq -c '.heartbeat.watch_sources[0].type')" '"filesystem"'
assert_eq "a profile without the block: heartbeat null" \
  "$(api GET /profiles/coding_default | jq -c .heartbeat)" null

R=$(run_profile with_heartbeat "Change a file and wait")
assert_eq "the run with a heartbeat completes" "$(wait_end "$R")" completed
api GET "/runs/$R/events?limit=1000" > "$T/hb_events.json"
check "the file was written in the workspace" test -s "$T/ws/acme-p1/watched.txt"
assert_eq "its events hold a heartbeat.event from the filesystem watch naming watched.txt" \
  "$(jq '[.items[] | select(.type == "heartbeat.event") | select(.payload.source == "filesystem")
         | select(tostring | test("watched.txt"))] | length > 0' "$T/hb_events.json")" true
assert_eq "the working memory it sent lists a pending or seen event" \
  "$(jq '[.items[] | select(.type == "working.updated") | select((.payload.events | length) > 0)] | length > 0' "$T/hb_events.json")" true

# A bad block: loom-serve refuses to start, saying where.
stop_serve
sed -i 's/T_hb: 0.2$/T_hb: fast/' "$SERVE_CONF/profiles.yaml"
rc=0
out=$(timeout 20 "$SERVE_BIN" --listen 127.0.0.1:0 --store "sqlite:$T/other.db" --config "$SERVE_CONF" \
  --workspace "$SERVE_WORKSPACE" 2>&1) || rc=$?
check "loom-serve with a bad heartbeat block exits non-zero" test "$rc" -ne 0
check "  and names the file, the profile and the key" \
  bash -c "grep -q 'profiles.yaml' <<<\"\$1\" && grep -q 'with_heartbeat' <<<\"\$1\" && grep -q 'T_hb' <<<\"\$1\"" _ "$out"
echo "$out" | head -3
finish
