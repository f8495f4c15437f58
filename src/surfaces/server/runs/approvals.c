/* approvals.c — approvals as objects (seed 000 §10.5): one Approval
 * (apv_…) per loom approval.requested, stored with the run as its parent,
 * answered through loom_run_answer by any approver of the tenant (a second
 * client taking over is fine; the second answer is invalid_state_transition),
 * expired when loom says so (answering it then: run_approval_expired),
 * cancelled when the run ends with it pending.
 *
 * Owns the srv_approval records of each run (freed with the run). Threading:
 * apv_requested/apv_resolved run on loom's thread from the event callback
 * with svc->mu held (they only queue); the service_approval_* calls run on
 * HTTP threads and drop svc->mu around loom_run_answer. */
/* timegm and strptime: _GNU_SOURCE comes from the build */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/clock.h"
#include "surfaces/server/runs/service_int.h"

static time_t iso_seconds(const char *iso)
{
    struct tm tm = {0};
    if (!iso || !strptime(iso, "%Y-%m-%dT%H:%M:%S", &tm))
        return 0;
    return timegm(&tm);
}

static srv_approval *find_loom(srv_run *r, const char *loom_id)
{
    for (srv_approval *a = r->approvals; a; a = a->next)
        if (!strcmp(a->loom_id, loom_id))
            return a;
    return NULL;
}

static srv_approval *find_id(srv_run *r, const char *id)
{
    for (srv_approval *a = r->approvals; a; a = a->next)
        if (!strcmp(a->id, id))
            return a;
    return NULL;
}

/* Sets the approval's status (and resolution), queues its document. (mu held) */
static void apv_set(service *svc, srv_run *r, srv_approval *a, const char *status,
                    const char *actor, const char *comment, const char *reason)
{
    json_t *o = json_loads(a->doc, 0, NULL);
    snprintf(a->status, sizeof a->status, "%s", status);
    json_object_set_new(o, "status", json_string(status));
    if (strcmp(status, "pending") != 0) {
        char now[32];
        svc_now(now);
        json_object_set_new(o, "resolved_at", json_string(now));
    } else {
        json_object_set_new(o, "resolved_at", json_null());
    }
    if (actor)
        json_object_set_new(o, "actor_id", json_string(actor));
    if (comment)
        json_object_set_new(o, "comment", json_string(comment));
    if (reason)
        json_object_set_new(o, "reason", json_string(reason));
    free(a->doc);
    a->doc = json_dumps(o, JSON_COMPACT);
    char req[40]; /* the keys are read before o is freed by svc_dump */
    snprintf(req, sizeof req, "%s", json_string_value(json_object_get(o, "requested_at")) ?: "");
    store_doc_keys keys = {r->tenant_id, r->id, a->status, req};
    writer_doc(svc->w, STORE_APPROVAL, a->id, &keys, 0, svc_dump(o));
}

static void next_pending(srv_run *r)
{
    r->pending_approval_id[0] = '\0';
    for (srv_approval *a = r->approvals; a; a = a->next) /* newest first: keep the oldest */
        if (!strcmp(a->status, "pending"))
            snprintf(r->pending_approval_id, sizeof r->pending_approval_id, "%s", a->id);
}

