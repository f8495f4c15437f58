/* wiki_source.h — an internal_wiki knowledge source: an HTTP JSON search
 * endpoint (docs/knowledge.md, "internal_wiki").
 *
 * Request: POST <endpoint> with {"query": QUESTION, "limit": N}
 * (Content-Type: application/json). Answer: 200 with
 *   {"results": [{"uri": "…", "text": "…", "title"?: "…",
 *                 "updated"?: UNIX_SECONDS}]}
 * best first; at most N are read, a text is cut at 4 KB. Anything else is
 * an error naming the source and what was wrong (status, not JSON, a
 * result without uri or text), never a crash; the body is capped at 1 MB
 * and the whole exchange at 15 s.
 *
 * No state; any thread (one request per call). */
#ifndef LOOM_EXT_KNOWLEDGE_WIKI_SOURCE_H
#define LOOM_EXT_KNOWLEDGE_WIKI_SOURCE_H

#include <stddef.h>

#include "base/cancel.h"
#include "base/error.h"
#include "ext/knowledge/fs_index.h"
#include "ext/knowledge/registry.h"

/* The endpoint's results as hits (path: the result's uri, lines 0: none;
 * bm25 from the rank). *out: free with fs_hits_free. 0, or -1 with err. */
int wiki_search(const knowledge_src *src, const char *question, size_t limit,
                const loom_cancel *cancel, fs_hit **out, size_t *n, loom_error *err);

/* The answer's parser on its own (for the fuzzer and wiki_search). */
int wiki_parse_results(const knowledge_src *src, const char *body, size_t len, size_t limit,
                       fs_hit **out, size_t *n, loom_error *err);

#endif
