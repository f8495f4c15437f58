/* loop_internal.h — the loop's state and helpers, shared by the files of
 * the loop only (loop.c, loop_hooks.c, loop_tools.c, loop_usage.c,
 * loop_context.c). One loop_state per run, on the run's thread. */
#ifndef LOOM_RUNTIME_LOOP_INTERNAL_H
#define LOOM_RUNTIME_LOOP_INTERNAL_H

#include <pthread.h>

#include "base/str.h"
#include "context/control.h"
#include "governance/pipeline.h"
#include "hooks/run.h"
#include "runtime/loop.h"
#include "runtime/loop_context.h"

/* Tool calls started while the reply streams (loop_early.c). */
typedef struct loop_early_job loop_early_job;
typedef struct loop_early {
    bool enabled;              /* LOOM_STREAMING_TOOLS is not 0 */
    bool closed;               /* an unsafe call was seen: the rest wait for the end */
    loop_early_job **jobs;     /* in call order: the reply's first calls */
    size_t n, cap;
} loop_early;

typedef struct loop_state {
    /* The run. */
    loop_params p;             /* the caller's, with the prompt's token budget */
    loop_io *io;
    loop_result *out;
    provider_config cfg;       /* shallow: .model swapped for the fallback, the window learned */
    int max_turns;
    /* L2 */
    int turn;
    int model_failures;        /* consecutive; the circuit breaker counts these */
    bool using_fallback;
    char *last_call_sig;       /* loop detection: the previous call, canonical */
    int repeat_count;
    loom_str reminders;        /* queued for the tail of the next request (L3) */
    int stop_continuations;    /* times a Stop hook sent the agent back to work */
    bool budget_nudged;
    char *last_working;        /* C_working as last sent in working.updated (compact JSON) */
    /* Context engineering: the session's state (or own_context) and the
     * port the context module reports through. */
    context_state *cs;
    context_state own_context;
    loop_context ctx;
    loop_early early;          /* the model call in hand's early tool calls */
} loop_state;

/* What one turn carries from step to step. */
typedef struct loop_turn {
    msg_request req;
    int64_t est;               /* the request's local token estimate */
    msg_response resp;
    char *hook_stop;           /* a tool's or Stop hook's "continue": false reason; owned */
    const char *stop_event;    /* which hook event stopped it */
    bool has_tools;
    loom_stop_reason stop;
    int64_t started_us;        /* the model call's start, Unix µs (telemetry) */
    int64_t first_chunk_us;    /* its first streamed chunk, 0 before one */
} loop_turn;

/* What the next step does. */
typedef enum { STEP_NEXT, STEP_AGAIN, STEP_STOP } loop_step;

void loop_emit(loop_io *io, loom_event_type type, loom_visibility vis, const char *corr,
               json_t *payload /* stolen */);
/* Queues text for the next request's tail inside a <system-reminder>; text
 * that already is a whole <system-reminder data-role="…"> element (the
 * memory recall block) is queued as it is. */
void loop_queue_reminder(loop_state *st, const char *text);
/* The context env, brought up to the turn in hand. */
context_env *loop_context_env(loop_state *st);

/* --- loop_hooks.c: lifecycle hooks ---------------------------------------- */

/* Fires ev with the common payload plus extra (stolen; may be NULL); hook
 * notices become warnings. The caller frees the outcome. */
hook_outcome loop_fire(loop_io *io, hook_event ev, json_t *extra);
bool loop_has_hooks(loop_io *io, hook_event ev);
/* A hook answered "continue": false: the run ends, blocked by policy. */
void loop_finish_hook_stopped(loop_result *out, const char *event, const char *why);
/* L1: SessionStart (once per session) and UserPromptSubmit. False when a
 * hook blocked the prompt; its reason is in st->out->err. */
bool loop_start_hooks(loop_state *st, const char *goal, bool fresh);
/* Stop hooks may send the agent back to work: true when one did (a
 * reminder says why); *hook_stop set when one ended the run instead. */
bool loop_stop_hook_continues(loop_state *st, char **hook_stop);
/* Run end: the final Stop hook. */
void loop_fire_final_stop(loop_state *st);

/* --- loop_tools.c: the Act ------------------------------------------------- */

/* Runs the reply's tool calls and records each result in call order. */
int loop_run_tools(loop_state *st, const msg_message *reply, const char *message_id,
                   char **hook_stop, const char **stop_event, loom_error *err);

/* --- loop_early.c: calls started while the reply streams ----------------- */

void loop_early_init(loop_early *e);
/* A call's block is complete: a concurrency-safe one starts now, silently,
 * unless an unsafe call came first. */
void loop_early_tool_call(loop_early *e, const tool_registry *reg, tool_ctx *ctx,
                          const char *id, const char *name, const json_t *input);
/* The attempt failed or will be retried: its calls are joined, unseen. */
void loop_early_discard(loop_early *e);
/* The whole reply's calls: the outcomes of the first ones, which started
 * early, moved into outs[0..k); returns k (0 when the reply does not begin
 * with them, which are then discarded). The jobs stay, for
 * loop_early_release, until loop_early_discard. */
size_t loop_early_take(loop_early *e, const tool_call *calls, size_t n, tool_outcome *outs);
/* The events and side records early call k held back, sent now through
 * ctx (between its tool.started and tool.finished). */
void loop_early_release(loop_early *e, size_t k, tool_ctx *ctx);
void loop_early_free(loop_early *e);

/* --- loop_usage.c: accounting ---------------------------------------------- */

/* A model reply of the turn: its usage added, priced, and model.completed. */
/* started_us / first_chunk_us: when the call began and its first chunk
 * came (0: none streamed), for model.completed (telemetry). */
void loop_count_reply(loop_state *st, const msg_response *resp, int64_t started_us,
                      int64_t first_chunk_us);
/* A model call the run made besides its turns (purpose: "permission_classifier",
 * …): added to the usage and cost, so the token budget and the cost cap
 * see it, and reported as a model.usage event naming the purpose. */
void loop_count_side_usage(loop_state *st, const char *purpose, const char *corr,
                           const char *tool, const msg_usage *u, unsigned calls);
/* The helper model calls (provider/helper.h) the run's governance made
 * since the last time — the classifier, prompt hooks, compaction — settled:
 * their tokens and cost into the run (each priced by its own model), a
 * model.usage event per call naming its purpose, tier and model, a
 * helper-call record in the session and a line in the audit log
 * (governance/helper_log.h). At the turn's boundaries and the run's end. */
void loop_settle_helpers(loop_state *st);
/* Context work adds its tokens to the usage itself (the port); what it
 * spent since `before` is priced and reported here, so cost_usd and max_usd
 * see it too. */
void loop_price_compaction(loop_state *st, const msg_usage *before);
/* Whether a run of model can be priced: prices configured, or the model's
 * row in the dated table (provider/models.c). */
bool loop_prices_known(const loop_params *p, const char *model);

#endif
