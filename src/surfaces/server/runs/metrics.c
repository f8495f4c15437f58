/* metrics.c — GET /metrics (docs/deploy.md#metrics): the Prometheus text
 * exposition format 0.0.4 of what this node sees of the store and what it
 * did as a worker:
 *
 *   loom_runs{state}               runs of the caller's tenant per state
 *   loom_queue_depth               of them, queued
 *   loom_approvals_pending         the tenant's approvals pending
 *   and with --cluster only (the counts that apply to one process on
 *   SQLite are the three above):
 *   loom_runs_held                 leases this worker holds now
 *   loom_claims_total              runs it claimed (queued or reclaimed)
 *   loom_reclaims_total            of them, runs whose worker's lease expired
 *   loom_lease_renewals_total      renewals it made
 *   loom_fencing_refusals_total    its writes a lease's fence refused
 *   loom_runs_abandoned_total      runs it gave up, reclaimed while it stalled
 *   loom_claim_latency_seconds     histogram: queued (the run document's
 *                                  last update) to claimed
 *
 * Every sample has node="WORKER_ID" ("standalone" without --cluster), and
 * the store's counts tenant="…": the counts are the caller's tenant's
 * only (an admin token of one tenant learns nothing of another), read
 * from the store, so every node of a cluster answers the same for them.
 * The counters are this process's since it started (Prometheus sums them
 * over nodes and handles restarts).
 *
 * Threading: any thread; the counters are read under svc->mu, the store
 * without it. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "surfaces/server/runs/service_int.h"
#include "surfaces/server/store/store_rules.h"

const double cluster_claim_bounds[CLAIM_BUCKETS] = {0.005, 0.01, 0.025, 0.05, 0.1, 0.25,
                                                    0.5,   1,    2.5,   5,    10,  30};

void metrics_claimed(service *svc, int64_t wait_ms, bool reclaim)
{
    cluster_stats *st = &svc->stats;
    st->claims++;
    if (reclaim)
        st->reclaims++;
    double s = wait_ms > 0 ? (double)wait_ms / 1000.0 : 0.0;
    st->lat_sum += s;
    for (int i = 0; i < CLAIM_BUCKETS; i++)
        if (s <= cluster_claim_bounds[i]) {
            st->lat_bucket[i]++;
            return;
        }
    st->lat_over++;
}

/* A label value as the format wants it: \, " and newline escaped. */
static void add_label(store_buf *b, const char *v)
{
    for (const char *p = v ? v : ""; *p; p++) {
        const char *esc = *p == '\\' ? "\\\\" : *p == '"' ? "\\\"" : *p == '\n' ? "\\n" : NULL;
        store_buf_add(b, esc ? esc : p, esc ? strlen(esc) : 1);
    }
}

