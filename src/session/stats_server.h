/* stats_server.h — `loom stats --server`: a `loom serve` store's runs, read
 * through its GET /usage pages (docs/cli.md), added to the same stats as
 * session files: one run per item, grouped by the day it was created, its
 * model, its project (project_id) or its agent (agent_profile).
 *
 * A page is outside input: one that is not {items: [...]} is refused with
 * a reason; an item without a run_id or with a field of the wrong type is
 * skipped and counted (stats.bad_records), never fatal. The server priced
 * each run (with its settings), so its cost_usd is taken as it is; null
 * is an unknown cost, never 0.
 *
 * Same threading as stats.h. */
#ifndef LOOM_SESSION_STATS_SERVER_H
#define LOOM_SESSION_STATS_SERVER_H

#include <stddef.h>

#include "session/stats.h"

/* Adds the runs of one page; *next_cursor (may be NULL) gets the page's
 * next_cursor, malloc'd, or NULL on the last page. Returns the number of
 * items on the page, or -1 when the page is not a /usage page (why then
 * holds the reason). */
long stats_add_usage_page(stats *s, const char *text, size_t len, char **next_cursor,
                          char *why, size_t why_len);

#endif