void apv_requested(service *svc, srv_run *r, json_t *payload)
{
    const char *loom_id = json_string_value(json_object_get(payload, "approval_id"));
    if (!loom_id || find_loom(r, loom_id))
        return;
    srv_approval *a = calloc(1, sizeof *a);
    svc_new_id("apv_", a->id);
    snprintf(a->loom_id, sizeof a->loom_id, "%s", loom_id);
    snprintf(a->status, sizeof a->status, "pending");
    const char *tool = json_string_value(json_object_get(payload, "tool")) ?: "?";
    json_t *input = json_object_get(payload, "input");
    const char *command = json_string_value(json_object_get(input, "command"));
    char question[600];
    if (command)
        snprintf(question, sizeof question, "Allow %s: %s?", tool, command);
    else
        snprintf(question, sizeof question, "Allow %s?", tool);
    char now[32];
    svc_now(now);
    const char *req = json_string_value(json_object_get(payload, "requested_at")) ?: now;
    const char *exp = json_string_value(json_object_get(payload, "expires_at"));
    json_t *o = json_object();
    json_object_set_new(o, "approval_id", json_string(a->id));
    json_object_set_new(o, "run_id", json_string(r->id));
    json_object_set_new(o, "session_id", json_string(r->session_id));
    json_object_set_new(o, "tenant_id", json_string(r->tenant_id));
    json_object_set_new(o, "project_id", r->project_id ? json_string(r->project_id) : json_null());
    json_object_set_new(o, "kind", json_string("tool_execution"));
    json_object_set_new(o, "status", json_string("pending"));
    json_object_set_new(o, "question", json_string(question));
    json_t *ctx = json_object();
    json_object_set_new(ctx, "tool", json_string(tool));
    if (command)
        json_object_set_new(ctx, "command", json_string(command));
    json_object_set(ctx, "input", input ? input : json_null());
    /* Why a person is asked (ExitPlanMode: the mode approving restores). */
    const char *why = json_string_value(json_object_get(payload, "message"));
    if (why && *why)
        json_object_set_new(ctx, "reason", json_string(why));
    json_object_set_new(o, "context", ctx);
    json_object_set_new(o, "requested_at", json_string(req));
    json_object_set_new(o, "expires_at", exp ? json_string(exp) : json_null());
    long timeout = exp ? (long)(iso_seconds(exp) - iso_seconds(req)) : 0;
    json_object_set_new(o, "timeout_seconds", json_integer(timeout > 0 ? timeout : 0));
    json_object_set_new(o, "resolved_at", json_null());
    json_object_set_new(o, "actor_id", json_null());
    json_object_set_new(o, "comment", json_null());
    json_object_set_new(o, "scopes", svc_scopes(r->tenant_id, r->project_id, r->session_id,
                                                r->id));
    a->doc = json_dumps(o, JSON_COMPACT);
    a->next = r->approvals;
    r->approvals = a;
    store_doc_keys keys = {r->tenant_id, r->id, "pending", req};
    writer_doc(svc->w, STORE_APPROVAL, a->id, &keys, 0, json_dumps(o, JSON_COMPACT));
    next_pending(r);
    if (r->state == LOOM_RUN_RUNNING)
        svc_transition(svc, r, LOOM_RUN_WAITING_APPROVAL, NULL, NULL);
    snprintf(r->current_step, sizeof r->current_step, "waiting_approval");
    svc_run_store(svc, r);
    pthread_cond_broadcast(&svc->cv);
    /* The webhook sender only queues: fine under the lock. */
    char eid[SVC_ID_LEN + 24];
    snprintf(eid, sizeof eid, "%s.%lld", r->id, (long long)r->seq);
    const tenant_config *t = svc->wh ? svc_tenant(svc, r->tenant_id) : NULL;
    if (t && t->n_webhooks)
        webhooks_emit(svc->wh, t, "approval.requested", eid, a->doc);
    json_decref(o);
}

void apv_resolved(service *svc, srv_run *r, json_t *payload)
{
    const char *loom_id = json_string_value(json_object_get(payload, "approval_id"));
    srv_approval *a = loom_id ? find_loom(r, loom_id) : NULL;
    if (!a)
        return;
    const char *status = json_string_value(json_object_get(payload, "status"));
    if (status && !strcmp(status, "expired"))
        apv_set(svc, r, a, "expired", NULL, NULL, "nobody answered before it expired");
    else if (!strcmp(a->status, "pending") && status)
        apv_set(svc, r, a, status, NULL, NULL, NULL);
    next_pending(r);
    if (!r->pending_approval_id[0] && r->state == LOOM_RUN_WAITING_APPROVAL) {
        svc_transition(svc, r, LOOM_RUN_RUNNING, NULL, NULL);
        snprintf(r->current_step, sizeof r->current_step, "tool:%s",
                 json_string_value(json_object_get(payload, "tool")) ?: "?");
    }
    svc_run_store(svc, r);
}

