/* service.c — the service's objects and their JSON shapes (service.h):
 * ids, times, the access check every call makes, sessions and tasks, the
 * Run document, the live maps, and service_new / service_free.
 *
 * Owns the service struct, its sessions and runs (freed at service_free).
 * Threading: any HTTP thread calls in; svc->mu guards the maps and is
 * released before any store write or loom.h call (writes go through the
 * event writer, which only queues). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "base/uuid.h"
#include "surfaces/server/runs/service_int.h"

/* ---- ids, times, JSON --------------------------------------------------- */

void svc_new_id(const char *prefix, char out[SVC_ID_LEN])
{
    static const char alphabet[] = "0123456789abcdefghjkmnpqrstvwxyz";
    char u[UUID_STR_LEN];
    uuid_v7(u);
    unsigned char b[16];
    size_t k = 0;
    for (size_t i = 0; u[i] && k < 16; i++) {
        if (u[i] == '-')
            continue;
        unsigned hi = (unsigned)(u[i] <= '9' ? u[i] - '0' : (u[i] | 0x20) - 'a' + 10);
        unsigned lo = (unsigned)(u[i + 1] <= '9' ? u[i + 1] - '0' : (u[i + 1] | 0x20) - 'a' + 10);
        b[k++] = (unsigned char)(hi << 4 | lo);
        i++;
    }
    /* 128 bits as 26 base32 digits, big-endian (two zero bits in front), so
     * ids sort as their UUIDv7s do: by time. */
    size_t n = strlen(prefix);
    memcpy(out, prefix, n);
    for (int d = 0; d < 26; d++) {
        int bit = d * 5 - 2; /* the digit's first bit in the 128 */
        unsigned v = 0;
        for (int j = 0; j < 5; j++) {
            int p = bit + j;
            unsigned x = p < 0 ? 0 : (b[p / 8] >> (7 - p % 8)) & 1u;
            v = v << 1 | x;
        }
        out[n + (size_t)d] = alphabet[v];
    }
    out[n + 26] = '\0';
}

void svc_now(char out[32])
{
    clock_iso8601(clock_wall_ms(), out);
}

void svc_time_after(char out[32], int seconds)
{
    clock_iso8601(clock_wall_ms() + (int64_t)seconds * 1000, out);
}

char *svc_dump(json_t *v)
{
    char *s = json_dumps(v, JSON_COMPACT);
    json_decref(v);
    return s;
}

unsigned svc_hash(const char *s)
{
    unsigned h = 2166136261u;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 16777619u;
    return h % SVC_BUCKETS;
}

srv_run *svc_run_find(service *svc, const char *id)
{
    for (srv_run *r = svc->runs[svc_hash(id)]; r; r = r->next)
        if (!strcmp(r->id, id))
            return r;
    return NULL;
}

srv_session *svc_session_find(service *svc, const char *id)
{
    for (srv_session *s = svc->sessions[svc_hash(id)]; s; s = s->next)
        if (!strcmp(s->id, id))
            return s;
    return NULL;
}

const tenant_config *svc_tenant(service *svc, const char *tenant_id)
{
    return objects_tenant(svc->objs, tenant_id);
}

long *svc_count(service *svc, const char *tenant_id, const char *project_id)
{
    for (tenant_count *c = svc->counts; c; c = c->next)
        if (!strcmp(c->tenant_id, tenant_id) &&
            (project_id ? c->project_id && !strcmp(c->project_id, project_id) : !c->project_id))
            return &c->n;
    tenant_count *c = calloc(1, sizeof *c);
    c->tenant_id = strdup(tenant_id);
    c->project_id = project_id ? strdup(project_id) : NULL;
    c->next = svc->counts;
    svc->counts = c;
    return &c->n;
}

/* ---- access ------------------------------------------------------------- */

static const char *role_name(token_role r)
{
    static const char *const names[] = {"viewer", "member", "approver", "admin"};
    return (unsigned)r < 4 ? names[r] : "?";
}

