/* cluster.c — a loom-serve as one worker of several sharing a PostgreSQL
 * store (service_options.cluster; docs/deploy.md). A run is executed by the
 * worker holding its lease, never by the node a client made it on:
 *
 *  - The renewal thread renews this worker's leases every third of their
 *    length, on its own (renew_main). The cluster thread, every tick
 *    (CLUSTER_TICK_MS, or at once when a run is queued here or a slot
 *    frees): takes the controls other nodes sent for the
 *    runs it holds (cancel, an approval's answer) and applies them, and
 *    claims runs into its free slots (store.h lease_claim: oldest first per
 *    tenant, tenants in turn, the tenant's concurrent_runs counted over the
 *    whole cluster).
 *  - A claimed queued run goes to its session's exec thread as a local one
 *    does. A claimed run that was active (running or waiting) had a worker
 *    die under it: its tool calls in flight are recorded as interrupted
 *    (tool.interrupted) and never re-run, its pending approvals expire, and
 *    it is resumed from its session's last recorded turn (loom_run_continue
 *    on the shared JSONL) with a note that tells the model so.
 *  - Controls (cancel, pause, an AskUserQuestion answer, an approval's
 *    answer) travel through the store, and a run another worker holds is
 *    read from the store when it is shown (cluster_refresh), so any node
 *    answers for any run. The store's notices (LISTEN/NOTIFY, store.h
 *    listen; cluster_notice) wake the cluster thread at once for a control,
 *    a queued or ended run, and a remote run's feeds for its new events;
 *    the polling stays behind them as a slow fallback (CLUSTER_FALLBACK_MS).
 *  - Fencing: every write of a held run carries its lease's epoch
 *    (svc_fence); a write refused by it, or a renewal that no longer names
 *    the run, means another worker reclaimed it while this one stalled:
 *    the run is abandoned here (cluster_abandon: writes dropped, loom run
 *    cancelled, no webhook).
 *
 * Owns the two threads. Threading: the cluster thread and its callers take
 * svc->mu as the rest of runs/ does; no store call is made under it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/clock.h"
#include "surfaces/server/runs/service_int.h"

#define CLUSTER_TICK_MS 100
#define REPLAY_EVENTS 10000

bool cluster_remote(service *svc, const srv_run *r)
{
    return svc->opts.cluster && !r->held;
}

int cluster_send(service *svc, const char *run_id, json_t *control, srv_error *err)
{
    char *text = svc_dump(control);
    int rc = svc->st->ops->control_send(svc->st, run_id, text, err);
    free(text);
    return rc;
}

char *cluster_forward(service *svc, const principal *who, srv_run *r, const char *what,
                      const char *body_json, srv_error *err)
{
    json_t *body = body_json && *body_json ? json_loads(body_json, 0, NULL) : json_object();
    if (!json_is_object(body)) {
        json_decref(body);
        return srv_fail(err, LOOM_ERR_INVALID_REQUEST, "the body must be a JSON object"), NULL;
    }
    pthread_mutex_lock(&svc->mu);
    loom_run_state was = r->state;
    pthread_mutex_unlock(&svc->mu);
    json_t *c = json_object();
    json_object_set_new(c, "what", json_string(what));
    json_object_set_new(c, "body", body);
    if (cluster_send(svc, r->id, c, err) != 0)
        return NULL;
    for (int waited = 0; waited < CLUSTER_CONTROL_WAIT_MS; waited += CLUSTER_POLL_MS) {
        cluster_refresh(svc, r);
        pthread_mutex_lock(&svc->mu);
        bool moved = r->state != was;
        pthread_mutex_unlock(&svc->mu);
        if (moved)
            break;
        clock_sleep_ms(CLUSTER_POLL_MS, NULL);
    }
    return service_run_get(svc, who, r->id, err);
}

void cluster_wake(service *svc)
{
    pthread_mutex_lock(&svc->mu);
    pthread_cond_broadcast(&svc->cluster_cv);
    pthread_mutex_unlock(&svc->mu);
}

static void set_text(char **dst, json_t *o, const char *key)
{
    const char *v = json_string_value(json_object_get(o, key));
    free(*dst);
    *dst = v ? strdup(v) : NULL;
}

static void set_buf(char *dst, size_t cap, json_t *o, const char *key)
{
    snprintf(dst, cap, "%s", json_string_value(json_object_get(o, key)) ?: "");
}

void cluster_refresh(service *svc, srv_run *r)
{
    pthread_mutex_lock(&svc->mu);
    bool remote = cluster_remote(svc, r);
    pthread_mutex_unlock(&svc->mu);
    if (!remote)
        return;
    srv_error err = {0};
    char *doc = svc->st->ops->get(svc->st, STORE_RUN, r->id, &err);
    int64_t max = svc->st->ops->max_seq(svc->st, r->id, &err);
    srv_error_clear(&err);
    json_t *o = doc ? json_loads(doc, 0, NULL) : NULL;
    free(doc);
    if (!o)
        return;
    pthread_mutex_lock(&svc->mu);
    if (cluster_remote(svc, r)) { /* not claimed here meanwhile */
        int st = loom_run_state_from_name(json_string_value(json_object_get(o, "state")));
        if (st >= 0)
            r->state = (loom_run_state)st;
        set_buf(r->current_step, sizeof r->current_step, o, "current_step");
        set_buf(r->updated_at, sizeof r->updated_at, o, "updated_at");
        set_buf(r->started_at, sizeof r->started_at, o, "started_at");
        set_buf(r->ended_at, sizeof r->ended_at, o, "ended_at");
        set_buf(r->pending_approval_id, sizeof r->pending_approval_id, o,
                "pending_approval_id");
        set_text(&r->summary, o, "summary");
        set_text(&r->stop_reason, o, "stop_reason");
        json_t *e = json_object_get(o, "error");
        int c = json_is_object(e)
                    ? loom_error_code_from_name(json_string_value(json_object_get(e, "code")))
                    : 0;
        r->err_code = json_is_object(e) ? (c > 0 ? (loom_error_code)c : LOOM_ERR_INTERNAL)
                                        : LOOM_OK;
        set_text(&r->err_message, e, "message");
        json_t *u = json_object_get(o, "usage");
        r->in_tok = (long)json_integer_value(json_object_get(u, "input_tokens"));
        r->out_tok = (long)json_integer_value(json_object_get(u, "output_tokens"));
        if (max > r->seq)
            r->seq = max;
        if (max > r->stored_seq) {
            r->stored_seq = max;
            pthread_cond_broadcast(&r->feed_cv);
        }
        pthread_cond_broadcast(&svc->cv);
    }
    pthread_mutex_unlock(&svc->mu);
    json_decref(o);
}