void apv_cancel_pending(service *svc, srv_run *r)
{
    for (srv_approval *a = r->approvals; a; a = a->next)
        if (!strcmp(a->status, "pending"))
            apv_set(svc, r, a, "cancelled", NULL, NULL, "the run ended");
}

/* ---- the calls --------------------------------------------------------------- */

/* The stored approval, checked for who. */
static json_t *approval_doc(service *svc, const principal *who, const char *id, token_role need,
                            srv_error *err)
{
    writer_flush(svc->w);
    srv_error e = {0};
    char *doc = strncmp(id, "apv_", 4) ? NULL : svc->st->ops->get(svc->st, STORE_APPROVAL, id, &e);
    srv_error_clear(&e);
    json_t *o = doc ? json_loads(doc, 0, NULL) : NULL;
    free(doc);
    if (!o)
        return srv_fail(err, LOOM_ERR_RESOURCE_NOT_FOUND, "approval %s not found", id), NULL;
    if (svc_access(who, json_string_value(json_object_get(o, "tenant_id")),
                   json_string_value(json_object_get(o, "project_id")), need,
                   LOOM_ERR_PROJECT_SCOPE_DENIED, "approval", id, err) != 0) {
        json_decref(o);
        return NULL;
    }
    return o;
}

char *service_approval_get(service *svc, const principal *who, const char *id, srv_error *err)
{
    json_t *o = approval_doc(svc, who, id, ROLE_VIEWER, err);
    return o ? svc_dump(o) : NULL;
}

char *service_approval_list(service *svc, const principal *who, const char *run_id,
                            const char *status, srv_error *err)
{
    if (run_id && !svc_run_for(svc, who, run_id, ROLE_VIEWER, err))
        return NULL;
    if (!who || !who->tenant_id)
        return srv_fail(err, LOOM_ERR_UNAUTHENTICATED, "no principal"), NULL;
    writer_flush(svc->w);
    json_t *items = json_array();
    char *cursor = NULL;
    do {
        store_list_query q = {who->tenant_id, run_id, status, cursor, 1000};
        char *next = NULL;
        char *arr = svc->st->ops->list(svc->st, STORE_APPROVAL, &q, &next, err);
        free(cursor);
        cursor = next;
        if (!arr) {
            json_decref(items);
            free(cursor);
            return NULL;
        }
        json_t *docs = json_loads(arr, 0, NULL);
        free(arr);
        size_t i;
        json_t *d;
        json_array_foreach(docs, i, d) {
            const char *pid = json_string_value(json_object_get(d, "project_id"));
            if (!who->project_id || (pid && !strcmp(pid, who->project_id)))
                json_array_append(items, d);
        }
        json_decref(docs);
    } while (cursor);
    json_t *o = json_object();
    json_object_set_new(o, "items", items);
    return svc_dump(o);
}

/* The answer to an approval of a run another worker holds: a control for
 * that worker, which answers loom there; the approval as it is once it is
 * answered (or after CLUSTER_CONTROL_WAIT_MS, still pending). */
static char *answer_remote(service *svc, const principal *who, const char *id,
                           const char *run_id, bool approve, json_t *body, srv_error *err)
{
    json_t *c = json_object();
    json_object_set_new(c, "what", json_string(approve ? "approve" : "reject"));
    json_object_set_new(c, "approval_id", json_string(id));
    json_t *b = json_deep_copy(body);
    if (!json_object_get(b, "actor_id") && who->actor_id)
        json_object_set_new(b, "actor_id", json_string(who->actor_id));
    json_object_set_new(c, "body", b);
    if (cluster_send(svc, run_id, c, err) != 0)
        return NULL;
    for (int waited = 0;; waited += CLUSTER_POLL_MS) {
        json_t *o = approval_doc(svc, who, id, ROLE_APPROVER, err);
        if (!o)
            return NULL;
        const char *st = json_string_value(json_object_get(o, "status")) ?: "";
        if (strcmp(st, "pending") != 0 || waited >= CLUSTER_CONTROL_WAIT_MS)
            return svc_dump(o);
        json_decref(o);
        clock_sleep_ms(CLUSTER_POLL_MS, NULL);
    }
}

