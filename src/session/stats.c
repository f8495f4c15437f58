/* stats.c — the aggregation behind `loom stats` (stats.h): one pass over a
 * session file's lines, each counted into the total and into the row of its
 * group. Which model a record belongs to is the model of the reply it is
 * part of (providerData.model), else the last one seen in the file, else
 * the session-meta's, so a tool result counts under the model that called
 * the tool. */
#include "session/stats.h"

#include <ctype.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "base/json.h"
#include "base/str.h"
#include "session/record.h"

void stats_init(stats *s, stats_by by, const char *since, stats_price_fn price, void *ctx)
{
    memset(s, 0, sizeof *s);
    s->by = by;
    s->price = price;
    s->price_ctx = ctx;
    s->total.last_run = -1;
    if (since)
        snprintf(s->since, sizeof s->since, "%s", since);
}

void stats_free(stats *s)
{
    for (size_t i = 0; i < s->n_rows; i++)
        free(s->rows[i].key);
    free(s->rows);
    memset(s, 0, sizeof *s);
}

static const char *const by_names[] = {"day", "model", "project", "agent", "purpose"};

bool stats_by_parse(const char *name, stats_by *out)
{
    for (int i = 0; name && i < (int)(sizeof by_names / sizeof by_names[0]); i++)
        if (strcmp(name, by_names[i]) == 0) {
            *out = (stats_by)i;
            return true;
        }
    return false;
}

const char *stats_by_name(stats_by by)
{
    return by_names[by];
}

static stats_row *row_for(stats *s, const char *key)
{
    for (size_t i = 0; i < s->n_rows; i++)
        if (strcmp(s->rows[i].key, key) == 0)
            return &s->rows[i];
    if (s->n_rows == s->cap_rows) {
        s->cap_rows = s->cap_rows ? s->cap_rows * 2 : 16;
        s->rows = xrealloc(s->rows, s->cap_rows * sizeof *s->rows);
    }
    stats_row *r = &s->rows[s->n_rows++];
    memset(r, 0, sizeof *r);
    r->key = xstrdup(key);
    r->last_run = -1;
    return r;
}

/* "YYYY-MM-DD" from an ISO 8601 timestamp into day (11 bytes); false when
 * it does not start with one. */
static bool day_of(const char *ts, char *day)
{
    static const char shape[] = "dddd-dd-dd";
    if (!ts || strlen(ts) < 10)
        return false;
    for (int i = 0; i < 10; i++)
        if (shape[i] == 'd' ? !isdigit((unsigned char)ts[i]) : ts[i] != '-')
            return false;
    memcpy(day, ts, 10);
    day[10] = '\0';
    return true;
}

/* What one session file says of itself (its session-meta) and where the
 * walk through it is. */
typedef struct file_view {
    const char *project, *agent, *model;
    char created_day[11];
} file_view;

/* What one record adds. */
typedef struct record_delta {
    long long input, output, cache_read, cache_write, reasoning;
    bool model_call, priced, tool_call, tool_failure;
    double usd;
} record_delta;

/* Counts from a file are outside input: a sum saturates rather than
 * overflow (a forged usage of 2^63 tokens). */
static void add_count(long long *to, long long n)
{
    *to = *to > LLONG_MAX - n ? LLONG_MAX : *to + n;
}

static void add_to_row(stats_row *r, const record_delta *d, long long session)
{
    add_count(&r->input, d->input);
    add_count(&r->output, d->output);
    add_count(&r->cache_read, d->cache_read);
    add_count(&r->cache_write, d->cache_write);
    add_count(&r->reasoning, d->reasoning);
    if (d->model_call) {
        r->model_calls++;
        if (d->priced)
            r->cost_usd += d->usd;
        else
            r->unpriced_calls++;
    }
    r->tool_calls += d->tool_call;
    r->tool_failures += d->tool_failure;
    if (r->last_run != session) {
        r->last_run = session;
        r->runs++;
    }
}

/* No call has a quadrillion tokens: a count above that is forged, and
 * capped so a price function may add a call's counts without overflow. */
#define STATS_CALL_TOKENS_MAX 1000000000000000LL

static long long usage_field(const json_t *u, const char *key)
{
    long long v = (long long)json_get_int(u, key, 0);
    return v <= 0 ? 0 : v > STATS_CALL_TOKENS_MAX ? STATS_CALL_TOKENS_MAX : v;
}

