/* session.c — one session's external knowledge (knowledge.h): the
 * registry, the run's packs, the view, and the citation check at run end.
 * The tools are knowledge_tools.c.
 *
 * Owns the registry, the tool defs and the run's pack list. Threading: see
 * knowledge.h; `mu` guards run_packs. */
#include "ext/knowledge/knowledge_internal.h"

#include <stdlib.h>
#include <string.h>

#include "base/path.h"
#include "base/settings.h"
#include "base/str.h"

knowledge_session *knowledge_session_new(const knowledge_opts *o, json_t *warnings)
{
    knowledge_registry *r = knowledge_registry_load(o->cwd, o->trusted);
    if (warnings)
        json_array_extend(warnings, r->warnings);
    if (r->n == 0) {
        knowledge_registry_free(r);
        return NULL;
    }
    knowledge_session *ks = xcalloc(1, sizeof *ks);
    ks->reg = r;
    ks->cwd = xstrdup(o->cwd);
    ks->tenant_id = xstrdup(o->tenant_id);
    ks->pack_dir = xstrdup(o->pack_dir);
    if (o->index_path) {
        ks->index_path = xstrdup(o->index_path);
    } else {
        char *home = loom_home();
        ks->index_path = path_join(home ? home : ".", "knowledge/index.db");
        free(home);
    }
    ks->run_packs = json_array();
    pthread_mutex_init(&ks->mu, NULL);
    knowledge_tools_build(ks);
    return ks;
}

void knowledge_session_free(knowledge_session *ks)
{
    if (!ks)
        return;
    knowledge_registry_free(ks->reg);
    free(ks->cwd), free(ks->tenant_id), free(ks->pack_dir), free(ks->index_path);
    json_decref(ks->run_packs);
    pthread_mutex_destroy(&ks->mu);
    free(ks);
}

const tool_def *knowledge_question_tool(knowledge_session *ks)
{
    return ks ? &ks->question_def : NULL;
}

const tool_def *knowledge_search_tool(knowledge_session *ks)
{
    return ks ? &ks->search_def : NULL;
}

void knowledge_session_run_begin(knowledge_session *ks)
{
    if (!ks)
        return;
    pthread_mutex_lock(&ks->mu);
    json_array_clear(ks->run_packs);
    pthread_mutex_unlock(&ks->mu);
}

void knowledge_session_note_pack(knowledge_session *ks, const json_t *pack, const json_t *cites)
{
    json_t *entry = json_pack("{s:O, s:O}", "pack", pack, "citations", cites);
    pthread_mutex_lock(&ks->mu);
    json_array_append_new(ks->run_packs, entry);
    pthread_mutex_unlock(&ks->mu);
}

json_t *knowledge_session_run_packs(knowledge_session *ks)
{
    json_t *out = json_array();
    if (!ks)
        return out;
    pthread_mutex_lock(&ks->mu);
    size_t i;
    json_t *e;
    json_array_foreach(ks->run_packs, i, e) {
        json_t *p = json_deep_copy(json_object_get(e, "pack"));
        /* The artifact carries its citation objects, so a reader needs
         * nothing else (GET /runs/{id}/citations reads them). */
        json_object_set(p, "citation_ids", json_object_get(p, "citations"));
        json_object_set(p, "citations", json_object_get(e, "citations"));
        json_array_append_new(out, p);
    }
    pthread_mutex_unlock(&ks->mu);
    return out;
}

/* Whether answer names the citation id (as "[id]" or the bare id). */
static bool answer_cites(const char *answer, const char *id)
{
    return answer && id && strstr(answer, id) != NULL;
}

size_t knowledge_check_answer(knowledge_session *ks, const char *answer, json_t *warnings)
{
    if (!ks)
        return 0;
    size_t missing = 0;
    pthread_mutex_lock(&ks->mu);
    size_t i, j;
    json_t *e, *c;
    json_array_foreach(ks->run_packs, i, e) {
        json_t *pack = json_object_get(e, "pack");
        json_t *required = json_array();
        bool cited = false;
        json_array_foreach(json_object_get(e, "citations"), j, c) {
            const char *id = json_string_value(json_object_get(c, "citation_id"));
            const knowledge_src *s =
                knowledge_registry_find(ks->reg, json_string_value(json_object_get(c, "source")));
            if (s && knowledge_src_requires_citation(ks->reg, s))
                json_array_append_new(required, json_string(id));
            cited = cited || answer_cites(answer, id);
        }
        if (json_array_size(required) && !cited) {
            const char *pid = json_string_value(json_object_get(pack, "evidence_pack_id"));
            loom_str m = LOOM_STR_INIT;
            str_printf(&m, "the answer uses no citation of evidence pack %s, whose sources the "
                           "citation policy requires citing (require_citation_for): expected one of",
                       pid);
            json_array_foreach(required, j, c) str_printf(&m, " [%s]", json_string_value(c));
            json_array_append_new(warnings, json_pack("{s:s, s:s, s:s, s:O}", "kind",
                                                      "citation_missing", "message", m.ptr,
                                                      "evidence_pack_id", pid, "citations",
                                                      required));
            str_free(&m);
            missing++;
        }
        json_decref(required);
    }
    pthread_mutex_unlock(&ks->mu);
    return missing;
}

json_t *knowledge_session_view(knowledge_session *ks, working *w)
{
    json_t *q = NULL, *e = NULL, *c = NULL;
    if (w)
        working_get_knowledge(w, &q, &e, &c);
    json_t *srcs = json_array();
    for (size_t i = 0; ks && i < ks->reg->n; i++)
        json_array_append_new(srcs, knowledge_src_json(&ks->reg->v[i]));
    return json_pack("{s:o, s:o, s:o, s:o}", "sources", srcs, "active_questions",
                     q ? q : json_array(), "evidence_packs", e ? e : json_array(), "citations",
                     c ? c : json_array());
}
