/* exit_plan_mode.c — ExitPlanMode: in plan mode the model presents its
 * plan ({plan}, Claude Code's input) and a person approves or rejects it.
 *
 * The question is the pipeline's ordinary approval (needs_person), so the
 * REPL, loom serve (an approval) and ACP (session/request_permission) all
 * ask it the way they ask any other; its reason names the mode approval
 * restores. Approved, the call runs and leaves plan mode through the
 * session's mode state (seed 001 §14.1: back to the mode plan replaced).
 * Rejected, the pipeline's denial carries on_user_deny: the session stays
 * in plan mode and the model is told to revise the plan. Outside plan mode,
 * and in a sub-agent (ctx->mode NULL), the call is refused before anyone is
 * asked. Runs on the run's thread, the only one that changes the mode.
 */
#include "tools/builtin/builtin.h"

#include <stdio.h>

#include "base/json.h"
#include "policy/decision.h"

static int exit_plan_validate(const json_t *input, const tool_ctx *ctx, loom_str *why)
{
    (void)input;
    if (!ctx->mode) {
        str_puts(why, "ExitPlanMode is only for the main agent's plan mode; a sub-agent ends "
                      "by answering with its plan.");
        return 1;
    }
    if (ctx->mode->mode != MODE_PLAN) {
        str_printf(why, "You are not in plan mode (the permission mode is %s): ExitPlanMode "
                        "is only for presenting a plan made in plan mode. Go on with the task.",
                   perm_mode_name(ctx->mode->mode));
        return 1;
    }
    const char *plan = json_get_str(input, "plan", "");
    while (*plan == ' ' || *plan == '\n' || *plan == '\t')
        plan++;
    if (!*plan) {
        str_puts(why, "plan must not be empty: give the plan you want approved.");
        return 1;
    }
    return 0;
}

static bool exit_plan_needs_person(const json_t *input, const tool_ctx *ctx, char *why,
                                   size_t cap)
{
    (void)input;
    if (!ctx->mode || ctx->mode->mode != MODE_PLAN)
        return false;
    snprintf(why, cap, "the plan needs your approval; approving leaves plan mode for %s",
             perm_mode_name(ctx->mode->pre_plan_mode));
    return true;
}

static int exit_plan_run(const json_t *input, tool_ctx *ctx, tool_result *out)
{
    loom_str why = LOOM_STR_INIT;
    if (exit_plan_validate(input, ctx, &why) != 0) {
        tool_error(out, "%s", str_cstr(&why));
        str_free(&why);
        return 0;
    }
    str_free(&why);
    perm_mode now = perm_mode_leave_plan(ctx->mode);
    const char *name = perm_mode_name(now);
    str_printf(&out->text, "User has approved your plan. Plan mode is off; the permission mode "
                           "is now %s. You can now start coding: begin with the first step of "
                           "the plan, updating your todo list as you go.\n\n## Approved plan:\n%s",
               name, json_get_str(input, "plan", ""));
    out->raw = json_pack("{s:s, s:b, s:s}", "plan", json_get_str(input, "plan", ""), "approved",
                         1, "mode", name);
    return 0;
}

const tool_def tool_exit_plan_mode = {
    .name = "ExitPlanMode",
    .description =
        "Use this tool when you are in plan mode and have finished planning the implementation "
        "of a task that requires writing code: it presents your plan (markdown, concise, "
        "concrete steps) to the user for approval. Approved, plan mode ends and you carry it "
        "out; rejected, you stay in plan mode and revise it. Not for research or questions; "
        "resolve open questions with the user first.",
    .input_schema = "{\"type\":\"object\",\"properties\":{\"plan\":{\"type\":\"string\","
                    "\"description\":\"The plan you came up with, that you want to run by the "
                    "user for approval. Supports markdown. The plan should be pretty "
                    "concise.\"}},\"required\":[\"plan\"],\"additionalProperties\":false}",
    .validate = exit_plan_validate,
    .run = exit_plan_run,
    .local_state_only = true,
    .needs_person = exit_plan_needs_person,
    .on_user_deny = "The user rejected the plan, so you are still in plan mode (read-only: "
                    "nothing is changed or run). Do not start on it. Ask what to change, or "
                    "revise the plan from the user's answer, and present it again with "
                    "ExitPlanMode.",
};
