/* loop_context.c — the context port over a loop_io (see loop_context.h). */
#include "runtime/loop_context.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/str.h"
#include "governance/governance.h"
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
    governance *g = io->tools && io->tools->gov ? io->tools->gov : io->gov;
    lc->env.port.helpers = g ? g->helpers : NULL;
    lc->env.port.helper_owner = g;
}

/* LOOM_CHECK_REQUEST_ENCODING=1 (the e2e suite sets it): every turn's
 * request is also made from the records and both are encoded; a byte of
 * difference aborts with where it is. A kept history that drifted from
 * the records would otherwise only show as a model seeing a different
 * conversation, or a provider cache that stopped hitting. */
static bool check_wanted(void)
{
    const char *v = getenv("LOOM_CHECK_REQUEST_ENCODING");
    return v && *v && strcmp(v, "0") != 0;
}

/* Says what differs (stderr, and LOOM_CHECK_REQUEST_ENCODING_REPORT's
 * file when set, which the e2e suite's finish() looks for: a test that
 * expects loom to fail must still not pass on this) and aborts. */
static void check_failed(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void check_failed(const char *fmt, ...)
{
    char msg[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    fprintf(stderr, "loom: LOOM_CHECK_REQUEST_ENCODING: %s\n", msg);
    const char *report = getenv("LOOM_CHECK_REQUEST_ENCODING_REPORT");
    FILE *f = report && *report ? fopen(report, "a") : NULL;
    if (f) {
        fprintf(f, "%s\n", msg);
        fclose(f);
    }
    abort();
}

static void check_same_bytes(loop_context *lc, context_state *cs, const loop_params *p,
                             const provider_config *cfg, const loom_str *tail,
                             const msg_request *kept, int64_t kept_est)
{
    const provider_codec_ops *codec = provider_codec(cfg->kind);
    msg_request fresh;
    int64_t fresh_est = 0;
    loom_error err;
    loom_error_clear(&err);
    if (context_build_request_fresh(cs, &lc->env, cfg, tail, &fresh, &fresh_est, &err) != 0) {
        check_failed("the request made from the records failed: %s", err.message);
    }
    if (p->tools)
        tool_registry_to_request(p->tools, &fresh);
    if (fresh_est != kept_est) {
        check_failed("the kept request's estimate is %lld tokens, made from the records %lld",
                     (long long)kept_est, (long long)fresh_est);
    }
    if (codec) {
        /* Twice: the first encode may fill a kept message's wire bytes, the
         * second (like the real call's) writes them from there. */
        provider_http_call b = {0};
        loom_error eb;
        loom_error_clear(&eb);
        int rb = codec->encode(&fresh, cfg, &b, &eb);
        for (int pass = 0; pass < 2; pass++) {
            provider_http_call a = {0};
            loom_error ea;
            loom_error_clear(&ea);
            int ra = codec->encode(kept, cfg, &a, &ea);
            size_t at = 0;
            while (at < a.body.len && at < b.body.len && a.body.ptr[at] == b.body.ptr[at])
                at++;
            if (ra != rb || a.body.len != b.body.len || at < a.body.len) {
                size_t from = at > 80 ? at - 80 : 0;
                int na = a.body.len > from ? (int)(a.body.len - from < 200 ? a.body.len - from : 200) : 0;
                int nb = b.body.len > from ? (int)(b.body.len - from < 200 ? b.body.len - from : 200) : 0;
                check_failed("the kept %s request (%zu bytes, encode %d) differs from one made "
                             "from the records (%zu bytes) at byte %zu\n  kept:  %.*s\n"
                             "  fresh: %.*s",
                             codec->name, a.body.len, pass + 1, b.body.len, at, na,
                             a.body.ptr ? a.body.ptr + from : "", nb,
                             b.body.ptr ? b.body.ptr + from : "");
            }
            provider_http_call_free(&a);
        }
        provider_http_call_free(&b);
    }
    msg_request_free(&fresh);
}

int loop_context_request(loop_context *lc, context_state *cs, const loop_params *p,
                         const provider_config *cfg, const loom_str *tail, msg_request *req,
                         int64_t *est, loom_error *err)
{
    if (context_build_request(cs, &lc->env, cfg, tail, req, est, err) != 0)
        return -1;
    if (p->tools)
        tool_registry_to_request(p->tools, req);
    if (check_wanted())
        check_same_bytes(lc, cs, p, cfg, tail, req, *est);
    return 0;
}
