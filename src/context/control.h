/* control.h — context engineering for a session (seed 000 dimension ①;
 * seed 001 §7.1, §8): assembling each request from its partitions,
 * measuring the pressure ρ, and applying the compaction ladder, renew and
 * reactive compaction.
 *
 * Assembly order, stable first and volatile last so the byte prefix of
 * consecutive requests stays identical and provider caches hit:
 *   C_system (static, cache breakpoint) · C_system dynamic + C_memory ·
 *   C_skill (tools, in registry order; the caller adds the declarations,
 *   this module counts them from env->tools_est) · C_history (the active
 *   chain seen through the ladder's edits; a breakpoint on its last block) ·
 *   the dynamic tail, appended to the last user message: queued
 *   <system-reminder>s, then C_working.
 * Nothing of the tail is recorded; the next request has the history grow
 * where the tail was.
 *
 * Ownership (DESIGN.md §1): the state (context_state) belongs to the
 * session and lives across runs; a run borrows it, and so does /compact
 * between runs. What an operation works on and reports to (context_env,
 * with its context_port) is handed in by the caller — the loop during a
 * run, the API between runs — so this module knows nothing of either.
 * Threading: one caller at a time per state; a background compaction's
 * model call runs on a thread of its own and is only ever joined by the
 * caller's thread. */
#ifndef LOOM_CONTEXT_CONTROL_H
#define LOOM_CONTEXT_CONTROL_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "loom_protocol.h"

#include "base/cancel.h"
#include "base/error.h"
#include "base/str.h"
#include "context/history_keep.h"
#include "context/ladder.h"
#include "context/pressure.h"
#include "message/message.h"
#include "provider/provider.h"
#include "session/transcript.h"

/* How context engineering is configured (the agent's, shared by its runs). */
typedef struct context_config {
    ladder_config ladder;           /* thresholds; zeroed: the defaults */
    bool no_auto_compact;           /* steps A–D only by hand (/compact); renew still forced */
    double renew_lambda;            /* 0: RENEW_DEFAULT_LAMBDA */
    /* Renew reloads C_memory: the dynamic system prompt made anew (caller
     * frees the result). NULL: the prompt is kept. */
    char *(*reload_system_dynamic)(void *ctx);
    void *reload_ctx;
} context_config;

/* The lifecycle hooks context work fires. */
typedef enum { CONTEXT_HOOK_PRE_COMPACT, CONTEXT_HOOK_POST_COMPACT } context_hook;

/* The port context work reports through (DESIGN.md §1). Every function
 * may be NULL: the report is dropped. */
typedef struct context_port {
    void *ctx;
    /* A user-visible run event (context.compacted, …; payloads from
     * base/event.h); payload stolen. */
    void (*emit)(void *ctx, loom_event_type type, json_t *payload);
    /* A warning.emitted event: payload {kind, message, …} stolen. */
    void (*warn)(void *ctx, json_t *payload);
    /* Fires a lifecycle hook with extra (stolen). True when a hook blocked
     * the step; *why then gets its reason (malloc'd, may be NULL). */
    bool (*fire_hook)(void *ctx, context_hook ev, json_t *extra, char **why);
    /* A model call context work made (compaction): its tokens are the
     * run's. Called on the caller's thread. */
    void (*add_usage)(void *ctx, const msg_usage *u);
    /* The model (a zeroed port: provider_complete). */
    provider_port model;
    /* The summary request is a helper call (provider/helper.h) of this
     * router, recorded for helper_owner's run; NULL: a plain call. */
    struct helper_router *helpers;
    const void *helper_owner;
} context_port;

/* What a context operation works on; borrowed for the call. */
typedef struct context_env {
    transcript *t;
    struct working *working;        /* C_working (context/working.h); NULL: no tail */
    const char *mf_dir;             /* M_f: where renew snapshots C_working; NULL: none */
    const loom_cancel *cancel;
    const context_config *conf;
    const char *system_static;
    const char *system_dynamic;     /* the configured one; a renew's reload wins */
    /* What extensions add after it (MCP servers' instructions), in the same
     * request as their tools; a renew's reload keeps it. NULL: none. */
    const char *system_extensions;
    int64_t tools_est;              /* C_skill's tokens (tool_registry_tokens) */
    /* For the dashboard and renew's ages: the run's turn and token budget. */
    int turn;
    int64_t budget_total;           /* 0: none */
    int64_t budget_used;
    context_port port;
} context_env;

typedef struct compact_job compact_job;

/* A session's context-control state. */
typedef struct context_state {
    pressure pr;                /* token accounting, carried from run to run */
    ladder_edits edits;         /* the session's context-edit records */
    int compact_failures;       /* consecutive; auto-compaction stops at 3 */
    char *system_dynamic;       /* reloaded by renew; NULL: the env's own */
    compact_job *background;    /* a compaction running on its own thread */
    history_keep keep;          /* the request's history kept from turn to turn */
} context_state;

void context_state_init(context_state *cs);
/* Frees what cs holds; a background compaction still running is stopped. */
void context_state_free(context_state *cs);
/* Before a run, or before work between runs: the edits are read again from
 * t, the window is the model's, and what lasts one run (failure count, a
 * renew's reloaded prompt) starts afresh. The pressure carries over. */
void context_state_begin(context_state *cs, transcript *t, int64_t window);

/* The request for this turn (see above); tail (NULL: none) is the queued
 * reminders, copied, not consumed. *est is the local token estimate of the
 * whole request. */
int context_build_request(context_state *cs, const context_env *env, const provider_config *cfg,
                          const loom_str *tail, msg_request *req, int64_t *est, loom_error *err);
/* The same request made from the records, as if nothing were kept: the
 * test build's check that the kept one is the same bytes
 * (runtime/loop_context.c). */
int context_build_request_fresh(context_state *cs, const context_env *env,
                                const provider_config *cfg, const loom_str *tail,
                                msg_request *req, int64_t *est, loom_error *err);

/* L3: measures ρ for a request estimated at est and applies at most one
 * ladder step (renew when ρ ≥ 1, or when the model asked for it). 1 when
 * the context changed (rebuild the request), 0 when not, -1 on a session
 * error (err set). */
int context_govern(context_state *cs, const context_env *env, const provider_config *cfg,
                   int64_t est, loom_error *err);

/* Step D. trigger: "auto", "manual" or "reactive"; instructions may be
 * NULL. 1 compacted, 0 skipped (nothing new since the last summary, or a
 * PreCompact hook blocked it; a warning says which), -1 failed (err set;
 * the session is unchanged). */
int context_compact(context_state *cs, const context_env *env, const provider_config *cfg,
                    const char *trigger, const char *instructions, loom_error *err);

/* The provider refused a request estimated at est as too long (refusal:
 * its message): learn the window from the refusal (a server whose limit
 * Loom was never told; cfg's window and output cap are lowered), then
 * compact — or renew when compaction cannot run. 1 when the context
 * changed (rebuild and send again), -1 when it could not. */
int context_react_too_long(context_state *cs, const context_env *env, provider_config *cfg,
                           int64_t est, const char *refusal);

/* Stops and discards a background compaction still running (run end).
 * Its summary is not applied, but what its model call spent is put in
 * *spent (zeroed first): the tokens were paid for. Returns the number of
 * model calls spent covers (0 or 1). */
unsigned context_background_stop(context_state *cs, msg_usage *spent);

/* renew (seed 000, 7 steps); reason: "forced", "requested" or
 * "reactive". 0, or -1 with err set. */
int context_renew(context_state *cs, const context_env *env, const provider_config *cfg,
                  const char *reason, loom_error *err);

#endif