static void delta_of(const stats *s, const json_t *rec, const char *type, const char *model,
                     record_delta *d)
{
    memset(d, 0, sizeof *d);
    const json_t *pd = json_get_obj(rec, "providerData");
    const json_t *u = json_get_obj(pd, "usage");
    bool helper = strcmp(type, RECORD_HELPER_CALL) == 0;
    if (helper) { /* a helper model call: its own usage, priced by its own model */
        const char *st = json_get_str(rec, "status", "");
        bool made = !strcmp(st, "ok") || !strcmp(st, "error"); /* else refused: no request */
        u = made ? json_get_obj(rec, "usage") : NULL;
    }
    if (u && (helper || record_is_assistant_side(rec))) {
        d->model_call = true;
        d->input = usage_field(u, "inputTokens");
        d->output = usage_field(u, "outputTokens");
        d->cache_read = usage_field(u, "cacheReadTokens");
        d->cache_write = usage_field(u, "cacheCreationTokens");
        d->reasoning = usage_field(u, "reasoningTokens");
        d->priced = s->price && strcmp(model, "unknown") != 0 &&
                    s->price(s->price_ctx, model, d->input, d->output, d->cache_write,
                             d->cache_read, &d->usd);
    }
    if (strcmp(type, RECORD_FUNCTION_CALL) == 0)
        d->tool_call = true;
    if (strcmp(type, RECORD_FUNCTION_CALL_RESULT) == 0)
        d->tool_failure = json_get_bool(rec, "isError", false) ||
                          strcmp(json_get_str(rec, "status", ""), "error") == 0;
}

static void take_meta(file_view *v, const json_t *rec)
{
    v->project = json_get_str(rec, "cwd", v->project);
    v->model = json_get_str(rec, "model", v->model);
    if (json_get_bool(rec, "isSidechain", false))
        v->agent = json_get_str(rec, "agentType", "sub-agent");
    day_of(json_get_str(rec, "createdAt", NULL), v->created_day);
}

static void add_record(stats *s, file_view *v, const json_t *rec, const char *type)
{
    if (strcmp(type, RECORD_SESSION_META) == 0) {
        take_meta(v, rec);
        return;
    }
    bool helper = strcmp(type, RECORD_HELPER_CALL) == 0;
    const char *model = helper ? NULL : json_get_str(json_get_obj(rec, "providerData"), "model", NULL);
    if (model && *model)
        v->model = model;
    /* A helper call names its own model; the file's stays the agent's. */
    const char *call_model = helper ? json_get_str(rec, "model", "unknown") : v->model;
    if (!*call_model)
        call_model = "unknown";
    char day[11];
    if (!day_of(json_get_str(rec, "timestamp", NULL), day))
        memcpy(day, v->created_day, sizeof day);
    if (s->since[0] && strcmp(day, s->since) < 0)
        return;
    record_delta d;
    delta_of(s, rec, type, call_model, &d);
    const char *purpose = helper ? json_get_str(rec, "purpose", "unknown") : "main";
    const char *key = s->by == STATS_BY_DAY       ? day
                      : s->by == STATS_BY_MODEL   ? call_model
                      : s->by == STATS_BY_PROJECT ? v->project
                      : s->by == STATS_BY_AGENT   ? v->agent
                                                  : purpose;
    add_to_row(&s->total, &d, s->sessions);
    add_to_row(row_for(s, key), &d, s->sessions);
}

void stats_add_session(stats *s, const char *text, size_t len)
{
    file_view v = {.project = "unknown", .agent = "main", .model = "unknown",
                   .created_day = "unknown"};
    /* The file's records own the strings v points at: kept until its end. */
    json_t *kept = json_array();
    long long bad = 0;
    for (size_t at = 0; at < len;) {
        const char *nl = memchr(text + at, '\n', len - at);
        size_t end = nl ? (size_t)(nl - text) : len;
        size_t n = end - at;
        const char *line = text + at;
        at = end + 1;
        while (n > 0 && isspace((unsigned char)line[n - 1]))
            n--;
        if (n == 0)
            continue;
        json_error_t jerr;
        json_t *rec = json_loadb(line, n, JSON_REJECT_DUPLICATES, &jerr);
        const char *type = json_is_object(rec) ? record_type(rec) : NULL;
        if (!type) {
            bad++;
            json_decref(rec);
            continue;
        }
        add_record(s, &v, rec, type);
        json_array_append_new(kept, rec);
    }
    json_decref(kept);
    s->bad_records += bad;
    s->bad_files += bad > 0;
    s->sessions++;
}

