/* loop_context.c — the context port over a loop_io (see loop_context.h). */
#include "runtime/loop_context.h"

#include <stdlib.h>

#include "base/str.h"
#include "runtime/loop_internal.h"

static void port_emit(void *ctx, loom_event_type type, json_t *payload)
{
    loop_context *lc = ctx;
    loop_emit(lc->io, type, LOOM_VIS_USER, NULL, payload);
}

static void port_warn(void *ctx, json_t *payload)
{
    loop_context *lc = ctx;
    loop_emit(lc->io, LOOM_EV_WARNING_EMITTED, LOOM_VIS_USER, NULL, payload);
}

static bool port_fire(void *ctx, context_hook ev, json_t *extra, char **why)
{
    loop_context *lc = ctx;
    hook_event he = ev == CONTEXT_HOOK_PRE_COMPACT ? HOOK_PRE_COMPACT : HOOK_POST_COMPACT;
    *why = NULL;
    if (!loop_has_hooks(lc->io, he)) {
        json_decref(extra);
        return false;
    }
    hook_outcome o = loop_fire(lc->io, he, extra);
    bool blocked = o.blocked;
    if (blocked && o.block_reason)
        *why = xstrdup(o.block_reason);
    hook_outcome_free(&o);
    return blocked;
}

static void port_add_usage(void *ctx, const msg_usage *u)
{
    loop_context *lc = ctx;
    if (!lc->usage)
        return;
    msg_usage_add(lc->usage, u);
    lc->env.budget_used = msg_usage_total(lc->usage);
}

void loop_context_init(loop_context *lc, const loop_params *p, loop_io *io, msg_usage *usage)
{
    lc->io = io;
    lc->usage = usage;
    lc->env = (context_env){
        .t = io->t,
        .working = io->working,
        .mf_dir = io->mf_dir,
        .cancel = io->cancel,
        .conf = &p->context,
        .system_static = p->system_static,
        .system_dynamic = p->system_dynamic,
        .tools_est = tool_registry_tokens(p->tools),
        .budget_total = p->max_tokens_total,
        .budget_used = usage ? msg_usage_total(usage) : 0,
        .port = {.ctx = lc, .emit = port_emit, .warn = port_warn, .fire_hook = port_fire,
                 .add_usage = port_add_usage, .model = io->model},
    };
}

int loop_context_request(loop_context *lc, context_state *cs, const loop_params *p,
                         const provider_config *cfg, const loom_str *tail, msg_request *req,
                         int64_t *est, loom_error *err)
{
    if (context_build_request(cs, &lc->env, cfg, tail, req, est, err) != 0)
        return -1;
    if (p->tools)
        tool_registry_to_request(p->tools, req);
    return 0;
}
