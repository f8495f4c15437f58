#!/usr/bin/env bash
# External knowledge (issue 23, docs/knowledge.md), as a user meets it: a
# run with filesystem sources records a question, searches, gets an
# evidence pack whose citations point at the right files and lines, and
# answers citing them; two sources that disagree give a conflict naming
# both; a summary-only source (allow_quote: false) is in no request, result
# or artifact; without an active question nothing is retrieved; the pack
# keeps its id across a renew; an answer without a required citation is a
# warning.emitted and an audit line.
source "$(dirname "$0")/_lib.sh"

PROJ="$T/proj"
mkdir -p "$PROJ/docs" "$PROJ/wiki" "$PROJ/secret" "$PROJ/.loom"
printf '%s\n' '# Deploying' '' 'The deploy script lives in scripts/deploy.sh.' '' \
  'Rollback command: scripts/rollback.sh --to previous' 'Rate limit: 100 requests per minute' \
  > "$PROJ/docs/deploy.md"
printf '%s\n' '# Unrelated' '' 'Lunch is at noon.' > "$PROJ/docs/lunch.md"
printf '%s\n' '# Old wiki page' '' '' 'Rate limit: 50 requests per minute' > "$PROJ/wiki/limits.md"
SECRET='zebra-mauve escalation ladder'
printf '%s\n' "Rollback window: the $SECRET applies for ninety minutes" > "$PROJ/secret/handbook.md"
cat > "$PROJ/.loom/knowledge_sources.yaml" <<'YAML'
knowledge_sources:
  repo_docs:
    type: filesystem
    path: docs
    globs: ["*.md"]
    trust_tier: high
    scope: project
  old_wiki:
    type: filesystem
    path: wiki
    trust_tier: low
    freshness: {max_age: 30d}
  handbook:
    type: filesystem
    path: secret
    trust_tier: medium
    retrieval_policy: {allow_search: true, allow_quote: false}
  team_web:
    type: web
    url_prefixes: ["https://docs.example.invalid/"]
citation_policy:
  require_citation_for: [high]
YAML
# The workspace's own .loom files count only in a trusted workspace.
mkdir -p "$LOOM_HOME"
echo "{\"trustedWorkspaces\": [\"$PROJ\"]}" > "$LOOM_HOME/settings.json"

cat > "$T/scenario.json" <<'JSON'
{"sequence": true,
 "turns": [
  {"reply": {"tool_calls": [{"id": "k0", "name": "SearchKnowledge", "input": {"question_id": "q_01"}}]}},
  {"reply": {"tool_calls": [{"id": "k1", "name": "KnowledgeQuestion", "input": {"question": "How do we rollback a deploy, and what is the rate limit?"}}]}},
  {"reply": {"tool_calls": [{"id": "k2", "name": "SearchKnowledge", "input": {"question_id": "q_01"}}]}},
  {"reply": {"tool_calls": [{"id": "r1", "name": "Renew", "input": {"reason": "keep only the evidence", "progress": "searched"}}]}},
  {"reply": {"text": "$match:rollback command: [^\\\\]*\\[cit_[0-9a-f]+\\]"}}
]}
JSON
start_mock "$T/scenario.json"
use_provider anthropic
out=$("$LOOM_BIN" -p "how do we roll back?" --cwd "$PROJ" --output-format stream-json --verbose) || true
echo "$out" > "$T/run1.jsonl"
sid=$(jq -r 'select(.type=="result") | .session_id' <<<"$out" | head -n1)
file=$(session_file "$sid")
result() { jq -r --arg id "$1" 'select(.type=="function_call_result" and .callId==$id) | .output' "$file"; }

init_tools=$(jq -c 'select(.type=="system" and .subtype=="init") | .tools' <<<"$out")
assert_contains "the run offers KnowledgeQuestion" "$init_tools" '"KnowledgeQuestion"'
assert_contains "and SearchKnowledge" "$init_tools" '"SearchKnowledge"'

# Without an active question nothing is retrieved.
assert_contains "a search before any question is refused" "$(result k0)" "no active question q_01"
body1=$(jq -r 'select(.path=="/v1/messages") | .raw_body' "$MOCK_LOG" | sed -n 2p)
case "$body1" in
  *"rollback.sh"*|*"requests per minute"*|*"Evidence pack"*) not_ok "the refused search retrieved nothing: a passage reached the request" ;;
  *) ok "the refused search retrieved nothing (the next request holds no passage)" ;;
esac
first=$(jq -r 'select(.path=="/v1/messages") | .raw_body' "$MOCK_LOG" | sed -n 1p)
case "$first" in
  *"rollback.sh"*|*"requests per minute"*) not_ok "no retrieval before the model asks" ;;
  *) ok "no retrieval before the model asks (the first request holds no passage)" ;;
esac

