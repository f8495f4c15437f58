/* run_ctl.c — the run calls of service.h: create (with the multitask
 * strategy, the tenant's quotas and the sync wait), get, list, cancel,
 * pause, resume. Each checks access, moves the run through the state table
 * and hands execution to the session's exec thread (run_exec.c).
 *
 * Owns the srv_run structs it makes (kept in svc->runs until service_free).
 * Threading: HTTP threads; svc->mu around the maps, released before any
 * loom.h call (cancel and pause go through run->lr_mu). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/clock.h"
#include "surfaces/server/runs/service_int.h"

static char *dup_or_null(const char *s)
{
    return s ? strdup(s) : NULL;
}

static srv_run *run_new(service *svc, json_t *task, srv_session *s, const char *strategy,
                        const char *note)
{
    srv_run *r = calloc(1, sizeof *r);
    svc_new_id("run_", r->id);
    snprintf(r->task_id, sizeof r->task_id, "%s",
             json_string_value(json_object_get(task, "task_id")));
    snprintf(r->session_id, sizeof r->session_id, "%s", s->id);
    r->tenant_id = strdup(s->tenant_id);
    r->project_id = dup_or_null(s->project_id);
    r->goal = dup_or_null(json_string_value(json_object_get(task, "goal")));
    r->agent_profile = dup_or_null(json_string_value(json_object_get(task, "agent_profile")));
    r->policy_id = dup_or_null(json_string_value(json_object_get(task, "policy_id")));
    snprintf(r->strategy, sizeof r->strategy, "%s", strategy);
    r->note = dup_or_null(note);
    r->state = LOOM_RUN_QUEUED;
    svc_now(r->created_at);
    snprintf(r->updated_at, sizeof r->updated_at, "%s", r->created_at);
    snprintf(r->current_step, sizeof r->current_step, "queued");
    r->sess = s;
    r->svc = svc;
    svc_run_init_mutex(r);
    return r;
}

/* The quotas a new run must fit in. (mu held) */
static int check_quotas(service *svc, srv_session *s, srv_error *err)
{
    const tenant_config *t = svc_tenant(svc, s->tenant_id);
    if (!t)
        return 0;
    long active = *svc_count(svc, s->tenant_id, NULL);
    /* A cluster counts the tenant's runs where they are claimed, over every
     * worker (cluster.c): a run past the quota waits queued there. */
    if (!svc->opts.cluster && t->quotas.concurrent_runs > 0 &&
        active >= t->quotas.concurrent_runs)
        return srv_fail(err, LOOM_ERR_TENANT_QUOTA_EXCEEDED,
                        "tenant %s has %ld runs going, its concurrent_runs quota", s->tenant_id,
                        active);
    long tools = *svc_count(svc, s->tenant_id, s->project_id ? s->project_id : "");
    if (t->quotas.tool_executions_per_project > 0 &&
        tools >= t->quotas.tool_executions_per_project)
        return srv_fail(err, LOOM_ERR_TENANT_QUOTA_EXCEEDED,
                        "project %s has run %ld tools, its tool_executions_per_project quota",
                        s->project_id ? s->project_id : "", tools);
    if (t->quotas.tokens_per_session > 0 && s->tokens_used >= t->quotas.tokens_per_session)
        return srv_fail(err, LOOM_ERR_TENANT_QUOTA_EXCEEDED,
                        "session %s has spent %ld tokens, its tokens_per_session quota", s->id,
                        s->tokens_used);
    return 0;
}

/* The run the session is busy with (executing or queued), or NULL. (mu held) */
static srv_run *busy_with(srv_session *s)
{
    if (s->active && run_state_active(s->active->state))
        return s->active;
    for (srv_run *q = s->queue_head; q; q = q->queue_next)
        if (run_state_active(q->state))
            return q;
    return NULL;
}

static void enqueue(srv_session *s, srv_run *r, bool front)
{
    r->queue_next = NULL;
    if (!s->active && !s->queue_head) {
        s->active = r;
        return;
    }
    if (front) {
        r->queue_next = s->queue_head;
        s->queue_head = r;
        if (!s->queue_tail)
            s->queue_tail = r;
        return;
    }
    if (s->queue_tail)
        s->queue_tail->queue_next = r;
    else
        s->queue_head = r;
    s->queue_tail = r;
}

static void cancel_loom(srv_run *r)
{
    pthread_mutex_lock(&r->lr_mu);
    if (r->lr)
        loom_run_cancel(r->lr);
    pthread_mutex_unlock(&r->lr_mu);
}

