/* knowledge.c — loom.h's view of a session's external knowledge
 * (ext/knowledge): the knowledge surface for /knowledge, and a run's
 * evidence packs for the server's artifacts. Any thread between runs. */
#include <stdlib.h>

#include "api/internal.h"
#include "base/json.h"
#include "ext/knowledge/knowledge.h"

char *loom_session_knowledge_json(loom_session *s)
{
    if (!s)
        return NULL;
    json_t *v = knowledge_session_view(api_ext_knowledge(s), s->working);
    char *text = json_dump_compact(v);
    json_decref(v);
    return text;
}

char *loom_run_evidence_packs_json(const loom_run *r)
{
    if (!r)
        return NULL;
    json_t *v = knowledge_session_run_packs(api_ext_knowledge(api_run_session(r)));
    char *text = json_dump_compact(v);
    json_decref(v);
    return text;
}
