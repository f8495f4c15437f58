/* recall.h — recall at run start (seed 001 §11.1 mount point A).
 *
 * The entries of `<root>/.loom/memory/` and E1's `<root>/.loom/mf/patterns/`
 * and `<root>/.loom/mf/failures/` are scored against the goal
 * (ext/memory/select.h); the picks, at most max_entries and max_bytes in
 * all, go into one block for the tail of the run's first request:
 *
 *   <system-reminder data-role="memory">
 *   ## Relevant memories for this query
 *   ### <file> (<date>)
 *   <description, body: sanitized (context/memory_sanitize.h)>
 *   [the freshness warning of §11.1-C when it is a day old or more]
 *   </system-reminder>
 *
 * Every run that recalls something appends one line to
 * `<root>/.loom/mf/recall.jsonl`: {ts, session, run, items: [{path, kind,
 * score, why, terms, age_days}]} (ext/evolve reads it for the
 * mis-injection rate). Recall never fails a run: an unreadable entry is
 * skipped. No state; one call, one thread. */
#ifndef LOOM_EXT_MEMORY_RECALL_H
#define LOOM_EXT_MEMORY_RECALL_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "base/error.h"
#include "ext/memory/entry.h"
#include "ext/memory/memory_config.h"
#include "ext/memory/select.h"

typedef struct memory_recall {
    char *block;    /* NULL when nothing was picked */
    json_t *items;  /* what was picked, in order (the log line's items); owned */
} memory_recall;

/* The candidates a recall chooses from: root's memory entries and E1's
 * files, appended to *v / *n. trusted false: a memory folder that
 * resolves outside root (a symlink elsewhere) is not read. */
void memory_recall_candidates(const char *root, bool trusted, memory_entry **v, size_t *n);

/* Picks from v for goal with the lexical selector (skip: paths already
 * surfaced in the session, may be NULL) and renders the block. Always
 * fills out. */
void memory_recall_pick(const memory_entry *v, size_t n, const char *goal,
                        const memory_config *c, const json_t *skip, int64_t now_ms,
                        memory_recall *out);
/* Renders picks made elsewhere (the model selector's), in their order,
 * within c's byte cap; via names the selector ("lexical", a model's name)
 * in each item. Always fills out; picks stay the caller's. */
void memory_recall_render(const memory_entry *v, const memory_pick *picks, size_t got,
                          const memory_config *c, const char *via, memory_recall *out);
void memory_recall_free(memory_recall *r);

/* The freshness warning for an entry age_days old (seed 001 §11.1-C), or
 * NULL under a day. Static text in buf. */
const char *memory_freshness(int age_days, char *buf, size_t cap);

/* Appends the recall line to root/.loom/mf/recall.jsonl (the folder made
 * when missing). A .loom or mf/ that leads outside root, or a recall.jsonl
 * that is a symlink, is not written through: -1 with err. 0 or -1. */
int memory_recall_log(const char *root, const char *session, const char *run,
                      const json_t *items, int64_t now_ms, loom_error *err);

#endif
