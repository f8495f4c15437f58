#!/usr/bin/env bash
# serve_run_cost.sh — a served run's object carries its cost (docs/server.md):
# cost_usd equals the price table's row × mockllm's usage (read here from
# provider/models.c) for a priced model, and for a model without a price
# cost_usd is null with cost_known false — never 0 or -1. The answers are
# ones the OpenAPI document allows (tests/validate/openapi_check.mjs).
source "$(dirname "$0")/_lib.sh"
source "$LOOM_SRC/tests/e2e/_serve_lib.sh"

IN=3000 OUT=200 CR=5000 CW=1000
cat > "$T/scenario.json" <<JSON
{"turns": [{"reply": {"text": "Costed.", "usage": {"input_tokens": $IN, "output_tokens": $OUT,
  "cache_read_input_tokens": $CR, "cache_creation_input_tokens": $CW}}}]}
JSON
start_mock "$T/scenario.json"
use_provider anthropic
serve_config
for p in "priced claude-opus-5-5" "unpriced mock-unpriced-1"; do
  set -- $p
  cat >> "$SERVE_CONF/profiles.yaml" <<YAML
  $1:
    provider: anthropic
    model: $2
    base_url: $MOCK_URL
    api_key_env: SERVE_MOCK_KEY
    policies: [policy_safe_default]
YAML
done
start_serve

api() { # METHOD PATH [BODY]
  curl -s -X "$1" -H "Authorization: Bearer $TOKEN_A" -H 'Content-Type: application/json' \
    ${3:+-d "$3"} "$SERVE_URL$2"
}
run_profile() { # PROFILE → run id
  local sid tid
  sid=$(api POST /sessions '{"project_id":"p1","app_id":"e2e","user_id":"u_cost"}' | jq -r .session_id)
  tid=$(api POST /tasks "{\"session_id\":\"$sid\",\"goal\":\"cost it\",\"agent_profile\":\"$1\"}" | jq -r .task_id)
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
api GET /openapi.json > "$T/openapi.json"
allowed() { # PATH BODY_FILE — the 200 answer is one the document allows
  node "$LOOM_SRC/tests/validate/openapi_check.mjs" response "$T/openapi.json" GET "$1" 200 "$2" \
    application/json 2> "$T/check.err" || { cat "$T/check.err" >&2; return 1; }
}

want=$(python3 - "$LOOM_SRC/src/provider/models.c" claude-opus-5-5 <<PY
import re, sys
m = re.search(r'\{"%s", PRICE\(([^)]*)\), "[0-9-]{10}"\}' % re.escape(sys.argv[2]), open(sys.argv[1]).read())
i, o, cw, cr = [float(x) for x in m.group(1).split(",")]
print(round(($IN * i + $OUT * o + $CW * cw + $CR * cr) / 1e6 * 1e9))
PY
)
R=$(run_profile priced)
assert_eq "the priced run completes" "$(wait_end "$R")" completed
api GET "/runs/$R" > "$T/priced.json"
assert_eq "priced: cost_usd is the table's row × usage" "$(jq '.cost_usd * 1e9 | round' "$T/priced.json")" "$want"
assert_eq "priced: cost_known" "$(jq .cost_known "$T/priced.json")" true
check "priced: the run object is one the OpenAPI document allows" allowed "/runs/$R" "$T/priced.json"
api GET "/runs/$R/events?limit=1000" > "$T/priced_events.json"
assert_eq "priced: the same as the run's last model event" \
  "$(jq '[.items[] | select(.type == "model.completed") | .payload.cost_usd][-1] * 1e9 | round' "$T/priced_events.json")" "$want"

R2=$(run_profile unpriced)
assert_eq "the unpriced run completes" "$(wait_end "$R2")" completed
api GET "/runs/$R2" > "$T/unpriced.json"
assert_eq "unpriced: cost_usd is null" "$(jq -c .cost_usd "$T/unpriced.json")" null
assert_eq "unpriced: cost_known is false" "$(jq .cost_known "$T/unpriced.json")" false
check "unpriced: the run object is one the OpenAPI document allows" allowed "/runs/$R2" "$T/unpriced.json"
assert_eq "the run list says the same" \
  "$(api GET "/runs?limit=100" | jq -c --arg a "$R" --arg b "$R2" '[.items[] | select(.run_id == $a or .run_id == $b) | .cost_known] | sort')" \
  '[false,true]'

# After a restart the stored run objects keep what they said.
stop_serve
start_serve
assert_eq "after a restart: the unpriced run's cost is still unknown" \
  "$(api GET "/runs/$R2" | jq -c '[.cost_usd, .cost_known]')" '[null,false]'
assert_eq "after a restart: the priced run's cost is kept" \
  "$(api GET "/runs/$R" | jq '.cost_usd * 1e9 | round')" "$want"
serve_finish