int svc_access(const principal *who, const char *tenant_id, const char *project_id,
               token_role need, loom_error_code project_code, const char *what, const char *id,
               srv_error *err)
{
    if (!who || !who->tenant_id || !tenant_id || strcmp(who->tenant_id, tenant_id) != 0)
        return srv_fail(err, LOOM_ERR_RESOURCE_NOT_FOUND, "%s %s not found", what, id);
    if (who->project_id && project_id && strcmp(who->project_id, project_id) != 0)
        return srv_fail(err, project_code, "%s %s is in project %s; the token is for project %s",
                        what, id, project_id, who->project_id);
    if (who->role < need)
        return srv_fail(err, LOOM_ERR_PROJECT_SCOPE_DENIED,
                        "this needs the role %s; the token's role is %s", role_name(need),
                        role_name(who->role));
    return 0;
}

json_t *svc_scopes(const char *tenant_id, const char *project_id, const char *session_id,
                   const char *run_id)
{
    json_t *s = json_object();
    json_object_set_new(s, "tenant_scope", json_string(tenant_id));
    json_object_set_new(s, "project_scope", project_id ? json_string(project_id) : json_null());
    if (session_id)
        json_object_set_new(s, "session_scope", json_string(session_id));
    if (run_id)
        json_object_set_new(s, "run_scope", json_string(run_id));
    return s;
}

static json_t *str_or_null(const char *s)
{
    return s && *s ? json_string(s) : json_null();
}

/* ---- runs ---------------------------------------------------------------- */

json_t *svc_run_json(const srv_run *r)
{
    json_t *o = json_object();
    json_object_set_new(o, "run_id", json_string(r->id));
    json_object_set_new(o, "task_id", json_string(r->task_id));
    json_object_set_new(o, "session_id", json_string(r->session_id));
    json_object_set_new(o, "tenant_id", json_string(r->tenant_id));
    json_object_set_new(o, "project_id", str_or_null(r->project_id));
    json_object_set_new(o, "state", json_string(loom_run_state_name(r->state)));
    json_object_set_new(o, "goal", json_string(r->goal ? r->goal : ""));
    json_object_set_new(o, "agent_profile", str_or_null(r->agent_profile));
    json_object_set_new(o, "policy_id", str_or_null(r->policy_id));
    json_object_set_new(o, "multitask_strategy", json_string(r->strategy));
    json_object_set_new(o, "priority", json_integer(r->priority));
    json_object_set_new(o, "created_at", json_string(r->created_at));
    json_object_set_new(o, "updated_at", json_string(r->updated_at));
    json_object_set_new(o, "started_at", str_or_null(r->started_at));
    json_object_set_new(o, "ended_at", str_or_null(r->ended_at));
    json_object_set_new(o, "current_step", str_or_null(r->current_step));
    json_object_set_new(o, "pending_approval_id", str_or_null(r->pending_approval_id));
    json_object_set_new(o, "summary", str_or_null(r->summary));
    json_object_set_new(o, "stop_reason", str_or_null(r->stop_reason));
    if (r->err_code != LOOM_OK) {
        json_t *e = json_object();
        json_object_set_new(e, "code", json_string(loom_error_code_name(r->err_code)));
        json_object_set_new(e, "message", json_string(r->err_message ? r->err_message : ""));
        json_object_set_new(o, "error", e);
    } else {
        json_object_set_new(o, "error", json_null());
    }
    json_t *u = json_object();
    json_object_set_new(u, "input_tokens", json_integer(r->in_tok));
    json_object_set_new(u, "output_tokens", json_integer(r->out_tok));
    json_object_set_new(o, "usage", u);
    /* Unknown prices are said to be unknown: null and cost_known false. */
    json_object_set_new(o, "cost_usd", r->cost_unknown ? json_null() : json_real(r->cost_usd));
    json_object_set_new(o, "cost_known", json_boolean(!r->cost_unknown));
    json_object_set_new(o, "resumed_from", str_or_null(r->resumed_from));
    json_object_set_new(o, "scopes", svc_scopes(r->tenant_id, r->project_id, r->session_id,
                                                r->id));
    return o;
}

int64_t svc_fence(const service *svc, const srv_run *r)
{
    if (!svc->opts.cluster)
        return 0;
    return r->abandoned ? WRITER_DROP : r->held ? r->lease_epoch : 0;
}

void svc_run_store(service *svc, srv_run *r)
{
    svc_now(r->updated_at);
    store_doc_keys keys = {r->tenant_id, r->session_id, loom_run_state_name(r->state),
                           r->created_at};
    writer_doc(svc->w, STORE_RUN, r->id, &keys, svc_fence(svc, r), svc_dump(svc_run_json(r)));
}