/* The call ids of tool.started events with no tool.finished / tool.failed
 * after them: what was in flight when the run's worker died. */
static json_t *in_flight(service *svc, const char *run_id)
{
    json_t *open = json_object();
    srv_error err = {0};
    int64_t last = 0;
    char *arr = svc->st->ops->events_after(svc->st, run_id, 0, REPLAY_EVENTS, &last, &err);
    srv_error_clear(&err);
    json_t *evs = arr ? json_loads(arr, 0, NULL) : NULL;
    free(arr);
    size_t i;
    json_t *e;
    json_array_foreach(evs, i, e) {
        const char *type = json_string_value(json_object_get(e, "type")) ?: "";
        json_t *p = json_object_get(e, "payload");
        const char *id = json_string_value(json_object_get(p, "call_id"));
        if (!id)
            continue;
        if (!strcmp(type, "tool.started"))
            json_object_set(open, id, json_object_get(p, "tool"));
        else if (!strcmp(type, "tool.finished") || !strcmp(type, "tool.failed"))
            json_object_del(open, id);
    }
    json_decref(evs);
    return open;
}

/* A run that was active under an expired lease: recorded, then queued to
 * go on from its last turn; its calls in flight by the events are
 * interrupted here, those only its session shows at its start
 * (cluster_open_calls, which writes the note). (mu not held) */
