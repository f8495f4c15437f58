/* tool.h — what a tool is: its declaration, the context a call runs in, and
 * the structured result it hands back.
 *
 * Defaults fail closed (seed 003 Step 2): a tool is not read-only and not
 * concurrency-safe unless it says so. A tool never talks to the model or the
 * session directly; everything it wants kept goes into its result or through
 * the context's record sink. A denied or failed call is a result with
 * is_error set, never a crash.
 */
#ifndef LOOM_TOOLS_TOOL_H
#define LOOM_TOOLS_TOOL_H

#include <jansson.h>
#include <stdbool.h>

#include "loom_protocol.h"

#include "base/cancel.h"
#include "base/str.h"

typedef struct file_state file_state;       /* tools/file_state.h: read cache */
typedef struct file_history file_history;   /* session/file_history.h: pre-write snapshots */
typedef struct task_registry task_registry; /* tools/tasks.h: background shells */
typedef struct todo_list todo_list;         /* context/plan.h: the plan */
typedef struct working working;             /* context/working.h: C_working */
typedef struct task_list task_list;         /* tools/task_list.h: the shared task list */
struct perm_mode_state;                     /* policy/decision.h: the permission mode */
struct tool_result;                         /* below */
typedef struct heartbeat heartbeat;         /* heartbeat/heartbeat.h: H_b */
struct sandbox_policy;                      /* sandbox/sandbox_policy.h */
struct tool_io;                             /* tools/tool_io.h: the driver's files, terminal */

typedef struct tool_ctx {
    const char *cwd;              /* the session's working directory (absolute) */
    const char *session_id;
    const loom_cancel *cancel;    /* the run was cancelled: stop now */
    long timeout_ms;              /* the pipeline's cap for this call (0 = none) */
    file_state *files;
    file_history *history;
    task_registry *tasks;
    todo_list *todos;
    working *working;             /* the session's working memory (may be NULL) */
    heartbeat *heartbeat;         /* the run's heartbeat (may be NULL): own writes are
                                     announced to it, dispositions journaled */
    const char *message_id;       /* the assistant record that asked for the call */
    /* Side records for the session file (e.g. file-history-snapshot); the
     * callee steals rec. May be NULL. */
    void (*record)(void *record_ctx, json_t *rec);
    void *record_ctx;
    /* The session's governance (governance/governance.h): rules, hooks, mode,
     * approvals, audit. NULL: every call is allowed (unit tests). */
    struct governance *gov;
    /* The session's helper model calls (provider/helper.h), for a tool that
     * asks a side model (WebFetch's question, when routed); their tokens
     * are settled for gov's run. NULL: none. */
    struct helper_router *helpers;
    /* The session's command sandbox (its governance holds it): Bash runs
     * confined by it, and the secret checks add its denyRead list. NULL:
     * none. sandbox_error set: the sandbox settings are invalid and Bash
     * refuses every command with it (fail closed). */
    const struct sandbox_policy *sandbox;
    const char *sandbox_error;
    const char *run_id;
    /* Run events the pipeline raises (approval.requested/resolved,
     * warning.emitted; payloads from base/event.h); payload stolen. May be
     * NULL. */
    void (*emit)(void *emit_ctx, loom_event_type type, json_t *payload);
    void *emit_ctx;
    /* Asks the user a question (AskUserQuestion); NULL when no user can be
     * asked (headless). Returns a malloc'd answer or NULL. */
    char *(*ask_user)(void *ask_ctx, const json_t *questions);
    void *ask_ctx;
    /* Set by the pipeline for each call (on its own copy of the context):
     * the tool being run (a tool made at run time, an MCP server's, finds
     * its own state through self->impl) and the model's id for the call
     * (the correlation id of the call's events, tool.progress among them). */
    const struct tool_def *self;
    const char *call_id;
    /* The run's node in the sub-agent tree (agents/tree.h): the Agent,
     * SendMessage and StructuredOutput tools find the tree through it.
     * NULL: the run cannot spawn (Agent refuses). */
    struct spawn_node *spawn;
    /* The driver's files and terminal (tools/tool_io.h), used by Read,
     * Write, Edit and Bash after the pipeline allowed the call. NULL: Loom's
     * own (sub-agents always). */
    const struct tool_io *io;
    /* W3C trace context (telemetry, docs/telemetry.md): fills buf with the
     * traceparent of the span call_id runs in; NULL or false: none. Bash
     * puts it in TRACEPARENT, MCP tools in _meta.traceparent. Any thread. */
    bool (*traceparent)(void *ctx, const char *call_id, char buf[56]);
    void *traceparent_ctx;
    /* The session tree's task list (TaskCreate and kin): one list, the same
     * pointer in every agent of the tree. NULL: none. */
    task_list *task_list;
    /* The session's permission mode (ExitPlanMode leaves plan mode through
     * it); changed only on the run's thread. NULL: the call cannot change
     * the mode (a sub-agent's). */
    struct perm_mode_state *mode;
    /* Calls tool of the session's MCP server (WebSearch's MCP backend):
     * the tools/call result (new reference), or NULL with why set. NULL:
     * the session has no MCP servers. Any thread. */
    json_t *(*mcp_call)(void *mcp_ctx, const char *server, const char *tool, json_t *args,
                        const loom_cancel *cancel, loom_str *why);
    void *mcp_ctx;
    /* EnterWorktree / ExitWorktree (api/worktree.c): move the session into
     * a new git worktree and back; each fills out (a result or an error
     * result) and returns 0. NULL: not here (a sub-agent, a direct call).
     * The run's thread, the tool running alone. */
    int (*worktree_enter)(void *wt_ctx, const char *name, struct tool_result *out);
    int (*worktree_exit)(void *wt_ctx, bool remove, bool discard, struct tool_result *out);
    void *worktree_ctx;
    /* Asked right before a decided call executes (loom_run_options'
     * tool_gate): nonzero means it must not run (*why: malloc'd or NULL).
     * NULL: none. Any thread of the run's tools. */
    int (*gate)(void *gate_ctx, const char *call_id, const char *tool, char **why);
    void *gate_ctx;
} tool_ctx;