/* Waits for r to end or to wait for a person (sync mode). */
static char *wait_for(service *svc, srv_run *r, long wait_ms, bool *ended, srv_error *err)
{
    struct timespec dl;
    clock_deadline(&dl, CLOCK_REALTIME, wait_ms);
    pthread_mutex_lock(&svc->mu);
    while (run_state_active(r->state) && r->state != LOOM_RUN_WAITING_APPROVAL) {
        if (cluster_remote(svc, r)) {
            /* Another worker runs it: its state is read from the store
             * every tick (CLUSTER_POLL_MS) until it ends or the wait does. */
            struct timespec tick;
            clock_deadline(&tick, CLOCK_REALTIME, CLUSTER_POLL_MS);
            bool last = tick.tv_sec > dl.tv_sec ||
                        (tick.tv_sec == dl.tv_sec && tick.tv_nsec >= dl.tv_nsec);
            pthread_cond_timedwait(&svc->cv, &svc->mu, last ? &dl : &tick);
            pthread_mutex_unlock(&svc->mu);
            cluster_refresh(svc, r);
            pthread_mutex_lock(&svc->mu);
            if (last)
                break;
            continue;
        }
        if (pthread_cond_timedwait(&svc->cv, &svc->mu, &dl) == ETIMEDOUT)
            break;
    }
    loom_run_state st = r->state;
    char apv[SVC_ID_LEN];
    snprintf(apv, sizeof apv, "%s", r->pending_approval_id);
    char *out = svc_dump(svc_run_json(r));
    pthread_mutex_unlock(&svc->mu);
    writer_flush(svc->w);
    if (st == LOOM_RUN_WAITING_APPROVAL) {
        free(out);
        srv_fail(err, LOOM_ERR_RUN_WAITING_APPROVAL, "run %s waits for the approval %s", r->id,
                 apv);
        srv_error_set_run(err, r->id);
        json_t *d = json_object();
        json_object_set_new(d, "approval_id", json_string(apv));
        srv_error_set_details(err, svc_dump(d));
        return NULL;
    }
    *ended = !run_state_active(st);
    return out;
}

static const char *strategy_of(json_t *b, srv_error *err)
{
    json_t *v = json_object_get(b, "multitask_strategy");
    if (!v || json_is_null(v))
        return "reject";
    const char *s = json_string_value(v);
    if (s && (!strcmp(s, "reject") || !strcmp(s, "enqueue") || !strcmp(s, "interrupt")))
        return s;
    srv_fail(err, LOOM_ERR_INVALID_REQUEST,
             "multitask_strategy must be reject, enqueue or interrupt");
    return NULL;
}

/* The task and its session, checked for who (member). */
static json_t *task_for_run(service *svc, const principal *who, json_t *b, srv_session **sess,
                            srv_error *err)
{
    const char *tid = json_string_value(json_object_get(b, "task_id"));
    if (!tid)
        return srv_fail(err, LOOM_ERR_INVALID_REQUEST, "a run needs task_id"), NULL;
    srv_error e = {0};
    char *doc = svc->st->ops->get(svc->st, STORE_TASK, tid, &e);
    srv_error_clear(&e);
    json_t *task = doc ? json_loads(doc, 0, NULL) : NULL;
    free(doc);
    if (!task)
        return srv_fail(err, LOOM_ERR_RESOURCE_NOT_FOUND, "task %s not found", tid), NULL;
    if (svc_access(who, json_string_value(json_object_get(task, "tenant_id")),
                   json_string_value(json_object_get(task, "project_id")), ROLE_MEMBER,
                   LOOM_ERR_PROJECT_SCOPE_DENIED, "task", tid, err) != 0 ||
        !(*sess = svc_session_load(svc, json_string_value(json_object_get(task, "session_id")),
                                   err))) {
        json_decref(task);
        return NULL;
    }
    return task;
}