static void take_over(service *svc, srv_run *r)
{
    json_t *open = in_flight(svc, r->id);
    svc_expire_approvals(svc, r->tenant_id, r->id, "the worker running it stopped");
    char why[200];
    pthread_mutex_lock(&svc->mu);
    snprintf(why, sizeof why, "the worker running it stopped while it was %s; %s resumes it",
             loom_run_state_name(r->state), svc->worker_id);
    const char *id;
    json_t *tool;
    json_object_foreach(open, id, tool) {
        json_t *p = json_object();
        json_object_set_new(p, "call_id", json_string(id));
        json_object_set(p, "tool", tool);
        json_object_set_new(p, "reason", json_string("its worker stopped while it ran; "
                                                     "it is not run again"));
        svc_emit(svc, r, "tool.interrupted", LOOM_VIS_SYSTEM, id, p);
    }
    r->pending_approval_id[0] = '\0';
    r->err_code = LOOM_ERR_RUN_RESUMABLE;
    free(r->err_message);
    r->err_message = strdup(why);
    svc_transition(svc, r, LOOM_RUN_FAILED, why, NULL);
    r->err_code = LOOM_OK;
    free(r->err_message);
    r->err_message = NULL;
    svc_transition(svc, r, LOOM_RUN_QUEUED, "reclaimed after its worker's lease expired", NULL);
    free(r->note);
    r->note = strdup("The process running this task stopped unexpectedly and another one "
                     "carries on from the last recorded turn.");
    json_decref(r->interrupted);
    r->interrupted = open;
    r->continue_next = true;
    r->moved = true;
    pthread_mutex_unlock(&svc->mu);
}

/* The session's loom id as the store has it now (another worker may have
 * made the loom session since this one last saw the session). */
static void session_sync(service *svc, srv_session *s)
{
    srv_error err = {0};
    char *doc = svc->st->ops->get(svc->st, STORE_SESSION, s->id, &err);
    srv_error_clear(&err);
    json_t *o = doc ? json_loads(doc, 0, NULL) : NULL;
    free(doc);
    const char *lsid = json_string_value(json_object_get(o, "loom_session_id"));
    pthread_mutex_lock(&svc->mu);
    if (lsid && (!s->loom_session_id || strcmp(lsid, s->loom_session_id))) {
        free(s->loom_session_id);
        s->loom_session_id = strdup(lsid);
    }
    pthread_mutex_unlock(&svc->mu);
    json_decref(o);
}