static void copy_str(char *dst, size_t cap, const char *src)
{
    snprintf(dst, cap, "%s", src ? src : "");
}

static char *jdup(const json_t *o, const char *key)
{
    const char *s = json_string_value(json_object_get(o, key));
    return s ? strdup(s) : NULL;
}

/* A run as the store keeps it, made live again (a run of an earlier
 * process, or one evicted): nothing executes for it. */
static srv_run *run_from_doc(service *svc, json_t *o, srv_session *sess)
{
    srv_run *r = calloc(1, sizeof *r);
    copy_str(r->id, sizeof r->id, json_string_value(json_object_get(o, "run_id")));
    copy_str(r->task_id, sizeof r->task_id, json_string_value(json_object_get(o, "task_id")));
    copy_str(r->session_id, sizeof r->session_id,
             json_string_value(json_object_get(o, "session_id")));
    r->tenant_id = jdup(o, "tenant_id");
    r->project_id = jdup(o, "project_id");
    r->goal = jdup(o, "goal");
    r->agent_profile = jdup(o, "agent_profile");
    r->policy_id = jdup(o, "policy_id");
    copy_str(r->strategy, sizeof r->strategy,
             json_string_value(json_object_get(o, "multitask_strategy")));
    r->priority = (int)json_integer_value(json_object_get(o, "priority"));
    int st = loom_run_state_from_name(json_string_value(json_object_get(o, "state")));
    r->state = st < 0 ? LOOM_RUN_FAILED : (loom_run_state)st;
    copy_str(r->created_at, sizeof r->created_at,
             json_string_value(json_object_get(o, "created_at")));
    copy_str(r->updated_at, sizeof r->updated_at,
             json_string_value(json_object_get(o, "updated_at")));
    copy_str(r->started_at, sizeof r->started_at,
             json_string_value(json_object_get(o, "started_at")));
    copy_str(r->ended_at, sizeof r->ended_at, json_string_value(json_object_get(o, "ended_at")));
    copy_str(r->current_step, sizeof r->current_step,
             json_string_value(json_object_get(o, "current_step")));
    copy_str(r->pending_approval_id, sizeof r->pending_approval_id,
             json_string_value(json_object_get(o, "pending_approval_id")));
    r->summary = jdup(o, "summary");
    r->stop_reason = jdup(o, "stop_reason");
    json_t *e = json_object_get(o, "error");
    if (json_is_object(e)) {
        int c = loom_error_code_from_name(json_string_value(json_object_get(e, "code")));
        r->err_code = c > 0 ? (loom_error_code)c : LOOM_ERR_INTERNAL;
        r->err_message = jdup(e, "message");
    }
    json_t *u = json_object_get(o, "usage");
    r->in_tok = (long)json_integer_value(json_object_get(u, "input_tokens"));
    r->out_tok = (long)json_integer_value(json_object_get(u, "output_tokens"));
    /* A run stored before runs had a cost reads as $0 known: it has no
     * cost_known false to say otherwise. */
    r->cost_usd = json_number_value(json_object_get(o, "cost_usd"));
    r->cost_unknown = json_is_false(json_object_get(o, "cost_known"));
    r->sess = sess;
    r->continue_next = true; /* a run of an earlier process goes on from its session */
    srv_error err = {0};
    r->seq = svc->st->ops->max_seq(svc->st, r->id, &err);
    if (r->seq < 0)
        r->seq = 0;
    r->stored_seq = r->seq;
    srv_error_clear(&err);
    r->svc = svc;
    svc_run_init_mutex(r);
    return r;
}

/* The writer stored run_id's events up to last_seq: wake the run's feeds
 * (only its own: a thousand streams do not all wake for every batch). */
static void events_stored(void *ctx, const char *run_id, int64_t last_seq)
{
    service *svc = ctx;
    pthread_mutex_lock(&svc->mu);
    srv_run *r = svc_run_find(svc, run_id);
    if (r && last_seq > r->stored_seq) {
        r->stored_seq = last_seq;
        pthread_cond_broadcast(&r->feed_cv);
    }
    pthread_mutex_unlock(&svc->mu);
}

