/* evidence.h — the evidence builder (seed 000 §5.6, L876–942): retrieved
 * passages in, one evidence pack out. A pack, never a raw document, is
 * what enters C_working's knowledge surface and the model's context:
 *
 *   {evidence_pack_id, question_id, question, summary, key_facts[],
 *    conflicts[], citations[ids], confidence, freshness, sources[],
 *    not_searched[]}
 * and its citations, each
 *   {citation_id, source, uri ("docs/a.md#L3-L7"), retrieved_at,
 *    trust_tier, quotable, stale}
 *
 * Key facts: lines of a passage that hold a query word and read
 * "key: value" (a list marker and markdown emphasis around the key are
 * dropped) or "X is Y". Conflicts: two facts whose keys are the same
 * (lowercased, blanks folded) and whose values differ, from different
 * files — each such pair is one conflict entry naming both sources and
 * citations; nothing is smoothed away.
 *
 * Restricted evidence (a source not quotable, registry.h): its passages
 * reach the pack only as "N matching passages in FILE lines a–b" plus the
 * query's own words it contains; no run of its text is copied, and a
 * conflict with it says only that it differs.
 *
 * Freshness: a passage of a file older than its source's max_age is stale:
 * its weight in the ranking and in the confidence is halved.
 *
 * No state; any thread. */
#ifndef LOOM_EXT_KNOWLEDGE_EVIDENCE_H
#define LOOM_EXT_KNOWLEDGE_EVIDENCE_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ext/knowledge/fs_index.h"
#include "ext/knowledge/registry.h"

/* How many passages a pack keeps after the reranker. */
#define EVIDENCE_PASSAGES_MAX 6

/* One retrieved passage with the source it came from (borrowed). */
typedef struct evidence_hit {
    fs_hit hit;
    const knowledge_src *src;
    bool quotable;
    bool stale;
} evidence_hit;

typedef struct evidence_input {
    const char *question_id, *question;
    const char *cwd;           /* uris are relative to it when inside */
    evidence_hit *hits;        /* reranked here (order changes) */
    size_t n_hits;
    const char *const *searched;     /* source ids searched */
    const char *const *not_searched; /* "id (why)" for sources skipped */
    int64_t now_ms;
} evidence_input;

/* The lexical reranker: coverage of the query's words, BM25, the trust
 * tier and freshness; sorts in->hits best first and sets their score. */
void evidence_rerank(evidence_input *in);

/* Builds the pack (new reference) and appends its citation objects to
 * citations (an array). */
json_t *evidence_build(evidence_input *in, json_t *citations);

/* The pack as the model reads it (tool result and /knowledge), with the
 * passages of quotable sources: a new string. cites: the citation objects
 * (to print uris); may hold others. */
char *evidence_render(const json_t *pack, const json_t *cites, const evidence_hit *hits, size_t n);

#endif
