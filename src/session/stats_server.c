/* stats_server.c — GET /usage pages into stats (stats_server.h). */
#include "session/stats_server.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/json.h"
#include "base/str.h"

/* A string member, or NULL when absent or null; false when it is there
 * with another type (the item is then refused). */
static bool opt_str(const json_t *o, const char *k, const char **out)
{
    const json_t *v = json_object_get(o, k);
    *out = json_string_value(v);
    return !v || json_is_null(v) || json_is_string(v);
}

static bool opt_int(const json_t *o, const char *k, long long *out)
{
    const json_t *v = json_object_get(o, k);
    *out = json_is_integer(v) ? (long long)json_integer_value(v) : 0;
    return !v || json_is_null(v) || json_is_integer(v);
}

/* One item to a run; false when it is not a /usage item. */
static bool run_of(const json_t *item, stats_run *r, char day[11])
{
    memset(r, 0, sizeof *r);
    const char *id, *created;
    if (!json_is_object(item) || !opt_str(item, "run_id", &id) || !id ||
        !opt_str(item, "created_at", &created) || !opt_str(item, "model", &r->model) ||
        !opt_str(item, "project_id", &r->project) || !opt_str(item, "agent_profile", &r->agent) ||
        !opt_int(item, "input_tokens", &r->input) || !opt_int(item, "output_tokens", &r->output) ||
        !opt_int(item, "tool_calls", &r->tool_calls) ||
        !opt_int(item, "tool_failures", &r->tool_failures))
        return false;
    const json_t *cost = json_object_get(item, "cost_usd");
    if (cost && !json_is_null(cost) && !json_is_number(cost))
        return false;
    r->cost_known = json_is_number(cost) && json_number_value(cost) >= 0;
    r->cost_usd = r->cost_known ? json_number_value(cost) : 0;
    /* "2026-12-03T10:00:00Z" → its day; anything else groups as unknown */
    snprintf(day, 11, "%s", "unknown");
    if (created && strlen(created) >= 10 && created[4] == '-' && created[7] == '-')
        snprintf(day, 11, "%.10s", created);
    r->day = day;
    return true;
}

long stats_add_usage_page(stats *s, const char *text, size_t len, char **next_cursor,
                          char *why, size_t why_len)
{
    if (next_cursor)
        *next_cursor = NULL;
    json_error_t jerr;
    json_t *page = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
    const json_t *items = json_object_get(page, "items");
    if (!page) {
        snprintf(why, why_len, "the page is not JSON (%s at %d)", jerr.text, jerr.position);
        return -1;
    }
    if (!json_is_array(items)) {
        snprintf(why, why_len, "the page has no \"items\" array");
        json_decref(page);
        return -1;
    }
    size_t i;
    const json_t *item;
    json_array_foreach(items, i, item) {
        stats_run r;
        char day[11];
        if (run_of(item, &r, day))
            stats_add_run(s, &r);
        else
            stats_add_unreadable_record(s);
    }
    const char *next = json_string_value(json_object_get(page, "next_cursor"));
    if (next_cursor && next && *next)
        *next_cursor = xstrdup(next);
    long n = (long)json_array_size(items);
    json_decref(page);
    return n;
}
