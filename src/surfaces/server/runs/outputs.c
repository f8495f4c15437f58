/* outputs.c — what a run leaves to read: its artifacts (documents and
 * content), its transcript (the loom session's conversation), its
 * citations (the evidence packs of knowledge searches made for it), and
 * knowledge search itself, whose pack becomes an evidence_pack artifact
 * of the run it names.
 *
 * Owns nothing. Threading: HTTP threads. The transcript needs the loom
 * session, which one thread uses at a time: it is read between runs only
 * (while the session's run executes, invalid_state_transition says so). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "surfaces/server/runs/knowledge.h"
#include "surfaces/server/runs/service_int.h"

/* Every artifact document of a run (a JSON array), or NULL with err. */
static json_t *artifact_docs(service *svc, srv_run *r, srv_error *err)
{
    writer_flush(svc->w);
    json_t *all = json_array();
    char *cursor = NULL;
    do {
        store_list_query q = {r->tenant_id, r->id, NULL, cursor, 1000};
        char *next = NULL;
        char *arr = svc->st->ops->list(svc->st, STORE_ARTIFACT, &q, &next, err);
        free(cursor);
        cursor = next;
        if (!arr) {
            free(cursor);
            json_decref(all);
            return NULL;
        }
        json_t *docs = json_loads(arr, 0, NULL);
        free(arr);
        json_array_extend(all, docs);
        json_decref(docs);
    } while (cursor);
    return all;
}

static srv_run *artifact_run(service *svc, const principal *who, const char *run_id,
                             srv_error *err)
{
    srv_run *r = svc_run_load(svc, run_id, err);
    if (!r || svc_access(who, r->tenant_id, r->project_id, ROLE_VIEWER,
                         LOOM_ERR_ARTIFACT_SCOPE_DENIED, "run", run_id, err) != 0)
        return NULL;
    return r;
}

char *service_artifacts_list(service *svc, const principal *who, const char *run_id,
                             srv_error *err)
{
    srv_run *r = artifact_run(svc, who, run_id, err);
    json_t *docs = r ? artifact_docs(svc, r, err) : NULL;
    if (!docs)
        return NULL;
    json_t *o = json_object();
    json_object_set_new(o, "items", docs);
    return svc_dump(o);
}

void *service_artifact_content(service *svc, const principal *who, const char *run_id,
                               const char *name, size_t *len, char **content_type,
                               srv_error *err)
{
    srv_run *r = artifact_run(svc, who, run_id, err);
    json_t *docs = r ? artifact_docs(svc, r, err) : NULL;
    if (!docs)
        return NULL;
    const char *ct = NULL;
    size_t i;
    json_t *d;
    json_array_foreach(docs, i, d) {
        const char *n = json_string_value(json_object_get(d, "name"));
        if (n && !strcmp(n, name))
            ct = json_string_value(json_object_get(json_object_get(d, "metadata"),
                                                   "content_type"));
    }
    if (!ct) {
        json_decref(docs);
        return srv_fail(err, LOOM_ERR_RESOURCE_NOT_FOUND, "run %s has no artifact %s", run_id,
                        name),
               NULL;
    }
    *content_type = strdup(ct);
    json_decref(docs);
    void *data = svc->st->ops->get_blob(svc->st, run_id, name, len, err);
    if (!data) {
        free(*content_type);
        *content_type = NULL;
    }
    return data;
}

static char *transcript_doc(const srv_run *r, char *conv);

