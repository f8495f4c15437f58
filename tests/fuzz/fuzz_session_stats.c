/* fuzz_session_stats.c — libFuzzer target for `loom stats`'s reading of a
 * session file (session/stats.h): stats_add_session over the input as a
 * file's bytes, by every grouping, with a price for one model. Whatever the
 * bytes, nothing may crash or leak, and:
 *   - one session is counted, and no more bad records than the input has
 *     lines;
 *   - the total's counts are not negative, each row's are at most the
 *     total's;
 *   - the total's cost is null exactly when no call is priced.
 * Any disagreement aborts. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/json.h"
#include "session/stats.h"

static bool price(void *ctx, const char *model, long long in, long long out, long long cw,
                  long long cr, double *usd)
{
    (void)ctx;
    if (strcmp(model, "priced") != 0)
        return false;
    *usd = ((double)in + (double)out + (double)cw + (double)cr) / 1e6;
    return true;
}

static long long tokens(const json_t *row)
{
    return json_get_int(json_get_obj(row, "tokens"), "total", -1);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    size_t lines = 1;
    for (size_t i = 0; i < size; i++)
        lines += data[i] == '\n';
    for (int by = STATS_BY_DAY; by <= STATS_BY_AGENT; by++) {
        stats s;
        stats_init(&s, (stats_by)by, by == STATS_BY_DAY ? "2026-01-01" : NULL, price, NULL);
        stats_add_session(&s, (const char *)data, size);
        json_t *o = stats_to_json(&s);
        const json_t *t = json_object_get(o, "total");
        if (json_get_int(o, "sessions", -1) != 1 || s.bad_records < 0 ||
            (size_t)s.bad_records > lines || tokens(t) < 0 ||
            json_get_int(t, "tool_failures", -1) < 0 || json_get_int(t, "runs", -1) > 1)
            abort();
        bool priced = json_get_int(t, "model_calls", 0) > json_get_int(t, "unpriced_calls", 0);
        if (priced != json_is_number(json_object_get(t, "cost_usd")))
            abort();
        size_t i;
        const json_t *row;
        json_array_foreach(json_object_get(o, "rows"), i, row)
            if (tokens(row) > tokens(t) ||
                json_get_int(row, "tool_calls", 0) > json_get_int(t, "tool_calls", 0))
                abort();
        json_decref(o);
        stats_free(&s);
    }
    return 0;
}