static void add_fmt(store_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void add_fmt(store_buf *b, const char *fmt, ...)
{
    char line[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    if (n > 0)
        store_buf_add(b, line, (size_t)n < sizeof line ? (size_t)n : sizeof line - 1);
}

/* NAME{node="…"[,tenant="…"][,EXTRA]} VALUE */
static void sample(store_buf *b, const char *name, const char *node, const char *tenant,
                   const char *extra, const char *value)
{
    add_fmt(b, "%s{node=\"", name);
    add_label(b, node);
    if (tenant) {
        store_buf_add(b, "\",tenant=\"", 10);
        add_label(b, tenant);
    }
    add_fmt(b, "\"%s%s} %s\n", extra ? "," : "", extra ? extra : "", value);
}

static void head(store_buf *b, const char *name, const char *type, const char *help)
{
    add_fmt(b, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static void counter(store_buf *b, const char *name, const char *help, const char *node,
                    uint64_t v)
{
    char num[32];
    snprintf(num, sizeof num, "%llu", (unsigned long long)v);
    head(b, name, "counter", help);
    sample(b, name, node, NULL, NULL, num);
}

/* The count of state in a count_states object (0 when absent). */
static long long count_of(json_t *counts, const char *state)
{
    return (long long)json_integer_value(json_object_get(counts, state));
}

static json_t *counts(service *svc, store_kind kind, const char *tenant, srv_error *err)
{
    char *text = svc->st->ops->count_states(svc->st, kind, tenant, err);
    json_t *o = text ? json_loads(text, 0, NULL) : NULL;
    free(text);
    return o;
}

char *service_metrics(service *svc, const principal *who, srv_error *err)
{
    json_t *runs = counts(svc, STORE_RUN, who->tenant_id, err);
    json_t *apvs = runs ? counts(svc, STORE_APPROVAL, who->tenant_id, err) : NULL;
    if (!apvs) {
        json_decref(runs);
        return NULL;
    }
    const char *node = svc->opts.cluster && svc->worker_id[0] ? svc->worker_id : "standalone";
    const char *tenant = who->tenant_id;
    store_buf b = {0};
    char num[32], extra[64];
    head(&b, "loom_runs", "gauge", "Runs of the tenant in each state, in the store.");
    for (int s = 0; s < LOOM_RUN_STATE_END; s++) {
        const char *name = loom_run_state_name((loom_run_state)s);
        snprintf(extra, sizeof extra, "state=\"%s\"", name);
        snprintf(num, sizeof num, "%lld", count_of(runs, name));
        sample(&b, "loom_runs", node, tenant, extra, num);
    }
    head(&b, "loom_queue_depth", "gauge", "Runs of the tenant queued, waiting for a worker.");
    snprintf(num, sizeof num, "%lld", count_of(runs, "queued"));
    sample(&b, "loom_queue_depth", node, tenant, NULL, num);
    head(&b, "loom_approvals_pending", "gauge", "Approvals of the tenant waiting for an answer.");
    snprintf(num, sizeof num, "%lld", count_of(apvs, "pending"));
    sample(&b, "loom_approvals_pending", node, tenant, NULL, num);
    json_decref(runs);
    json_decref(apvs);
    if (svc->opts.cluster) {
        pthread_mutex_lock(&svc->mu);
        cluster_stats st = svc->stats;
        int held = svc->held;
        pthread_mutex_unlock(&svc->mu);
        uint64_t fenced = writer_fenced_count(svc->w);
        head(&b, "loom_runs_held", "gauge", "Runs whose lease this worker holds.");
        snprintf(num, sizeof num, "%d", held);
        sample(&b, "loom_runs_held", node, NULL, NULL, num);
        counter(&b, "loom_claims_total", "Runs this worker claimed (queued or reclaimed).", node,
                st.claims);
        counter(&b, "loom_reclaims_total",
                "Runs this worker claimed after their worker's lease expired.", node, st.reclaims);
        counter(&b, "loom_lease_renewals_total", "Lease renewals this worker made.", node,
                st.renewals);
        counter(&b, "loom_fencing_refusals_total",
                "Writes of this worker refused (or dropped) by a lease's fence.", node, fenced);
        counter(&b, "loom_runs_abandoned_total",
                "Runs this worker gave up: another worker reclaimed them while it stalled.", node,
                st.abandoned);
        head(&b, "loom_claim_latency_seconds", "histogram",
             "Time from a run's queueing (its document's last update) to its claim.");
        uint64_t cum = 0;
        for (int i = 0; i < CLAIM_BUCKETS; i++) {
            cum += st.lat_bucket[i];
            snprintf(extra, sizeof extra, "le=\"%g\"", cluster_claim_bounds[i]);
            snprintf(num, sizeof num, "%llu", (unsigned long long)cum);
            sample(&b, "loom_claim_latency_seconds_bucket", node, NULL, extra, num);
        }
        cum += st.lat_over;
        snprintf(num, sizeof num, "%llu", (unsigned long long)cum);
        sample(&b, "loom_claim_latency_seconds_bucket", node, NULL, "le=\"+Inf\"", num);
        snprintf(num, sizeof num, "%.6f", st.lat_sum);
        sample(&b, "loom_claim_latency_seconds_sum", node, NULL, NULL, num);
        snprintf(num, sizeof num, "%llu", (unsigned long long)cum);
        sample(&b, "loom_claim_latency_seconds_count", node, NULL, NULL, num);
    }
    if (store_buf_add(&b, "", 1) < 0) {
        free(b.p);
        srv_fail(err, LOOM_ERR_INTERNAL, "metrics: out of memory");
        return NULL;
    }
    return b.p;
}

int64_t metrics_iso_ms(const char *iso)
{
    struct tm tm = {0};
    int ms = 0;
    if (!iso || sscanf(iso, "%4d-%2d-%2dT%2d:%2d:%2d", &tm.tm_year, &tm.tm_mon, &tm.tm_mday,
                       &tm.tm_hour, &tm.tm_min, &tm.tm_sec) != 6)
        return -1;
    const char *dot = strchr(iso, '.');
    if (dot)
        for (int i = 1, f = 100; i <= 3 && dot[i] >= '0' && dot[i] <= '9'; i++, f /= 10)
            ms += (dot[i] - '0') * f;
    tm.tm_year -= 1900;
    tm.tm_mon -= 1;
    return (int64_t)timegm(&tm) * 1000 + ms;
}
