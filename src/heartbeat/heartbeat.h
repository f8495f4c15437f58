/* heartbeat.h — H_b, the heartbeat: a thread per run that keeps perceiving
 * the world while the loop is blocked in an Act (seed 000 dimension ②,
 * L190–L480; docs/heartbeat.md is the user-facing reference).
 *
 * Every T_hb seconds (T_hb_act while an Act runs) the heartbeat polls its
 * watch sources (watch.h), passes each change through the ΔH gate
 * (gate.h), and for each change that passes:
 *
 *   1. writes `detected` to the runtime journal (journal.h), with ΔH;
 *   2. projects it into C_working (working_add_event); when that adds it,
 *      writes `projected`; when the surface already holds the fingerprint,
 *      writes `archived` with "reason":"duplicate" and stops here;
 *   3. applies the interrupt policy for its urgency: request and force set
 *      the dashboard's interrupt_requested (working_set_interrupt);
 *   4. calls env->on_event with the action (queue, request or force).
 *
 * It never calls a model and never makes a semantic judgment; it holds no
 * lock while doing I/O, and the functions the loop calls return at once
 * (they only touch atomics, a short queue under a mutex, or a pipe).
 *
 * ---- Integration (what the loop, the tools and the CLI do) ----
 *
 *   heartbeat_config cfg;                          // from settings / profile
 *   heartbeat_config_from_json(json_object_get(settings, "heartbeat"), cwd, &cfg, &err);
 *   if (cfg.enabled) hb = heartbeat_start(&cfg, &env, &err);
 *   heartbeat_config_free(&cfg);                   // start keeps what it needs
 *
 *   around every Act:   heartbeat_set_act(hb, true) … heartbeat_set_act(hb, false)
 *   Write/Edit:         heartbeat_note_own_write(hb, abs_path, data, len) just
 *                       before file_commit writes (after works too, but a
 *                       tick falling between the write and the call would
 *                       report the write)
 *   signal handlers:    heartbeat_signal(hb, heartbeat_signal_name(signo))
 *   `loom signal NAME`: heartbeat_signal(hb, NAME)
 *   run end:            heartbeat_stop(hb, &stats)  → report CPU share
 *
 *   env.on_event runs on the heartbeat thread, once per projected event:
 *     INTERRUPT_QUEUE   emit `heartbeat.event`; nothing else (next Observe
 *                       reads the surface's pending events)
 *     INTERRUPT_REQUEST emit; ask the running tool to end gracefully
 *                       (SIGTERM to its process group, grace, SIGKILL); the
 *                       loop goes to Observe when it returns
 *     INTERRUPT_FORCE   emit; stop the Act at once (cancel the tool and any
 *                       model stream) and enter Observe without a model call
 *   It must return quickly and must not call heartbeat_tick_now or
 *   heartbeat_stop. The loop writes `acknowledged` / `resolved` /
 *   `archived` through heartbeat_journal(hb) when the model disposes of an
 *   event, and clears interrupt_requested in Observe (the heartbeat only
 *   ever sets it).
 */
#ifndef LOOM_HEARTBEAT_HEARTBEAT_H
#define LOOM_HEARTBEAT_HEARTBEAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/error.h"
#include "context/working.h"
#include "heartbeat/config.h"
#include "heartbeat/journal.h"

typedef struct heartbeat heartbeat;

typedef struct heartbeat_env {
    working *w;                /* the surface events are projected into; NULL:
                                  journal and on_event only (a watch-only tool) */
    const char *journal_path;  /* the runtime journal (created if missing), read
                                  at start so a resumed session does not report
                                  a change twice; relative to cwd if not
                                  absolute; never itself a filesystem event;
                                  NULL: no journal */
    const char *cwd;           /* absolute; summaries name paths relative to it */
    const char *mf_dir;        /* the M_f bus for mf_events sources without a
                                  "dir"; NULL: <cwd>/.loom/events */
    /* Called on the heartbeat thread for every event projected into the
     * surface (see above). delta_h is the gate's ΔH. May be NULL. */
    void (*on_event)(void *ctx, const surface_event *ev, interrupt_action action,
                     double delta_h);
    void *ctx;
} heartbeat_env;