/* A run this worker now holds (at epoch): to its session's exec thread. */
static void adopt(service *svc, const char *id, int64_t epoch)
{
    srv_error err = {0};
    srv_run *r = svc_run_load(svc, id, &err);
    if (!r) {
        fprintf(stderr, "loom-serve: claimed run %s cannot be loaded: %s\n", id, err.message);
        srv_error_clear(&err);
        svc->st->ops->lease_release(svc->st, id, svc->worker_id, &err);
        srv_error_clear(&err);
        return;
    }
    pthread_mutex_lock(&svc->mu);
    /* Still here: ending after this worker lost it, or still running, its
     * lease having expired while this worker stalled (the claim found its
     * own expired lease): lost all the same. */
    bool busy = r->abandoned || r->sess->active == r;
    if (busy)
        cluster_abandon(svc, r, "its lease expired while it ran here (this worker stalled)");
    pthread_mutex_unlock(&svc->mu);
    if (busy) {
        /* Not twice at once in this process: back, for a later claim. */
        svc->st->ops->lease_release(svc->st, id, svc->worker_id, &err);
        srv_error_clear(&err);
        return;
    }
    cluster_refresh(svc, r); /* a copy made here earlier is stale */
    session_sync(svc, r->sess);
    /* The store's seq is the run's: a run this worker abandoned earlier
     * counted events here that were dropped, never stored. */
    int64_t max = svc->st->ops->max_seq(svc->st, id, &err);
    srv_error_clear(&err);
    pthread_mutex_lock(&svc->mu);
    if (max >= 0)
        r->seq = r->stored_seq = max;
    int64_t since = metrics_iso_ms(r->updated_at);
    metrics_claimed(svc, since > 0 ? clock_wall_ms() - since : 0, r->state != LOOM_RUN_QUEUED);
    r->held = true;
    r->lease_epoch = epoch;
    r->abandoned = false;
    svc->held++;
    loom_run_state was = r->state;
    r->continue_next = r->started_at[0] != '\0'; /* a :resume'd run goes on */
    r->moved = r->continue_next;
    pthread_mutex_unlock(&svc->mu);
    if (was != LOOM_RUN_QUEUED)
        take_over(svc, r);
    pthread_mutex_lock(&svc->mu);
    if (svc->stopping) {
        /* service_free may be past waiting for the exec threads: no new
         * one; the run goes back as it is. */
        pthread_mutex_unlock(&svc->mu);
        cluster_release(svc, r);
        return;
    }
    srv_session *s = r->sess;
    r->queue_next = NULL;
    if (!s->active && !s->queue_head)
        s->active = r;
    else if (s->queue_tail)
        s->queue_tail->queue_next = r, s->queue_tail = r;
    else
        s->queue_head = s->queue_tail = r;
    svc_kick(svc, s);
    pthread_mutex_unlock(&svc->mu);
}

void cluster_release(service *svc, srv_run *r)
{
    writer_flush(svc->w); /* the run's state is stored before another may claim it */
    srv_error err = {0};
    if (svc->st->ops->lease_release(svc->st, r->id, svc->worker_id, &err) != 0) {
        fprintf(stderr, "loom-serve: lease of %s not released (it expires): %s\n", r->id,
                err.message);
        srv_error_clear(&err);
    }
    pthread_mutex_lock(&svc->mu);
    if (r->held) {
        r->held = false;
        svc->held--;
    }
    pthread_cond_broadcast(&svc->cluster_cv);
    pthread_mutex_unlock(&svc->mu);
}

/* One control for a run held here. */
static void apply(service *svc, const char *run_id, json_t *c)
{
    const char *what = json_string_value(json_object_get(c, "what")) ?: "";
    pthread_mutex_lock(&svc->mu);
    srv_run *r = svc_run_find(svc, run_id);
    bool held = r && r->held;
    const char *tenant = r ? r->tenant_id : NULL;
    pthread_mutex_unlock(&svc->mu);
    if (!held)
        return;
    /* The sending node checked the caller; the control acts with the
     * tenant's authority. */
    principal who = {.tenant_id = tenant, .actor_id = "cluster", .role = ROLE_ADMIN,
                     .audit = true};
    srv_error err = {0};
    char *body = svc_dump(json_incref(json_object_get(c, "body")));
    char *out = NULL;
    if (!strcmp(what, "cancel"))
        out = service_run_cancel(svc, &who, run_id, body, &err);
    else if (!strcmp(what, "pause"))
        out = service_run_pause(svc, &who, run_id, &err);
    else if (!strcmp(what, "input"))
        out = service_run_input(svc, &who, run_id, body, &err);
    else if (!strcmp(what, "approve") || !strcmp(what, "reject"))
        out = service_approval_answer(svc, &who,
                                      json_string_value(json_object_get(c, "approval_id")) ?: "",
                                      !strcmp(what, "approve"), body, &err);
    if (!out && err.code != LOOM_OK)
        fprintf(stderr, "loom-serve: control %s of %s: %s\n", what, run_id, err.message);
    srv_error_clear(&err);
    free(out);
    free(body);
}

