/* otel_config.c — the OTEL_* variables read once into an otel_config
 * (otel_config.h), and the OTLP JSON attribute shapes every signal uses.
 * No shared state. */
#include "telemetry/otel_config.h"

#include <ctype.h>
#include <stdarg.h>
#include <strings.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/str.h"

static char *strf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *strf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    char *out = malloc((size_t)n + 1);
    va_start(ap, fmt);
    vsnprintf(out, (size_t)n + 1, fmt, ap);
    va_end(ap);
    return out;
}

static const char *const signal_names[OTEL_N_SIGNALS] = {"traces", "metrics", "logs"};

static void warnf(otel_warn_fn warn, void *ctx, const char *fmt, const char *a, const char *b)
{
    if (!warn)
        return;
    char msg[512];
    snprintf(msg, sizeof msg, fmt, a, b);
    warn(ctx, msg);
}

static int hexval(int c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    c = tolower(c);
    return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* Trimmed, percent-decoded copy of [s, s+n); NULL when a %XX is broken. */
static char *decode(const char *s, size_t n)
{
    while (n && isspace((unsigned char)*s))
        s++, n--;
    while (n && isspace((unsigned char)s[n - 1]))
        n--;
    char *out = malloc(n + 1);
    size_t o = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] != '%') {
            out[o++] = s[i];
            continue;
        }
        int h = i + 2 < n ? hexval((unsigned char)s[i + 1]) : -1;
        int l = h >= 0 ? hexval((unsigned char)s[i + 2]) : -1;
        if (l < 0) {
            free(out);
            return NULL;
        }
        out[o++] = (char)(h * 16 + l);
        i += 2;
    }
    out[o] = '\0';
    return out;
}

/* A header line must not smuggle a second header or end the head. */
static bool has_control(const char *s)
{
    for (; *s; s++)
        if ((unsigned char)*s < 0x20 && *s != '\t')
            return true;
    return false;
}

json_t *otel_parse_pairs(const char *var, const char *text, otel_warn_fn warn, void *warn_ctx)
{
    json_t *out = json_object();
    if (!text)
        return out;
    const char *p = text;
    while (*p) {
        const char *end = strchr(p, ',');
        size_t n = end ? (size_t)(end - p) : strlen(p);
        const char *eq = memchr(p, '=', n);
        char *k = eq ? decode(p, (size_t)(eq - p)) : NULL;
        char *v = eq ? decode(eq + 1, n - (size_t)(eq - p) - 1) : NULL;
        char *shown = decode(p, n);
        bool blank = n == 0 || (shown && !*shown);
        if (blank) {
            /* an empty member ("a=1,,b=2"): nothing to warn about */
        } else if (!k || !v || !*k || has_control(k) || has_control(v) || strchr(k, ':')) {
            warnf(warn, warn_ctx, "%s: skipped the member \"%s\" (want key=value)", var,
                  shown ? shown : "(bad percent-encoding)");
        } else {
            json_object_set_new(out, k, json_string(v));
        }
        free(k);
        free(v);
        free(shown);
        if (!end)
            break;
        p = end + 1;
    }
    return out;
}

json_t *otel_attr_str(const char *key, const char *value)
{
    return json_pack("{s:s,s:{s:s}}", "key", key, "value", "stringValue", value ? value : "");
}

json_t *otel_attr_int(const char *key, long long value)
{
    /* OTLP JSON: 64-bit integers are strings (the protobuf JSON mapping). */
    char buf[32];
    snprintf(buf, sizeof buf, "%lld", value);
    return json_pack("{s:s,s:{s:s}}", "key", key, "value", "intValue", buf);
}

json_t *otel_attr_double(const char *key, double value)
{
    return json_pack("{s:s,s:{s:f}}", "key", key, "value", "doubleValue", value);
}

json_t *otel_attr_bool(const char *key, bool value)
{
    return json_pack("{s:s,s:{s:b}}", "key", key, "value", "boolValue", value);
}

json_t *otel_attr_str_array(const char *key, json_t *values)
{
    json_t *vals = json_array();
    size_t i;
    json_t *v;
    json_array_foreach(values, i, v)
        json_array_append_new(vals, json_pack("{s:s}", "stringValue", json_string_value(v) ? json_string_value(v) : ""));
    json_decref(values);
    return json_pack("{s:s,s:{s:{s:o}}}", "key", key, "value", "arrayValue", "values", vals);
}

