/* acp_ask.c — questions a run asks a person, through the client's
 * elicitation/create (acp.h): the model's AskUserQuestion as a form of one
 * choice per question (answered keyed by the question's text, the shape
 * the tool reads back), and an MCP server's elicitation passed on as it
 * came. Both are asked on a Loom thread that waits for the answer; only
 * when the client said it shows forms (clientCapabilities.elicitation.form,
 * .url for a URL elicitation). A cancel, or the client leaving, wakes the
 * waiting thread with no answer. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/json.h"
#include "base/str.h"
#include "surfaces/acp/acp_server_int.h"

/* ---- the form ------------------------------------------------------------------------ */

static json_t *choices(const json_t *options)
{
    json_t *out = json_array();
    size_t i;
    json_t *o;
    json_array_foreach(options, i, o) {
        const char *label = json_get_str(o, "label", NULL);
        if (!label)
            continue;
        json_t *e = json_pack("{s:s, s:s}", "const", label, "title", label);
        json_set_str(e, "description", json_get_str(o, "description", NULL));
        json_array_append_new(out, e);
    }
    return out;
}

json_t *acp_questions_form(const json_t *input)
{
    /* loom.h calls it "the tool input"; the library hands over its
     * "questions" array. Either is taken. */
    const json_t *qs = json_is_array(input) ? input : json_get_arr(input, "questions");
    if (!qs || !json_array_size(qs))
        return NULL;
    json_t *props = json_object(), *required = json_array();
    size_t i;
    json_t *q;
    json_array_foreach(qs, i, q) {
        const char *text = json_get_str(q, "question", NULL);
        if (!text || json_object_get(props, text))
            continue;
        json_t *ch = choices(json_get_arr(q, "options"));
        json_t *p;
        if (json_get_bool(q, "multiSelect", false))
            p = json_pack("{s:s, s:{s:o}}", "type", "array", "items", "anyOf", ch);
        else
            p = json_pack("{s:s, s:o}", "type", "string", "oneOf", ch);
        json_set_str(p, "title", json_get_str(q, "header", NULL));
        json_set_str(p, "description", text);
        json_object_set_new(props, text, p);
        json_array_append_new(required, json_string(text));
    }
    if (!json_object_size(props)) {
        json_decref(props);
        json_decref(required);
        return NULL;
    }
    return json_pack("{s:s, s:o, s:o}", "type", "object", "properties", props, "required",
                     required);
}

/* ---- waiting for the client ----------------------------------------------------------- */

bool acp_take_waited(acp_server *srv, const acp_msg *m)
{
    if (!json_is_integer(m->id))
        return false;
    json_int_t id = json_integer_value(m->id);
    pthread_mutex_lock(&srv->mu);
    acp_waiter *w = srv->waiters;
    while (w && w->id != id)
        w = w->next;
    if (w && !w->done) {
        w->done = true;
        w->answered = true;
        w->result = m->result ? json_incref(m->result) : NULL;
        w->error = m->error ? json_incref(m->error) : NULL;
        pthread_cond_broadcast(&srv->answered);
    }
    pthread_mutex_unlock(&srv->mu);
    return w != NULL;
}

void acp_wake_waiters(acp_server *srv, acp_sess *ss)
{
    for (acp_waiter *w = srv->waiters; w; w = w->next)
        if (!ss || w->sess == ss)
            w->done = true;
    pthread_cond_broadcast(&srv->answered);
}

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts); /* the condvar's clock */
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