static long long clamp_count(long long v)
{
    return v <= 0 ? 0 : v > STATS_CALL_TOKENS_MAX ? STATS_CALL_TOKENS_MAX : v;
}

void stats_add_run(stats *s, const stats_run *r)
{
    if (s->since[0] && r->day && strcmp(r->day, s->since) < 0)
        return;
    record_delta d;
    memset(&d, 0, sizeof d);
    d.input = clamp_count(r->input);
    d.output = clamp_count(r->output);
    d.model_call = d.input + d.output > 0;
    d.priced = r->cost_known;
    d.usd = r->cost_known && r->cost_usd > 0 ? r->cost_usd : 0;
    const char *key = s->by == STATS_BY_DAY       ? r->day
                      : s->by == STATS_BY_MODEL   ? r->model
                      : s->by == STATS_BY_PROJECT ? r->project
                                                  : r->agent;
    stats_row *row = row_for(s, key && *key ? key : "unknown");
    add_to_row(&s->total, &d, s->sessions);
    add_to_row(row, &d, s->sessions);
    /* tool counts are the run's sums, not one record's */
    long long calls = clamp_count(r->tool_calls), fails = clamp_count(r->tool_failures);
    add_count(&s->total.tool_calls, calls);
    add_count(&row->tool_calls, calls);
    add_count(&s->total.tool_failures, fails);
    add_count(&row->tool_failures, fails);
    s->sessions++;
}

void stats_add_unreadable_record(stats *s)
{
    s->bad_records++;
}

void stats_add_unreadable(stats *s)
{
    s->bad_records++;
    s->bad_files++;
}

static long long row_total(const stats_row *r)
{
    long long t = 0;
    add_count(&t, r->input);
    add_count(&t, r->output);
    add_count(&t, r->cache_read);
    add_count(&t, r->cache_write);
    return t;
}

static json_t *row_json(const stats_row *r)
{
    json_t *o = json_object();
    if (r->key)
        json_object_set_new(o, "key", json_string(r->key));
    json_object_set_new(o, "tokens",
                        json_pack("{sI,sI,sI,sI,sI,sI}", "input", (json_int_t)r->input, "output",
                                  (json_int_t)r->output, "cache_read", (json_int_t)r->cache_read,
                                  "cache_write", (json_int_t)r->cache_write, "reasoning",
                                  (json_int_t)r->reasoning, "total",
                                  (json_int_t)row_total(r)));
    bool known = r->model_calls > r->unpriced_calls;
    json_object_set_new(o, "cost_usd", known ? json_real(r->cost_usd) : json_null());
    json_object_set_new(o, "model_calls", json_integer(r->model_calls));
    json_object_set_new(o, "unpriced_calls", json_integer(r->unpriced_calls));
    json_object_set_new(o, "runs", json_integer(r->runs));
    json_object_set_new(o, "tool_calls", json_integer(r->tool_calls));
    json_object_set_new(o, "tool_failures", json_integer(r->tool_failures));
    json_object_set_new(o, "tool_failure_rate",
                        r->tool_calls ? json_real((double)r->tool_failures / (double)r->tool_calls)
                                      : json_null());
    return o;
}

static int by_key(const void *a, const void *b)
{
    return strcmp(((const stats_row *)a)->key, ((const stats_row *)b)->key);
}

json_t *stats_to_json(const stats *s)
{
    json_t *o = json_object();
    json_object_set_new(o, "by", json_string(stats_by_name(s->by)));
    if (s->since[0])
        json_object_set_new(o, "since", json_string(s->since));
    json_object_set_new(o, "sessions", json_integer(s->sessions));
    json_object_set_new(o, "unreadable", json_pack("{sI,sI}", "records", (json_int_t)s->bad_records,
                                                   "files", (json_int_t)s->bad_files));
    json_object_set_new(o, "total", row_json(&s->total));
    stats_row *sorted = xmalloc((s->n_rows ? s->n_rows : 1) * sizeof *sorted);
    if (s->n_rows)
        memcpy(sorted, s->rows, s->n_rows * sizeof *sorted);
    qsort(sorted, s->n_rows, sizeof *sorted, by_key);
    json_t *rows = json_array();
    for (size_t i = 0; i < s->n_rows; i++)
        json_array_append_new(rows, row_json(&sorted[i]));
    free(sorted);
    json_object_set_new(o, "rows", rows);
    return o;
}
