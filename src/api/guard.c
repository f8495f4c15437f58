/* guard.c — the driver's guardrails and interceptors, adapted (see guard.h).
 * The adapters turn the loop's structures into the small JSON views loom.h
 * promises and apply what the callbacks hand back. Run thread only. */
#include "api/guard.h"

#include <stdlib.h>
#include <string.h>

#include "base/json.h"
#include "base/str.h"
#include "context/reminder.h"
#include "runtime/guardrail.h"
#include "runtime/intercept.h"

static bool guard_check(void *ctx, guardrail_stage stage, const char *text, char **reason)
{
    (void)stage;
    const loom_guardrail *g = ctx;
    return g->check(g->ctx, text ? text : "", reason);
}

static char *dump(json_t *v)
{
    char *s = json_dumps(v, JSON_COMPACT);
    json_decref(v);
    return s;
}

static int icpt_request(void *ctx, const intercept_call *call, msg_request *req, loom_error *err)
{
    (void)err;
    const loom_interceptor *ic = ctx;
    msg_message *last = req->n_messages ? &req->messages[req->n_messages - 1] : NULL;
    const char *text = "";
    for (size_t b = last ? last->n_blocks : 0; b-- > 0;)
        if (last->blocks[b].kind == MSG_BLOCK_TEXT && last->blocks[b].text) {
            text = last->blocks[b].text;
            break;
        }
    char *view = dump(json_pack("{s:i,s:i,s:s,s:I,s:s}", "turn", call->turn, "attempt",
                                call->attempt, "model", call->model ? call->model : "",
                                "messages", (json_int_t)req->n_messages, "last_text", text));
    char *add = ic->on_request(ic->ctx, view ? view : "{}");
    free(view);
    if (add && *add && last) {
        loom_str s = LOOM_STR_INIT;
        reminder_render(&s, REMINDER_INTERCEPTOR, add);
        msg_message_add_text(last, str_cstr(&s))->tail = true;
        str_free(&s);
    }
    free(add);
    return 0;
}

/* The reply's text becomes text: its first text block holds it, the
 * others go (tool calls and thinking stay). */
static void replace_text(msg_message *m, const char *text)
{
    size_t w = 0;
    bool placed = false;
    for (size_t b = 0; b < m->n_blocks; b++) {
        msg_block *blk = &m->blocks[b];
        if (blk->kind == MSG_BLOCK_TEXT) {
            free(blk->text);
            blk->text = NULL;
            if (placed)
                continue;
            blk->text = xstrdup(text);
            placed = true;
        }
        m->blocks[w++] = *blk;
    }
    m->n_blocks = w;
    if (!placed)
        msg_message_add_text(m, text);
}

static void icpt_reply(void *ctx, const intercept_call *call, msg_response *resp)
{
    const loom_interceptor *ic = ctx;
    char *text = msg_message_text(&resp->message);
    const char *stop = loom_stop_reason_name(resp->stop_reason);
    char *view = dump(json_pack("{s:i,s:i,s:s,s:s}", "turn", call->turn, "attempt",
                                call->attempt, "text", text, "stop_reason", stop ? stop : "none"));
    free(text);
    char *repl = ic->on_reply(ic->ctx, view ? view : "{}");
    free(view);
    if (repl && *repl)
        replace_text(&resp->message, repl);
    free(repl);
}

void api_guard_begin(api_guard *g, const loom_run_options *opts, loop_io *io)
{
    memset(g, 0, sizeof *g);
    size_t ng = opts ? opts->n_guardrails : 0, ni = opts ? opts->n_interceptors : 0;
    if (ng && opts->guardrails) {
        g->guardrails = xcalloc(ng, sizeof *g->guardrails);
        size_t k = 0;
        for (size_t i = 0; i < ng; i++) {
            const loom_guardrail *pg = &opts->guardrails[i];
            if (!pg->check)
                continue;
            g->guardrails[k++] = (loop_guardrail){
                .name = pg->name ? pg->name : "unnamed",
                .stage = pg->stage == LOOM_GUARDRAIL_OUTPUT ? GUARDRAIL_OUTPUT : GUARDRAIL_INPUT,
                .ctx = (void *)pg,
                .check = guard_check};
        }
        io->guardrails = g->guardrails;
        io->n_guardrails = k;
    }
    if (ni && opts->interceptors) {
        g->interceptors = xcalloc(ni, sizeof *g->interceptors);
        for (size_t i = 0; i < ni; i++) {
            const loom_interceptor *pi = &opts->interceptors[i];
            g->interceptors[i] = (loop_interceptor){
                .name = pi->name ? pi->name : "unnamed",
                .ctx = (void *)pi,
                .on_request = pi->on_request ? icpt_request : NULL,
                .on_reply = pi->on_reply ? icpt_reply : NULL};
        }
        io->interceptors = g->interceptors;
        io->n_interceptors = ni;
    }
}

void api_guard_end(api_guard *g)
{
    free(g->guardrails);
    free(g->interceptors);
    memset(g, 0, sizeof *g);
}