typedef struct tool_result {
    loom_str text;       /* what the model sees */
    bool is_error;
    json_t *raw;         /* structured metadata for providerData.toolResult.rawResponse
                            (exitCode, signal, interrupted, truncated…); may be NULL */
    char *image_media_type; /* Read of an image: the image block (base64 in image_data) */
    char *image_data;
} tool_result;

typedef struct tool_def {
    const char *name;
    const char *description;
    const char *input_schema;    /* JSON Schema text (the subset schema.c checks) */
    bool read_only;              /* default false: may change the world */
    bool concurrency_safe;       /* default false: runs alone, in order */
    /* The tool's own validation beyond the schema (may be NULL): 0 ok, else
     * writes a message the model can act on into why. */
    int (*validate)(const json_t *input, const tool_ctx *ctx, loom_str *why);
    /* Runs the call. Returns 0 when a result was produced (even an error
     * result); nonzero only for an internal failure, with out->text saying it. */
    int (*run)(const json_t *input, tool_ctx *ctx, tool_result *out);
    /* Last, so positional initialisers of the fields above stay valid. */
    /* Changes only Loom's own state (the plan, working memory, the event
     * journal): never asks, in any mode — a settings deny still denies it. */
    bool local_state_only;
    /* Sends data off the machine (its input can carry anything the model
     * has read): never counts as read-only for permissions; each domain
     * needs an allow rule or a person, and plan mode sends nothing. */
    bool sends_out;
    /* A tool made at run time (an MCP server's, ToolSearch) keeps its own
     * state here; run reads it as ctx->self->impl. NULL for built-ins. */
    void *impl;
    /* Other names the tool answers to (seed 000 step 1, "name/alias":
     * Claude Code's Task for Agent), NULL-terminated; NULL: none. The model
     * is shown only name; rules and hooks match the name it was called by
     * and the tool's name alike. */
    const char *const *aliases;
    /* Whether this call needs a person whatever the mode or rules (may be
     * NULL: never): true with why set (ExitPlanMode: the plan must be
     * approved). Headless, such a call is denied. */
    bool (*needs_person)(const json_t *input, const tool_ctx *ctx, char *why, size_t cap);
    /* Added to the result when a person denied the call (may be NULL):
     * what the model should do now (ExitPlanMode: still in plan mode). */
    const char *on_user_deny;
} tool_def;

/* Result helpers. */
void tool_result_init(tool_result *r);
void tool_result_free(tool_result *r);
/* Sets is_error and a printf-style text; returns 0 so a tool can
 * `return tool_error(out, "...")`. */
int tool_error(tool_result *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Resolves a path argument against ctx->cwd (absolute paths kept), with
 * "." and ".." folded lexically. Caller frees. */
char *tool_resolve_path(const tool_ctx *ctx, const char *path);

#endif
