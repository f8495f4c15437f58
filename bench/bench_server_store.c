/* bench_server_store.c — the SQLite store of loom serve under load:
 *   build/bench_server_store DIR N THREADS
 * For synchronous=FULL (the store's setting) and then NORMAL (for
 * comparison): THREADS threads append N events in all, each to its own run,
 * in batches of 1, then 10×N in batches of 100 (enough calls to time),
 * while one reader thread reads the newest events of a random run (max_seq + events_after, what an SSE client's
 * catch-up costs) and a run document. Prints events/s, the append latency
 * p50/p99 (per call) and the reader's p99 under that load. Each database is
 * DIR/bench-<sync>.db, removed first. Threads: the appenders and the reader;
 * main waits for them. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "surfaces/server/store/store.h"
#include "surfaces/server/store/store_sqlite_int.h"

typedef struct lat {
    double *v;
    size_t n, cap;
} lat;

static void lat_add(lat *l, double us)
{
    if (l->n == l->cap) {
        l->cap = l->cap ? l->cap * 2 : 1024;
        l->v = realloc(l->v, l->cap * sizeof *l->v);
        if (!l->v)
            abort();
    }
    l->v[l->n++] = us;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double lat_pct(lat *l, double p)
{
    if (!l->n)
        return 0;
    qsort(l->v, l->n, sizeof *l->v, cmp_d);
    size_t i = (size_t)(p * (double)(l->n - 1));
    return l->v[i];
}

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

typedef struct job {
    store *s;
    int idx, batch, phase;
    long events;
    lat lat;
    atomic_int *left;
} job;

static void *appender(void *arg)
{
    job *j = arg;
    char run[48];
    snprintf(run, sizeof run, "run_bench_p%d_t%d", j->phase, j->idx);
    store_event *evs = calloc((size_t)j->batch, sizeof *evs);
    char (*texts)[512] = calloc((size_t)j->batch, sizeof *texts);
    int64_t seq = 0;
    for (long done = 0; done < j->events; done += j->batch) {
        int k = (int)(j->events - done < j->batch ? j->events - done : j->batch);
        for (int i = 0; i < k; i++) {
            evs[i].seq = seq + 1 + i;
            snprintf(texts[i], sizeof texts[i],
                     "{\"event_id\":\"%s.%lld\",\"seq\":%lld,\"run_id\":\"%s\",\"type\":"
                     "\"message.delta\",\"ts\":\"2026-12-02T14:33:37.123Z\",\"visibility\":"
                     "\"user\",\"correlation_id\":null,\"payload\":{\"text\":\"hello there\"}}",
                     run, (long long)evs[i].seq, (long long)evs[i].seq, run);
            evs[i].json = texts[i];
        }
        srv_error err = {0};
        double t0 = now_us();
        if (j->s->ops->append_events(j->s, run, evs, (size_t)k, &err) != 0) {
            fprintf(stderr, "append: %s\n", err.message);
            exit(1);
        }
        lat_add(&j->lat, now_us() - t0);
        seq += k;
    }
    free(evs);
    free(texts);
    atomic_fetch_sub(j->left, 1);
    return NULL;
}

typedef struct rjob {
    store *s;
    int threads, phase;
    lat lat;
    atomic_int *left;
} rjob;

static void *reader(void *arg)
{
    rjob *r = arg;
    unsigned x = 12345;
    while (atomic_load(r->left) > 0) {
        x = x * 1103515245u + 12345u;
        char run[48];
        snprintf(run, sizeof run, "run_bench_p%d_t%u", r->phase, (x >> 16) % (unsigned)r->threads);
        srv_error err = {0};
        double t0 = now_us();
        int64_t max = r->s->ops->max_seq(r->s, run, &err);
        int64_t last = 0;
        char *arr = r->s->ops->events_after(r->s, run, max > 50 ? max - 50 : 0, 100, &last, &err);
        char *doc = r->s->ops->get(r->s, STORE_RUN, "run_doc", &err);
        lat_add(&r->lat, now_us() - t0);
        free(arr);
        free(doc);
    }
    return NULL;
}

static void phase(store *s, const char *sync, int phase_no, long n, int threads, int batch)
{
    atomic_int left = threads;
    job *jobs = calloc((size_t)threads, sizeof *jobs);
    pthread_t *th = calloc((size_t)threads, sizeof *th);
    rjob rj = {s, threads, phase_no, {0}, &left};
    pthread_t rt;
    double t0 = now_us();
    for (int i = 0; i < threads; i++) {
        jobs[i] = (job){s, i, batch, phase_no, n / threads, {0}, &left};
        pthread_create(&th[i], NULL, appender, &jobs[i]);
    }
    pthread_create(&rt, NULL, reader, &rj);
    for (int i = 0; i < threads; i++)
        pthread_join(th[i], NULL);
    double wall = now_us() - t0;
    pthread_join(rt, NULL);
    lat all = {0};
    long events = 0;
    for (int i = 0; i < threads; i++) {
        for (size_t k = 0; k < jobs[i].lat.n; k++)
            lat_add(&all, jobs[i].lat.v[k]);
        events += jobs[i].events;
        free(jobs[i].lat.v);
    }
    printf("sync=%-6s batch=%-3d threads=%d events=%ld  events/s=%.0f  append_p50=%.0fus "
           "append_p99=%.0fus  reader_p99=%.0fus (%zu reads)\n",
           sync, batch, threads, events, (double)events / (wall / 1e6), lat_pct(&all, 0.50),
           lat_pct(&all, 0.99), lat_pct(&rj.lat, 0.99), rj.lat.n);
    free(all.v);
    free(rj.lat.v);
    free(jobs);
    free(th);
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: %s DIR N THREADS\n", argv[0]);
        return 2;
    }
    long n = atol(argv[2]);
    int threads = atoi(argv[3]);
    if (n < 1 || threads < 1 || threads > 64) {
        fprintf(stderr, "N >= 1 and THREADS 1-64\n");
        return 2;
    }
    const char *syncs[] = {"FULL", "NORMAL"};
    for (int si = 0; si < 2; si++) {
        char path[4096], side[4200];
        snprintf(path, sizeof path, "%s/bench-%s.db", argv[1], syncs[si]);
        unlink(path);
        snprintf(side, sizeof side, "%s-wal", path);
        unlink(side);
        snprintf(side, sizeof side, "%s-shm", path);
        unlink(side);
        srv_error err = {0};
        store *s = store_sqlite_open(path, &err);
        if (!s || store_sqlite_set_synchronous(s, si == 0, &err) != 0) {
            fprintf(stderr, "%s\n", err.message);
            return 1;
        }
        store_doc_keys keys = {"t1", "sess_1", "running", "2026-12-02T14:33:37.123Z"};
        s->ops->put(s, STORE_RUN, "run_doc", &keys, "{\"run_id\":\"run_doc\"}", &err);
        phase(s, syncs[si], 1, n, threads, 1);
        phase(s, syncs[si], 2, n * 10, threads, 100);
        store_close(s);
    }
    return 0;
}
