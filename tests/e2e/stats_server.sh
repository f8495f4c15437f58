#!/usr/bin/env bash
# stats_server.sh — `loom stats --server URL` over a loom serve store
# (docs/cli.md): two served runs, one on a priced model and one on a model
# without a price, each with a Bash call. --json by agent (the profile),
# model, project and day gives one run per profile, the tokens and tool
# calls GET /usage reports, and the run objects' own cost — null for the
# unpriced one, and the total's cost the priced run's alone, flagged as
# partial. A bad token, and a URL that is no loom serve, fail naming why.
source "$(dirname "$0")/_lib.sh"
source "$LOOM_SRC/tests/e2e/_serve_lib.sh"

cat > "$T/scenario.json" <<'JSON'
{"turns": [
  {"match": {"assistant_turns": 0}, "reply": {"tool_calls": [{"id": "b1", "name": "Bash", "input": {"command": "echo hi"}}],
   "usage": {"input_tokens": 1000, "output_tokens": 50}}},
  {"match": {"assistant_turns": 1}, "reply": {"text": "Done.", "usage": {"input_tokens": 1200, "output_tokens": 30}}}]}
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
    tools:
      allow: [bash]
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
  sid=$(api POST /sessions '{"project_id":"p1","app_id":"e2e","user_id":"u_stats"}' | jq -r .session_id)
  tid=$(api POST /tasks "{\"session_id\":\"$sid\",\"goal\":\"count it\",\"agent_profile\":\"$1\"}" | jq -r .task_id)
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

RP=$(run_profile priced)
assert_eq "the priced run completes" "$(wait_end "$RP")" completed
RU=$(run_profile unpriced)
assert_eq "the unpriced run completes" "$(wait_end "$RU")" completed
api GET "/usage?limit=100" > "$T/usage.json"
cost_p=$(api GET "/runs/$RP" | jq .cost_usd)
check "the priced run has a cost ($cost_p)" jq -e 'type == "number" and . > 0' <<<"$cost_p"

stats() { LOOM_SERVER_TOKEN="$TOKEN_A" "$LOOM_BIN" stats --server "$SERVE_URL" "$@"; }
rc=0; stats --json --by agent > "$T/by_agent.json" 2> "$T/err" || rc=$?
assert_eq "loom stats --server exits 0 ($(cat "$T/err"))" "$rc" 0
row() { jq -c --arg k "$1" '.rows[] | select(.key == $k)' "$T/by_agent.json"; }
from_usage() { jq -c --arg p "$1" '[.items[] | select(.agent_profile == $p)] |
  {runs: length, input: (map(.input_tokens) | add), output: (map(.output_tokens) | add),
   tool_calls: (map(.tool_calls) | add), tool_failures: (map(.tool_failures) | add)}' "$T/usage.json"; }
for p in priced unpriced; do
  assert_eq "by agent, $p: runs, tokens and tool calls are the store's" \
    "$(row "$p" | jq -c '{runs, input: .tokens.input, output: .tokens.output, tool_calls, tool_failures}')" \
    "$(from_usage "$p")"
done
assert_eq "by agent, priced: one Bash call" "$(row priced | jq .tool_calls)" 1
assert_eq "by agent, priced: its cost is the run object's" \
  "$(row priced | jq '.cost_usd * 1e9 | round')" "$(jq '. * 1e9 | round' <<<"$cost_p")"
assert_eq "by agent, unpriced: cost unknown (null), never 0" "$(row unpriced | jq -c .cost_usd)" null
assert_eq "the total: both runs, the priced run's cost, one run unpriced" \
  "$(jq -c '[.total.runs, (.total.cost_usd * 1e9 | round), .total.unpriced_calls]' "$T/by_agent.json")" \
  "[2,$(jq '. * 1e9 | round' <<<"$cost_p"),1]"
assert_eq "by model: the two models" \
  "$(stats --json --by model | jq -c '[.rows[].key]')" '["claude-opus-5-5","mock-unpriced-1"]'
assert_eq "by project: the runs' project" "$(stats --json --by project | jq -c '[.rows[] | [.key, .runs]]')" '[["p1",2]]'
today=$(jq -r '.items[0].created_at[0:10]' "$T/usage.json")
assert_eq "by day: today's two runs" "$(stats --json --by day | jq -c '[.rows[] | [.key, .runs]]')" "[[\"$today\",2]]"
assert_eq "--since tomorrow: none" \
  "$(stats --json --since "$(date -u -d "$today + 1 day" +%F)" | jq '.total.runs')" 0
assert_contains "the table names the profiles" "$(stats --by agent)" "unpriced"

rc=0; LOOM_SERVER_TOKEN=wrong "$LOOM_BIN" stats --server "$SERVE_URL" > /dev/null 2> "$T/err" || rc=$?
assert_eq "a bad token: exit 1" "$rc" 1
assert_contains "a bad token: the error names the answer" "$(cat "$T/err")" "HTTP 401"
rc=0; "$LOOM_BIN" stats --server "$MOCK_URL" > /dev/null 2> "$T/err" || rc=$?
assert_eq "not a loom serve: exit 1" "$rc" 1
assert_contains "not a loom serve: the error names the URL" "$(cat "$T/err")" "$MOCK_URL/usage"
rc=0; "$LOOM_BIN" stats --server ftp://x > /dev/null 2> "$T/err" || rc=$?
assert_eq "a URL that is not http: exit 2" "$rc" 2
serve_finish