static bool truthy(const char *v)
{
    return v && (!strcasecmp(v, "true") || !strcmp(v, "1"));
}

/* OTEL_<SIGNAL>_EXPORTER: "otlp" on, "none"/unset off, anything else off
 * with a warning (Loom has no console or zipkin exporter). */
static bool exporter_on(const char *var, const char *v, otel_warn_fn warn, void *wctx)
{
    if (!v || !*v || !strcmp(v, "none"))
        return false;
    if (!strcmp(v, "otlp"))
        return true;
    warnf(warn, wctx, "%s=%s: Loom exports only \"otlp\" (or \"none\"); this signal is off", var,
          v);
    return false;
}

static char *signal_url(const char *sig, const char *per_signal, const char *base)
{
    if (per_signal && *per_signal)
        return xstrdup(per_signal);
    const char *b = base && *base ? base : "http://localhost:4318";
    size_t n = strlen(b);
    while (n && b[n - 1] == '/')
        n--;
    return strf("%.*s/v1/%s", (int)n, b, sig);
}

void otel_config_load(otel_config *c, otel_env_fn env, void *ectx, bool capture_setting,
                      otel_warn_fn warn, void *wctx)
{
    memset(c, 0, sizeof *c);
    if (truthy(env(ectx, "OTEL_SDK_DISABLED")))
        return;
    static const char *const exporter_vars[OTEL_N_SIGNALS] = {
        "OTEL_TRACES_EXPORTER", "OTEL_METRICS_EXPORTER", "OTEL_LOGS_EXPORTER"};
    static const char *const endpoint_vars[OTEL_N_SIGNALS] = {
        "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT",
        "OTEL_EXPORTER_OTLP_LOGS_ENDPOINT"};
    const char *base = env(ectx, "OTEL_EXPORTER_OTLP_ENDPOINT");
    for (int s = 0; s < OTEL_N_SIGNALS; s++) {
        c->enabled[s] = exporter_on(exporter_vars[s], env(ectx, exporter_vars[s]), warn, wctx);
        if (c->enabled[s])
            c->url[s] = signal_url(signal_names[s], env(ectx, endpoint_vars[s]), base);
    }
    json_t *hdrs = otel_parse_pairs("OTEL_EXPORTER_OTLP_HEADERS",
                                    env(ectx, "OTEL_EXPORTER_OTLP_HEADERS"), warn, wctx);
    c->headers = calloc(json_object_size(hdrs) + 2, sizeof *c->headers);
    size_t n = 0;
    c->headers[n++] = xstrdup("Content-Type: application/json");
    const char *k;
    json_t *v;
    json_object_foreach(hdrs, k, v)
        c->headers[n++] = strf("%s: %s", k, json_string_value(v));
    json_decref(hdrs);

    json_t *attrs = otel_parse_pairs("OTEL_RESOURCE_ATTRIBUTES",
                                     env(ectx, "OTEL_RESOURCE_ATTRIBUTES"), warn, wctx);
    const char *svc = env(ectx, "OTEL_SERVICE_NAME");
    if (svc && *svc)
        json_object_set_new(attrs, "service.name", json_string(svc));
    else if (!json_object_get(attrs, "service.name"))
        json_object_set_new(attrs, "service.name", json_string("loom"));
    json_object_set_new(attrs, "telemetry.sdk.name", json_string("loom"));
    json_object_set_new(attrs, "telemetry.sdk.language", json_string("c"));
    c->resource = json_array();
    json_object_foreach(attrs, k, v)
        json_array_append_new(c->resource, otel_attr_str(k, json_string_value(v)));
    json_decref(attrs);

    const char *cap = env(ectx, "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT");
    c->capture_content = cap && *cap ? truthy(cap) : capture_setting;
}

bool otel_config_any(const otel_config *c)
{
    for (int s = 0; s < OTEL_N_SIGNALS; s++)
        if (c->enabled[s])
            return true;
    return false;
}

void otel_config_free(otel_config *c)
{
    for (int s = 0; s < OTEL_N_SIGNALS; s++)
        free(c->url[s]);
    for (size_t i = 0; c->headers && c->headers[i]; i++)
        free(c->headers[i]);
    free(c->headers);
    json_decref(c->resource);
    memset(c, 0, sizeof *c);
}
