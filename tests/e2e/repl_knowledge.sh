#!/usr/bin/env bash
# /knowledge in the REPL (docs/knowledge.md): before any search it lists
# the configured source and no question; after a run whose model records a
# question and searches, it shows the question answered, the evidence pack
# with its key fact, and the citation with its file and lines; after
# /compact the next request's working memory still holds the pack and its
# citation under the same ids.
source "$(dirname "$0")/repl_lib.sh"

mkdir -p "$T/proj/docs" "$T/proj/.loom"
printf '%s\n' 'Release train: every Tuesday at 10:00' > "$T/proj/docs/release.md"
cat > "$T/proj/.loom/knowledge_sources.yaml" <<'YAML'
knowledge_sources:
  team_docs:
    type: filesystem
    path: docs
    trust_tier: high
YAML
echo "{\"trustedWorkspaces\": [\"$T/proj\"]}" > "$LOOM_HOME/settings.json"
cat > "$T/scenario.json" <<'JSON'
{"sequence": true,
 "turns": [
  {"match": {"no_tools": true}, "reply": {"text": "<summary>1. Primary Request and Intent: the release train.</summary>"}},
  {"match": {"last_user_contains": "after the compaction"}, "reply": {"text": "Still here."}},
  {"reply": {"tool_calls": [{"id": "k1", "name": "KnowledgeQuestion", "input": {"question": "When does the release train leave?"}}]}},
  {"reply": {"tool_calls": [{"id": "k2", "name": "SearchKnowledge", "input": {"question_id": "q_01"}}]}},
  {"reply": {"text": "$match:release train: every Tuesday at 10:00 \\[cit_[0-9a-f]+\\]"}}
]}
JSON
start_mock "$T/scenario.json"
use_provider anthropic
repl_start "$T/proj"
wait_prompt

type_line "/knowledge"
wait_screen "/knowledge lists the source" "team_docs  filesystem, trust high, scope global"
check "and no question yet" screen_has "Questions (0)"

type_line "when does the release train leave?"
wait_screen "the cited answer" "release train: every Tuesday at 10:00 [cit_" 15
wait_prompt
type_line "/knowledge"
wait_screen "the question is answered" "q_01 (answered): When does the release train leave?"
check "the pack is listed" screen_has "Evidence packs (1)"
check "with its key fact" screen_has "fact: release train: every Tuesday at 10:00 [cit_"
check "the citation names the file and line" screen_has "team_docs docs/release.md#L1-L1 (trust high)"
pid=$(screen | grep -oE 'evp_[0-9a-f-]+' | tail -n1)
cid=$(screen | grep -oE '\[cit_[0-9a-f]+\] team_docs' | tail -n1 | grep -oE 'cit_[0-9a-f]+')
type_line "/compact"
wait_screen "/compact" "Compacted: ~" 15
wait_prompt
type_line "after the compaction, still there?"
wait_screen "the answer after compaction" "Still here." 15
wait_prompt
last=$(tail -n1 "$MOCK_LOG" | jq -r .raw_body)
assert_contains "after /compact the working memory holds the pack, same id" "$last" "pack $pid for q_01"
assert_contains "and its citation id" "$last" "[$cid]"
type_line "/exit"
wait_exit
finish