char *service_run_create(service *svc, const principal *who, const char *body_json,
                         long wait_ms, bool *ended, srv_error *err)
{
    bool dummy;
    if (!ended)
        ended = &dummy;
    *ended = false;
    json_t *b = svc_parse_body(body_json, err);
    if (!b)
        return NULL;
    srv_session *s = NULL;
    char strategy[12] = "";
    const char *given = strategy_of(b, err);
    if (given) /* kept past the body's life */
        snprintf(strategy, sizeof strategy, "%s", given);
    json_t *task = given ? task_for_run(svc, who, b, &s, err) : NULL;
    if (!task) {
        json_decref(b);
        return NULL;
    }
    pthread_mutex_lock(&svc->mu);
    srv_run *busy = busy_with(s);
    if (check_quotas(svc, s, err) != 0 || (busy && !strcmp(strategy, "reject"))) {
        if (busy && err->code == LOOM_OK) {
            srv_fail(err, LOOM_ERR_INVALID_STATE_TRANSITION,
                     "session %s has the active run %s (multitask_strategy reject)", s->id,
                     busy->id);
            srv_error_set_run(err, busy->id);
        }
        pthread_mutex_unlock(&svc->mu);
        json_decref(task);
        json_decref(b);
        return NULL;
    }
    srv_run *r = run_new(svc, task, s, strategy, json_string_value(json_object_get(b, "note")));
    /* Claimed before the tenant's lower ones (checked -1000..1000 by the
     * route); the task's when the run gives none. */
    json_t *prio = json_object_get(b, "priority");
    r->priority = (int)json_integer_value(prio ? prio : json_object_get(task, "priority"));
    json_decref(task);
    json_decref(b);
    unsigned h = svc_hash(r->id);
    r->next = svc->runs[h];
    svc->runs[h] = r;
    (*svc_count(svc, r->tenant_id, NULL))++;
    json_t *p = json_object();
    json_object_set_new(p, "from", json_null());
    json_object_set_new(p, "state", json_string("queued"));
    svc_emit(svc, r, "run.state_changed", LOOM_VIS_SYSTEM, NULL, p);
    svc_run_store(svc, r);
    bool interrupt = busy && !strcmp(strategy, "interrupt");
    if (interrupt) {
        char why[SVC_ID_LEN + 32];
        snprintf(why, sizeof why, "interrupted by %s", r->id);
        free(busy->cancel_reason);
        busy->cancel_reason = strdup(why);
        busy->cancel_pending = true;
    }
    bool cluster = svc->opts.cluster;
    if (!cluster) { /* in a cluster, the worker that claims it runs it (cluster.c) */
        enqueue(s, r, interrupt);
        svc_session_store(svc, s);
        svc_kick(svc, s);
    }
    char *out = wait_ms < 0 ? svc_dump(svc_run_json(r)) : NULL;
    pthread_mutex_unlock(&svc->mu);
    if (cluster) {
        writer_flush(svc->w); /* stored, so a claim can find it */
        cluster_wake(svc);
    }
    if (interrupt)
        cancel_loom(busy);
    if (wait_ms < 0) {
        writer_flush(svc->w);
        return out;
    }
    return wait_for(svc, r, wait_ms, ended, err);
}

/* The run, checked for who. */
static srv_run *run_for(service *svc, const principal *who, const char *id, token_role need,
                        srv_error *err)
{
    srv_run *r = svc_run_load(svc, id, err);
    if (!r)
        return NULL;
    cluster_refresh(svc, r); /* another worker's run: as the store has it */
    if (svc_access(who, r->tenant_id, r->project_id, need, LOOM_ERR_PROJECT_SCOPE_DENIED, "run",
                   id, err) != 0)
        return NULL;
    return r;
}

srv_run *svc_run_for(service *svc, const principal *who, const char *id, token_role need,
                     srv_error *err)
{
    return run_for(svc, who, id, need, err);
}

char *service_run_get(service *svc, const principal *who, const char *id, srv_error *err)
{
    srv_run *r = run_for(svc, who, id, ROLE_VIEWER, err);
    if (!r)
        return NULL;
    pthread_mutex_lock(&svc->mu);
    char *out = svc_dump(svc_run_json(r));
    pthread_mutex_unlock(&svc->mu);
    /* The state read above came with its run.state_changed queued: wait
     * until that is stored, so a client that sees "completed" here finds
     * the event in the events page too. */
    writer_flush(svc->w);
    return out;
}

