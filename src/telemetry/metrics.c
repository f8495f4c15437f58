/* metrics.c — the in-memory aggregation of metrics.h. A handful of series
 * per run, so a list searched by name and attributes is enough. */
#include "telemetry/metrics.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/json.h"
#include "base/str.h"

/* The GenAI semantic conventions' advised bucket boundaries. */
static const double token_bounds[] = {1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144,
                                      1048576, 4194304, 16777216, 67108864};
static const double second_bounds[] = {0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64,
                                       1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92};
#define N_BOUNDS 14

typedef struct series {
    char *name, *unit, *attrs_key;
    metric_kind kind;
    json_t *attrs;
    uint64_t count;
    double sum, min, max, last;
    uint64_t buckets[N_BOUNDS + 1];
} series;

struct otel_metrics {
    series *s;
    size_t n, cap;
};

otel_metrics *otel_metrics_new(void)
{
    return calloc(1, sizeof(otel_metrics));
}

void otel_metrics_record(otel_metrics *m, const char *name, const char *unit, metric_kind kind,
                         json_t *attrs, double value)
{
    if (!m) {
        json_decref(attrs);
        return;
    }
    char *key = json_dump_compact(attrs);
    series *s = NULL;
    for (size_t i = 0; i < m->n && !s; i++)
        if (!strcmp(m->s[i].name, name) && !strcmp(m->s[i].attrs_key, key))
            s = &m->s[i];
    if (!s) {
        if (m->n == m->cap) {
            m->cap = m->cap ? m->cap * 2 : 16;
            m->s = realloc(m->s, m->cap * sizeof *m->s);
        }
        s = &m->s[m->n++];
        memset(s, 0, sizeof *s);
        s->name = xstrdup(name);
        s->unit = xstrdup(unit);
        s->attrs_key = key;
        s->kind = kind;
        s->attrs = attrs;
        s->min = value;
        s->max = value;
    } else {
        free(key);
        json_decref(attrs);
    }
    s->count++;
    s->sum += value;
    s->last = value;
    if (value < s->min)
        s->min = value;
    if (value > s->max)
        s->max = value;
    const double *b = kind == METRIC_TOKENS ? token_bounds : second_bounds;
    size_t i = 0;
    while (i < N_BOUNDS && value > b[i])
        i++;
    s->buckets[i]++;
}

static json_t *nanos(int64_t ns)
{
    char buf[32];
    snprintf(buf, sizeof buf, "%lld", (long long)ns);
    return json_string(buf);
}

static json_t *point(const series *s, int64_t start_ns, int64_t now_ns)
{
    json_t *p = json_pack("{s:O,s:o,s:o}", "attributes", s->attrs, "startTimeUnixNano",
                          nanos(start_ns), "timeUnixNano", nanos(now_ns));
    if (s->kind == METRIC_SUM || s->kind == METRIC_GAUGE) {
        json_object_set_new(p, "asDouble", json_real(s->kind == METRIC_SUM ? s->sum : s->last));
        return p;
    }
    char cnt[32];
    snprintf(cnt, sizeof cnt, "%llu", (unsigned long long)s->count);
    json_object_set_new(p, "count", json_string(cnt));
    json_object_set_new(p, "sum", json_real(s->sum));
    json_object_set_new(p, "min", json_real(s->min));
    json_object_set_new(p, "max", json_real(s->max));
    json_t *bc = json_array(), *eb = json_array();
    const double *b = s->kind == METRIC_TOKENS ? token_bounds : second_bounds;
    for (size_t i = 0; i <= N_BOUNDS; i++) {
        snprintf(cnt, sizeof cnt, "%llu", (unsigned long long)s->buckets[i]);
        json_array_append_new(bc, json_string(cnt));
        if (i < N_BOUNDS)
            json_array_append_new(eb, json_real(b[i]));
    }
    json_object_set_new(p, "bucketCounts", bc);
    json_object_set_new(p, "explicitBounds", eb);
    return p;
}

static const char *shape_of(metric_kind k)
{
    return k == METRIC_SUM ? "sum" : k == METRIC_GAUGE ? "gauge" : "histogram";
}

json_t *otel_metrics_export(const otel_metrics *m, int64_t start_ns, int64_t now_ns)
{
    json_t *out = json_array();
    for (size_t i = 0; m && i < m->n; i++) {
        const series *s = &m->s[i];
        json_t *metric = NULL;
        for (size_t j = 0; j < json_array_size(out) && !metric; j++)
            if (!strcmp(json_string_value(json_object_get(json_array_get(out, j), "name")),
                        s->name))
                metric = json_array_get(out, j);
        if (!metric) {
            /* aggregationTemporality 2: cumulative over the run (a gauge has none) */
            const char *shape = shape_of(s->kind);
            metric = s->kind == METRIC_GAUGE
                         ? json_pack("{s:s,s:s,s:{s:[]}}", "name", s->name, "unit", s->unit,
                                     shape, "dataPoints")
                         : json_pack("{s:s,s:s,s:{s:i,s:[]}}", "name", s->name, "unit",
                                     s->unit, shape, "aggregationTemporality", 2, "dataPoints");
            if (s->kind == METRIC_SUM)
                json_object_set_new(json_object_get(metric, "sum"), "isMonotonic", json_true());
            json_array_append_new(out, metric);
        }
        json_t *shape = json_object_get(metric, shape_of(s->kind));
        json_array_append_new(json_object_get(shape, "dataPoints"), point(s, start_ns, now_ns));
    }
    return out;
}

void otel_metrics_free(otel_metrics *m)
{
    if (!m)
        return;
    for (size_t i = 0; i < m->n; i++) {
        free(m->s[i].name);
        free(m->s[i].unit);
        free(m->s[i].attrs_key);
        json_decref(m->s[i].attrs);
    }
    free(m->s);
    free(m);
}
