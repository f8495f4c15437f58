/* otlp_exporter.h — the background OTLP/HTTP JSON exporter: a bounded
 * queue per signal, drained by one thread that batches, POSTs and retries
 * with backoff (docs/telemetry.md).
 *
 * The run never waits for it: otlp_exporter_enqueue only takes a lock held
 * for a list append, and a full queue drops the item and counts it. A
 * batch that still fails after its retries is dropped and counted too.
 * otlp_exporter_flush is the one bounded wait (at a run's end).
 *
 * Threading: enqueue, flush and stats from any thread; free from one. */
#ifndef LOOM_TELEMETRY_OTLP_EXPORTER_H
#define LOOM_TELEMETRY_OTLP_EXPORTER_H

#include <jansson.h>
#include <stdint.h>

#include "telemetry/otel_config.h"

#define OTLP_QUEUE_MAX 4096   /* items per signal waiting to be sent */
#define OTLP_BATCH_MAX 512    /* items per POST */

typedef struct otlp_exporter otlp_exporter;

typedef struct otlp_stats {
    uint64_t exported[OTEL_N_SIGNALS];
    uint64_t dropped[OTEL_N_SIGNALS];
    char last_error[256];     /* why the last batch was dropped ("" none) */
} otlp_stats;

/* Starts the thread; c is borrowed and must outlive the exporter. NULL
 * when no signal is enabled. */
otlp_exporter *otlp_exporter_new(const otel_config *c);
/* item: one span, one metric or one log record in OTLP JSON (stolen). */
void otlp_exporter_enqueue(otlp_exporter *x, otel_signal sig, json_t *item);
/* Sends everything queued now; waits at most timeout_ms. */
void otlp_exporter_flush(otlp_exporter *x, int timeout_ms);
void otlp_exporter_stats(otlp_exporter *x, otlp_stats *out);
/* Flushes (bounded), stops the thread; what is left is counted dropped. */
void otlp_exporter_free(otlp_exporter *x);

#endif
