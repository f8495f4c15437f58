/* bus.h — the M_f event bus (seed 000 row 4.7): what sub-agents find,
 * published as events into the shared layer.
 *
 * A topic's first segment is a folder under the bus directory
 * (<session>.mf/bus/), the folder the heartbeat's mf_events source watches
 * (it reads one level: "agents/<id>" lands in agents/, the whole topic in
 * the file's "topic"): each event is one JSON file, <event id>.json,
 * written atomically (a dot-named temp file, then rename) in that source's
 * format (heartbeat/watch/mf.c): {id, topic, sender, summary, delta_h,
 * urgency, ts, payload}. The ΔH gate (seed 000 T2.1) publishes only an
 * event whose delta_h is above delta_min; a payload whose JSON is over the
 * inline limit (T2.2) is replaced by a summary {compressed: true, type,
 * bytes, keys, sizes, preview, blob} (its keys, their sizes and first
 * values) with the whole payload spilled to <bus>/.blobs/<event id>.json,
 * and keeps its delta_h. Thread-safe: a bus is immutable after
 * mf_bus_new and every event is a file of its own.
 */
#ifndef LOOM_AGENTS_BUS_H
#define LOOM_AGENTS_BUS_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "base/error.h"

/* seed 000: δ_min and ε defaults (the seed leaves both open). */
#define MF_BUS_DELTA_MIN 0.05
#define MF_BUS_INLINE_MAX 4096
/* A summary is one line of at most this many bytes (cut at a character). */
#define MF_BUS_SUMMARY_MAX 500
/* The largest payload kept at all (its JSON text): an event is a finding,
 * not a file; what is bigger belongs in a file the event names. */
#define MF_BUS_PAYLOAD_MAX ((size_t)8 << 20)

typedef struct mf_bus mf_bus;

/* dir: absolute (copied; made on the first publish). delta_min < 0 gives
 * MF_BUS_DELTA_MIN; inline_max 0 gives MF_BUS_INLINE_MAX and is capped at
 * 32 KiB (the reader skips event files over 64 KiB). */
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
 * (delta_h not above delta_min), < 0 with err set (bad topic, summary,
 * delta_h or urgency; write failed). */
int mf_bus_publish(mf_bus *b, const mf_bus_event *ev, char **id_out, loom_error *err);

/* The Publish tool a sub-agent gets (its ctx->spawn finds the bus):
 * input {topic, summary, delta_h, urgency?, payload?}. */
extern const struct tool_def tool_publish;

struct spawn_node;
/* The bus of the session a tree node belongs to, NULL when none. Defined by
 * agents/tree.c (the core task owns it; it is declared here until tree.h
 * lands, and bus.c refers to it weakly so the two can land in any order). */
mf_bus *spawn_node_bus(struct spawn_node *node);

#endif
