/* otlp_exporter.c — the exporter thread (otlp_exporter.h).
 *
 * One mutex guards the queues and counters; it is never held across I/O:
 * the thread takes a batch out, unlocks, POSTs, and locks again to count.
 * Every request has short timeouts and the exporter's own cancel flag, so
 * stopping never waits on a dead collector longer than one connect. */
#include "telemetry/otlp_exporter.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/json.h"
#include "base/log.h"
#include "net/http.h"

/* Tries per batch and the wait before each retry: a collector restarting
 * is back within a second; one that is down costs the run nothing. */
#define OTLP_TRIES 3
static const int retry_delay_ms[OTLP_TRIES] = {0, 200, 800};
#define OTLP_BATCH_DELAY_MS 2000   /* a partial batch waits this long */

static const char *const envelope_key[OTEL_N_SIGNALS] = {"resourceSpans", "resourceMetrics",
                                                         "resourceLogs"};
static const char *const scope_key[OTEL_N_SIGNALS] = {"scopeSpans", "scopeMetrics", "scopeLogs"};
static const char *const items_key[OTEL_N_SIGNALS] = {"spans", "metrics", "logRecords"};

struct otlp_exporter {
    const otel_config *cfg;
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t wake;      /* items, a flush or the stop */
    pthread_cond_t idle;      /* the queues emptied */
    json_t *queue[OTEL_N_SIGNALS];
    bool busy;                /* a batch is out, being sent */
    bool stop;
    int flushing;             /* flush calls waiting */
    loom_cancel cancel;
    otlp_stats stats;
};

static void deadline_in(struct timespec *ts, int ms)
{
    clock_gettime(CLOCK_REALTIME, ts);
    ts->tv_sec += ms / 1000;
    ts->tv_nsec += (long)(ms % 1000) * 1000000L;
    if (ts->tv_nsec >= 1000000000L) {
        ts->tv_sec++;
        ts->tv_nsec -= 1000000000L;
    }
}

static char *envelope(const otel_config *c, otel_signal sig, json_t *items)
{
    json_t *scope = json_pack("{s:{s:s,s:s},s:o}", "scope", "name", "loom", "version", "1",
                              items_key[sig], items);
    json_t *res = json_pack("{s:{s:O},s:[o]}", "resource", "attributes", c->resource,
                            scope_key[sig], scope);
    json_t *doc = json_pack("{s:[o]}", envelope_key[sig], res);
    char *body = json_dump_compact(doc);
    json_decref(doc);
    return body;
}

static int discard(void *ctx, const char *d, size_t n)
{
    (void)ctx, (void)d, (void)n;
    return 0;
}

/* One POST; true when the collector took it (2xx). Not retryable: a 4xx
 * other than 429 (the same bytes would be refused again). */
static bool post(otlp_exporter *x, otel_signal sig, const char *body, bool *retryable,
                 char *why, size_t whylen)
{
    http_request req = {.method = "POST", .url = x->cfg->url[sig],
                        .headers = (const char *const *)x->cfg->headers, .body = body,
                        .body_len = strlen(body), .connect_timeout_ms = 1000,
                        .idle_timeout_ms = 3000, .total_timeout_ms = 5000,
                        .cancel = &x->cancel};
    http_response resp;
    memset(&resp, 0, sizeof resp);
    loom_error err;
    loom_error_clear(&err);
    int rc = http_perform(&req, discard, NULL, &resp, &err);
    bool ok = rc == 0 && resp.status >= 200 && resp.status < 300;
    *retryable = rc != 0 || resp.status == 429 || resp.status >= 500;
    if (!ok && rc != 0)
        snprintf(why, whylen, "%.80s: %.160s", x->cfg->url[sig], err.message);
    else if (!ok)
        snprintf(why, whylen, "%.200s: HTTP %ld", x->cfg->url[sig], resp.status);
    http_response_free(&resp);
    return ok;
}

static void send_batch(otlp_exporter *x, otel_signal sig, json_t *items)
{
    size_t n = json_array_size(items);
    char *body = envelope(x->cfg, sig, items);
    char why[256] = "";
    bool ok = false;
    for (int t = 0; t < OTLP_TRIES && !ok && !cancel_requested(&x->cancel); t++) {
        if (retry_delay_ms[t]) {
            struct timespec ts = {.tv_sec = retry_delay_ms[t] / 1000,
                                  .tv_nsec = (long)(retry_delay_ms[t] % 1000) * 1000000L};
            while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
                ;
        }
        bool retryable = false;
        ok = post(x, sig, body, &retryable, why, sizeof why);
        if (!retryable)
            break;
    }
    free(body);
    pthread_mutex_lock(&x->mu);
    if (ok) {
        x->stats.exported[sig] += n;
    } else {
        x->stats.dropped[sig] += n;
        snprintf(x->stats.last_error, sizeof x->stats.last_error, "%s",
                 why[0] ? why : "stopped before it could be sent");
    }
    pthread_mutex_unlock(&x->mu);
}

static bool any_queued(const otlp_exporter *x)
{
    for (int s = 0; s < OTEL_N_SIGNALS; s++)
        if (json_array_size(x->queue[s]))
            return true;
    return false;
}

