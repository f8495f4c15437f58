/* event_writer.c — the one thread that writes runs' events (and the
 * documents that go with them) to the store, in batches: it waits up to
 * batch_ms after the first queued item, or until 200 events are queued,
 * then stores the batch's documents, then each run's events in seq order
 * (≤ 200 per append). After each durable batch it bumps a generation and
 * wakes the feeds, so a reader only ever sees stored events.
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
    uint64_t queued, stored, generation;
    bool stop;
    pthread_t thread;
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

void writer_event(event_writer *w, const char *run_id, int64_t seq, char *json)
{
    witem *it = calloc(1, sizeof *it);
    it->run_id = strdup(run_id);
    it->seq = seq;
    it->json = json;
    enqueue(w, it);
}

void writer_doc(event_writer *w, store_kind kind, const char *id, const store_doc_keys *keys,
                char *json)
{
    witem *it = calloc(1, sizeof *it);
    it->is_doc = true;
    it->kind = kind;
    it->run_id = strdup(id);
    it->json = json;
    it->tenant_id = dup_or_null(keys->tenant_id);
    it->parent_id = dup_or_null(keys->parent_id);
    it->state = dup_or_null(keys->state);
    it->created_at = dup_or_null(keys->created_at);
    enqueue(w, it);
}

/* Appends one run's consecutive events (items first..count). */
static void append_run(event_writer *w, witem **evs, size_t n)
{
    store_event batch[BATCH_MAX];
    for (size_t off = 0; off < n; off += BATCH_MAX) {
        size_t k = n - off < BATCH_MAX ? n - off : BATCH_MAX;
        for (size_t i = 0; i < k; i++)
            batch[i] = (store_event){.seq = evs[off + i]->seq, .json = evs[off + i]->json};
        srv_error err = {0};
        if (w->st->ops->append_events(w->st, evs[off]->run_id, batch, k, &err) != 0)
            fprintf(stderr, "loom-serve: events %lld..%lld of %s not stored: %s\n",
                    (long long)batch[0].seq, (long long)batch[k - 1].seq, evs[off]->run_id,
                    err.message);
        srv_error_clear(&err);
    }
}

/* Stores one batch: documents in order, then events grouped by run. */
static void store_batch(event_writer *w, witem *list)
{
    size_t n = 0;
    for (witem *it = list; it; it = it->next) {
        if (it->is_doc) {
            store_doc_keys keys = {it->tenant_id, it->parent_id, it->state, it->created_at};
            srv_error err = {0};
            if (w->st->ops->put(w->st, it->kind, it->run_id, &keys, it->json, &err) != 0)
                fprintf(stderr, "loom-serve: %s not stored: %s\n", it->run_id, err.message);
            srv_error_clear(&err);
        } else {
            n++;
        }
    }
    if (n == 0)
        return;
    witem **evs = malloc(n * sizeof *evs);
    bool *taken = calloc(n, sizeof *taken);
    size_t k = 0;
    for (witem *it = list; it; it = it->next)
        if (!it->is_doc)
            evs[k++] = it;
    /* Group by run, each group in queue (= seq) order. */
    witem **group = malloc(n * sizeof *group);
    for (size_t i = 0; i < n; i++) {
        if (taken[i])
            continue;
        size_t g = 0;
        for (size_t j = i; j < n; j++)
            if (!taken[j] && !strcmp(evs[j]->run_id, evs[i]->run_id)) {
                taken[j] = true;
                group[g++] = evs[j];
            }
        append_run(w, group, g);
    }
    free(group);
    free(taken);
    free(evs);
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
        w->generation++;
        pthread_cond_broadcast(&w->done_cv);
    }
    pthread_mutex_unlock(&w->mu);
    return NULL;
}

event_writer *writer_new(store *st, int batch_ms)
{
    event_writer *w = calloc(1, sizeof *w);
    w->st = st;
    w->batch_ms = batch_ms;
    pthread_mutex_init(&w->mu, NULL);
    pthread_cond_init(&w->cv, NULL);
    pthread_cond_init(&w->done_cv, NULL);
    if (pthread_create(&w->thread, NULL, writer_main, w) != 0) {
        free(w);
        return NULL;
    }
    return w;
}

void writer_flush(event_writer *w)
{
    pthread_mutex_lock(&w->mu);
    uint64_t want = w->queued;
    while (w->stored < want)
        pthread_cond_wait(&w->done_cv, &w->mu);
    pthread_mutex_unlock(&w->mu);
}

uint64_t writer_generation(event_writer *w)
{
    pthread_mutex_lock(&w->mu);
    uint64_t g = w->generation;
    pthread_mutex_unlock(&w->mu);
    return g;
}

void writer_wait_change(event_writer *w, uint64_t gen, int timeout_ms)
{
    struct timespec dl;
    clock_deadline(&dl, CLOCK_REALTIME, timeout_ms < 0 ? 0 : timeout_ms);
    pthread_mutex_lock(&w->mu);
    while (w->generation == gen && !w->stop &&
           pthread_cond_timedwait(&w->done_cv, &w->mu, &dl) == 0) {
    }
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
    free(w);
}
