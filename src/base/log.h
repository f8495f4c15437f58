/* log.h — structured JSONL logging to the file named by LOOM_LOG.
 *
 * Off (and free) when LOOM_LOG is unset. Each line:
 * {"ts":"…","level":"info","module":"wire","msg":"…", trace_id?, span_id?,
 * …fields}. Thread-safe:
 * one write() per line on an O_APPEND descriptor.
 */
#ifndef LOOM_BASE_LOG_H
#define LOOM_BASE_LOG_H

#include <jansson.h>
#include <stdbool.h>

typedef enum { LOG_DEBUG, LOG_INFO, LOG_WARN, LOG_ERROR } log_level;

/* Opens LOOM_LOG if set (and LOOM_LOG_LEVEL, default info). Idempotent. */
void log_init(void);
void log_close(void);
/* fields may be NULL; it is stolen (decref'd by the call). */
void log_event(log_level level, const char *module, json_t *fields, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* The trace context of this thread's lines (telemetry, docs/telemetry.md):
 * lines logged on the thread carry "trace_id" and "span_id" until it is
 * cleared (NULL). Thread-local: a run thread sets its run's span. */
void log_set_trace(const char *trace_id, const char *span_id);

/* A second consumer of every line (OTLP logs, docs/telemetry.md): fn hears
 * each line at or above LOOM_LOG_LEVEL's level, with or without LOOM_LOG,
 * on the thread that logged it (line borrowed). One sink per process — the
 * OTEL_* environment is the process's — so log_set_sink is false when
 * another ctx holds it; log_clear_sink(ctx) lets go if ctx holds it and
 * returns once no call of fn is running. fn must not log. */
typedef void (*log_sink_fn)(void *ctx, log_level level, const json_t *line);
bool log_set_sink(log_sink_fn fn, void *ctx);
void log_clear_sink(void *ctx);
/* This thread's lines skip the sink: the exporter's own thread, whose HTTP
 * lines exported would each make another request. */
void log_mute_sink_on_this_thread(void);

#define LOG_D(mod, ...) log_event(LOG_DEBUG, mod, NULL, __VA_ARGS__)
#define LOG_I(mod, ...) log_event(LOG_INFO, mod, NULL, __VA_ARGS__)
#define LOG_W(mod, ...) log_event(LOG_WARN, mod, NULL, __VA_ARGS__)
#define LOG_E(mod, ...) log_event(LOG_ERROR, mod, NULL, __VA_ARGS__)

#endif
