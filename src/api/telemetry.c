/* telemetry.c — the agent's OpenTelemetry export and each run's tracer
 * (docs/telemetry.md). The OTEL_* variables are read once per agent; the
 * exporter thread is the agent's, shared by its runs; a run's tracer
 * observes its event stream (api/run.c's emit) and is ended, flushed and
 * reported in the run's result. */
#include <stdlib.h>

#include "api/internal.h"
#include "base/json.h"
#include "base/log.h"
#include "telemetry/otel_logs.h"

/* A run's end waits at most this long for its spans to go out: a collector
 * that is down costs a run this much, once. */
#define TELEMETRY_FLUSH_MS 3000

static const char *getenv_fn(void *ctx, const char *name)
{
    (void)ctx;
    return getenv(name);
}

static void collect_warning(void *ctx, const char *message)
{
    json_array_append_new(ctx, json_string(message));
}

/* settings "telemetry": {"captureContent": true} in any settings file
 * (user, project, local; the later wins). */
static bool capture_setting(const loom_agent *a)
{
    bool on = false;
    for (int i = 0; i < 3; i++) {
        json_t *v = json_object_get(json_object_get(a->files[i], "telemetry"), "captureContent");
        if (json_is_boolean(v))
            on = json_is_true(v);
    }
    return on;
}

void api_telemetry_agent_init(loom_agent *a)
{
    a->otel_warnings = json_array();
    otel_config_load(&a->otel, getenv_fn, NULL, capture_setting(a), collect_warning,
                     a->otel_warnings);
    a->otel_exporter = otlp_exporter_new(&a->otel);
    /* OTLP logs: the process's log lines through this agent's exporter
     * (the first agent's, in a server with several: the OTEL_* variables
     * are the same for all). */
    if (a->otel_exporter && a->otel.enabled[OTEL_LOGS])
        log_set_sink(otel_logs_sink, a->otel_exporter);
}

void api_telemetry_agent_free(loom_agent *a)
{
    log_clear_sink(a->otel_exporter);
    otlp_exporter_free(a->otel_exporter);
    a->otel_exporter = NULL;
    otel_config_free(&a->otel);
    json_decref(a->otel_warnings);
    a->otel_warnings = NULL;
}

otel_tracer *api_telemetry_run_begin(loom_agent *a)
{
    if (!a->otel_exporter)
        return NULL;
    return otel_tracer_new(a->otel_exporter, a->otel.capture_content);
}

void api_telemetry_run_end(loom_agent *a, otel_tracer *t, json_t *result)
{
    if (!t)
        return;
    otel_tracer_end(t, result);
    otlp_exporter_flush(a->otel_exporter, TELEMETRY_FLUSH_MS);
    otlp_stats st;
    otlp_exporter_stats(a->otel_exporter, &st);
    json_t *o = json_pack("{s:I,s:I,s:I,s:I}", "spans_exported",
                          (json_int_t)st.exported[OTEL_TRACES], "spans_dropped",
                          (json_int_t)st.dropped[OTEL_TRACES], "metrics_exported",
                          (json_int_t)st.exported[OTEL_METRICS], "metrics_dropped",
                          (json_int_t)st.dropped[OTEL_METRICS]);
    if (a->otel.enabled[OTEL_LOGS]) {
        json_object_set_new(o, "logs_exported", json_integer((json_int_t)st.exported[OTEL_LOGS]));
        json_object_set_new(o, "logs_dropped", json_integer((json_int_t)st.dropped[OTEL_LOGS]));
    }
    if (st.last_error[0])
        json_object_set_new(o, "last_error", json_string(st.last_error));
    json_object_set_new(result, "telemetry", o);
}