typedef struct heartbeat_stats {
    uint64_t ticks;            /* full ticks (signal wake-ups are not ticks) */
    uint64_t candidates;       /* changes the sources reported */
    uint64_t gated;            /* dropped by the ΔH gate (silent) */
    uint64_t emitted;          /* projected into the surface (or, with no
                                  surface, journaled and passed to on_event) */
    uint64_t duplicates;       /* the surface already held the fingerprint */
    uint64_t errors;           /* problems sources met (unreadable files, …) */
    int64_t cpu_ns;            /* CPU time of the heartbeat thread */
    int64_t wall_ns;           /* since heartbeat_start */
    int64_t last_tick_ms;      /* wall clock of the last tick; 0: none yet */
} heartbeat_stats;

/* Starts the heartbeat thread. It creates the sources and takes their
 * baselines (hashing the watched files) before this returns, so "a change"
 * means a change after heartbeat_start. cfg is read only during the call
 * (cfg->enabled is not looked at: the caller decides). env's strings are
 * copied; env->w must outlive the heartbeat. NULL with err when a source
 * or the journal cannot be set up. */
heartbeat *heartbeat_start(const heartbeat_config *cfg, const heartbeat_env *env,
                           loom_error *err);

/* Stops the thread (wakes it at once), frees everything. final (may be
 * NULL) receives the last stats. NULL hb is fine. Before calling it, make
 * sure no signal handler can still call heartbeat_signal on hb. */
void heartbeat_stop(heartbeat *hb, heartbeat_stats *final);

/* An Act (a tool call, a sub-agent) started or ended. While one runs the
 * tick interval is T_hb_act, and filesystem changes take the source's Act
 * urgency (also for a change seen at the first tick after a short Act).
 * Cheap; any thread. */
void heartbeat_set_act(heartbeat *hb, bool running);

/* The agent itself writes path (absolute, or relative to env->cwd) with
 * these len bytes: when the watcher next sees exactly this content there,
 * it takes it as its new baseline instead of reporting a change. data NULL:
 * whatever path holds at the next tick is the agent's (use only when the
 * content is not known: a change by someone else in between is missed).
 * Hashes data on the caller's thread (no I/O); any thread. */
void heartbeat_note_own_write(heartbeat *hb, const char *path, const void *data, size_t len);

/* An external signal: "SIGINT" (or "INT"), "SIGTERM", "SIGUSR1", … or any
 * name of 1–31 characters [A-Za-z0-9_.-] sent by `loom signal` or the API.
 * The heartbeat turns it into an external_signal event at once (not at the
 * next tick), urgency from the source's rules (SIGINT/SIGTERM critical,
 * SIGUSR1/SIGHUP high, others the source's urgency, high by default).
 * Async-signal-safe: call it straight from a signal handler (it only
 * write()s to a pipe and preserves errno). -1 when no external_signal
 * source is configured (the caller keeps its own handling), the name is
 * invalid, or the pipe is full. */
int heartbeat_signal(heartbeat *hb, const char *name);
/* Async-signal-safe: "SIGINT", "SIGTERM", "SIGUSR1", "SIGUSR2", "SIGHUP",
 * "SIGQUIT" for those numbers, NULL for others (heartbeat_signal(hb, NULL)
 * is -1). */
const char *heartbeat_signal_name(int signo);
/* True when heartbeat_signal will take signals (an external_signal source
 * is configured): the CLI installs its handlers only then. */
bool heartbeat_takes_signals(const heartbeat *hb);

/* Runs one full tick now and returns when it is done (signals sent before
 * the call are included). For tests and `loom heartbeat tick`; never from
 * on_event. */
void heartbeat_tick_now(heartbeat *hb);

void heartbeat_get_stats(heartbeat *hb, heartbeat_stats *out);

/* The journal the heartbeat writes (borrowed; NULL without one). Thread-safe
 * to append to: the loop writes acknowledged / resolved / archived here. */
journal *heartbeat_journal(heartbeat *hb);

#endif