void svc_run_init_mutex(srv_run *r)
{
    /* Recursive: a call made under it (loom_run_answer, which may deliver
     * an event on the caller's thread) can never deadlock on it. */
    pthread_mutexattr_t a;
    pthread_mutexattr_init(&a);
    pthread_mutexattr_settype(&a, PTHREAD_MUTEX_RECURSIVE);
    pthread_mutex_init(&r->lr_mu, &a);
    pthread_mutexattr_destroy(&a);
    pthread_cond_init(&r->feed_cv, NULL);
}

srv_run *svc_run_load(service *svc, const char *id, srv_error *err)
{
    pthread_mutex_lock(&svc->mu);
    srv_run *r = svc_run_find(svc, id);
    pthread_mutex_unlock(&svc->mu);
    if (r)
        return r;
    if (strncmp(id, "run_", 4) != 0)
        return srv_fail(err, LOOM_ERR_RESOURCE_NOT_FOUND, "run %s not found", id), NULL;
    srv_error e = {0};
    char *doc = svc->st->ops->get(svc->st, STORE_RUN, id, &e);
    if (!doc) {
        if (e.code == LOOM_ERR_RESOURCE_NOT_FOUND || e.code == LOOM_OK)
            srv_fail(err, LOOM_ERR_RESOURCE_NOT_FOUND, "run %s not found", id);
        else
            srv_fail(err, e.code, "run %s: %s", id, e.message);
        srv_error_clear(&e);
        return NULL;
    }
    json_t *o = json_loads(doc, 0, NULL);
    free(doc);
    if (!o)
        return srv_fail(err, LOOM_ERR_INTERNAL, "run %s: the stored document is not JSON", id),
               NULL;
    srv_session *sess =
        svc_session_load(svc, json_string_value(json_object_get(o, "session_id")) ?: "", err);
    if (!sess) {
        json_decref(o);
        return NULL;
    }
    srv_run *fresh = run_from_doc(svc, o, sess);
    json_decref(o);
    pthread_mutex_lock(&svc->mu);
    r = svc_run_find(svc, id);
    if (!r) {
        r = fresh;
        unsigned h = svc_hash(r->id);
        r->next = svc->runs[h];
        svc->runs[h] = r;
        fresh = NULL;
    }
    pthread_mutex_unlock(&svc->mu);
    if (fresh) { /* another thread loaded it first */
        free(fresh->tenant_id);
        free(fresh->project_id);
        free(fresh->goal);
        free(fresh->agent_profile);
        free(fresh->policy_id);
        free(fresh->summary);
        free(fresh->stop_reason);
        free(fresh->err_message);
        pthread_mutex_destroy(&fresh->lr_mu);
        free(fresh);
    }
    return r;
}

/* ---- sessions ------------------------------------------------------------- */

static json_t *session_json(const srv_session *s)
{
    json_t *o = json_loads(s->doc, 0, NULL);
    if (!o)
        o = json_object();
    json_object_set_new(o, "active_run_id", s->active ? json_string(s->active->id) : json_null());
    return o;
}

void svc_session_store(service *svc, srv_session *s)
{
    json_t *o = session_json(s);
    char now[32];
    svc_now(now);
    json_object_set_new(o, "updated_at", json_string(now));
    if (s->loom_session_id)
        json_object_set_new(o, "loom_session_id", json_string(s->loom_session_id));
    free(s->doc);
    s->doc = json_dumps(o, JSON_COMPACT);
    char created[32];
    snprintf(created, sizeof created, "%s", json_string_value(json_object_get(o, "created_at")) ?: "");
    store_doc_keys keys = {s->tenant_id, NULL, NULL, created};
    writer_doc(svc->w, STORE_SESSION, s->id, &keys, 0, svc_dump(o));
}

static srv_session *session_new_live(service *svc, const char *id, const char *tenant_id,
                                     const char *project_id, char *doc)
{
    srv_session *s = calloc(1, sizeof *s);
    copy_str(s->id, sizeof s->id, id);
    s->tenant_id = strdup(tenant_id);
    s->project_id = project_id ? strdup(project_id) : NULL;
    const tenant_config *t = svc_tenant(svc, tenant_id);
    const tenant_project *p = t && project_id ? objects_project(t, project_id) : NULL;
    s->workspace = strdup(p && p->workspace ? p->workspace
                                            : (svc->opts.workspace ? svc->opts.workspace : "."));
    s->doc = doc;
    s->svc = svc;
    pthread_mutex_init(&s->use_mu, NULL);
    return s;
}

