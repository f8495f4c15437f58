/* fuzz_stats_usage_page.c — libFuzzer target for `loom stats --server`'s
 * reading of a loom serve GET /usage page (session/stats_server.h):
 * stats_add_usage_page over the input, by every grouping. Whatever the
 * bytes, nothing may crash or leak, and:
 *   - a refused page (-1) says why and adds nothing;
 *   - otherwise the runs counted plus the items skipped are the page's
 *     items, the total's counts are not negative and each row's are at
 *     most the total's.
 * Any disagreement aborts. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/json.h"
#include "session/stats_server.h"

static long long tokens(const json_t *row)
{
    return json_get_int(json_get_obj(row, "tokens"), "total", -1);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    for (int by = STATS_BY_DAY; by <= STATS_BY_AGENT; by++) {
        stats s;
        stats_init(&s, (stats_by)by, NULL, NULL, NULL);
        char *next = NULL;
        char why[200] = "";
        long n = stats_add_usage_page(&s, (const char *)data, size, &next, why, sizeof why);
        if (n < 0 && (!why[0] || s.sessions != 0 || next))
            abort();
        if (n >= 0 && s.sessions + s.bad_records != n)
            abort();
        json_t *o = stats_to_json(&s);
        const json_t *total = json_object_get(o, "total");
        long long all = tokens(total);
        if (all < 0 || json_get_int(total, "tool_calls", -1) < 0)
            abort();
        size_t i;
        const json_t *row;
        json_array_foreach(json_object_get(o, "rows"), i, row) {
            if (tokens(row) < 0 || tokens(row) > all ||
                json_get_int(row, "tool_calls", -1) > json_get_int(total, "tool_calls", -1))
                abort();
        }
        json_decref(o);
        free(next);
        stats_free(&s);
    }
    return 0;
}
