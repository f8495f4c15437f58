/* test_telemetry_config.c — the OTEL_* variables (telemetry/otel_config.c):
 * exporters off unless "otlp", endpoints per signal, and the key=value
 * lists of OTEL_EXPORTER_OTLP_HEADERS and OTEL_RESOURCE_ATTRIBUTES, whose
 * bad members are skipped with a warning naming the variable, never a
 * crash or a header that smuggles another. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "base/json.h"
#include "telemetry/otel_config.h"

typedef struct { const char *const *kv; } env_table;

static const char *lookup(void *ctx, const char *name)
{
    const env_table *t = ctx;
    for (size_t i = 0; t->kv[i]; i += 2)
        if (!strcmp(t->kv[i], name))
            return t->kv[i + 1];
    return NULL;
}

static void count_warning(void *ctx, const char *message)
{
    json_array_append_new(ctx, json_string(message));
}

static void test_off_by_default(void **state)
{
    (void)state;
    const char *kv[] = {NULL};
    env_table t = {kv};
    otel_config c;
    otel_config_load(&c, lookup, &t, false, NULL, NULL);
    assert_false(otel_config_any(&c));
    otel_config_free(&c);
}

static void test_endpoints_per_signal_and_base(void **state)
{
    (void)state;
    const char *kv[] = {"OTEL_TRACES_EXPORTER", "otlp", "OTEL_METRICS_EXPORTER", "otlp",
                        "OTEL_LOGS_EXPORTER", "zipkin",
                        "OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4318/",
                        "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT", "http://127.0.0.1:9/m", NULL};
    env_table t = {kv};
    json_t *warnings = json_array();
    otel_config c;
    otel_config_load(&c, lookup, &t, false, count_warning, warnings);
    assert_true(c.enabled[OTEL_TRACES]);
    assert_string_equal(c.url[OTEL_TRACES], "http://127.0.0.1:4318/v1/traces");
    assert_string_equal(c.url[OTEL_METRICS], "http://127.0.0.1:9/m");
    assert_false(c.enabled[OTEL_LOGS]);
    assert_int_equal(json_array_size(warnings), 1);
    assert_non_null(strstr(json_string_value(json_array_get(warnings, 0)), "OTEL_LOGS_EXPORTER"));
    otel_config_free(&c);
    json_decref(warnings);
}

static void test_bad_members_are_skipped_with_a_warning(void **state)
{
    (void)state;
    json_t *warnings = json_array();
    json_t *o = otel_parse_pairs("OTEL_EXPORTER_OTLP_HEADERS",
                                 "a=1,,novalue, =empty-key,bad=%zz,smuggle=x%0d%0aHost: evil,"
                                 "colon:key=v, b = two%20words ,=,c=",
                                 count_warning, warnings);
    assert_string_equal(json_string_value(json_object_get(o, "a")), "1");
    assert_string_equal(json_string_value(json_object_get(o, "b")), "two words");
    assert_string_equal(json_string_value(json_object_get(o, "c")), "");
    assert_int_equal(json_object_size(o), 3);
    /* novalue, empty key, bad %, CR LF, a colon in the key, "=" */
    assert_int_equal(json_array_size(warnings), 6);
    assert_non_null(strstr(json_string_value(json_array_get(warnings, 0)),
                           "OTEL_EXPORTER_OTLP_HEADERS: skipped the member \"novalue\""));
    json_decref(o);
    json_decref(warnings);
}

static void test_resource_and_service_name(void **state)
{
    (void)state;
    const char *kv[] = {"OTEL_TRACES_EXPORTER", "otlp", "OTEL_RESOURCE_ATTRIBUTES",
                        "service.name=from-attrs,team=core", "OTEL_SERVICE_NAME", "svc",
                        "OTEL_EXPORTER_OTLP_HEADERS", "authorization=Bearer%20t", NULL};
    env_table t = {kv};
    otel_config c;
    otel_config_load(&c, lookup, &t, true, NULL, NULL);
    char *res = json_dump_compact(c.resource);
    assert_non_null(strstr(res, "{\"key\":\"service.name\",\"value\":{\"stringValue\":\"svc\"}}"));
    assert_non_null(strstr(res, "\"team\""));
    free(res);
    assert_string_equal(c.headers[0], "Content-Type: application/json");
    assert_string_equal(c.headers[1], "authorization: Bearer t");
    assert_null(c.headers[2]);
    assert_true(c.capture_content); /* the setting, no variable */
    otel_config_free(&c);
}

static void test_sdk_disabled_wins(void **state)
{
    (void)state;
    const char *kv[] = {"OTEL_TRACES_EXPORTER", "otlp", "OTEL_SDK_DISABLED", "true", NULL};
    env_table t = {kv};
    otel_config c;
    otel_config_load(&c, lookup, &t, false, NULL, NULL);
    assert_false(otel_config_any(&c));
    otel_config_free(&c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_off_by_default),
        cmocka_unit_test(test_endpoints_per_signal_and_base),
        cmocka_unit_test(test_bad_members_are_skipped_with_a_warning),
        cmocka_unit_test(test_resource_and_service_name),
        cmocka_unit_test(test_sdk_disabled_wins),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