/* Inserts s unless the id is there already; returns the one in the map. */
static srv_session *session_insert(service *svc, srv_session *s)
{
    pthread_mutex_lock(&svc->mu);
    srv_session *have = svc_session_find(svc, s->id);
    if (!have) {
        unsigned h = svc_hash(s->id);
        s->next = svc->sessions[h];
        svc->sessions[h] = s;
    }
    pthread_mutex_unlock(&svc->mu);
    if (have) {
        free(s->tenant_id);
        free(s->project_id);
        free(s->workspace);
        free(s->doc);
        pthread_mutex_destroy(&s->use_mu);
        free(s);
        return have;
    }
    return s;
}

srv_session *svc_session_load(service *svc, const char *id, srv_error *err)
{
    pthread_mutex_lock(&svc->mu);
    srv_session *s = svc_session_find(svc, id);
    pthread_mutex_unlock(&svc->mu);
    if (s)
        return s;
    if (strncmp(id, "sess_", 5) != 0)
        return srv_fail(err, LOOM_ERR_RESOURCE_NOT_FOUND, "session %s not found", id), NULL;
    srv_error e = {0};
    char *doc = svc->st->ops->get(svc->st, STORE_SESSION, id, &e);
    if (!doc) {
        srv_fail(err, LOOM_ERR_RESOURCE_NOT_FOUND, "session %s not found", id);
        srv_error_clear(&e);
        return NULL;
    }
    json_t *o = json_loads(doc, 0, NULL);
    if (!o) {
        free(doc);
        return srv_fail(err, LOOM_ERR_INTERNAL, "session %s: the stored document is not JSON",
                        id),
               NULL;
    }
    s = session_new_live(svc, id, json_string_value(json_object_get(o, "tenant_id")) ?: "",
                         json_string_value(json_object_get(o, "project_id")), doc);
    const char *lsid = json_string_value(json_object_get(o, "loom_session_id"));
    s->loom_session_id = lsid ? strdup(lsid) : NULL;
    json_decref(o);
    return session_insert(svc, s);
}

static json_t *parse_body(const char *body, srv_error *err)
{
    if (!body || !*body)
        return json_object();
    json_error_t je;
    json_t *o = json_loads(body, 0, &je);
    if (!json_is_object(o)) {
        json_decref(o);
        srv_fail(err, LOOM_ERR_INVALID_REQUEST, "the body is not a JSON object: %s",
                 o ? "not an object" : je.text);
        return NULL;
    }
    return o;
}

json_t *svc_parse_body(const char *body, srv_error *err)
{
    return parse_body(body, err);
}

static char *session_public(srv_session *s)
{
    json_t *o = session_json(s);
    json_object_del(o, "loom_session_id");
    return svc_dump(o);
}

char *service_session_create(service *svc, const principal *who, const char *body_json,
                             srv_error *err)
{
    if (!who)
        return srv_fail(err, LOOM_ERR_UNAUTHENTICATED, "no principal"), NULL;
    json_t *b = parse_body(body_json, err);
    if (!b)
        return NULL;
    const tenant_config *t = svc_tenant(svc, who->tenant_id);
    const char *project = json_string_value(json_object_get(b, "project_id"));
    if (!project)
        project = who->project_id ? who->project_id
                                  : (t && t->n_projects ? t->projects[0].id : "default");
    if (svc_access(who, who->tenant_id, project, ROLE_MEMBER, LOOM_ERR_PROJECT_SCOPE_DENIED,
                   "project", project, err) != 0) {
        json_decref(b);
        return NULL;
    }
    if (t && !objects_project(t, project)) {
        json_decref(b);
        return srv_fail(err, LOOM_ERR_INVALID_REQUEST, "project %s is not a project of tenant %s",
                        project, who->tenant_id),
               NULL;
    }
    json_t *meta = json_object_get(b, "metadata");
    if (meta && !json_is_object(meta) && !json_is_null(meta)) {
        json_decref(b);
        return srv_fail(err, LOOM_ERR_INVALID_REQUEST, "metadata must be an object"), NULL;
    }
    char id[SVC_ID_LEN], now[32];
    svc_new_id("sess_", id);
    svc_now(now);
    json_t *o = json_object();
    json_object_set_new(o, "session_id", json_string(id));
    json_object_set_new(o, "tenant_id", json_string(who->tenant_id));
    json_object_set_new(o, "project_id", json_string(project));
    json_object_set_new(o, "app_id", str_or_null(json_string_value(json_object_get(b, "app_id"))));
    json_object_set_new(o, "user_id",
                        str_or_null(json_string_value(json_object_get(b, "user_id"))));
    json_object_set_new(o, "metadata", json_is_object(meta) ? json_incref(meta) : json_object());
    json_object_set_new(o, "created_at", json_string(now));
    json_object_set_new(o, "updated_at", json_string(now));
    json_object_set_new(o, "scopes", svc_scopes(who->tenant_id, project, id, NULL));
    /* project points into b: b lives until the session has copied it. */
    srv_session *s = session_new_live(svc, id, who->tenant_id, project, svc_dump(o));
    json_decref(b);
    s = session_insert(svc, s);
    pthread_mutex_lock(&svc->mu);
    svc_session_store(svc, s);
    char *out = session_public(s);
    pthread_mutex_unlock(&svc->mu);
    writer_flush(svc->w);
    return out;
}

