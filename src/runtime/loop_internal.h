/* loop_internal.h — the loop's state and helpers, shared by the files of
 * the loop (loop.c, context_control.c) only. */
#ifndef LOOM_RUNTIME_LOOP_INTERNAL_H
#define LOOM_RUNTIME_LOOP_INTERNAL_H

#include "base/str.h"
#include "context/ladder.h"
#include "context/pressure.h"
#include "hooks/run.h"
#include "runtime/loop.h"

typedef struct compact_job compact_job;  /* context_control.c */

typedef struct loop_state {
    int turn;
    int model_failures;        /* consecutive; the circuit breaker counts these */
    bool using_fallback;
    char *last_call_sig;       /* loop detection: the previous call, canonical */
    int repeat_count;
    loom_str reminders;        /* queued for the tail of the next request (L3) */
    int stop_continuations;    /* times a Stop hook sent the agent back to work */
    /* context governance */
    pressure pr;
    ladder_edits edits;
    int compact_failures;      /* consecutive; auto-compaction stops at 3 */
    bool budget_nudged;
    char *system_dynamic;      /* reloaded by renew; NULL: the params' own */
    int64_t tools_est;         /* the tools' declarations, estimated once */
    int64_t tokens_used;       /* the run's usage so far, for the budget line */
    compact_job *background;   /* a compaction running on its own thread */
} loop_state;

void loop_emit(loop_io *io, const char *type, event_visibility vis, const char *corr,
               json_t *payload /* stolen */);
/* Fires ev with the common payload plus extra (stolen; may be NULL); hook
 * notices become warnings. The caller frees the outcome. */
hook_outcome loop_fire(loop_io *io, hook_event ev, json_t *extra);
bool loop_has_hooks(loop_io *io, hook_event ev);
void loop_queue_reminder(loop_state *st, const char *text);
void loop_add_usage(wire_usage *total, const wire_usage *u);
/* Tokens a usage counts against a budget: input, output and cache. */
int64_t loop_usage_total(const wire_usage *u);
/* A model call the run made besides its turns (purpose: "permission_classifier",
 * …): added to out's usage and cost, so the token budget and the cost cap
 * see it, and reported as a model.usage event naming the purpose. */
void loop_count_side_usage(const loop_params *p, loop_io *io, loop_state *st, loop_result *out,
                           const char *purpose, const char *corr, const char *tool,
                           const wire_usage *u, unsigned calls);

#endif