static void *exporter_main(void *arg)
{
    otlp_exporter *x = arg;
    log_mute_sink_on_this_thread();
    pthread_mutex_lock(&x->mu);
    for (;;) {
        if (!any_queued(x)) {
            pthread_cond_broadcast(&x->idle);
            if (x->stop)
                break;
            pthread_cond_wait(&x->wake, &x->mu);
            continue;
        }
        /* A partial batch waits for company unless someone is flushing. */
        bool full = false;
        for (int s = 0; s < OTEL_N_SIGNALS; s++)
            full = full || json_array_size(x->queue[s]) >= OTLP_BATCH_MAX;
        if (!full && !x->flushing && !x->stop) {
            struct timespec ts;
            deadline_in(&ts, OTLP_BATCH_DELAY_MS);
            int rc = pthread_cond_timedwait(&x->wake, &x->mu, &ts);
            if (rc == 0)
                continue; /* re-check: more items, a flush or the stop */
        }
        for (int s = 0; s < OTEL_N_SIGNALS; s++) {
            size_t n = json_array_size(x->queue[s]);
            if (!n)
                continue;
            size_t take = n < OTLP_BATCH_MAX ? n : OTLP_BATCH_MAX;
            json_t *batch = json_array();
            for (size_t i = 0; i < take; i++)
                json_array_append(batch, json_array_get(x->queue[s], i));
            for (size_t i = 0; i < take; i++)
                json_array_remove(x->queue[s], 0);
            x->busy = true;
            pthread_mutex_unlock(&x->mu);
            send_batch(x, (otel_signal)s, batch);
            pthread_mutex_lock(&x->mu);
            x->busy = false;
        }
    }
    pthread_mutex_unlock(&x->mu);
    return NULL;
}

otlp_exporter *otlp_exporter_new(const otel_config *c)
{
    if (!c || !otel_config_any(c))
        return NULL;
    http_global_init();
    otlp_exporter *x = calloc(1, sizeof *x);
    x->cfg = c;
    pthread_mutex_init(&x->mu, NULL);
    pthread_cond_init(&x->wake, NULL);
    pthread_cond_init(&x->idle, NULL);
    atomic_init(&x->cancel, CANCEL_NONE);
    for (int s = 0; s < OTEL_N_SIGNALS; s++)
        x->queue[s] = json_array();
    if (pthread_create(&x->thread, NULL, exporter_main, x) != 0) {
        for (int s = 0; s < OTEL_N_SIGNALS; s++)
            json_decref(x->queue[s]);
        free(x);
        return NULL;
    }
    return x;
}

void otlp_exporter_enqueue(otlp_exporter *x, otel_signal sig, json_t *item)
{
    if (!x || !item) {
        json_decref(item);
        return;
    }
    pthread_mutex_lock(&x->mu);
    if (!x->cfg->enabled[sig]) {
        json_decref(item);
    } else if (x->stop || json_array_size(x->queue[sig]) >= OTLP_QUEUE_MAX) {
        x->stats.dropped[sig]++;
        snprintf(x->stats.last_error, sizeof x->stats.last_error, "the %s queue was full",
                 envelope_key[sig]);
        json_decref(item);
    } else {
        json_array_append_new(x->queue[sig], item);
        if (json_array_size(x->queue[sig]) >= OTLP_BATCH_MAX)
            pthread_cond_signal(&x->wake);
    }
    pthread_mutex_unlock(&x->mu);
}

void otlp_exporter_flush(otlp_exporter *x, int timeout_ms)
{
    if (!x)
        return;
    struct timespec ts;
    deadline_in(&ts, timeout_ms);
    pthread_mutex_lock(&x->mu);
    x->flushing++;
    pthread_cond_signal(&x->wake);
    while ((any_queued(x) || x->busy) &&
           pthread_cond_timedwait(&x->idle, &x->mu, &ts) == 0)
        ;
    x->flushing--;
    pthread_mutex_unlock(&x->mu);
}

void otlp_exporter_stats(otlp_exporter *x, otlp_stats *out)
{
    memset(out, 0, sizeof *out);
    if (!x)
        return;
    pthread_mutex_lock(&x->mu);
    *out = x->stats;
    pthread_mutex_unlock(&x->mu);
}

void otlp_exporter_free(otlp_exporter *x)
{
    if (!x)
        return;
    otlp_exporter_flush(x, 2000);
    pthread_mutex_lock(&x->mu);
    x->stop = true;
    /* What could not go out in the flush's time is dropped, counted. */
    for (int s = 0; s < OTEL_N_SIGNALS; s++) {
        x->stats.dropped[s] += json_array_size(x->queue[s]);
        json_array_clear(x->queue[s]);
    }
    atomic_store(&x->cancel, CANCEL_RUN);
    pthread_cond_broadcast(&x->wake);
    pthread_mutex_unlock(&x->mu);
    pthread_join(x->thread, NULL);
    for (int s = 0; s < OTEL_N_SIGNALS; s++)
        json_decref(x->queue[s]);
    pthread_cond_destroy(&x->wake);
    pthread_cond_destroy(&x->idle);
    pthread_mutex_destroy(&x->mu);
    free(x);
}