char *service_session_get(service *svc, const principal *who, const char *id, srv_error *err)
{
    srv_session *s = svc_session_load(svc, id, err);
    if (!s)
        return NULL;
    if (svc_access(who, s->tenant_id, s->project_id, ROLE_VIEWER, LOOM_ERR_PROJECT_SCOPE_DENIED,
                   "session", id, err) != 0)
        return NULL;
    pthread_mutex_lock(&svc->mu);
    char *out = session_public(s);
    pthread_mutex_unlock(&svc->mu);
    return out;
}

/* ---- tasks ------------------------------------------------------------------ */

char *service_task_create(service *svc, const principal *who, const char *body_json,
                          srv_error *err)
{
    json_t *b = parse_body(body_json, err);
    if (!b)
        return NULL;
    const char *sid = json_string_value(json_object_get(b, "session_id"));
    const char *goal = json_string_value(json_object_get(b, "goal"));
    char *out = NULL;
    srv_session *s = NULL;
    if (!sid || !goal || !*goal) {
        srv_fail(err, LOOM_ERR_INVALID_REQUEST, "a task needs session_id and goal (strings)");
        goto done;
    }
    if (!(s = svc_session_load(svc, sid, err)) ||
        svc_access(who, s->tenant_id, s->project_id, ROLE_MEMBER, LOOM_ERR_PROJECT_SCOPE_DENIED,
                   "session", sid, err) != 0)
        goto done;
    const char *pid = json_string_value(json_object_get(b, "agent_profile"));
    const agent_profile *prof = pid ? objects_profile(svc->objs, pid, s->tenant_id)
                                    : objects_default_profile(svc->objs, s->tenant_id);
    if (pid && !prof) {
        srv_fail(err, LOOM_ERR_INVALID_REQUEST, "agent_profile %s is not a profile", pid);
        goto done;
    }
    const char *pol = json_string_value(json_object_get(b, "policy_id"));
    if (pol && !objects_policy(svc->objs, pol, s->tenant_id)) {
        srv_fail(err, LOOM_ERR_INVALID_REQUEST, "policy_id %s is not a policy", pol);
        goto done;
    }
    if (!pol && prof && prof->policies.n)
        pol = prof->policies.items[0];
    if (!pol && objects_policy(svc->objs, "default", s->tenant_id))
        pol = "default";
    json_t *ks = json_object_get(b, "knowledge_sources");
    json_t *sources = json_array();
    if (ks && !json_is_array(ks)) {
        json_decref(sources);
        srv_fail(err, LOOM_ERR_INVALID_REQUEST, "knowledge_sources must be an array of ids");
        goto done;
    }
    size_t i;
    json_t *v;
    json_array_foreach(ks, i, v) {
        const char *k = json_string_value(v);
        const knowledge_source *src = k ? objects_knowledge_source(svc->objs, k, s->tenant_id)
                                        : NULL;
        if (!src || (src->project_id && s->project_id && strcmp(src->project_id, s->project_id))) {
            json_decref(sources);
            srv_fail(err, LOOM_ERR_KNOWLEDGE_SOURCE_SCOPE_DENIED,
                     "knowledge source %s is not visible to this project", k ? k : "(not text)");
            goto done;
        }
        json_array_append_new(sources, json_string(k));
    }
    char id[SVC_ID_LEN], now[32];
    svc_new_id("task_", id);
    svc_now(now);
    json_t *o = json_object();
    json_object_set_new(o, "task_id", json_string(id));
    json_object_set_new(o, "session_id", json_string(sid));
    json_object_set_new(o, "tenant_id", json_string(s->tenant_id));
    json_object_set_new(o, "project_id", str_or_null(s->project_id));
    json_object_set_new(o, "goal", json_string(goal));
    json_object_set_new(o, "agent_profile", prof ? json_string(prof->id) : json_null());
    json_object_set_new(o, "policy_id", str_or_null(pol));
    json_object_set_new(o, "knowledge_sources", sources);
    /* Its runs' priority when they give none (checked -1000..1000 by the route). */
    json_object_set_new(o, "priority",
                        json_integer(json_integer_value(json_object_get(b, "priority"))));
    json_object_set_new(o, "status", json_string("created"));
    json_object_set_new(o, "created_at", json_string(now));
    json_object_set_new(o, "scopes", svc_scopes(s->tenant_id, s->project_id, sid, NULL));
    out = json_dumps(o, JSON_COMPACT);
    store_doc_keys keys = {s->tenant_id, sid, NULL, now};
    writer_doc(svc->w, STORE_TASK, id, &keys, 0, svc_dump(o));
    writer_flush(svc->w);
done:
    json_decref(b);
    return out;
}

