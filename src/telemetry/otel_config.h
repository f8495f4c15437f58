/* otel_config.h — what the OTEL_* environment asks of Loom's telemetry
 * (docs/telemetry.md): which signals are exported (none by default), where
 * to (OTLP/HTTP JSON endpoints), with which headers and resource, and
 * whether tool arguments and results go into spans.
 *
 * The variables are the OpenTelemetry SDK's own names, so a collector setup
 * written for any other SDK works unchanged. A bad value (a header without
 * '=', an unknown exporter) is skipped with a warning through the caller's
 * function, never fatal: telemetry must not stop a run.
 *
 * Owns its strings; plain data, any thread once loaded. */
#ifndef LOOM_TELEMETRY_OTEL_CONFIG_H
#define LOOM_TELEMETRY_OTEL_CONFIG_H

#include <jansson.h>
#include <stdbool.h>

typedef enum { OTEL_TRACES, OTEL_METRICS, OTEL_LOGS, OTEL_N_SIGNALS } otel_signal;

typedef struct otel_config {
    bool enabled[OTEL_N_SIGNALS];
    char *url[OTEL_N_SIGNALS];   /* the POST target of each enabled signal */
    char **headers;              /* NULL-terminated "Name: value" lines (plus Content-Type) */
    json_t *resource;            /* OTLP attribute array: service.name, … */
    bool capture_content;        /* tool arguments and results into spans */
} otel_config;

/* The lookup of one variable (getenv in the program; a table in tests). */
typedef const char *(*otel_env_fn)(void *ctx, const char *name);
typedef void (*otel_warn_fn)(void *ctx, const char *message);

/* Fills c from the variables; warn (may be NULL) hears each value skipped.
 * capture_setting: the settings' telemetry.captureContent (true wins over
 * an unset variable). Free with otel_config_free. */
void otel_config_load(otel_config *c, otel_env_fn env, void *env_ctx, bool capture_setting,
                      otel_warn_fn warn, void *warn_ctx);
bool otel_config_any(const otel_config *c);
void otel_config_free(otel_config *c);

/* Parses "k1=v1,k2=v2" (the W3C baggage shape the OTEL_EXPORTER_OTLP_HEADERS
 * and OTEL_RESOURCE_ATTRIBUTES values use; values percent-decoded) into
 * an object of strings; bad members are skipped with a warning naming the
 * variable. Returns a new object (never NULL). */
json_t *otel_parse_pairs(const char *var, const char *text, otel_warn_fn warn, void *warn_ctx);

/* OTLP JSON attribute helpers: {key, value: {stringValue|intValue|…}}. */
json_t *otel_attr_str(const char *key, const char *value);
json_t *otel_attr_int(const char *key, long long value);
json_t *otel_attr_double(const char *key, double value);
json_t *otel_attr_bool(const char *key, bool value);
/* value: a JSON array of strings (stolen). */
json_t *otel_attr_str_array(const char *key, json_t *values);

#endif