char *service_transcript(service *svc, const principal *who, const char *run_id,
                         srv_error *err)
{
    srv_run *r = svc_run_for(svc, who, run_id, ROLE_VIEWER, err);
    if (!r)
        return NULL;
    srv_session *s = r->sess;
    /* On PostgreSQL the session's rows, whichever node ran it and whether
     * or not a run is executing (they are a prefix of whole batches). */
    char *conv = NULL;
    if (svc->st->ops->records_load) {
        pthread_mutex_lock(&svc->mu);
        char *lsid = s->loom_session_id ? strdup(s->loom_session_id) : NULL;
        pthread_mutex_unlock(&svc->mu);
        size_t len = 0;
        srv_error e = {0};
        char *jsonl = lsid ? svc->st->ops->records_load(svc->st, lsid, &len, &e) : NULL;
        srv_error_clear(&e);
        conv = jsonl ? loom_conversation_json_of_jsonl(jsonl, len, lsid) : NULL;
        free(jsonl);
        free(lsid);
        return transcript_doc(r, conv);
    }
    if (pthread_mutex_trylock(&s->use_mu) != 0) {
        srv_fail(err, LOOM_ERR_INVALID_STATE_TRANSITION,
                 "session %s is executing a run; its transcript is served between runs",
                 s->id);
        srv_error_set_run(err, run_id);
        return NULL;
    }
    conv = s->ls ? loom_session_conversation_json(s->ls) : NULL;
    pthread_mutex_unlock(&s->use_mu);
    return transcript_doc(r, conv);
}

/* The transcript document of r over conv (a conversation JSON text, taken;
 * NULL: no items). */
static char *transcript_doc(const srv_run *r, char *conv)
{
    json_t *items = conv ? json_loads(conv, 0, NULL) : NULL;
    free(conv);
    json_t *o = json_object();
    json_object_set_new(o, "run_id", json_string(r->id));
    json_object_set_new(o, "session_id", json_string(r->session_id));
    json_object_set_new(o, "items", json_is_array(items) ? items : json_array());
    if (!json_is_array(items))
        json_decref(items);
    return svc_dump(o);
}

char *service_citations(service *svc, const principal *who, const char *run_id, srv_error *err)
{
    srv_run *r = svc_run_for(svc, who, run_id, ROLE_VIEWER, err);
    json_t *docs = r ? artifact_docs(svc, r, err) : NULL;
    if (!docs)
        return NULL;
    json_t *cites = json_array();
    size_t i;
    json_t *d;
    json_array_foreach(docs, i, d) {
        const char *kind = json_string_value(json_object_get(d, "kind"));
        const char *name = json_string_value(json_object_get(d, "name"));
        if (!kind || strcmp(kind, "evidence_pack") || !name)
            continue;
        size_t len = 0;
        srv_error e = {0};
        char *data = svc->st->ops->get_blob(svc->st, run_id, name, &len, &e);
        srv_error_clear(&e);
        json_t *pack = data ? json_loadb(data, len, 0, NULL) : NULL;
        free(data);
        json_array_extend(cites, json_object_get(pack, "citations"));
        json_decref(pack);
    }
    json_decref(docs);
    json_t *o = json_object();
    json_object_set_new(o, "items", cites);
    return svc_dump(o);
}

/* The pack as an evidence_pack artifact of r, with its artifact.created. */
static void store_pack(service *svc, srv_run *r, const char *pack)
{
    json_t *p = json_loads(pack, 0, NULL);
    const char *pid = json_string_value(json_object_get(p, "evidence_pack_id"));
    char name[SVC_ID_LEN + 16], id[SVC_ID_LEN], now[32], uri[SVC_ID_LEN * 2 + 32];
    snprintf(name, sizeof name, "%s.json", pid ? pid : "evidence");
    svc_new_id("art_", id);
    svc_now(now);
    snprintf(uri, sizeof uri, "artifact://%s/%s", r->id, name);
    srv_error err = {0};
    if (svc->st->ops->put_blob(svc->st, r->id, name, pack, strlen(pack), &err) != 0) {
        srv_error_clear(&err);
        json_decref(p);
        return;
    }
    json_t *o = json_object();
    json_object_set_new(o, "artifact_id", json_string(id));
    json_object_set_new(o, "run_id", json_string(r->id));
    json_object_set_new(o, "kind", json_string("evidence_pack"));
    json_object_set_new(o, "name", json_string(name));
    json_object_set_new(o, "title", json_string("Evidence pack"));
    json_object_set_new(o, "uri", json_string(uri));
    json_object_set_new(o, "size", json_integer((json_int_t)strlen(pack)));
    json_object_set_new(o, "created_at", json_string(now));
    json_t *meta = json_object();
    json_object_set_new(meta, "content_type", json_string("application/json"));
    json_object_set_new(o, "metadata", meta);
    json_object_set_new(o, "scopes", svc_scopes(r->tenant_id, r->project_id, r->session_id, r->id));
    store_doc_keys keys = {r->tenant_id, r->id, NULL, now};
    char *doc = json_dumps(o, JSON_COMPACT);
    svc->st->ops->put(svc->st, STORE_ARTIFACT, id, &keys, doc, &err);
    srv_error_clear(&err);
    free(doc);
    json_t *ev = json_object();
    json_object_set_new(ev, "artifact_id", json_string(id));
    json_object_set_new(ev, "name", json_string(name));
    json_object_set_new(ev, "kind", json_string("evidence_pack"));
    json_object_set_new(ev, "uri", json_string(uri));
    json_object_set_new(ev, "title", json_string("Evidence pack"));
    pthread_mutex_lock(&svc->mu);
    svc_emit(svc, r, "artifact.created", LOOM_VIS_USER, NULL, ev);
    char eid[SVC_ID_LEN + 24];
    snprintf(eid, sizeof eid, "%s.%lld", r->id, (long long)r->seq);
    pthread_mutex_unlock(&svc->mu);
    svc_webhook(svc, r->tenant_id, "artifact.created", eid, o);
    json_decref(p);
}

