/* guardrail.c — running a run's guardrails (see guardrail.h). */
#include "runtime/guardrail.h"

#include <stdlib.h>
#include <string.h>

#include "base/json.h"
#include "runtime/loop_internal.h"

static const char *stage_name(guardrail_stage stage)
{
    return stage == GUARDRAIL_INPUT ? "input" : "output";
}

static hook_event stage_hook(guardrail_stage stage)
{
    return stage == GUARDRAIL_INPUT ? HOOK_INPUT_GUARDRAIL : HOOK_OUTPUT_GUARDRAIL;
}

bool guardrail_any(loop_state *st, guardrail_stage stage)
{
    for (size_t i = 0; i < st->io->n_guardrails; i++)
        if (st->io->guardrails[i].stage == stage)
            return true;
    return loop_has_hooks(st->io, stage_hook(stage));
}

static void tripped(loop_state *st, guardrail_stage stage, const char *name, const char *reason,
                    const char *source)
{
    loop_result *out = st->out;
    out->state = LOOM_RUN_BLOCKED_BY_POLICY;
    out->stop_reason = LOOM_STOP_GUARDRAIL;
    loom_error_set(&out->err, LOOM_ERR_RUN_BLOCKED_BY_POLICY,
                   "the %s guardrail %s stopped the run: %s", stage_name(stage), name,
                   reason && *reason ? reason : "no reason given");
    loop_emit(st->io, LOOM_EV_GUARDRAIL_TRIPPED, LOOM_VIS_USER, NULL,
              event_guardrail_tripped(stage_name(stage), name, reason, source));
}

bool guardrail_check(loop_state *st, guardrail_stage stage, const char *text)
{
    for (size_t i = 0; i < st->io->n_guardrails; i++) {
        const loop_guardrail *g = &st->io->guardrails[i];
        char *reason = NULL;
        if (g->stage == stage && g->check && g->check(g->ctx, stage, text, &reason)) {
            tripped(st, stage, g->name ? g->name : "?", reason, "api");
            free(reason);
            return true;
        }
        free(reason);
    }
    hook_event ev = stage_hook(stage);
    if (!loop_has_hooks(st->io, ev))
        return false;
    hook_outcome o = loop_fire(st->io, ev, json_pack("{s:s,s:s}", "stage", stage_name(stage),
                                                     "text", text ? text : ""));
    bool stop = o.blocked || o.stop;
    if (stop)
        tripped(st, stage, hook_event_name(ev),
                o.blocked ? o.block_reason : o.stop_reason, "hook");
    hook_outcome_free(&o);
    return stop;
}