static void take_controls(service *svc)
{
    srv_error err = {0};
    char *arr = svc->st->ops->control_take(svc->st, svc->worker_id, &err);
    srv_error_clear(&err);
    json_t *list = arr ? json_loads(arr, 0, NULL) : NULL;
    free(arr);
    size_t i;
    json_t *c;
    json_array_foreach(list, i, c) {
        const char *run = json_string_value(json_object_get(c, "run_id"));
        if (run)
            apply(svc, run, json_object_get(c, "control"));
    }
    json_decref(list);
}

static void claim(service *svc)
{
    pthread_mutex_lock(&svc->mu);
    int free_slots = svc->opts.max_active_runs - svc->held;
    bool stop = svc->stopping || svc->cluster_stop;
    pthread_mutex_unlock(&svc->mu);
    if (free_slots <= 0 || stop || svc->opts.api_only)
        return;
    size_t nt = objects_tenants(svc->objs, NULL, 0);
    const tenant_config **ts = nt ? calloc(nt, sizeof *ts) : NULL;
    store_tenant_cap *caps = nt ? calloc(nt, sizeof *caps) : NULL;
    if (nt && (!ts || !caps)) {
        free(ts);
        free(caps);
        return;
    }
    objects_tenants(svc->objs, ts, nt);
    for (size_t i = 0; i < nt; i++)
        caps[i] = (store_tenant_cap){ts[i]->id, ts[i]->quotas.concurrent_runs};
    store_lease *got = NULL;
    srv_error err = {0};
    int n = svc->st->ops->lease_claim(svc->st, svc->worker_id, svc->opts.lease_ms, free_slots,
                                      caps, nt, &got, &err);
    if (n < 0) {
        fprintf(stderr, "loom-serve: claim: %s\n", err.message);
        srv_error_clear(&err);
    }
    for (int i = 0; i < n; i++)
        adopt(svc, got[i].run_id, got[i].epoch);
    store_leases_free(got, n);
    free(ts);
    free(caps);
}

/* r was reclaimed by another worker while this one still ran it (this
 * worker stalled past its lease): it is not this worker's any more. Its
 * writes are dropped from now on (svc_fence), and its loom run is
 * cancelled by the cluster thread (cancel_abandoned), so its tools stop
 * and nothing of it is run again here. (mu held) */
void cluster_abandon(service *svc, srv_run *r, const char *how)
{
    if (!r->held)
        return;
    fprintf(stderr, "loom-serve: %s abandons run %s: %s; another worker holds it now\n",
            svc->worker_id, r->id, how);
    r->held = false;
    r->abandoned = true;
    r->cancel_pending = true;
    svc->held--;
    svc->stats.abandoned++;
    svc->abandon_pending = true;
    pthread_cond_broadcast(&svc->cluster_cv);
}

void cluster_fenced(void *ctx, const char *run_id, int64_t epoch)
{
    service *svc = ctx;
    pthread_mutex_lock(&svc->mu);
    srv_run *r = svc_run_find(svc, run_id);
    if (r && r->held && r->lease_epoch == epoch)
        cluster_abandon(svc, r, "a write was refused by its lease's fence");
    pthread_mutex_unlock(&svc->mu);
}

/* After a renewal: the runs this worker thinks it holds that the store
 * did not renew (or renewed at another epoch) were reclaimed. */
static void check_held(service *svc, const store_lease *held, int n)
{
    pthread_mutex_lock(&svc->mu);
    for (int b = 0; b < SVC_BUCKETS; b++)
        for (srv_run *r = svc->runs[b]; r; r = r->next) {
            if (!r->held)
                continue;
            bool still = false;
            for (int i = 0; i < n && !still; i++)
                still = held[i].epoch == r->lease_epoch && !strcmp(held[i].run_id, r->id);
            if (!still)
                cluster_abandon(svc, r, "its lease was not renewed (it expired and was reclaimed)");
        }
    pthread_mutex_unlock(&svc->mu);
}

/* Cancels the loom runs of abandoned runs: collected under mu, cancelled
 * under each one's lr_mu alone, as service_free does (runs live as long as
 * the service). */
