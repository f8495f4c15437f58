/* intercept.c — the chain and the debug interceptor (see intercept.h). */
#include "runtime/intercept.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/json.h"
#include "base/str.h"
#include "context/reminder.h"
#include "loom_protocol.h"

void intercept_chain_add(intercept_chain *c, const loop_interceptor *ic)
{
    if (c->n == c->cap) {
        c->cap = c->cap ? c->cap * 2 : 4;
        c->v = xrealloc(c->v, c->cap * sizeof *c->v);
    }
    c->v[c->n++] = *ic;
}

int intercept_request(const intercept_chain *c, const intercept_call *call, msg_request *req,
                      loom_error *err)
{
    for (size_t i = 0; i < c->n; i++) {
        if (!c->v[i].on_request)
            continue;
        if (c->v[i].on_request(c->v[i].ctx, call, req, err) != 0) {
            if (!err->code)
                loom_error_set(err, LOOM_ERR_RUN_BLOCKED_BY_POLICY,
                               "the model-call interceptor %s refused the request",
                               c->v[i].name ? c->v[i].name : "?");
            return -1;
        }
    }
    return 0;
}

void intercept_reply(const intercept_chain *c, const intercept_call *call, msg_response *resp)
{
    for (size_t i = c->n; i-- > 0;)
        if (c->v[i].on_reply)
            c->v[i].on_reply(c->v[i].ctx, call, resp);
}

void intercept_chain_free(intercept_chain *c)
{
    free(c->v);
    memset(c, 0, sizeof *c);
}

/* --- the debug interceptor ------------------------------------------------ */

static void debug_line(json_t *line)
{
    const char *path = getenv("LOOM_DEBUG_INTERCEPTOR_LOG");
    FILE *f = path && *path ? fopen(path, "a") : NULL;
    if (f) {
        char *s = json_dumps(line, JSON_COMPACT);
        fprintf(f, "%s\n", s ? s : "{}");
        free(s);
        fclose(f);
    }
    json_decref(line);
}

/* Logs the request as it came (the last text block of its last message),
 * then adds the note. */
static int debug_request(void *ctx, const intercept_call *call, msg_request *req,
                         loom_error *err)
{
    (void)ctx, (void)err;
    const char *note = getenv("LOOM_DEBUG_INTERCEPTOR_NOTE");
    msg_message *last = req->n_messages ? &req->messages[req->n_messages - 1] : NULL;
    const char *text = "";
    for (size_t b = last ? last->n_blocks : 0; b-- > 0;)
        if (last->blocks[b].kind == MSG_BLOCK_TEXT && last->blocks[b].text) {
            text = last->blocks[b].text;
            break;
        }
    debug_line(json_pack("{s:s,s:i,s:i,s:s,s:I,s:s}", "stage", "request", "turn", call->turn,
                         "attempt", call->attempt, "model", call->model ? call->model : "",
                         "messages", (json_int_t)req->n_messages, "last_text", text));
    if (note && *note && last) {
        loom_str s = LOOM_STR_INIT;
        reminder_render(&s, REMINDER_INTERCEPTOR, note);
        msg_message_add_text(last, str_cstr(&s))->tail = true;
        str_free(&s);
    }
    return 0;
}

static void debug_reply(void *ctx, const intercept_call *call, msg_response *resp)
{
    (void)ctx;
    char *text = msg_message_text(&resp->message);
    const char *stop = loom_stop_reason_name(resp->stop_reason);
    debug_line(json_pack("{s:s,s:i,s:i,s:s,s:s}", "stage", "reply", "turn", call->turn,
                         "attempt", call->attempt, "text", text, "stop_reason",
                         stop ? stop : "none"));
    free(text);
}

bool intercept_add_debug(intercept_chain *c)
{
    const char *path = getenv("LOOM_DEBUG_INTERCEPTOR_LOG");
    if (!path || !*path)
        return false;
    intercept_chain_add(c, &(loop_interceptor){.name = "debug", .on_request = debug_request,
                                               .on_reply = debug_reply});
    return true;
}
