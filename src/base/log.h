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

#define LOG_D(mod, ...) log_event(LOG_DEBUG, mod, NULL, __VA_ARGS__)
#define LOG_I(mod, ...) log_event(LOG_INFO, mod, NULL, __VA_ARGS__)
#define LOG_W(mod, ...) log_event(LOG_WARN, mod, NULL, __VA_ARGS__)
#define LOG_E(mod, ...) log_event(LOG_ERROR, mod, NULL, __VA_ARGS__)

#endif
