/* test_session_stats.c — the aggregation behind `loom stats`
 * (session/stats.h): tokens, calls, runs and tool failures land in the
 * total and in the right group; the model of a reply names its tool
 * results' group; unpriced calls leave cost unknown (null), not 0; bad lines
 * are counted, not fatal; --since drops earlier days. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "base/json.h"
#include "session/stats.h"

/* $1 per million input tokens, $2 per million output, for "priced" only. */
static bool test_price(void *ctx, const char *model, long long in, long long out,
                       long long cw, long long cr, double *usd)
{
    (void)ctx;
    (void)cw;
    (void)cr;
    if (strcmp(model, "priced") != 0)
        return false;
    *usd = ((double)in * 1 + (double)out * 2) / 1e6;
    return true;
}

static const char session_a[] =
    "{\"type\":\"session-meta\",\"cwd\":\"/p/a\",\"model\":\"priced\","
    "\"createdAt\":\"2026-01-01T00:00:00.000Z\"}\n"
    "{\"type\":\"message\",\"role\":\"user\",\"timestamp\":\"2026-01-01T00:00:01.000Z\"}\n"
    "{\"type\":\"function_call\",\"callId\":\"c1\",\"name\":\"Bash\","
    "\"timestamp\":\"2026-01-01T00:00:02.000Z\",\"providerData\":{\"model\":\"priced\","
    "\"usage\":{\"inputTokens\":1000000,\"outputTokens\":500000,\"cacheReadTokens\":7,"
    "\"cacheCreationTokens\":3}}}\n"
    "{\"type\":\"function_call_result\",\"callId\":\"c1\",\"status\":\"error\","
    "\"timestamp\":\"2026-01-02T00:00:00.000Z\"}\n"
    "not json at all\n"
    "{\"no\":\"type\"}\n";

static const char session_b[] =
    "{\"type\":\"session-meta\",\"cwd\":\"/p/b\",\"model\":\"mystery\",\"isSidechain\":true,"
    "\"agentType\":\"Explore\",\"createdAt\":\"2026-01-02T00:00:00.000Z\"}\n"
    "{\"type\":\"message\",\"role\":\"assistant\",\"timestamp\":\"2026-01-02T00:00:00.000Z\","
    "\"providerData\":{\"usage\":{\"inputTokens\":10,\"outputTokens\":-5}}}\n";

static const json_t *row(const json_t *o, const char *key)
{
    size_t i;
    const json_t *r;
    json_array_foreach(json_object_get(o, "rows"), i, r)
        if (strcmp(json_get_str(r, "key", ""), key) == 0)
            return r;
    fail_msg("no row %s", key);
    return NULL;
}

static long long tok(const json_t *r, const char *k)
{
    return (long long)json_get_int(json_get_obj(r, "tokens"), k, -1);
}

static json_t *aggregate(stats_by by, const char *since)
{
    stats s;
    stats_init(&s, by, since, test_price, NULL);
    stats_add_session(&s, session_a, strlen(session_a));
    stats_add_session(&s, session_b, strlen(session_b));
    stats_add_unreadable(&s);
    json_t *o = stats_to_json(&s);
    stats_free(&s);
    return o;
}

static void totals_and_bad_lines(void **state)
{
    (void)state;
    json_t *o = aggregate(STATS_BY_DAY, NULL);
    const json_t *t = json_object_get(o, "total");
    assert_int_equal(json_get_int(o, "sessions", 0), 2);
    assert_int_equal(tok(t, "input"), 1000010);
    assert_int_equal(tok(t, "output"), 500000); /* a negative count is none */
    assert_int_equal(tok(t, "cache_read"), 7);
    assert_int_equal(tok(t, "cache_write"), 3);
    assert_int_equal(json_get_int(t, "model_calls", 0), 2);
    assert_int_equal(json_get_int(t, "unpriced_calls", 0), 1);
    assert_true(json_get_num(t, "cost_usd", 0) == 2.0);
    assert_int_equal(json_get_int(t, "runs", 0), 2);
    assert_int_equal(json_get_int(t, "tool_calls", 0), 1);
    assert_int_equal(json_get_int(t, "tool_failures", 0), 1);
    const json_t *bad = json_object_get(o, "unreadable");
    assert_int_equal(json_get_int(bad, "records", 0), 3); /* two lines + the unreadable file */
    assert_int_equal(json_get_int(bad, "files", 0), 2);
    /* The tool result's own day, not its call's. */
    assert_int_equal(json_get_int(row(o, "2026-01-02"), "tool_failures", 0), 1);
    assert_int_equal(json_get_int(row(o, "2026-01-02"), "runs", 0), 2);
    json_decref(o);
}

static void unpriced_group_cost_is_null(void **state)
{
    (void)state;
    json_t *o = aggregate(STATS_BY_MODEL, NULL);
    assert_true(json_is_null(json_object_get(row(o, "mystery"), "cost_usd")));
    assert_true(json_get_num(row(o, "priced"), "cost_usd", 0) == 2.0);
    assert_true(json_get_num(row(o, "priced"), "tool_failure_rate", 0) == 1.0);
    assert_true(json_is_null(json_object_get(row(o, "mystery"), "tool_failure_rate")));
    json_decref(o);
}

static void agents_and_projects(void **state)
{
    (void)state;
    json_t *o = aggregate(STATS_BY_AGENT, NULL);
    assert_int_equal(json_array_size(json_object_get(o, "rows")), 2);
    assert_int_equal(tok(row(o, "Explore"), "input"), 10);
    assert_int_equal(tok(row(o, "main"), "input"), 1000000);
    json_decref(o);
    o = aggregate(STATS_BY_PROJECT, NULL);
    assert_int_equal(json_get_int(row(o, "/p/a"), "runs", 0), 1);
    assert_int_equal(json_get_int(row(o, "/p/b"), "model_calls", 0), 1);
    json_decref(o);
}

static void since_drops_earlier_days(void **state)
{
    (void)state;
    json_t *o = aggregate(STATS_BY_DAY, "2026-01-02");
    assert_int_equal(json_array_size(json_object_get(o, "rows")), 1);
    const json_t *t = json_object_get(o, "total");
    assert_int_equal(tok(t, "input"), 10);
    assert_int_equal(json_get_int(t, "tool_failures", 0), 1);
    assert_true(json_is_null(json_object_get(t, "cost_usd")));
    json_decref(o);
}

static void by_names(void **state)
{
    (void)state;
    stats_by b;
    assert_true(stats_by_parse("project", &b));
    assert_int_equal(b, STATS_BY_PROJECT);
    assert_false(stats_by_parse("week", &b));
    assert_false(stats_by_parse(NULL, &b));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(totals_and_bad_lines),
        cmocka_unit_test(unpriced_group_cost_is_null),
        cmocka_unit_test(agents_and_projects),
        cmocka_unit_test(since_drops_earlier_days),
        cmocka_unit_test(by_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
