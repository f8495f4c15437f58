/* renew.c — Renew: the model asks for its context to be rebuilt (seed 000
 * dimension ①, the proactive renew trigger).
 *
 * The tool itself only leaves the request with the working memory; the
 * loop performs renew in L3 before the next model call, so the call's own
 * result is still recorded whole and the history compressed after it. */
#include <stdlib.h>

#include "context/working.h"
#include "tools/builtin/builtin.h"

static int renew_run(const json_t *input, tool_ctx *ctx, tool_result *out)
{
    if (!ctx->working)
        return tool_error(out, "Renew is not available in this session (it has no working "
                               "memory to carry over).");
    const char *reason = json_string_value(json_object_get(input, "reason"));
    const char *progress = json_string_value(json_object_get(input, "progress"));
    if (progress && *progress)
        working_set_progress(ctx->working, progress);
    working_request_renew(ctx->working, reason);
    str_puts(&out->text, "Renew scheduled: before your next step the history is compressed to "
                         "the goal, the user's messages, recent errors and what matters most for "
                         "the goal. Your working memory (goal, plan, dashboard, events) carries "
                         "over unchanged. Continue with the next step of the plan.");
    return 0;
}

const tool_def tool_renew = {
    .name = "Renew",
    .description =
        "Rebuild your context from its essentials. The conversation history is compressed: the "
        "goal, every message from the user, recent errors and the items most relevant to the "
        "goal are kept; older detail is dropped. Your working memory (goal, plan, dashboard, "
        "pending events) carries over unchanged.\n\n"
        "Use it when a large phase of work is complete and its details no longer matter, or "
        "when the dashboard shows the context filling up. It takes effect before your next "
        "step. Record anything you still need (in the plan, or in `progress`) first.",
    .input_schema =
        "{\"type\":\"object\",\"properties\":{"
        "\"reason\":{\"type\":\"string\",\"description\":\"Why the context should be "
        "renewed now\"},"
        "\"progress\":{\"type\":\"string\",\"description\":\"Your assessment of progress "
        "towards the goal, kept in the dashboard\"}},"
        "\"required\":[\"reason\"],\"additionalProperties\":false}",
    .read_only = true,
    .local_state_only = true, /* it rebuilds Loom's own context, nothing else */
    .concurrency_safe = false,
    .run = renew_run,
};
