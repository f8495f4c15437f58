/* bus.h — the M_f event bus (seed 000 row 4.7): what sub-agents find,
 * published as events into the shared layer.
 *
 * A topic is a folder under the bus directory (<session>.mf/bus/), the
 * folder the heartbeat's mf_events source watches: each event is one JSON
 * file written atomically (.tmp, then rename) in that source's format
 * (heartbeat/watch/mf.c). The ΔH gate drops an event whose delta_h is
 * below delta_min; a payload over the inline limit is compressed to a
 * summary (its keys, sizes and first values) with the whole payload spilled
 * to <bus>/.blobs/<event id>.json, and keeps its delta_h. Thread-safe.
 */
#ifndef LOOM_AGENTS_BUS_H
#define LOOM_AGENTS_BUS_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "base/error.h"

/* seed 000: δ_min and ε defaults. */
#define MF_BUS_DELTA_MIN 0.05
#define MF_BUS_INLINE_MAX 4096

typedef struct mf_bus mf_bus;

mf_bus *mf_bus_new(const char *dir, double delta_min, size_t inline_max);
void mf_bus_free(mf_bus *b);
const char *mf_bus_dir(const mf_bus *b);

typedef struct mf_bus_event {
    const char *topic;      /* "agents/<id>", "findings"; [A-Za-z0-9_./-], no ".." */
    const char *source;     /* who publishes: an agent id */
    const char *summary;    /* one line for the model */
    double delta_h;         /* the publisher's estimate of the information it adds, 0..1 */
    const char *urgency;    /* "low" | "high" | "critical"; NULL: low */
    const json_t *payload;  /* borrowed; may be NULL */
} mf_bus_event;

/* 1 written (*id_out, if not NULL, is its id, caller frees), 0 gated out
 * (below delta_min), -1 with err set (bad topic, write failed). */
int mf_bus_publish(mf_bus *b, const mf_bus_event *ev, char **id_out, loom_error *err);

/* The Publish tool a sub-agent gets (its ctx->spawn finds the bus). */
extern const struct tool_def tool_publish;

#endif
