/* pipeline.h — the one path every tool call takes, and batches of calls.
 *
 * tool_call_run() is the fixed sequence of seed 000's 14 steps (DESIGN.md
 * §3.4), each a named function: find the tool → MCP metadata → schema →
 * the tool's own validation → risk classifier → PreToolUse hooks → resolve
 * hooks against settings → final decision (a sub-agent's role and tool
 * lists, which only deny, then mode, rules, approval) → apply
 * hook-updated input and check it again → execute → audit → PostToolUse
 * hooks → structured result → PostToolUseFailure hooks. Every failure is a
 * structured is_error result the model sees; nothing here aborts a run.
 */
#ifndef LOOM_GOVERNANCE_PIPELINE_H
#define LOOM_GOVERNANCE_PIPELINE_H

#include <stdint.h>

#include "tools/registry.h"
#include "tools/tool.h"

/* seed 003 / Claude Code: results beyond this many characters are cut to
 * head and tail with a note; configurable with LOOM_TOOL_OUTPUT_CAP. */
#define PIPELINE_OUTPUT_CAP 30000

typedef struct tool_call {
    const char *id;
    const char *name;
    const json_t *input;
} tool_call;

typedef struct tool_outcome {
    tool_result result;
    int64_t started_us;     /* wall clock in microseconds, for the trace */
    int64_t finished_us;
    const char *failed_step;/* NULL when the tool ran; else the step that refused */
    char *context;          /* hook additionalContext for the next request; caller frees */
    json_t *input_used;     /* the hook-updated input that ran, or NULL (owned) */
    /* A PreToolUse/PostToolUse(Failure) hook answered "continue": false: the
     * run ends after this batch (docs/hooks.md). stop_reason is the hook's
     * "stopReason" (for the user, not the model), or NULL; owned. */
    bool stop;
    const char *stop_event; /* "PreToolUse", "PostToolUse", "PostToolUseFailure" */
    char *stop_reason;
} tool_outcome;

/* Frees what tool_call_run put in out (the result included). */
void tool_outcome_free(tool_outcome *out);

/* Called from the thread that runs the call (possibly a pool thread). */
typedef struct pipeline_observer {
    void *ctx;
    void (*on_start)(void *ctx, size_t index, const tool_call *call);
    void (*on_finish)(void *ctx, size_t index, const tool_call *call, const tool_outcome *out);
} pipeline_observer;

/* One call through every step. out is initialised here; free its result
 * with tool_result_free. */
void tool_call_run(const tool_registry *reg, const tool_call *call, tool_ctx *ctx,
                   tool_outcome *out);

/* A model turn's calls: consecutive concurrency-safe calls run together on
 * a small pool, every other call alone and in order; outcomes[i] always
 * belongs to calls[i]. A cancelled run turns the calls not yet started into
 * "interrupted" results. */
void tool_batch_run(const tool_registry *reg, const tool_call *calls, size_t n, tool_ctx *ctx,
                    const pipeline_observer *obs, tool_outcome *outcomes);
/* The rest of a batch whose first `done` calls already ran (the loop
 * started them while the reply streamed, docs/tools.md): outcomes[0..done)
 * are theirs, and a hook that stopped the run in one of them stops the
 * rest as it would within one batch. */
void tool_batch_finish(const tool_registry *reg, const tool_call *calls, size_t n, size_t done,
                       tool_ctx *ctx, const pipeline_observer *obs, tool_outcome *outcomes);
/* Whether calls to this tool may run beside others (its own flag). */
bool tool_is_concurrency_safe(const tool_registry *reg, const char *name);

/* An input a hook rewrote outside a call (SubagentStart's updatedInput
 * for the Agent call that spawns it) checked as the pipeline checks a
 * PreToolUse rewrite: the tool's schema and validation, then the rules and
 * mode of ctx->gov for that input, and a sub-agent's own limits (an ask is
 * settled as the call's would be, through approvals; headless, it is
 * refused). The decision is audited. 0 when it may run; else -1 with why
 * (when not NULL) saying which step refused and what, "decide: Permission
 * to use Agent was denied: …". Tokens auto mode's classifier spends here
 * are not reported. */
int pipeline_recheck_input(const tool_registry *reg, const char *tool, const json_t *input,
                           tool_ctx *ctx, loom_str *why);

/* Cuts text longer than cap to head and tail with a note of what was cut,
 * never inside a UTF-8 sequence. */
void pipeline_cap_output(loom_str *text, size_t cap);

#endif