char *service_run_list(service *svc, const principal *who, const char *session_id,
                       const char *state, const char *cursor, int limit, srv_error *err)
{
    if (limit <= 0)
        limit = 50;
    if (limit > 200)
        return srv_fail(err, LOOM_ERR_INVALID_REQUEST, "limit must be from 1 to 200"), NULL;
    if (state && loom_run_state_from_name(state) < 0)
        return srv_fail(err, LOOM_ERR_INVALID_REQUEST, "state %s is not a run state", state),
               NULL;
    if (!who || !who->tenant_id)
        return srv_fail(err, LOOM_ERR_UNAUTHENTICATED, "no principal"), NULL;
    if (session_id) {
        srv_session *s = svc_session_load(svc, session_id, err);
        if (!s || svc_access(who, s->tenant_id, s->project_id, ROLE_VIEWER,
                             LOOM_ERR_PROJECT_SCOPE_DENIED, "session", session_id, err) != 0)
            return NULL;
    }
    writer_flush(svc->w);
    store_list_query q = {who->tenant_id, session_id, state, cursor, limit};
    char *next = NULL;
    char *arr = svc->st->ops->list(svc->st, STORE_RUN, &q, &next, err);
    if (!arr)
        return NULL;
    json_t *docs = json_loads(arr, 0, NULL);
    free(arr);
    json_t *items = json_array();
    size_t i;
    json_t *d;
    pthread_mutex_lock(&svc->mu);
    json_array_foreach(docs, i, d) {
        const char *pid = json_string_value(json_object_get(d, "project_id"));
        if (who->project_id && (!pid || strcmp(pid, who->project_id)))
            continue;
        srv_run *live = svc_run_find(svc, json_string_value(json_object_get(d, "run_id")) ?: "");
        /* Another worker's run: the stored document is the news. */
        if (live && cluster_remote(svc, live))
            live = NULL;
        json_array_append_new(items, live ? svc_run_json(live) : json_incref(d));
    }
    pthread_mutex_unlock(&svc->mu);
    json_decref(docs);
    writer_flush(svc->w); /* as service_run_get: no state ahead of its event */
    json_t *o = json_object();
    json_object_set_new(o, "items", items);
    json_object_set_new(o, "next_cursor", next ? json_string(next) : json_null());
    free(next);
    return svc_dump(o);
}

/* Takes r out of its session's queue; whether it was there. (mu held) */
static bool unqueue(srv_session *s, srv_run *r)
{
    srv_run **pp = &s->queue_head, *prev = NULL;
    for (; *pp; prev = *pp, pp = &(*pp)->queue_next)
        if (*pp == r) {
            *pp = r->queue_next;
            if (s->queue_tail == r)
                s->queue_tail = prev;
            r->queue_next = NULL;
            return true;
        }
    return false;
}

/* Cancel of a run another worker holds (or none yet: queued): a control
 * its holder applies; the answer is the run once it ended, or as it is
 * after CLUSTER_CONTROL_WAIT_MS. */
static char *cancel_remote(service *svc, const principal *who, srv_run *r, const char *why,
                           srv_error *err)
{
    json_t *c = json_object();
    json_object_set_new(c, "what", json_string("cancel"));
    json_object_set_new(c, "body", json_pack("{s:s}", "reason", why));
    if (cluster_send(svc, r->id, c, err) != 0)
        return NULL;
    for (int waited = 0; waited < CLUSTER_CONTROL_WAIT_MS; waited += CLUSTER_POLL_MS) {
        cluster_refresh(svc, r);
        pthread_mutex_lock(&svc->mu);
        bool active = run_state_active(r->state);
        pthread_mutex_unlock(&svc->mu);
        if (!active)
            break;
        clock_sleep_ms(CLUSTER_POLL_MS, NULL);
    }
    return service_run_get(svc, who, r->id, err);
}

char *service_run_cancel(service *svc, const principal *who, const char *id,
                         const char *body_json, srv_error *err)
{
    srv_run *r = run_for(svc, who, id, ROLE_MEMBER, err);
    if (!r)
        return NULL;
    json_t *b = svc_parse_body(body_json, err);
    if (!b)
        return NULL;
    char why[300];
    const char *given = json_string_value(json_object_get(b, "reason"));
    snprintf(why, sizeof why, "%s", given ? given : "cancelled");
    json_decref(b);
    pthread_mutex_lock(&svc->mu);
    if (cluster_remote(svc, r) && run_state_active(r->state)) {
        pthread_mutex_unlock(&svc->mu);
        return cancel_remote(svc, who, r, why, err);
    }
    bool now = false, loom = false;
    if (r->state == LOOM_RUN_PAUSED || (r->state == LOOM_RUN_QUEUED && unqueue(r->sess, r))) {
        now = true;
    } else if (run_state_active(r->state)) {
        free(r->cancel_reason);
        r->cancel_reason = strdup(why);
        r->cancel_pending = true;
        loom = true;
        pthread_cond_broadcast(&svc->cv); /* a question waiting for its answer gives up */
    } else {
        srv_fail(err, LOOM_ERR_INVALID_STATE_TRANSITION, "run %s is %s; it cannot be cancelled",
                 id, loom_run_state_name(r->state));
        srv_error_set_run(err, id);
        pthread_mutex_unlock(&svc->mu);
        return NULL;
    }
    pthread_mutex_unlock(&svc->mu);
    if (now)
        svc_end_without_loom(svc, r, LOOM_RUN_CANCELLED, LOOM_ERR_RUN_CANCELLED, why);
    if (loom)
        cancel_loom(r);
    writer_flush(svc->w);
    return service_run_get(svc, who, id, err);
}