char *service_approval_answer(service *svc, const principal *who, const char *id, bool approve,
                              const char *body_json, srv_error *err)
{
    json_t *b = svc_parse_body(body_json, err);
    if (!b)
        return NULL;
    json_t *o = approval_doc(svc, who, id, ROLE_APPROVER, err);
    if (!o) {
        json_decref(b);
        return NULL;
    }
    const char *actor = json_string_value(json_object_get(b, "actor_id"));
    if (!actor)
        actor = who->actor_id ? who->actor_id : "unknown";
    const char *comment = json_string_value(json_object_get(b, "comment"));
    char run_id[SVC_ID_LEN];
    snprintf(run_id, sizeof run_id, "%s", json_string_value(json_object_get(o, "run_id")) ?: "");
    char stored[16];
    snprintf(stored, sizeof stored, "%s", json_string_value(json_object_get(o, "status")) ?: "");
    json_decref(o);
    char *out = NULL;
    pthread_mutex_lock(&svc->mu);
    srv_run *r = svc_run_find(svc, run_id);
    if (svc->opts.cluster && (!r || !r->held) && !strcmp(stored, "pending")) {
        pthread_mutex_unlock(&svc->mu);
        out = answer_remote(svc, who, id, run_id, approve, b, err);
        json_decref(b);
        return out;
    }
    srv_approval *a = r ? find_id(r, id) : NULL;
    const char *status = a ? a->status : stored;
    if (!strcmp(status, "expired")) {
        srv_fail(err, LOOM_ERR_RUN_APPROVAL_EXPIRED, "approval %s expired", id);
    } else if (!a || strcmp(status, "pending") != 0) {
        srv_fail(err, LOOM_ERR_INVALID_STATE_TRANSITION, "approval %s is %s, not pending", id,
                 status);
    } else {
        /* Claimed now, so a second answer racing this one is refused. */
        snprintf(a->status, sizeof a->status, "answering");
    }
    char loom_id[80];
    snprintf(loom_id, sizeof loom_id, "%s", a ? a->loom_id : "");
    bool go = err->code == LOOM_OK;
    pthread_mutex_unlock(&svc->mu);
    if (!go) {
        srv_error_set_run(err, run_id);
        json_decref(b);
        return NULL;
    }
    loom_status st = {0};
    pthread_mutex_lock(&r->lr_mu);
    int rc = r->lr ? loom_run_answer(r->lr, loom_id, approve ? "allow" : "deny", comment, &st)
                   : (st.code = LOOM_ERR_INVALID_STATE_TRANSITION, -1);
    pthread_mutex_unlock(&r->lr_mu);
    pthread_mutex_lock(&svc->mu);
    if (rc != 0) {
        bool expired = st.code == LOOM_ERR_RUN_APPROVAL_EXPIRED || !strcmp(a->status, "expired");
        if (expired)
            apv_set(svc, r, a, "expired", NULL, NULL, "nobody answered before it expired");
        else if (!strcmp(a->status, "answering"))
            snprintf(a->status, sizeof a->status, "pending");
        srv_fail(err, expired ? LOOM_ERR_RUN_APPROVAL_EXPIRED : LOOM_ERR_INVALID_STATE_TRANSITION,
                 "approval %s: %s", id, expired ? "it expired" : st.message);
        srv_error_set_run(err, run_id);
    } else {
        apv_set(svc, r, a, approve ? "approved" : "rejected", actor, comment, NULL);
        json_t *p = json_object();
        json_object_set_new(p, "approval_id", json_string(id));
        json_object_set_new(p, "actor_id", json_string(actor));
        json_object_set_new(p, "decision", json_string(approve ? "approved" : "rejected"));
        json_object_set_new(p, "comment", comment ? json_string(comment) : json_null());
        svc_emit(svc, r, "approval.answered", LOOM_VIS_AUDIT, NULL, p);
        next_pending(r);
        svc_run_store(svc, r);
        out = strdup(a->doc);
    }
    pthread_mutex_unlock(&svc->mu);
    json_decref(b);
    writer_flush(svc->w);
    return out;
}
