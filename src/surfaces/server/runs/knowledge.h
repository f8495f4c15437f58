/* knowledge.h — knowledge search over the registry's sources (seed 000
 * §10.5 KnowledgeSource, EvidencePack): the filesystem sources are searched
 * here (text files under the source's folder, every query term, scored by
 * term hits, a snippet of the best line); other types (mcp, web,
 * internal_wiki) return no citations and are named in the pack's summary.
 * A source whose retrieval_policy says allow_search false is
 * knowledge_source_denied; allow_quote false keeps the citation but
 * leaves its snippet empty. Reads files only, never follows a link out of
 * the source's folder, reads at most 1 MB of a file. Any thread. */
#ifndef LOOM_SERVER_KNOWLEDGE_H
#define LOOM_SERVER_KNOWLEDGE_H

#include <stddef.h>

#include "surfaces/server/config/objects.h"

/* An EvidencePack object as JSON text (malloc'd):
 * {evidence_pack_id, run_id, question, summary, citations: [{citation_id,
 * source, uri ("file://…" path relative to the source as "kb://<source>/<rel>"),
 * title, snippet, line, trust_tier, quotable}], confidence, freshness}.
 * run_id may be NULL. NULL with err set. */
char *knowledge_search(const knowledge_source *const *sources, size_t n, const char *query,
                       int limit, const char *run_id, srv_error *err);

#endif
