/* loop.h — the agent loop: one user goal carried to a final answer.
 *
 * Three layers (seed 001 §1): L1 run start (once per goal), L2 the turn
 * loop over an explicit loop_state (no recursion; each turn ends in a
 * decision: final, run again, or interrupted), L3 fixed steps before each
 * model call. The loop owns no I/O surface: it reports through emit() and
 * writes the session through the transcript it is given. It is the
 * integrator of DESIGN.md §1: it drives the harness modules below it and
 * hands them ports (the context module's, runtime/loop_context.h); none of
 * them calls back into it. Threading: loop_run runs on one thread (the
 * run's); emit may also be called from the tool pool's threads.
 */
#ifndef LOOM_RUNTIME_LOOP_H
#define LOOM_RUNTIME_LOOP_H

#include <jansson.h>
#include <stdatomic.h>
#include <stdint.h>

#include "base/cancel.h"
#include "base/error.h"
#include "base/event.h"
#include "context/control.h"
#include "loom_protocol.h"
#include "provider/models.h"
#include "session/transcript.h"
#include "tools/registry.h"
#include "tools/tool.h"
#include "provider/provider.h"

/* seed 001 §1.4: 500 turns for a main agent. */
#define LOOP_DEFAULT_MAX_TURNS 500
/* Identical consecutive tool calls before the model is warned. */
#define LOOP_DEFAULT_REPEAT_THRESHOLD 3
/* Consecutive failed model calls that open the circuit breaker. */
#define LOOP_BREAKER_THRESHOLD 3

typedef struct loop_params {
    const provider_config *provider;
    const char *fallback_model;     /* NULL: none */
    const tool_registry *tools;
    const char *system_static;
    const char *system_dynamic;
    const struct memory_report *memory; /* instruction files the prompt holds (may be NULL) */
    int max_turns;
    int repeat_threshold;
    int64_t max_tokens_total;       /* 0 = no cap */
    double max_usd;                 /* 0 = no cap */
    double price_input_per_mtok;    /* > 0: these prices for every model */
    double price_output_per_mtok;
    /* Otherwise a model's price: price_for's (the caller's settings, then
     * the table), or with price_for NULL the dated table's
     * (provider/models.h). False: no price, the run's cost is unknown. */
    bool (*price_for)(void *ctx, const char *model, model_price *out);
    void *price_ctx;
    context_config context;         /* context engineering (context/control.h) */
} loop_params;

/* The run's tool set may change between turns: MCP servers connect or
 * change their lists, ToolSearch finds deferred tools. The loop asks at the
 * run's start and at the start of each turn (never while tools run). When
 * refresh returns true it set *tools and *extensions (the text that goes
 * after the dynamic system part: the servers' instructions), both borrowed
 * until the next call or the run's end. A zeroed port: the params' tools
 * all run long. */
typedef struct loop_toolset_port {
    void *ctx;
    bool (*refresh)(void *ctx, const tool_registry **tools, const char **extensions);
    /* At the same boundary: what the extensions want the model told (a
     * subscribed resource changed), queued as a reminder at the tail of
     * the next request; malloc'd, NULL when nothing. May be NULL. */
    char *(*take_notes)(void *ctx);
} loop_toolset_port;

/* The spawn tree the run belongs to (agents/tree.h): a sub-agent's run, or
 * a main run that may spawn them. Budgets are a pool the whole tree draws
 * from, and what the tree's other members did reaches the run at its turn
 * boundaries. A zeroed port: a run on its own, as before sub-agents. Every
 * hook may be NULL; all are called on the run's thread. */