static void cancel_abandoned(service *svc)
{
    pthread_mutex_lock(&svc->mu);
    bool any = svc->abandon_pending;
    svc->abandon_pending = false;
    size_t n = 0, cap = 0;
    srv_run **list = NULL;
    for (int b = 0; any && b < SVC_BUCKETS; b++)
        for (srv_run *r = svc->runs[b]; r; r = r->next) {
            if (!r->abandoned)
                continue;
            if (n == cap) {
                srv_run **more = realloc(list, (cap = cap ? 2 * cap : 8) * sizeof *list);
                if (!more)
                    break;
                list = more;
            }
            list[n++] = r;
        }
    pthread_mutex_unlock(&svc->mu);
    for (size_t i = 0; i < n; i++) {
        pthread_mutex_lock(&list[i]->lr_mu);
        if (list[i]->lr)
            loom_run_cancel(list[i]->lr);
        pthread_mutex_unlock(&list[i]->lr_mu);
    }
    free(list);
}

int cluster_poll_ms(const service *svc)
{
    return svc->listening ? CLUSTER_FALLBACK_MS : CLUSTER_POLL_MS;
}

/* store_notice_fn, on the store's listener thread: what another process
 * did, so nothing waits for the next poll. An event of another worker's
 * run wakes its feeds here; a control for a run held here, a run queued or
 * ended (a slot, a session's next run, a tenant's cap may be free), or a
 * resync wake the cluster thread. Never a store call: the listener only
 * passes the word on. */
static void cluster_notice(void *ctx, store_notice what, const char *run_id, const char *state,
                           int64_t seq)
{
    service *svc = ctx;
    pthread_mutex_lock(&svc->mu);
    srv_run *r = what == STORE_NOTICE_RESYNC ? NULL : svc_run_find(svc, run_id);
    bool wake = false;
    switch (what) {
    case STORE_NOTICE_EVENT:
        if (r && cluster_remote(svc, r) && seq > r->stored_seq) {
            r->stored_seq = seq;
            if (seq > r->seq)
                r->seq = seq;
            pthread_cond_broadcast(&r->feed_cv);
        }
        break;
    case STORE_NOTICE_CONTROL:
        wake = r && r->held;
        break;
    case STORE_NOTICE_RUN: {
        int st = loom_run_state_from_name(state);
        wake = st >= 0 && (st == LOOM_RUN_QUEUED || run_state_terminal((loom_run_state)st));
        break;
    }
    case STORE_NOTICE_RESYNC:
        wake = true;
        break;
    }
    if (wake) {
        svc->cluster_kick = true;
        pthread_cond_broadcast(&svc->cluster_cv);
    }
    pthread_mutex_unlock(&svc->mu);
}

/* The renewal thread: every third of the lease, whatever the cluster
 * thread is doing (a claim waiting on the store, a take-over reading a
 * long run's events), on a connection of its own (store_pg_lease.c), so a
 * run's lease outlives any tool call as long as the process lives. A run
 * it finds lost is abandoned; the cluster thread cancels it. */
static void *renew_main(void *arg)
{
    service *svc = arg;
    pthread_mutex_lock(&svc->mu);
    while (!svc->cluster_stop) {
        pthread_mutex_unlock(&svc->mu);
        srv_error err = {0};
        store_lease *held = NULL;
        int n = svc->st->ops->lease_renew(svc->st, svc->worker_id, svc->opts.lease_ms, &held,
                                          &err);
        if (n < 0) {
            fprintf(stderr, "loom-serve: lease renewal: %s\n", err.message);
            srv_error_clear(&err);
        } else {
            check_held(svc, held, n);
        }
        store_leases_free(held, n);
        pthread_mutex_lock(&svc->mu);
        if (n >= 0)
            svc->stats.renewals++;
        struct timespec dl;
        clock_deadline(&dl, CLOCK_REALTIME, svc->opts.lease_ms / 3);
        while (!svc->cluster_stop &&
               pthread_cond_timedwait(&svc->renew_cv, &svc->mu, &dl) == 0) {
        }
    }
    pthread_mutex_unlock(&svc->mu);
    return NULL;
}