void svc_store_run_packs(service *svc, srv_run *r, const char *packs_json)
{
    json_t *packs = packs_json ? json_loads(packs_json, 0, NULL) : NULL;
    size_t i;
    json_t *p;
    json_array_foreach(packs, i, p) {
        char *text = json_dumps(p, JSON_COMPACT);
        if (text)
            store_pack(svc, r, text);
        free(text);
    }
    json_decref(packs);
}

char *service_knowledge_search(service *svc, const principal *who, const char *body_json,
                               srv_error *err)
{
    json_t *b = svc_parse_body(body_json, err);
    if (!b)
        return NULL;
    char *out = NULL;
    const knowledge_source *src[64];
    size_t n = 0;
    const char *query = json_string_value(json_object_get(b, "query"));
    const char *run_id = json_string_value(json_object_get(b, "run_id"));
    json_t *names = json_object_get(b, "knowledge_sources");
    srv_run *r = NULL;
    if (!who || !who->tenant_id) {
        srv_fail(err, LOOM_ERR_UNAUTHENTICATED, "no principal");
        goto done;
    }
    if (!query || !*query) {
        srv_fail(err, LOOM_ERR_INVALID_REQUEST, "a search needs query (a string)");
        goto done;
    }
    if (run_id && !(r = svc_run_for(svc, who, run_id, ROLE_MEMBER, err)))
        goto done;
    const char *project = r ? r->project_id : who->project_id;
    if (json_is_array(names) && json_array_size(names) > 0) {
        size_t i;
        json_t *v;
        json_array_foreach(names, i, v) {
            const char *id = json_string_value(v);
            const knowledge_source *k =
                id ? objects_knowledge_source(svc->objs, id, who->tenant_id) : NULL;
            if (!k || (k->project_id && project && strcmp(k->project_id, project)) ||
                (k->project_id && !project && who->project_id)) {
                srv_fail(err, LOOM_ERR_KNOWLEDGE_SOURCE_SCOPE_DENIED,
                         "knowledge source %s is not visible here", id ? id : "(not text)");
                goto done;
            }
            if (n < 64)
                src[n++] = k;
        }
    } else if (names && !json_is_array(names) && !json_is_null(names)) {
        srv_fail(err, LOOM_ERR_INVALID_REQUEST, "knowledge_sources must be an array of ids");
        goto done;
    } else {
        n = objects_knowledge_sources_visible(svc->objs, who->tenant_id, project, src, 64);
    }
    json_int_t limit = json_integer_value(json_object_get(b, "limit"));
    out = knowledge_search(src, n, query, limit > 0 ? (int)limit : 10, run_id, err);
    if (out && r)
        store_pack(svc, r, out);
done:
    json_decref(b);
    return out;
}
