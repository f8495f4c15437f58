/* judge.h — `type: "prompt"` hooks answered by a model (seed 001 §6.2's
 * promptHookEvaluator): one helper call (provider/helper.h, purpose
 * hook_prompt, the lite tier unless the hook's `model` or settings say
 * otherwise) asks the model to judge the event's payload against the
 * hook's prompt, and its answer becomes Claude Code's prompt-hook reply.
 *
 * Only {"ok": bool, "reason": string} survives from what the model says:
 * the payload it judges is untrusted text (a tool's input, a file), so a
 * model talked into answering with `updatedInput`, `permissionDecision:
 * allow` or `continue: false` gets none of them through. ok:false blocks
 * with the reason (a PreToolUse deny: the settings' deny still outranks
 * every hook, and a hook's block cannot allow anything); ok:true is no
 * objection, never an allow. An answer without a boolean `ok` is an error
 * notice, and the action goes ahead, as for a command hook's bad JSON.
 *
 * Threading: any thread (hooks fire on tool-pool threads); the router
 * guards its own state. */
#ifndef LOOM_HOOKS_JUDGE_H
#define LOOM_HOOKS_JUDGE_H

#include "hooks/run.h"
#include "provider/helper.h"

/* The system prompt's first words; tests match the request on them. */
#define HOOK_JUDGE_MARKER "You are Loom's hook judge."

typedef struct hook_judge_ctx {
    helper_router *helpers;      /* must not be NULL */
    const void *owner;           /* whose run counts the tokens (a governance) */
} hook_judge_ctx;

/* A hook_llm_fn (run.h) for prompt hooks; ctx is a hook_judge_ctx. */
int hook_judge_prompt(void *ctx, const hook_llm_request *req, json_t **reply, loom_error *err);

/* The verdict in a model's answer text: a new {"ok", "reason"?} object, or
 * NULL when the text holds no JSON object with a boolean "ok" (exposed for
 * the fuzz target and tests). */
json_t *hook_judge_parse(const char *text);

#endif