static void *cluster_main(void *arg)
{
    service *svc = arg;
    for (;;) {
        pthread_mutex_lock(&svc->mu);
        bool stop = svc->cluster_stop;
        pthread_mutex_unlock(&svc->mu);
        if (stop)
            break;
        cancel_abandoned(svc);
        take_controls(svc);
        claim(svc);
        pthread_mutex_lock(&svc->mu);
        if (!svc->cluster_stop && !svc->cluster_kick && !svc->abandon_pending) {
            struct timespec dl;
            clock_deadline(&dl, CLOCK_REALTIME,
                           svc->listening ? CLUSTER_FALLBACK_MS : CLUSTER_TICK_MS);
            pthread_cond_timedwait(&svc->cluster_cv, &svc->mu, &dl);
        }
        svc->cluster_kick = false;
        pthread_mutex_unlock(&svc->mu);
    }
    return NULL;
}

int cluster_start(service *svc, srv_error *err)
{
    const store_ops *o = svc->st->ops;
    if (!o->lease_claim || !o->lease_renew || !o->lease_release || !o->control_send ||
        !o->control_take || !o->put_fenced || !o->lease_check)
        return srv_fail(err, LOOM_ERR_CONFIG,
                        "workers sharing a store need PostgreSQL (--store postgresql://…); "
                        "this store belongs to one process");
    if (svc->opts.worker_id && *svc->opts.worker_id) {
        snprintf(svc->worker_id, sizeof svc->worker_id, "%s", svc->opts.worker_id);
    } else {
        char host[64] = "host";
        gethostname(host, sizeof host - 1);
        snprintf(svc->worker_id, sizeof svc->worker_id, "%s:%ld", host, (long)getpid());
    }
    if (svc->opts.lease_ms <= 0)
        svc->opts.lease_ms = 15000;
    writer_fence_setup(svc->w, svc->worker_id, cluster_fenced);
    pthread_cond_init(&svc->cluster_cv, NULL); /* before listen: notices broadcast it */
    /* Notices in front of the polling, which slows to a fallback. */
    if (o->listen) {
        srv_error lerr = {0};
        if (o->listen(svc->st, cluster_notice, svc, &lerr) == 0)
            svc->listening = true;
        else
            fprintf(stderr, "loom-serve: no notices from the store (polling instead): %s\n",
                    lerr.message);
        srv_error_clear(&lerr);
    }
    pthread_cond_init(&svc->renew_cv, NULL);
    if (pthread_create(&svc->renew_thr, NULL, renew_main, svc) != 0)
        return srv_fail(err, LOOM_ERR_INTERNAL, "the lease renewal thread could not start");
    if (pthread_create(&svc->cluster_thr, NULL, cluster_main, svc) != 0) {
        pthread_mutex_lock(&svc->mu);
        svc->cluster_stop = true;
        pthread_cond_broadcast(&svc->renew_cv);
        pthread_mutex_unlock(&svc->mu);
        pthread_join(svc->renew_thr, NULL);
        return srv_fail(err, LOOM_ERR_INTERNAL, "the cluster thread could not start");
    }
    svc->cluster_started = true;
    return 0;
}

void cluster_stop(service *svc)
{
    if (svc->cluster_started) {
        pthread_mutex_lock(&svc->mu);
        svc->cluster_stop = true;
        pthread_cond_broadcast(&svc->cluster_cv);
        pthread_cond_broadcast(&svc->renew_cv);
        pthread_mutex_unlock(&svc->mu);
        pthread_join(svc->cluster_thr, NULL);
        pthread_join(svc->renew_thr, NULL);
        svc->cluster_started = false;
    }
    if (svc->listening) /* no notice reaches the service after this */
        svc->st->ops->unlisten(svc->st);
    svc->listening = false;
}
