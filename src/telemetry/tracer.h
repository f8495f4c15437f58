/* tracer.h — a run's trace, built from its event stream (docs/telemetry.md):
 * the OpenTelemetry GenAI spans `invoke_agent {agent}` (the run, and each
 * sub-agent under the execute_tool span of the Agent call that started
 * it), `chat {model}` per model reply, `execute_tool {tool}` per tool call
 * (MCP tools with the MCP conventions' attributes), and compaction, renew,
 * approval and heartbeat events as span events.
 *
 * Why from events: every sub-agent's events already reach the root run's
 * stream tagged with agent_id, so one observer sees the whole tree without
 * a port into the loop, the pipeline or the agents. Finished spans go to
 * the exporter as OTLP JSON.
 *
 * Threading: observe from any thread (parallel sub-agents emit from their
 * own); one mutex, never held across I/O. */
#ifndef LOOM_TELEMETRY_TRACER_H
#define LOOM_TELEMETRY_TRACER_H

#include <jansson.h>
#include <stdbool.h>

#include "loom_protocol.h"
#include "telemetry/otlp_exporter.h"

typedef struct otel_tracer otel_tracer;

/* exporter borrowed (outlives the tracer); NULL → nothing exported. */
otel_tracer *otel_tracer_new(otlp_exporter *x, bool capture_content);
/* One event of the run (payload borrowed). */
void otel_tracer_observe(otel_tracer *t, loom_event_type type, const json_t *payload);
/* The run ended (its result payload, borrowed): every open span is ended,
 * the root with the run's state as its status, and the run's metrics are
 * queued. */
void otel_tracer_end(otel_tracer *t, const json_t *result);
/* W3C traceparent of the span a tool call runs in (its execute_tool span),
 * else the run's span: "00-<trace>-<span>-01" into buf (56 bytes). false
 * when there is no open span. */
bool otel_tracer_traceparent(otel_tracer *t, const char *call_id, char buf[56]);
void otel_tracer_free(otel_tracer *t);

#endif
