/* stats.h — usage statistics over session files (`loom stats`): tokens by
 * type, cost, runs (sessions), model calls, tool calls and their failures,
 * grouped by day, model, project (the session's cwd) or agent ("main" or a
 * sub-agent's type), read from the records docs/session-format.md defines.
 *
 * Session files are outside input: a line that is not a JSON object with a
 * "type" is skipped and counted (stats.bad_records, and its file once in
 * stats.bad_files), never fatal. Prices come from a callback so this layer
 * does not depend on the provider's table; a call whose model it cannot
 * price is counted as unpriced, and a group none of whose calls has a
 * price has cost null ("unknown"), never 0.
 *
 * One stats value belongs to one thread; no global state. */
#ifndef LOOM_SESSION_STATS_H
#define LOOM_SESSION_STATS_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

/* STATS_BY_PURPOSE: the agent's own turns under "main", each helper model
 * call (a helper-call record) under its purpose ("compaction",
 * "permission_classifier", "hook_prompt", …). */
typedef enum stats_by {
    STATS_BY_DAY, STATS_BY_MODEL, STATS_BY_PROJECT, STATS_BY_AGENT, STATS_BY_PURPOSE
} stats_by;

/* The USD cost of one model call's tokens; false when model has no price. */
typedef bool (*stats_price_fn)(void *ctx, const char *model, long long input, long long output,
                               long long cache_write, long long cache_read, double *usd);

typedef struct stats_row {
    char *key;
    long long input, output, cache_read, cache_write, reasoning;
    double cost_usd;           /* of the priced calls */
    long long model_calls, unpriced_calls;
    long long runs, tool_calls, tool_failures;
    long long last_run;        /* the session that last counted in runs */
} stats_row;

typedef struct stats {
    stats_by by;
    char since[11];            /* "YYYY-MM-DD": records of earlier days skipped; "" for all */
    stats_price_fn price;
    void *price_ctx;
    stats_row total;
    stats_row *rows;
    size_t n_rows, cap_rows;
    long long sessions;        /* files added */
    long long bad_records, bad_files;
} stats;

/* by and the price callback (may be NULL: every call unpriced); since may
 * be NULL or "". */
void stats_init(stats *s, stats_by by, const char *since, stats_price_fn price, void *ctx);
void stats_free(stats *s);

/* "day", "model", "project", "agent", "purpose" → its value; false for anything else. */
bool stats_by_parse(const char *name, stats_by *out);
const char *stats_by_name(stats_by by);

/* Adds one session file's bytes (a main session or a sub-agent's
 * sidechain: its session-meta says which). */
void stats_add_session(stats *s, const char *text, size_t len);

/* One run as a server's store knows it (stats_server.h): its figures are
 * the run's sums, its cost the server's (cost_known false: unknown). A
 * run with tokens counts as one model call, unpriced when its cost is
 * unknown. Strings borrowed; counts below 0 are taken as 0. */
typedef struct stats_run {
    const char *day, *model, *project, *agent;
    long long input, output, tool_calls, tool_failures;
    bool cost_known;
    double cost_usd;
} stats_run;
void stats_add_run(stats *s, const stats_run *r);

/* Counts a file that could not be read at all as one bad record in a bad file. */
void stats_add_unreadable(stats *s);
/* Counts one bad record (a server's item that is not a run), no file. */
void stats_add_unreadable_record(stats *s);

/* {by, since?, sessions, unreadable: {records, files}, total: row,
 * rows: [row…] sorted by key}, a row being {key, tokens: {input, output,
 * cache_read, cache_write, reasoning, total}, cost_usd (number, or null
 * when no call of it is priced), unpriced_calls, model_calls, runs,
 * tool_calls, tool_failures, tool_failure_rate (null without calls)}.
 * New reference. */
json_t *stats_to_json(const stats *s);

#endif