acp_reply_kind acp_call_client(acp_server *srv, acp_sess *ss, const char *method, json_t *params,
                               const acp_call_opts *o, json_t **result, json_t **error)
{
    static const acp_call_opts forever = {0};
    if (!o)
        o = &forever;
    *result = *error = NULL;
    acp_waiter w = {.sess = ss};
    pthread_mutex_lock(&srv->mu);
    if (srv->closing || (ss->cancelled && !o->after_cancel)) {
        pthread_mutex_unlock(&srv->mu);
        json_decref(params);
        return ACP_REPLY_GONE;
    }
    w.id = srv->next_id++;
    w.next = srv->waiters;
    srv->waiters = &w;
    pthread_mutex_unlock(&srv->mu);
    acp_send(&srv->w, json_pack("{s:s, s:I, s:s, s:o}", "jsonrpc", "2.0", "id", w.id, "method",
                                method, "params", params));
    int64_t deadline = o->deadline_ms > 0 ? now_ms() + o->deadline_ms : 0;
    acp_reply_kind kind = ACP_REPLY_GONE;
    pthread_mutex_lock(&srv->mu);
    while (!w.done) {
        if (o->stop && o->stop(o->stop_ctx)) {
            kind = ACP_REPLY_STOPPED;
            break;
        }
        int64_t now = now_ms();
        if (deadline && now >= deadline) {
            kind = ACP_REPLY_TIMEOUT;
            break;
        }
        if (!deadline && !o->stop) {
            pthread_cond_wait(&srv->answered, &srv->mu);
            continue;
        }
        /* Short slices: the stop flag is polled, not signalled. */
        int64_t until = now + 100;
        if (deadline && deadline < until)
            until = deadline;
        struct timespec ts = {.tv_sec = until / 1000, .tv_nsec = (until % 1000) * 1000000};
        pthread_cond_timedwait(&srv->answered, &srv->mu, &ts);
    }
    if (w.done)
        kind = !w.answered ? ACP_REPLY_GONE : w.error ? ACP_REPLY_ERROR : ACP_REPLY_RESULT;
    for (acp_waiter **p = &srv->waiters; *p; p = &(*p)->next)
        if (*p == &w) {
            *p = w.next;
            break;
        }
    pthread_mutex_unlock(&srv->mu);
    *result = w.result;
    *error = w.error;
    return kind;
}

/* Sends method(params, stolen) and waits for the answer: the result (new
 * reference), or NULL for an error, a cancel or the end. */
static json_t *call_client(acp_server *srv, acp_sess *ss, const char *method, json_t *params)
{
    json_t *result, *error;
    acp_reply_kind k = acp_call_client(srv, ss, method, params, NULL, &result, &error);
    json_decref(error);
    if (k != ACP_REPLY_RESULT) {
        json_decref(result);
        return NULL;
    }
    return result;
}

static bool client_offers(acp_server *srv, const char *mode)
{
    pthread_mutex_lock(&srv->mu);
    const json_t *e = json_get_obj(srv->client_caps, "elicitation");
    bool yes = e && json_is_object(json_object_get(e, mode));
    pthread_mutex_unlock(&srv->mu);
    return yes;
}

bool acp_client_elicits(acp_server *srv)
{
    return client_offers(srv, "form");
}

char *acp_ask_user(void *ctx, const char *questions_json)
{
    acp_sess *ss = ctx;
    json_t *input = json_loads(questions_json, 0, NULL);
    json_t *form = acp_questions_form(input);
    json_decref(input);
    if (!form)
        return NULL;
    json_t *params = json_pack("{s:s, s:s, s:s, s:o}", "sessionId", ss->id, "mode", "form",
                               "message", "The agent asks:", "requestedSchema", form);
    json_t *r = call_client(ss->srv, ss, "elicitation/create", params);
    char *answer = NULL;
    if (r && strcmp(json_get_str(r, "action", ""), "accept") == 0 &&
        json_is_object(json_object_get(r, "content")))
        answer = json_dumps(json_object_get(r, "content"), JSON_COMPACT);
    json_decref(r);
    return answer;
}

char *acp_elicit(void *ctx, const char *server, const char *request_json)
{
    acp_sess *ss = ctx;
    json_t *req = json_loads(request_json, 0, NULL);
    const char *mode = strcmp(json_get_str(req, "mode", "form"), "url") == 0 ? "url" : "form";
    if (!json_is_object(req) || !client_offers(ss->srv, mode)) {
        json_decref(req);
        return NULL;
    }
    json_t *params = req; /* the server's params, with the session added */
    json_object_set_new(params, "sessionId", json_string(ss->id));
    json_object_set_new(params, "mode", json_string(mode));
    if (!json_get_str(params, "message", NULL))
        json_object_set_new(params, "message", json_string(""));
    json_t *meta = json_pack("{s:s}", "mcpServer", server ? server : "");
    json_object_set_new(params, "_meta", json_pack("{s:o}", "loom", meta));
    json_t *r = call_client(ss->srv, ss, "elicitation/create", params);
    char *answer = r ? json_dumps(r, JSON_COMPACT) : NULL;
    json_decref(r);
    return answer;
}