char *service_task_get(service *svc, const principal *who, const char *id, srv_error *err)
{
    srv_error e = {0};
    char *doc = svc->st->ops->get(svc->st, STORE_TASK, id, &e);
    srv_error_clear(&e);
    if (!doc)
        return srv_fail(err, LOOM_ERR_RESOURCE_NOT_FOUND, "task %s not found", id), NULL;
    json_t *o = json_loads(doc, 0, NULL);
    int rc = svc_access(who, json_string_value(json_object_get(o, "tenant_id")),
                        json_string_value(json_object_get(o, "project_id")), ROLE_VIEWER,
                        LOOM_ERR_PROJECT_SCOPE_DENIED, "task", id, err);
    json_decref(o);
    if (rc != 0) {
        free(doc);
        return NULL;
    }
    return doc;
}

/* ---- declarative objects ------------------------------------------------------ */

char *service_object_get(service *svc, const principal *who, const char *kind, const char *id,
                         srv_error *err)
{
    const char *json = NULL;
    const char *tenant = who ? who->tenant_id : NULL;
    if (!tenant)
        return srv_fail(err, LOOM_ERR_UNAUTHENTICATED, "no principal"), NULL;
    if (!strcmp(kind, "profile")) {
        const agent_profile *p = objects_profile(svc->objs, id, tenant);
        json = p ? p->json : NULL;
    } else if (!strcmp(kind, "policy")) {
        const policy_set *p = objects_policy(svc->objs, id, tenant);
        json = p ? p->json : NULL;
    } else if (!strcmp(kind, "knowledge_source")) {
        const knowledge_source *k = objects_knowledge_source(svc->objs, id, tenant);
        if (k && k->project_id && who->project_id && strcmp(k->project_id, who->project_id))
            return srv_fail(err, LOOM_ERR_KNOWLEDGE_SOURCE_SCOPE_DENIED,
                            "knowledge source %s belongs to project %s", id, k->project_id),
                   NULL;
        json = k ? k->json : NULL;
    } else {
        return srv_fail(err, LOOM_ERR_INVALID_REQUEST, "unknown object kind %s", kind), NULL;
    }
    if (!json)
        return srv_fail(err, LOOM_ERR_RESOURCE_NOT_FOUND, "%s %s not found", kind, id), NULL;
    return strdup(json);
}

/* ---- the service -------------------------------------------------------------- */

