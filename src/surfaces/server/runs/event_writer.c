/* event_writer.c — the one thread that writes runs' events (and the
 * documents that go with them) to the store, in batches: it waits up to
 * batch_ms after the first queued item, or until 200 events are queued,
 * then stores the batch's documents, then every run's events in one
 * transaction (store_append_batch: one fsync for the batch, however many
 * runs it holds), then the runs' own documents (see after_events). After each durable batch it tells the service, per run,
 * the last seq stored, and the service wakes that run's feeds, so a reader
 * only ever sees stored events and only the readers of a run wake for it.
 *
 * Owns the queue and its items. Threading: writer_* may be called from any
 * thread (they only queue and wait); only the writer thread touches the
 * store. A run's seqs are given out by the service under its mutex and
 * queued in that order, so one queue keeps each run's order. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/clock.h"
#include "surfaces/server/runs/service_int.h"

#define BATCH_MAX 200

typedef struct witem {
    bool is_doc;
    store_kind kind;
    char *run_id;   /* event: the run; doc: the id */
    int64_t seq;
    int64_t epoch;  /* the fence (store_fence): 0 none, WRITER_DROP dropped */
    char *json;
    char *tenant_id, *parent_id, *state, *created_at;
    struct witem *next;
} witem;

struct event_writer {
    store *st;
    int batch_ms;
    pthread_mutex_t mu;
    pthread_cond_t cv;      /* items queued / stop */
    pthread_cond_t done_cv; /* a batch was stored */
    witem *head, *tail;
    size_t n_events;
    uint64_t queued, stored;
    bool stop;
    pthread_t thread;
    writer_stored_fn on_stored;
    void *stored_ctx;
    /* fencing (writer_fence_setup): the worker the fences name, and whom to
     * tell of a refused write */
    char *worker;
    writer_fenced_fn on_fenced;
    uint64_t fenced;        /* (mu) writes refused or dropped by a fence */
};

static char *dup_or_null(const char *s)
{
    return s ? strdup(s) : NULL;
}

static void item_free(witem *it)
{
    free(it->run_id);
    free(it->json);
    free(it->tenant_id);
    free(it->parent_id);
    free(it->state);
    free(it->created_at);
    free(it);
}

static void enqueue(event_writer *w, witem *it)
{
    pthread_mutex_lock(&w->mu);
    if (w->tail)
        w->tail->next = it;
    else
        w->head = it;
    w->tail = it;
    w->queued++;
    if (!it->is_doc)
        w->n_events++;
    pthread_cond_signal(&w->cv);
    pthread_mutex_unlock(&w->mu);
}

void writer_event(event_writer *w, const char *run_id, int64_t seq, int64_t epoch, char *json)
{
    witem *it = calloc(1, sizeof *it);
    it->run_id = strdup(run_id);
    it->seq = seq;
    it->epoch = epoch;
    it->json = json;
    enqueue(w, it);
}

void writer_doc(event_writer *w, store_kind kind, const char *id, const store_doc_keys *keys,
                int64_t epoch, char *json)
{
    witem *it = calloc(1, sizeof *it);
    it->is_doc = true;
    it->epoch = epoch;
    it->kind = kind;
    it->run_id = strdup(id);
    it->json = json;
    it->tenant_id = dup_or_null(keys->tenant_id);
    it->parent_id = dup_or_null(keys->parent_id);
    it->state = dup_or_null(keys->state);
    it->created_at = dup_or_null(keys->created_at);
    enqueue(w, it);
}

/* Orders a batch's events by run, and by queue position (= seq) within a
 * run: a stable grouping in O(n log n). */
typedef struct ev_ref {
    witem *it;
    size_t pos;
} ev_ref;

static int by_run_then_pos(const void *a, const void *b)
{
    const ev_ref *x = a, *y = b;
    int c = strcmp(x->it->run_id, y->it->run_id);
    return c ? c : (x->pos > y->pos) - (x->pos < y->pos);
}

/* A run's document is stored after the batch's events, so the store never
 * has a run in a state whose events it lacks: a run a worker of a cluster
 * finds queued has its run.state_changed(queued) stored (so its own seqs
 * go on after it), and one it finds ended has its run.completed (a worker
 * killed between the two leaves the run active, which another worker
 * reclaims). Other documents (an approval, a session) come before the
 * events that announce them. */
