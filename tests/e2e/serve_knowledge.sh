#!/usr/bin/env bash
# serve_knowledge.sh — external knowledge through loom serve (issue 23,
# docs/knowledge.md): a run whose model records a question and searches a
# filesystem source leaves its evidence pack as an evidence_pack artifact,
# and GET /runs/{id}/citations returns the pack's citations with the right
# file and lines; a tenant cannot search another tenant's source
# (knowledge_source_scope_denied).
source "$(dirname "$0")/_lib.sh"
source "$LOOM_SRC/tests/e2e/_serve_lib.sh"

# The runs' own registry: the server's user-level knowledge_sources.yaml.
mkdir -p "$T/kdocs"
printf '%s\n' '# Runbook' '' 'Nothing here.' '' '' 'Failover region: eu-west-2 takes traffic' \
  > "$T/kdocs/runbook.md"
cat > "$LOOM_HOME/knowledge_sources.yaml" <<YAML
knowledge_sources:
  runbooks:
    type: filesystem
    path: $T/kdocs
    trust_tier: high
YAML
cat > "$T/scenario.json" <<'JSON'
{"sequence": true,
 "turns": [
  {"reply": {"tool_calls": [{"id": "k1", "name": "KnowledgeQuestion", "input": {"question": "Which failover region takes traffic?"}}]}},
  {"reply": {"tool_calls": [{"id": "k2", "name": "SearchKnowledge", "input": {"question_id": "q_01"}}]}},
  {"reply": {"text": "$match:failover region: eu-west-2 takes traffic \\[cit_[0-9a-f]+\\]"}}
]}
JSON
serve_up "$T/scenario.json"

api() { # METHOD PATH TOKEN [BODY] — prints the body, then the status on its own line
  curl -s -w '\n%{http_code}' -X "$1" "$SERVE_URL$2" -H "Authorization: Bearer $3" \
    -H 'content-type: application/json' ${4:+--data "$4"}
}
body() { sed '$d' <<<"$1"; }
status() { tail -n1 <<<"$1"; }

s=$(api POST /sessions "$TOKEN_A" '{"project_id":"p1"}')
sid=$(body "$s" | jq -r .session_id)
t=$(api POST /tasks "$TOKEN_A" "{\"session_id\":\"$sid\",\"goal\":\"which failover region?\",\"agent_profile\":\"coding_default\"}")
tid=$(body "$t" | jq -r .task_id)
r=$(api POST /runs "$TOKEN_A" "{\"task_id\":\"$tid\"}")
rid=$(body "$r" | jq -r .run_id)
check "a run starts" test "${rid#run_}" != "$rid"
state=
for _ in $(seq 1 500); do
  state=$(body "$(api GET "/runs/$rid" "$TOKEN_A")" | jq -r .state)
  case "$state" in completed|failed|cancelled|blocked_*) break ;; esac
  sleep 0.05
done
assert_eq "the run completes" "$state" "completed"

c=$(api GET "/runs/$rid/citations" "$TOKEN_A")
assert_eq "GET /runs/{id}/citations answers 200" "$(status "$c")" "200"
uri=$(body "$c" | jq -r '.items[0].uri')
assert_contains "the citation points at the runbook's line 6" "$uri" "runbook.md#L6-L6"
assert_eq "the citation names its source" "$(body "$c" | jq -r '.items[0].source')" "runbooks"
assert_eq "and the line, as the Citation schema has it" "$(body "$c" | jq -r '.items[0].line')" "6"
cid=$(body "$c" | jq -r '.items[0].citation_id')
tr=$(body "$(api GET "/runs/$rid/transcript" "$TOKEN_A")")
arts=$(body "$(api GET "/runs/$rid/artifacts" "$TOKEN_A")")
has_pack() { jq -e '[.items[] | select(.kind=="evidence_pack")] | length >= 1' <<<"$arts" >/dev/null; }
check "the pack is an evidence_pack artifact of the run" has_pack
assert_contains "the run's answer cites the citation" "$tr" "eu-west-2 takes traffic [$cid]"

# Tenant isolation: globex cannot search acme's source.
x=$(api POST /knowledge/search "$TOKEN_B" '{"query":"deploy rollback","knowledge_sources":["repo_docs"]}')
assert_eq "another tenant's source is 403" "$(status "$x")" "403"
assert_eq "with knowledge_source_scope_denied" "$(body "$x" | jq -r '.error.code // .code')" "knowledge_source_scope_denied"
serve_finish
