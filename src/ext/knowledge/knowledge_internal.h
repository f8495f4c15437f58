/* knowledge_internal.h — the inside of a knowledge session, shared by
 * session.c and knowledge_tools.c only. */
#ifndef LOOM_EXT_KNOWLEDGE_INTERNAL_H
#define LOOM_EXT_KNOWLEDGE_INTERNAL_H

#include <pthread.h>

#include "ext/knowledge/knowledge.h"

struct knowledge_session {
    knowledge_registry *reg;
    char *cwd, *tenant_id, *pack_dir, *index_path;
    tool_def question_def, search_def;
    pthread_mutex_t mu;
    json_t *run_packs; /* [{pack, citations}] made by the current run */
};

/* Fills question_def and search_def (knowledge_tools.c). */
void knowledge_tools_build(knowledge_session *ks);
/* Adds a pack (and its citation objects) to the run's list. */
void knowledge_session_note_pack(knowledge_session *ks, const json_t *pack, const json_t *cites);

#endif
