/* watch.h — the watch-source interface and its five implementations.
 *
 * A source is polled once per tick on the heartbeat thread. It compares the
 * world with its own baseline (taken when it was created) and reports each
 * real change once, as a candidate: what changed (subject, fingerprint,
 * summary), how urgent it is by the source's rules, and how large it is
 * (magnitude, for the ΔH gate). Sources never judge what a change means
 * for the goal (seed 000 L404–408); they never block on anything but the
 * local filesystem, and they never call the model.
 *
 * Everything here belongs to the heartbeat thread except the two functions
 * marked async-signal-safe.
 */
#ifndef LOOM_HEARTBEAT_WATCH_WATCH_H
#define LOOM_HEARTBEAT_WATCH_WATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "base/error.h"
#include "context/working.h"
#include "heartbeat/config.h"

/* A change one source saw. All strings are borrowed for the emit call. */
typedef struct hb_candidate {
    const char *source;       /* watch_type_name(): "filesystem", … */
    const char *subject;      /* what changed, for the novelty decay: a path, a topic, … */
    const char *fingerprint;  /* identity of this change; equal ⇔ the same change */
    const char *summary;      /* one line for the model */
    event_urgency urgency;
    double magnitude;         /* size of the change in [0,1] (gate.h) */
    double weight;            /* the source's weight in [0,1] */
} hb_candidate;

typedef void (*watch_emit_fn)(void *emit_ctx, const hb_candidate *c);

/* What a poll may know about the moment. */
typedef struct watch_tick {
    int64_t now_ms;           /* wall clock */
    bool act_active;          /* an Act ran at some point since the last tick */
} watch_tick;

typedef struct watch_ops {
    /* Reports every change since the last poll through emit. Returns the
     * number of problems met (unreadable files, …: counted, logged, never
     * fatal); the source keeps working. */
    int (*poll)(void *ctx, const watch_tick *t, watch_emit_fn emit, void *emit_ctx);
    /* Optional: a descriptor that becomes readable when the source wants to
     * be polled before the next tick (the signal pipe). -1: none. */
    int (*fd)(void *ctx);
    /* Optional: the agent itself wrote path (absolute, folded). has_hash:
     * the content it wrote hashes to hash (hb_content_hash); otherwise
     * whatever path holds when next looked at is the agent's. */
    void (*own_write)(void *ctx, const char *path, bool has_hash, uint64_t hash, int64_t now_ms);
    void (*free)(void *ctx);

    /* The type's settings block (heartbeat/config.c reads "type", checks
     * the keys against `keys` and reads "weight", default default_weight;
     * parse sets the type's urgency defaults and reads the rest, "urgency"
     * included, with relative paths resolved against cwd). */
    const char *name;             /* the block's "type", = watch_type_name(type) */
    watch_type type;
    const char *const *keys;      /* every key the block may hold, NULL-ended */
    double default_weight;
    int (*parse)(const json_t *src, const char *where, const char *cwd, watch_config *w,
                 loom_error *err);
    /* Adds "urgency" and the type's fields to o (heartbeat_config_to_json). */
    void (*to_json)(const watch_config *w, json_t *o);
} watch_ops;

/* The ops of each type (watch/<source>.c). */
extern const watch_ops watch_fs_ops, watch_process_ops, watch_mf_ops, watch_resource_ops,
    watch_signal_ops;
/* The ops whose name is `name`, NULL for none. */
const watch_ops *watch_ops_named(const char *name);
const watch_ops *watch_ops_of(watch_type t);

typedef struct watch_source {
    const watch_ops *ops;
    void *ctx;
    watch_type type;
} watch_source;

/* Constructors: each takes its baseline now. 0, or -code with err (the
 * source is then unusable and out is untouched). cwd (absolute) makes
 * summaries name paths relative to it. */
/* exclude (may be NULL): one absolute path never reported — the runtime
 * journal, whose own appends must not become events. */
int watch_fs_new(const watch_config *c, const char *cwd, const char *exclude, watch_source *out,
                 loom_error *err);
int watch_process_new(const watch_config *c, const char *cwd, watch_source *out, loom_error *err);
/* dir: the bus directory to use when c->dir is NULL. */
int watch_mf_new(const watch_config *c, const char *dir, watch_source *out, loom_error *err);
int watch_resource_new(const watch_config *c, watch_source *out, loom_error *err);
/* The signal source owns a non-blocking pipe; *write_fd receives its write
 * end for watch_signal_send. */
int watch_signal_new(const watch_config *c, watch_source *out, int *write_fd, loom_error *err);

/* Async-signal-safe: queues signal `name` (e.g. "SIGINT", "INT", "deploy")
 * as one fixed-size pipe record. -1 when the name is not 1–31 characters
 * of [A-Za-z0-9_.-] or the pipe is full (the signal is then dropped). */
int watch_signal_send(int write_fd, const char *name);
/* Async-signal-safe: the canonical name of signo ("SIGINT", …), NULL for
 * numbers the heartbeat does not name. */
const char *watch_signal_name(int signo);
/* Async-signal-safe: canonical upper-case form ("int" → "SIGINT"); false
 * when invalid. out holds at least 32 bytes. */
bool watch_signal_normalise(const char *in, char out[32]);

void watch_source_free(watch_source *s);

/* The path relative to cwd when it lies under it, else path itself
 * (borrowed pointer into path or a static "."). */
const char *watch_rel_path(const char *path, const char *cwd);

#endif