char *service_run_pause(service *svc, const principal *who, const char *id, srv_error *err)
{
    srv_run *r = run_for(svc, who, id, ROLE_MEMBER, err);
    if (!r)
        return NULL;
    pthread_mutex_lock(&svc->mu);
    bool remote = cluster_remote(svc, r) && run_state_active(r->state) &&
                  r->state != LOOM_RUN_QUEUED;
    pthread_mutex_unlock(&svc->mu);
    if (remote)
        return cluster_forward(svc, who, r, "pause", NULL, err);
    pthread_mutex_lock(&svc->mu);
    if (r->state != LOOM_RUN_RUNNING && r->state != LOOM_RUN_WAITING_APPROVAL &&
        r->state != LOOM_RUN_WAITING_EXTERNAL) {
        srv_fail(err, LOOM_ERR_INVALID_STATE_TRANSITION, "run %s is %s; it cannot be paused", id,
                 loom_run_state_name(r->state));
        srv_error_set_run(err, id);
        pthread_mutex_unlock(&svc->mu);
        return NULL;
    }
    r->pause_pending = true;
    pthread_cond_broadcast(&svc->cv); /* a question waiting for its answer gives up */
    pthread_mutex_unlock(&svc->mu);
    pthread_mutex_lock(&r->lr_mu);
    if (r->lr)
        loom_run_pause(r->lr, NULL);
    pthread_mutex_unlock(&r->lr_mu);
    return service_run_get(svc, who, id, err);
}

char *service_run_resume(service *svc, const principal *who, const char *id,
                         const char *body_json, srv_error *err)
{
    srv_run *r = run_for(svc, who, id, ROLE_MEMBER, err);
    if (!r)
        return NULL;
    json_t *b = svc_parse_body(body_json, err);
    if (!b)
        return NULL;
    pthread_mutex_lock(&svc->mu);
    bool resumable = r->state == LOOM_RUN_PAUSED ||
                     (r->state == LOOM_RUN_FAILED && r->err_code == LOOM_ERR_RUN_RESUMABLE);
    if (!resumable || check_quotas(svc, r->sess, err) != 0) {
        if (!resumable)
            srv_fail(err,
                     r->state == LOOM_RUN_FAILED ? LOOM_ERR_RUN_NOT_RESUMABLE
                                                 : LOOM_ERR_INVALID_STATE_TRANSITION,
                     "run %s is %s%s; it cannot be resumed", id, loom_run_state_name(r->state),
                     r->state == LOOM_RUN_FAILED ? " (not resumable)" : "");
        srv_error_set_run(err, id);
        pthread_mutex_unlock(&svc->mu);
        json_decref(b);
        return NULL;
    }
    free(r->note);
    r->note = json_string_value(json_object_get(b, "note"))
                  ? strdup(json_string_value(json_object_get(b, "note")))
                  : NULL;
    json_decref(b);
    r->continue_next = true;
    r->cancel_pending = r->pause_pending = false;
    free(r->cancel_reason);
    r->cancel_reason = NULL;
    r->err_code = LOOM_OK;
    free(r->err_message);
    r->err_message = NULL;
    svc_transition(svc, r, LOOM_RUN_QUEUED, "resumed", NULL);
    bool cluster = svc->opts.cluster;
    if (!cluster) {
        enqueue(r->sess, r, false);
        svc_session_store(svc, r->sess);
        svc_kick(svc, r->sess);
    }
    char *out = svc_dump(svc_run_json(r));
    pthread_mutex_unlock(&svc->mu);
    if (cluster) {
        writer_flush(svc->w);
        cluster_wake(svc);
    }
    writer_flush(svc->w);
    return out;
}