typedef struct loop_tree_port {
    void *ctx;
    /* Every model call the run made (its turns, compaction, the permission
     * classifier): the tokens and the cost (0 when prices are unknown),
     * counted after the run's own totals. */
    void (*charge)(void *ctx, const msg_usage *u, double usd);
    /* At each turn's start, after the cancel check and before the run's own
     * caps: true when the tree ends the run (its share of the pool, or the
     * pool, is spent), with *stop (LOOM_STOP_BUDGET_SHARE, _TOKEN_BUDGET,
     * _USD_BUDGET) and a message for the result written into msg. */
    bool (*exhausted)(void *ctx, loom_stop_reason *stop, char *msg, size_t size);
    /* At the same boundary as the tool set's take_notes: what the tree wants
     * the model told (a background agent finished, a SendMessage arrived),
     * queued as a reminder; malloc'd, NULL when nothing. */
    char *(*take_notes)(void *ctx);
    /* The run is about to end with final_text as its answer (a reply with
     * no tool calls, after the Stop hooks let it). A malloc'd reminder
     * sends it back to work instead (a StructuredOutput call is still owed,
     * background agents are still running in a headless run: the call may
     * block until one of them finishes); NULL lets it end. The port bounds
     * how often it says so. */
    char *(*before_final)(void *ctx, const char *final_text);
} loop_tree_port;

typedef struct loop_io {
    transcript *t;
    tool_ctx *tools;                /* prepared by the caller; message_id set per turn */
    /* Images the goal attaches ([{mediaType, data (base64)}], borrowed;
     * NULL: none): they join the user record's content after its text. */
    const json_t *goal_images;
    const loom_cancel *cancel;
    void (*emit)(void *ctx, loom_event_type type, loom_visibility vis, const char *correlation_id,
                 json_t *payload /* stolen */);
    void *emit_ctx;
    struct governance *gov;         /* hooks for the run's lifecycle; NULL: none */
    struct working *working;        /* C_working (context/working.h); NULL: no tail */
    const char *mf_dir;             /* M_f: where renew snapshots C_working; NULL: none */
    /* The session's context-control state, borrowed for the run (it
     * outlives it: the pressure carries to the next run, /compact uses it
     * between runs). NULL: a state of the run's own. */
    context_state *context;
    /* The model (a zeroed port: provider_complete; tests stand a fake in). */
    provider_port model;
    /* The run's heartbeat (heartbeat/heartbeat.h; NULL: none): told when an
     * Act starts and ends. act_running mirrors it for the heartbeat's
     * callback, which interrupts only a running Act gracefully. */
    struct heartbeat *heartbeat;
    atomic_bool *act_running;
    /* Set (before the cancel flag) when the run is ended by an external
     * signal: the event, reported in the result. Owned by the caller. */
    json_t *_Atomic *stop_event;
    /* Set by the owner to stop at the next turn boundary, the run whole and
     * resumable (loom_run_pause); NULL: never. */
    const atomic_bool *pause;
    loop_toolset_port toolset;
    loop_tree_port tree;
    /* What the person typed when the goal was made from it (a custom
     * command's or a skill's expansion): C_working's goal line, which every
     * request repeats, is this short form. NULL: the goal itself. */
    const char *typed_goal;
    /* The goal is a resume note (loom_run_continue), not the person's. */
    bool goal_is_resume_note;
    /* Interceptors around each model call (runtime/intercept.h), after the
     * loop's own tail interceptor, in this order; borrowed for the run. */
    const struct loop_interceptor *interceptors;
    size_t n_interceptors;
    /* Input and output guardrails (runtime/guardrail.h), before the hook
     * events' ones; borrowed for the run. */
    const struct loop_guardrail *guardrails;
    size_t n_guardrails;
} loop_io;

typedef struct loop_result {
    loom_run_state state;
    loom_stop_reason stop_reason;   /* end_turn, max_turns, token_budget, usd_budget,
                                       cancelled, model_error, max_tokens, … */
    char *final_text;               /* the last assistant text; caller frees */
    int turns;                      /* model calls made */
    msg_usage usage;               /* totals (raw unused) */
    double cost_usd;                /* < 0 when prices are unknown */
    loom_error err;                 /* set when state is failed */
    json_t *interrupt;              /* the event that ended the run (external signal),
                                       or NULL; owned */
} loop_result;

/* Runs the goal to its end. The user record is appended first (L1). */
void loop_run(const loop_params *p, loop_io *io, const char *goal, loop_result *out);
void loop_result_free(loop_result *r);

#endif