static bool after_events(const witem *it)
{
    return it->kind == STORE_RUN;
}

/* A later put of the same document in the batch replaces this one whole:
 * only the last is stored (so an ending that the batch undoes, e.g. a run
 * handed back through failed to queued, is never stored after it). */
static bool superseded(const witem *it)
{
    for (const witem *n = it->next; n; n = n->next)
        if (n->is_doc && n->kind == it->kind && !strcmp(n->run_id, it->run_id))
            return true;
    return false;
}

/* A write a fence refused (or dropped: the run was abandoned already):
 * counted, and the service told, which abandons the run. */
static void fenced(event_writer *w, const char *run_id, int64_t epoch)
{
    pthread_mutex_lock(&w->mu);
    w->fenced++;
    pthread_mutex_unlock(&w->mu);
    if (w->on_fenced && epoch > 0)
        w->on_fenced(w->stored_ctx, run_id, epoch);
}

static void put_docs(event_writer *w, witem *list, bool ending)
{
    for (witem *it = list; it; it = it->next) {
        if (!it->is_doc || after_events(it) != ending || superseded(it))
            continue;
        if (it->epoch == WRITER_DROP) {
            fenced(w, it->run_id, it->epoch);
            continue;
        }
        store_doc_keys keys = {it->tenant_id, it->parent_id, it->state, it->created_at};
        store_fence f = {w->worker, it->epoch};
        srv_error err = {0};
        int rc = it->epoch > 0 && w->st->ops->put_fenced
                     ? w->st->ops->put_fenced(w->st, it->kind, it->run_id, &keys, it->json, &f,
                                              &err)
                     : w->st->ops->put(w->st, it->kind, it->run_id, &keys, it->json, &err);
        if (rc == STORE_FENCED)
            fenced(w, it->run_id, it->epoch);
        else if (rc != 0)
            fprintf(stderr, "loom-serve: %s not stored: %s\n", it->run_id, err.message);
        srv_error_clear(&err);
    }
}

static void append_events(event_writer *w, witem *list);

/* Stores one batch: documents in order (but the runs'), then the events
 * of every run in one append_batch, then the runs' documents; then tells
 * the service what each run has stored. */
static void store_batch(event_writer *w, witem *list)
{
    put_docs(w, list, false);
    append_events(w, list);
    put_docs(w, list, true);
}

static void append_events(event_writer *w, witem *list)
{
    size_t n = 0;
    for (witem *it = list; it; it = it->next)
        n += !it->is_doc;
    if (n == 0)
        return;
    ev_ref *refs = malloc(n * sizeof *refs);
    store_event *evs = malloc(n * sizeof *evs);
    store_append *runs = calloc(n, sizeof *runs);
    if (!refs || !evs || !runs)
        abort();
    size_t k = 0;
    for (witem *it = list; it; it = it->next)
        if (!it->is_doc) {
            refs[k] = (ev_ref){it, k};
            k++;
        }
    qsort(refs, n, sizeof *refs, by_run_then_pos);
    /* A run's events carry the fence of the last one queued (the newest
     * view of the lease: one queued before the claim here had none). */
    size_t n_runs = 0;
    for (size_t i = 0; i < n; i++) {
        evs[i] = (store_event){.seq = refs[i].it->seq, .json = refs[i].it->json};
        if (i == 0 || strcmp(refs[i].it->run_id, refs[i - 1].it->run_id))
            runs[n_runs++] = (store_append){.run_id = refs[i].it->run_id, .evs = &evs[i]};
        runs[n_runs - 1].n++;
        runs[n_runs - 1].fence = (store_fence){w->worker, refs[i].it->epoch};
    }
    /* A run abandoned already is not sent: moved to the end, left out. */
    size_t send = 0;
    for (size_t i = 0; i < n_runs; i++)
        if (runs[i].fence.epoch != WRITER_DROP) {
            store_append t = runs[send];
            runs[send++] = runs[i];
            runs[i] = t;
        }
    for (size_t i = send; i < n_runs; i++)
        runs[i].ret = STORE_FENCED;
    /* A transaction that failed retryably (a deadlock PostgreSQL broke, a
     * dropped connection) is tried again: its events are not stored and
     * the run's next ones would be refused as a hole. */
    srv_error err = {0};
    for (int attempt = 0; attempt < 3; attempt++) {
        srv_error_clear(&err);
        memset(&err, 0, sizeof err);
        if (store_append_batch(w->st, runs, send, &err) == 0 || !err.retryable)
            break;
        for (size_t i = 0; i < send; i++) {
            srv_error_clear(&runs[i].err);
            memset(&runs[i].err, 0, sizeof runs[i].err);
            runs[i].ret = 0;
        }
    }
    if (err.code != LOOM_OK)
        fprintf(stderr, "loom-serve: a batch of %zu events was not stored: %s\n", n, err.message);
    srv_error_clear(&err);
    for (size_t i = 0; i < n_runs; i++) {
        store_append *a = &runs[i];
        if (a->ret == STORE_FENCED)
            fenced(w, a->run_id, a->fence.epoch);
        else if (a->ret != 0)
            fprintf(stderr, "loom-serve: events %lld..%lld of %s not stored: %s\n",
                    (long long)a->evs[0].seq, (long long)a->evs[a->n - 1].seq, a->run_id,
                    a->err.message);
        else if (w->on_stored)
            w->on_stored(w->stored_ctx, a->run_id, a->evs[a->n - 1].seq);
        srv_error_clear(&a->err);
    }
    free(runs);
    free(evs);
    free(refs);
}

