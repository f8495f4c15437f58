/* knowledge.h — external knowledge for one session (seed 000 §5.6): the
 * registry it may search, the two tools the model uses, and the check of
 * the answer's citations at run end. Retrieval happens only on a gap:
 *
 *   KnowledgeQuestion {question}            records an active question in
 *                                           C_working's knowledge surface
 *                                           and answers its id (q_01, …)
 *   SearchKnowledge {question_id, sources?} searches for an active
 *                                           question, and only for one; the
 *                                           pack enters the surface
 *
 * Nothing else retrieves: without a recorded question SearchKnowledge
 * refuses before any source is read. The state (questions, packs,
 * citations) lives in C_working, so it survives renew (M_f snapshots) and
 * compaction (C_working is never compressed) with its ids; this object
 * keeps only what the current run produced, for its end.
 *
 * Threading: the tools run on the run's thread (not concurrency-safe);
 * the view may be read from another thread (a lock guards the run's list). */
#ifndef LOOM_EXT_KNOWLEDGE_KNOWLEDGE_H
#define LOOM_EXT_KNOWLEDGE_KNOWLEDGE_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "context/working.h"
#include "ext/knowledge/registry.h"
#include "tools/tool.h"

typedef struct knowledge_session knowledge_session;

typedef struct knowledge_opts {
    const char *cwd;
    bool trusted;          /* the workspace's .loom/knowledge_sources.yaml counts */
    const char *index_path; /* the FTS5 database; NULL: loom_home()/knowledge/index.db */
    const char *pack_dir;  /* where packs are kept as files (the session's M_f); may be NULL */
    const char *tenant_id; /* the caller's tenant; NULL: a local user (sees every source
                              but those of a tenant scope) */
} knowledge_opts;

/* NULL when no source is configured (then no tool is offered); warnings
 * about bad files go to *warnings (an array, may be NULL). */
knowledge_session *knowledge_session_new(const knowledge_opts *o, json_t *warnings);
void knowledge_session_free(knowledge_session *ks);

/* The two tool definitions (owned by ks). */
const tool_def *knowledge_question_tool(knowledge_session *ks);
const tool_def *knowledge_search_tool(knowledge_session *ks);

/* The run's start: forgets the previous run's packs. */
void knowledge_session_run_begin(knowledge_session *ks);
/* The run's end: the citation check (seed 000 §10.7). When a pack of this
 * run holds citations of a source the policy requires citing and the
 * answer names none of that pack's citation ids, a warning JSON
 * ({kind: "citation_missing", message, evidence_pack_id, citations}) is
 * appended to *warnings for each such pack. Returns how many. */
size_t knowledge_check_answer(knowledge_session *ks, const char *answer, json_t *warnings);
/* The packs this run produced (an array, new reference). */
json_t *knowledge_session_run_packs(knowledge_session *ks);
/* {sources[], active_questions[], evidence_packs[], citations[]}: new ref. */
json_t *knowledge_session_view(knowledge_session *ks, working *w);

#endif
