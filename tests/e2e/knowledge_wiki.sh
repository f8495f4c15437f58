#!/usr/bin/env bash
# An internal_wiki knowledge source (docs/knowledge.md): SearchKnowledge
# posts the active question to the wiki's JSON search endpoint (a loopback
# stand-in, wiki_server.py) and the results become the pack's citations
# with the wiki's uris; a wiki fact that differs from the docs' is a
# conflict naming both; a summary-only wiki's text never reaches the
# model; an endpoint that answers something other than JSON is named in
# the pack's not_searched with the reason, and the run goes on.
source "$(dirname "$0")/_lib.sh"

PROJ="$T/proj"
mkdir -p "$PROJ/docs" "$PROJ/.loom"
printf '%s\n' 'Support hours: 9 to 17 on weekdays' > "$PROJ/docs/support.md"
cat > "$T/answers.json" <<'JSON'
{"results": [
  {"uri": "https://wiki.internal.invalid/pages/support", "title": "Support",
   "text": "Support hours: 8 to 20 on weekdays", "updated": 1767225600},
  {"uri": "https://wiki.internal.invalid/pages/pager", "text": "Pager rota: weekly handover on Monday"}
]}
JSON
python3 "$LOOM_SRC/tests/e2e/wiki_server.py" "$T/answers.json" "$T/wiki.log" "$T/wiki.port" &
WIKI_PID=$!
trap 'kill $WIKI_PID 2>/dev/null; wait $WIKI_PID 2>/dev/null || true; cleanup' EXIT
for _ in $(seq 1 250); do [ -s "$T/wiki.port" ] && break; sleep 0.02; done
WIKI="http://127.0.0.1:$(cat "$T/wiki.port")"
write_sources() { # $1: allow_quote of the wiki
  cat > "$PROJ/.loom/knowledge_sources.yaml" <<YAML
knowledge_sources:
  docs:
    type: filesystem
    path: docs
    trust_tier: high
  wiki:
    type: internal_wiki
    endpoint: $WIKI/search
    trust_tier: medium
    retrieval_policy: {allow_search: true, allow_quote: $1}
  wiki_down:
    type: internal_wiki
    endpoint: $WIKI/broken
YAML
}
write_sources true
echo "{\"trustedWorkspaces\": [\"$PROJ\"]}" > "$LOOM_HOME/settings.json"
cat > "$T/scenario.json" <<'JSON'
{"sequence": true,
 "turns": [
  {"reply": {"tool_calls": [{"id": "k1", "name": "KnowledgeQuestion", "input": {"question": "What are the support hours?"}}]}},
  {"reply": {"tool_calls": [{"id": "k2", "name": "SearchKnowledge", "input": {"question_id": "q_01"}}]}},
  {"reply": {"text": "Done."}}
]}
JSON
start_mock "$T/scenario.json"
use_provider anthropic
run() {
  json=$("$LOOM_BIN" -p "support hours?" --cwd "$PROJ" --output-format json) || true
  file=$(session_file "$(jq -r .session_id <<<"$json")")
  pack=$(jq -r 'select(.type=="function_call_result" and .callId=="k2") | .output' "$file")
}
run
assert_contains "the wiki got the question" "$(head -n1 "$T/wiki.log")" '"query":"What are the support hours?"'
assert_contains "a wiki result is cited by its uri" "$pack" "wiki https://wiki.internal.invalid/pages/support (trust medium)"
conflict=$(grep '^- support hours:' <<<"$pack" || true)
assert_contains "the docs disagree with the wiki: a conflict naming the docs" "$conflict" \
  '"9 to 17 on weekdays" in docs'
assert_contains "and the wiki" "$conflict" '"8 to 20 on weekdays" in wiki'
assert_contains "an endpoint that is not JSON is named, with why" "$pack" "wiki_down (wiki_down: the answer is not"
assert_eq "the run goes on" "$(jq -r .result <<<"$json")" "Done."

# Summary-only: the wiki's text is in no request, result or artifact.
write_sources false
start_mock "$T/scenario.json"
run
assert_contains "the summary-only wiki is summarized" "$pack" "1 matching passage at https://wiki.internal.invalid/pages/support (summary only"
leaks=$(grep -rl "8 to 20" "$MOCK_LOG" "$file" "${file%.jsonl}.mf" 2>/dev/null || true)
assert_eq "the summary-only wiki's text is nowhere" "$leaks" ""
finish