assert_contains "the question is recorded with an id" "$(result k1)" "Recorded active question q_01"
pack=$(result k2)
assert_contains "the search returns an evidence pack" "$pack" "Evidence pack evp_"
assert_contains "a citation points at the right file and lines" "$pack" "docs/deploy.md#L5-L6"
assert_contains "the key fact is in the pack" "$pack" "rollback command: scripts/rollback.sh --to previous [cit_"
case "$pack" in *lunch.md*) not_ok "an unrelated file is not cited" ;; *) ok "an unrelated file is not cited" ;; esac
assert_contains "two sources that disagree make a conflict" "$pack" 'rate limit: "100 requests per minute" in repo_docs'
assert_contains "the conflict names the other source" "$pack" '"50 requests per minute" in old_wiki'
assert_contains "the summary-only source is summarized" "$pack" "matching passage in secret/handbook.md lines 1-1"
assert_contains "a source of another type is named as not searched" "$pack" "team_web (type web"
pid=$(grep -o 'evp_[0-9a-f-]*' <<<"$pack" | head -n1)
cid=$(grep -o 'docs/deploy.md#L5-L6' -m1 <<<"$pack" >/dev/null; grep -o '\[cit_[0-9a-f]*\] repo_docs docs/deploy.md#L5-L6' <<<"$pack" | grep -o 'cit_[0-9a-f]*')
check "the deploy citation has an id" test -n "$cid"

# The answer cites the pack, so no warning; the pack survived the renew.
final=$(jq -r 'select(.type=="result") | .result' <<<"$out")
assert_contains "the answer cites the evidence" "$final" "[$cid]"
last=$(jq -r 'select(.path=="/v1/messages") | .raw_body' "$MOCK_LOG" | tail -n1)
assert_contains "after renew the working memory still holds the pack, same id" "$last" "pack $pid for q_01"
assert_contains "and its citation ids" "$last" "[$cid]"
case "$(jq -c 'select(.type=="system" and .subtype=="warning")' "$T/run1.jsonl")$(grep -c citation_missing "$T/run1.jsonl" || true)" in
  *citation_missing*) not_ok "a cited answer raises no citation warning" ;;
  *) ok "a cited answer raises no citation warning" ;;
esac

# The pack is an evidence_pack artifact, with the citations and lines.
art=$(find "$LOOM_HOME" -path '*evidence*' -name "$pid.json" | head -n1)
check "the pack is kept as an artifact file" test -s "$art"
assert_eq "the artifact's citation points at deploy.md lines 5-6" \
  "$(jq -r --arg c "$cid" '.citations[] | select(.citation_id==$c) | .uri' "$art")" "docs/deploy.md#L5-L6"
assert_eq "the artifact holds one conflict" "$(jq '.conflicts | length' "$art")" "1"

# The summary-only source's text is nowhere: requests, results, artifacts.
leaks=$(grep -rl "zebra-mauve" "$MOCK_LOG" "$file" "$T/run1.jsonl" "$LOOM_HOME" 2>/dev/null | grep -v '/knowledge/index.db' || true)
assert_eq "the allow_quote:false text is in no request, result or artifact" "$leaks" ""

# A required citation missing from the answer: warning.emitted + audit line.
cat > "$T/scenario2.json" <<'JSON'
{"sequence": true,
 "turns": [
  {"reply": {"tool_calls": [{"id": "k1", "name": "KnowledgeQuestion", "input": {"question": "What is the rollback command?"}}]}},
  {"reply": {"tool_calls": [{"id": "k2", "name": "SearchKnowledge", "input": {"question_id": "q_01", "sources": ["repo_docs"]}}]}},
  {"reply": {"text": "Run the rollback script."}}
]}
JSON
start_mock "$T/scenario2.json"
out2=$("$LOOM_BIN" -p "rollback?" --cwd "$PROJ" --output-format stream-json --verbose 2>"$T/err2") || true
sid2=$(jq -r 'select(.type=="result") | .session_id' <<<"$out2" | head -n1)
assert_contains "an uncited answer is a warning naming the citation it lacks" "$(cat "$T/err2")" "whose sources the citation policy requires citing"
audit=$(find "$LOOM_HOME/audit" -name "$sid2*.jsonl" 2>/dev/null | head -n1)
audit_line() { jq -e -s 'map(select(.tool=="citation_check" and .source=="knowledge")) | length == 1' "$audit" >/dev/null; }
check "the audit log has the citation check's line" audit_line

# Denied sources: unknown, search not allowed.
sed -i 's/allow_search: true, allow_quote: false/allow_search: false, allow_quote: false/' "$PROJ/.loom/knowledge_sources.yaml"
cat > "$T/scenario3.json" <<'JSON'
{"sequence": true,
 "turns": [
  {"reply": {"tool_calls": [{"id": "k1", "name": "KnowledgeQuestion", "input": {"question": "rollback window?"}}]}},
  {"reply": {"tool_calls": [{"id": "k2", "name": "SearchKnowledge", "input": {"question_id": "q_01", "sources": ["handbook"]}}]}},
  {"reply": {"tool_calls": [{"id": "k3", "name": "SearchKnowledge", "input": {"question_id": "q_01", "sources": ["nope"]}}]}},
  {"reply": {"text": "done"}}
]}
JSON
start_mock "$T/scenario3.json"
out3=$("$LOOM_BIN" -p "window?" --cwd "$PROJ" --output-format json) || true
file3=$(session_file "$(jq -r .session_id <<<"$out3")")
file=$file3
assert_contains "a source that forbids search is knowledge_source_denied" "$(result k2)" "knowledge_source_denied"
assert_contains "an unknown source is knowledge_source_denied" "$(result k3)" "no knowledge source nope"
finish