service *service_new(const service_options *opts, store *st, const server_objects *objs,
                     webhooks *wh, srv_error *err)
{
    if (!opts || !st || !objs)
        return srv_fail(err, LOOM_ERR_INVALID_REQUEST, "service_new: opts, st and objs are needed"),
               NULL;
    if (opts->loom_home)
        setenv("LOOM_HOME", opts->loom_home, 1); /* before any thread: sessions go under it */
    service *svc = calloc(1, sizeof *svc);
    svc->opts = *opts;
    if (svc->opts.max_active_runs <= 0)
        svc->opts.max_active_runs = 1024;
    if (svc->opts.batch_ms <= 0)
        svc->opts.batch_ms = 5;
    svc->st = st;
    svc->objs = objs;
    svc->wh = wh;
    pthread_mutex_init(&svc->mu, NULL);
    pthread_cond_init(&svc->cv, NULL);
    svc->w = writer_new(st, svc->opts.batch_ms, events_stored, svc);
    if (!svc->w) {
        free(svc);
        return srv_fail(err, LOOM_ERR_INTERNAL, "the event writer thread could not start"), NULL;
    }
    if (!svc->opts.cluster) {
        svc_recover(svc);
    } else if (cluster_start(svc, err) != 0) {
        /* A cluster recovers nothing at start: a run another worker held
         * is reclaimed when its lease expires (cluster.c). */
        writer_free(svc->w);
        pthread_cond_destroy(&svc->cv);
        pthread_mutex_destroy(&svc->mu);
        free(svc);
        return NULL;
    }
    return svc;
}

static void run_free(srv_run *r)
{
    free(r->tenant_id);
    free(r->project_id);
    free(r->goal);
    free(r->agent_profile);
    free(r->policy_id);
    free(r->summary);
    free(r->stop_reason);
    free(r->err_message);
    free(r->note);
    json_decref(r->interrupted);
    free(r->force_message);
    free(r->cancel_reason);
    free(r->input_answer);
    while (r->approvals) {
        srv_approval *a = r->approvals;
        r->approvals = a->next;
        free(a->doc);
        free(a);
    }
    pthread_mutex_destroy(&r->lr_mu);
    pthread_cond_destroy(&r->feed_cv);
    free(r);
}

void service_free(service *svc)
{
    if (!svc)
        return;
    /* Stop what runs: cancel every loom run, then wait for the exec threads.
     * With stopping set, a run stopped this way ends failed with
     * run_resumable (run_exec.c), so :resume after a restart goes on. */
    pthread_mutex_lock(&svc->mu);
    svc->stopping = true;
    for (int b = 0; b < SVC_BUCKETS; b++)
        for (srv_run *r = svc->runs[b]; r; r = r->next)
            r->cancel_pending = true;
    pthread_cond_broadcast(&svc->cv); /* questions waiting for answers give up */
    pthread_mutex_unlock(&svc->mu);
    for (int b = 0; b < SVC_BUCKETS; b++)
        for (srv_run *r = svc->runs[b]; r; r = r->next) {
            pthread_mutex_lock(&r->lr_mu);
            if (r->lr)
                loom_run_cancel(r->lr);
            pthread_mutex_unlock(&r->lr_mu);
        }
    pthread_mutex_lock(&svc->mu);
    while (svc->exec_threads > 0)
        pthread_cond_wait(&svc->cv, &svc->mu);
    pthread_mutex_unlock(&svc->mu);
    /* After the runs: their leases were renewed while they wound down. */
    cluster_stop(svc);
    writer_free(svc->w);
    for (int b = 0; b < SVC_BUCKETS; b++) {
        while (svc->runs[b]) {
            srv_run *r = svc->runs[b];
            svc->runs[b] = r->next;
            run_free(r);
        }
        while (svc->sessions[b]) {
            srv_session *s = svc->sessions[b];
            svc->sessions[b] = s->next;
            if (s->ls)
                loom_session_free(s->ls);
            if (s->agent)
                loom_agent_free(s->agent);
            free(s->tenant_id);
            free(s->project_id);
            free(s->workspace);
            free(s->doc);
            free(s->loom_session_id);
            free(s->agent_key);
            pthread_mutex_destroy(&s->use_mu);
            free(s);
        }
    }
    while (svc->counts) {
        tenant_count *c = svc->counts;
        svc->counts = c->next;
        free(c->tenant_id);
        free(c->project_id);
        free(c);
    }
    if (svc->opts.cluster)
        pthread_cond_destroy(&svc->cluster_cv);
    pthread_cond_destroy(&svc->cv);
    pthread_mutex_destroy(&svc->mu);
    free(svc);
}
