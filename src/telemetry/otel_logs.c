/* otel_logs.c — log lines to OTLP log records (otel_logs.h). */
#include "telemetry/otel_logs.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "base/json.h"
#include "telemetry/otel_config.h"
#include "telemetry/otlp_exporter.h"

/* The OpenTelemetry log data model's severity numbers: the first of each
 * range (DEBUG 5, INFO 9, WARN 13, ERROR 17). */
static const struct { int number; const char *text; } severity[] = {
    {5, "DEBUG"}, {9, "INFO"}, {13, "WARN"}, {17, "ERROR"}};

/* Keys of the line that are its frame, not its fields. */
static bool is_frame_key(const char *k)
{
    static const char *const frame[] = {"ts", "level", "msg", "trace_id", "span_id"};
    for (size_t i = 0; i < sizeof frame / sizeof *frame; i++)
        if (!strcmp(k, frame[i]))
            return true;
    return false;
}

static bool is_hex(const char *s, size_t n)
{
    if (!s || strlen(s) != n)
        return false;
    for (size_t i = 0; i < n; i++)
        if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
            return false;
    return true;
}

static json_t *field_attr(const char *key, const json_t *v)
{
    if (json_is_string(v))
        return otel_attr_str(key, json_string_value(v));
    if (json_is_integer(v))
        return otel_attr_int(key, json_integer_value(v));
    if (json_is_real(v))
        return otel_attr_double(key, json_real_value(v));
    if (json_is_boolean(v))
        return otel_attr_bool(key, json_is_true(v));
    if (json_is_null(v))
        return NULL;
    /* objects and arrays: their JSON text, so nothing is lost */
    char *text = json_dump_compact(v);
    json_t *a = otel_attr_str(key, text ? text : "");
    free(text);
    return a;
}

json_t *otel_log_record(log_level level, const json_t *line, long long time_ns)
{
    if ((unsigned)level > LOG_ERROR)
        level = LOG_ERROR;
    char t[32];
    snprintf(t, sizeof t, "%lld", time_ns);
    const char *msg = json_string_value(json_object_get(line, "msg"));
    json_t *attrs = json_array();
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)line, k, v) {
        if (is_frame_key(k))
            continue;
        char key[128];
        snprintf(key, sizeof key, "loom.%s", k);
        json_t *a = field_attr(key, v);
        if (a)
            json_array_append_new(attrs, a);
    }
    json_t *r = json_pack("{s:s,s:s,s:i,s:s,s:{s:s},s:o}", "timeUnixNano", t,
                          "observedTimeUnixNano", t, "severityNumber", severity[level].number,
                          "severityText", severity[level].text, "body", "stringValue",
                          msg ? msg : "", "attributes", attrs);
    const char *trace = json_string_value(json_object_get(line, "trace_id"));
    const char *span = json_string_value(json_object_get(line, "span_id"));
    /* Only well-formed ids: a collector refuses a record with a bad one. */
    if (is_hex(trace, 32) && is_hex(span, 16)) {
        json_object_set_new(r, "traceId", json_string(trace));
        json_object_set_new(r, "spanId", json_string(span));
        json_object_set_new(r, "flags", json_integer(1)); /* sampled, as the spans */
    }
    return r;
}

void otel_logs_sink(void *exporter, log_level level, const json_t *line)
{
    otlp_exporter_enqueue(exporter, OTEL_LOGS,
                          otel_log_record(level, line, (long long)clock_wall_us() * 1000));
}
