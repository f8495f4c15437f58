/* run.h — firing one hook event: seed 001 §6.2's 8-step execution and the
 * aggregation of every hook's answer into one hook_outcome.
 *
 * The contract with hook programs is Claude Code's (docs/hooks.md): the
 * payload JSON on stdin (command) or as the POST body (http); exit 0 with
 * optional JSON on stdout, exit 2 to block with stderr as the reason, any
 * other exit a non-blocking error. A timeout is an error, never a block: a
 * hung guard script must not silently turn into a policy.
 *
 * Hooks of one event run one after another in plan order (built-ins first,
 * then by priority, then registration order), not in parallel as Claude
 * Code does: the order is then reproducible and visible in the audit log.
 * Every matched hook runs even after one has blocked, so logging hooks see
 * every event, as they do in Claude Code.
 *
 * hooks_run may be called from several threads at once (tool pool threads)
 * with the same registry.
 */
#ifndef LOOM_HOOKS_RUN_H
#define LOOM_HOOKS_RUN_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "base/cancel.h"
#include "base/error.h"
#include "hooks/events.h"
#include "hooks/registry.h"
#include "policy/perm_types.h"

/* Claude Code's default for command hooks; "timeout" (seconds) per hook. */
#define HOOK_DEFAULT_TIMEOUT_MS 60000L

/* What the integrator gets for a prompt or agent hook. */
typedef struct hook_llm_request {
    hook_type type;          /* HOOK_TYPE_PROMPT or HOOK_TYPE_AGENT */
    hook_event event;
    const char *prompt;      /* the hook's prompt, $ARGUMENTS replaced by the payload JSON */
    const char *model;       /* the hook's "model", NULL for the integrator's default */
    long timeout_ms;
    const json_t *payload;   /* borrowed */
    const json_t *config;    /* the hook's settings object, borrowed */
    const loom_cancel *cancel;
} hook_llm_request;

/* Runs a prompt hook (a one-turn model call) or an agent hook (a sub-agent).
 * Set *reply to a new JSON object: either Claude Code's prompt-hook answer
 * {"ok": bool, "reason": "…"} (ok:false blocks with the reason) or anything
 * a command hook may print (decision, hookSpecificOutput, …). Return 0, or
 * -code with err set: a non-blocking error shown to the user. */
typedef int (*hook_llm_fn)(void *ctx, const hook_llm_request *req, json_t **reply,
                           loom_error *err);

typedef struct hook_run_opts {
    /* CLAUDE_PROJECT_DIR / LOOM_PROJECT_DIR for command hooks, and the base
     * of "/x" paths in `if` rules. NULL: the payload's cwd. */
    const char *project_dir;
    long default_timeout_ms;       /* <= 0: HOOK_DEFAULT_TIMEOUT_MS */
    const loom_cancel *cancel;     /* stops the running hook and skips the rest */
    hook_llm_fn run_prompt;        /* NULL: prompt hooks are skipped with a notice */
    void *prompt_ctx;
    hook_llm_fn run_agent;         /* NULL: agent hooks are skipped with a notice */
    void *agent_ctx;
    /* Appended to the "skipped N hook(s) from untrusted … settings" notice;
     * NULL: a pointer to docs/hooks.md. */
    const char *trust_hint;
    /* Runs in each command hook's child before exec (proc_spec.child_setup):
     * how a sandbox confines hooks when configured. NULL: none. */
    int (*child_setup)(void *ctx, char *msg, size_t cap);
    void *child_ctx;
    /* proc_spec.supervise for the same child (the sandbox's supervisor,
     * ctx = child_ctx). NULL: none. */
    void (*supervise)(void *ctx, int fd);
    /* W3C trace context of the span the hooks fire in ("00-…-01",
     * docs/telemetry.md): command hooks get it as TRACEPARENT, in place of
     * any the process inherited. NULL: the inherited environment as is. */
    const char *traceparent;
} hook_run_opts;

typedef enum hook_status {
    HOOK_STATUS_OK = 0,     /* ran and answered (exit 0, 2xx, a reply) */
    HOOK_STATUS_BLOCKED,    /* exit 2, "decision":"block" or ok:false */
    HOOK_STATUS_ERROR,      /* non-blocking: other exit, bad JSON, non-2xx, could not start */
    HOOK_STATUS_TIMEOUT,    /* stopped at its timeout: an error, not a block */
    HOOK_STATUS_CANCELLED,  /* the run was cancelled while it ran */
    HOOK_STATUS_SKIPPED,    /* matched but not run: untrusted, or no runner for its type */
} hook_status;

