/* journal.h — the runtime journal: the source of truth for heartbeat
 * events (seed 000 L289–293). C_working's event surface is a projection of
 * it; after a crash or a renew, the journal says what was reported and how
 * far each event got.
 *
 * JSONL, one line per state transition of one event:
 *
 *   {"ts":"2026-01-01T00:00:05.123Z","event_id":"ev_0190…","fingerprint":"fs:/p:…",
 *    "state":"detected","source":"filesystem","urgency":"high",
 *    "summary":"src/utils.py modified (…)", "delta_h":0.81,"action":"request"}
 *
 * state is detected | projected | acknowledged | resolved | archived
 * (event_state_name); disposition and note appear once the model gave them.
 * The heartbeat writes detected, then projected once working_add_event
 * took the event; the loop writes acknowledged and resolved, and archived
 * when an event leaves the surface. A line is one write() on an O_APPEND
 * descriptor, so writers on several threads (or processes) never interleave
 * inside a line; a line torn by a crash is skipped by journal_read.
 */
#ifndef LOOM_HEARTBEAT_JOURNAL_H
#define LOOM_HEARTBEAT_JOURNAL_H

#include <jansson.h>
#include <stddef.h>

#include "base/error.h"
#include "context/working.h"

typedef struct journal journal;

/* Opens (creating it and its directory, mode 0600) path for appending.
 * NULL with err on failure. */
journal *journal_open(const char *path, loom_error *err);
/* Appends one line for ev in `state` (ev->state is not used). Thread-safe.
 * 0, or -code with err (may be NULL). */
int journal_append(journal *j, const surface_event *ev, event_state state, loom_error *err);
/* As journal_append, with extra's members (borrowed) added to the line. */
int journal_append_ex(journal *j, const surface_event *ev, event_state state,
                      const json_t *extra, loom_error *err);
/* The journal's path (borrowed). */
const char *journal_path(const journal *j);
void journal_close(journal *j);   /* NULL is fine */

/* Calls fn(ctx, line) for each line that is a JSON object, in file order;
 * fn returns nonzero to stop. Unparseable lines (a torn tail) are skipped
 * and counted in *skipped (may be NULL). A missing file is no error (no
 * lines). 0, or -code with err. */
int journal_read(const char *path, int (*fn)(void *ctx, const json_t *line), void *ctx,
                 size_t *skipped, loom_error *err);

#endif
