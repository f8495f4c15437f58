/* metrics.h — a run's metrics, summed in memory and handed over as OTLP
 * JSON metrics at the run's end (docs/telemetry.md): histograms (GenAI
 * token usage, operation duration, time to first chunk, tool durations)
 * sums (permission decisions, cost) and gauges (self-evolution's totals),
 * one data point per attribute set.
 *
 * Not thread-safe: the tracer calls it under its lock. */
#ifndef LOOM_TELEMETRY_METRICS_H
#define LOOM_TELEMETRY_METRICS_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

typedef struct otel_metrics otel_metrics;

/* METRIC_GAUGE: the last value recorded (a total read at the run's end). */
typedef enum { METRIC_TOKENS, METRIC_SECONDS, METRIC_SUM, METRIC_GAUGE } metric_kind;

otel_metrics *otel_metrics_new(void);
/* One measurement; attrs is an OTLP attribute array (stolen). */
void otel_metrics_record(otel_metrics *m, const char *name, const char *unit, metric_kind kind,
                         json_t *attrs, double value);
/* The metrics so far as OTLP JSON metric objects (a new array), cumulative
 * from start_ns to now_ns. */
json_t *otel_metrics_export(const otel_metrics *m, int64_t start_ns, int64_t now_ns);
void otel_metrics_free(otel_metrics *m);

#endif
