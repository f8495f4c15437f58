/* otel_logs.h — OTLP logs: the JSONL log's lines (base/log.h) as OTLP log
 * records, queued on the exporter's logs signal when OTEL_LOGS_EXPORTER=otlp
 * (docs/telemetry.md).
 *
 * Why the log's lines: they are already the events worth keeping (wire
 * traffic, retries, warnings), with the run's trace and span ids, so a
 * collector correlates them with the spans without a second logging path.
 *
 * Threading: the sink runs on the thread that logged (base/log.c serialises
 * it); it only formats and enqueues. */
#ifndef LOOM_TELEMETRY_OTEL_LOGS_H
#define LOOM_TELEMETRY_OTEL_LOGS_H

#include <jansson.h>

#include "base/log.h"

/* One log line → an OTLP LogRecord (new reference): severity from the
 * level, body the message, module and fields as attributes, trace and span
 * ids when the line has them. */
json_t *otel_log_record(log_level level, const json_t *line, long long time_ns);
/* A log_sink_fn whose ctx is an otlp_exporter. */
void otel_logs_sink(void *exporter, log_level level, const json_t *line);

#endif