/* One hook's part, for the audit log. */
typedef struct hook_result {
    hook_type type;
    hook_source source;
    char *label;            /* name, or command / url / prompt (shortened) */
    char *where;            /* "hooks.PreToolUse[0].hooks[1]" or "builtin PreToolUse#0" */
    hook_status status;
    int exit_code;          /* command: exit status, -1 signal / not started; http: HTTP
                             * status, 0 none; others 0 */
    perm_verdict verdict;   /* what this hook said about the permission (PERM_NONE: nothing) */
    long duration_ms;
    char *message;          /* the error, block reason or skip reason; NULL when none */
    /* What a successful hook printed (stdout, or an http hook's body), cut
     * to an excerpt, for verbose display (the integrator's "hook.output"
     * event); NULL when it printed nothing or answered "suppressOutput":
     * true. Never for the model. */
    char *output;
} hook_result;

typedef enum hook_notice_kind {
    HOOK_NOTICE_ERROR,      /* a hook failed (non-blocking): show it */
    HOOK_NOTICE_SKIPPED,    /* hooks that matched but did not run, and why */
    HOOK_NOTICE_WARNING,    /* conflicting answers, ignored fields */
    HOOK_NOTICE_MESSAGE,    /* a hook's "systemMessage" */
    HOOK_NOTICE_OUTPUT,     /* plain stdout of a successful hook: verbose mode only */
} hook_notice_kind;

typedef struct hook_notice {
    hook_notice_kind kind;
    char *text;
} hook_notice;

/* Everything the hooks of one event said, merged. All strings and JSON are
 * owned by the outcome (hook_outcome_free). */
typedef struct hook_outcome {
    hook_event event;
    size_t ran;                  /* hooks executed (not skipped) */
    /* PreToolUse and PermissionRequest: deny > ask > allow over all hooks
     * ("decision":"block" and exit 2 count as deny, "approve" as allow). */
    perm_verdict permission;
    char *permission_reason;     /* the reasons given with the winning verdict, one per line */
    /* The action the event stands for must not go ahead (for PreToolUse and
     * PermissionRequest exactly when permission == PERM_DENY). What that
     * means per event, and who reads block_reason, is in docs/hooks.md. */
    bool blocked;
    char *block_reason;
    json_t *updated_input;       /* PreToolUse / PermissionRequest / SubagentStart: the
                                  * last hook's wins */
    char *additional_context;    /* every hook's, in order, one per line; for the model */
    bool stop;                   /* some hook answered "continue": false: end the run */
    char *stop_reason;           /* its "stopReason" (for the user) */
    bool suppress_output;        /* a hook asked for its output to stay out of the transcript */
    bool cancelled;
    /* Elicitation: the last hook's answer to the MCP server's form,
     * {"action": "accept"|"decline"|"cancel", "content"?: {...}} from its
     * hookSpecificOutput (Claude Code's shape); NULL: no hook answered. */
    json_t *elicitation;
    hook_notice *notices;        /* for the user, in order */
    size_t n_notices;
    hook_result *results;        /* one per hook run or skipped, in order */
    size_t n_results;
} hook_outcome;

/* Fires ev. payload (borrowed) is Claude Code's input for the event
 * (session_id, transcript_path, cwd, hook_event_name, tool_name, tool_input,
 * …), built by the integrator; hook_event_name and cwd are filled in when
 * absent. opts may be NULL. Never fails as a whole: every problem is a
 * notice and a result. */
hook_outcome hooks_run(hook_registry *reg, hook_event ev, const json_t *payload,
                       const hook_run_opts *opts);
void hook_outcome_free(hook_outcome *out);

/* Folds from (a later firing of the same event: a sub-agent's own hooks
 * after the session's) into into, as if its hooks had run after into's in
 * one hooks_run: the stronger verdict wins, reasons and context are joined
 * one per line, blocked and stop hold if either says so, from's
 * updated_input and elicitation win, notices and results are appended.
 * from is left empty (its parts are moved, not copied). */
void hook_outcome_merge(hook_outcome *into, hook_outcome *from);

const char *hook_status_name(hook_status st);   /* "ok", "blocked", … */

#endif