static void *writer_main(void *arg)
{
    event_writer *w = arg;
    pthread_mutex_lock(&w->mu);
    for (;;) {
        while (!w->head && !w->stop)
            pthread_cond_wait(&w->cv, &w->mu);
        if (!w->head && w->stop)
            break;
        /* Let a batch gather: up to batch_ms, or BATCH_MAX events. */
        if (w->batch_ms > 0 && !w->stop && w->n_events < BATCH_MAX) {
            struct timespec dl;
            clock_deadline(&dl, CLOCK_REALTIME, w->batch_ms);
            while (!w->stop && w->n_events < BATCH_MAX &&
                   pthread_cond_timedwait(&w->cv, &w->mu, &dl) == 0) {
            }
        }
        witem *list = w->head;
        uint64_t upto = w->queued;
        w->head = w->tail = NULL;
        w->n_events = 0;
        pthread_mutex_unlock(&w->mu);
        store_batch(w, list);
        while (list) {
            witem *nx = list->next;
            item_free(list);
            list = nx;
        }
        pthread_mutex_lock(&w->mu);
        w->stored = upto;
        pthread_cond_broadcast(&w->done_cv);
    }
    pthread_mutex_unlock(&w->mu);
    return NULL;
}

event_writer *writer_new(store *st, int batch_ms, writer_stored_fn stored, void *ctx)
{
    event_writer *w = calloc(1, sizeof *w);
    w->st = st;
    w->batch_ms = batch_ms;
    w->on_stored = stored;
    w->stored_ctx = ctx;
    pthread_mutex_init(&w->mu, NULL);
    pthread_cond_init(&w->cv, NULL);
    pthread_cond_init(&w->done_cv, NULL);
    if (pthread_create(&w->thread, NULL, writer_main, w) != 0) {
        free(w);
        return NULL;
    }
    return w;
}

void writer_fence_setup(event_writer *w, const char *worker, writer_fenced_fn fenced_fn)
{
    free(w->worker);
    w->worker = strdup(worker);
    w->on_fenced = fenced_fn;
}

uint64_t writer_fenced_count(event_writer *w)
{
    pthread_mutex_lock(&w->mu);
    uint64_t n = w->fenced;
    pthread_mutex_unlock(&w->mu);
    return n;
}

void writer_flush(event_writer *w)
{
    pthread_mutex_lock(&w->mu);
    uint64_t want = w->queued;
    while (w->stored < want)
        pthread_cond_wait(&w->done_cv, &w->mu);
    pthread_mutex_unlock(&w->mu);
}

void writer_free(event_writer *w)
{
    if (!w)
        return;
    pthread_mutex_lock(&w->mu);
    w->stop = true;
    pthread_cond_broadcast(&w->cv);
    pthread_cond_broadcast(&w->done_cv);
    pthread_mutex_unlock(&w->mu);
    pthread_join(w->thread, NULL);
    pthread_cond_destroy(&w->cv);
    pthread_cond_destroy(&w->done_cv);
    pthread_mutex_destroy(&w->mu);
    free(w->worker);
    free(w);
}
