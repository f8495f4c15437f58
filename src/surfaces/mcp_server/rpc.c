/* rpc.c — the JSON-RPC side of `loom mcp serve`: message shape checks, the
 * lifecycle (initialize, then everything else), ping, tools/list with its
 * cursor, logging/setLevel, and tools/call handed to a thread of its own,
 * which notifications/cancelled can reach (mcps.h). */
#include "surfaces/mcp_server/mcps.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/json.h"
#include "base/str.h"
#include "base/uuid.h"

const char *const mcps_versions[] = {"2025-11-25", "2025-06-18", NULL};

static const char *const log_levels[] = {"debug",    "info",  "notice", "warning", "error",
                                         "critical", "alert", "emergency", NULL};

static const char INSTRUCTIONS[] =
    "Loom is a coding agent. Its built-in tools (Read, Write, Edit, Glob, Grep, Bash, …) "
    "run in the server's working directory through Loom's permission pipeline, under the "
    "permission mode the server was started with: a call that would need a person's "
    "approval is refused, as a tool result with isError set and the reason. The agent "
    "tool hands a whole task to Loom (its prompt, optionally a cwd and a model) and "
    "returns Loom's final answer; it reports progress when the request carries a "
    "progressToken and stops when the request is cancelled.";

void mcps_log(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("loom-mcp-server: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

bool mcps_version_supported(const char *v)
{
    for (size_t i = 0; v && mcps_versions[i]; i++)
        if (!strcmp(v, mcps_versions[i]))
            return true;
    return false;
}

/* ---- connections ---------------------------------------------------------- */

mcps_conn *mcps_conn_new(mcps_server *srv)
{
    mcps_conn *c = xcalloc(1, sizeof *c);
    c->srv = srv;
    uuid_v7(c->id);
    pthread_mutex_init(&c->lock, NULL);
    pthread_mutex_init(&c->handling, NULL);
    pthread_cond_init(&c->idle, NULL);
    c->refs = 1;
    c->log_level = 1; /* info */
    return c;
}

void mcps_conn_retain(mcps_conn *c)
{
    pthread_mutex_lock(&c->lock);
    c->refs++;
    pthread_mutex_unlock(&c->lock);
}

void mcps_conn_release(mcps_conn *c)
{
    if (!c)
        return;
    pthread_mutex_lock(&c->lock);
    int left = --c->refs;
    pthread_mutex_unlock(&c->lock);
    if (left)
        return;
    pthread_mutex_destroy(&c->lock);
    pthread_mutex_destroy(&c->handling);
    pthread_cond_destroy(&c->idle);
    free(c);
}

void mcps_conn_close(mcps_conn *c)
{
    if (!c)
        return;
    pthread_mutex_lock(&c->lock);
    c->closing = true;
    /* Runs stop; calls still answer (a built-in call finishes first). */
    for (mcps_call *k = c->calls; k; k = k->next) {
        loom_run *r = atomic_load(&k->run);
        if (r)
            loom_run_cancel(r);
    }
    while (c->n_calls)
        pthread_cond_wait(&c->idle, &c->lock);
    pthread_mutex_unlock(&c->lock);
    mcps_conn_release(c);
}

const char *mcps_conn_id(const mcps_conn *c)
{
    return c->id;
}

bool mcps_conn_initialized(const mcps_conn *c)
{
    return c->initialized;
}

/* ---- messages ------------------------------------------------------------- */

static json_t *error_msg(const json_t *id, int code, const char *message)
{
    json_t *m = json_pack("{s:s,s:O,s:{s:i,s:s}}", "jsonrpc", "2.0", "id",
                          id ? id : json_null(), "error", "code", code, "message", message);
    return m;
}

static json_t *result_msg(const json_t *id, json_t *result)
{
    return json_pack("{s:s,s:O,s:o}", "jsonrpc", "2.0", "id", id, "result", result);
}

static mcps_outcome reply(const mcps_sink *sink, json_t *msg)
{
    sink->send(sink->ctx, msg, true);
    return MCPS_REPLIED;
}

json_t *mcps_peek(const char *buf, size_t len, bool *is_initialize)
{
    if (is_initialize)
        *is_initialize = false;
    if (!buf)
        return NULL;
    json_error_t jerr;
    json_t *msg = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &jerr);
    if (msg && is_initialize && json_is_object(msg)) {
        const char *m = json_string_value(json_object_get(msg, "method"));
        *is_initialize = m && !strcmp(m, "initialize") && json_object_get(msg, "id");
    }
    return msg;
}

static bool valid_id(const json_t *id)
{
    return id && (json_is_string(id) || json_is_integer(id));
}

static json_t *initialize(mcps_conn *c, const json_t *params, const json_t *id,
                          const char **why)
{
    if (c->initialized) {
        *why = "the session is already initialized";
        return NULL;
    }
    const char *asked = json_string_value(json_object_get(params, "protocolVersion"));
    if (!json_is_object(params) || !asked) {
        *why = "initialize needs params.protocolVersion (a string)";
        return NULL;
    }
    (void)id;
    /* The client's version when spoken, else the newest (the client decides). */
    const char *v = mcps_version_supported(asked) ? asked : mcps_versions[0];
    snprintf(c->version, sizeof c->version, "%s", v);
    c->initialized = true;
    return json_pack("{s:s,s:{s:{s:b},s:{}},s:{s:s,s:s,s:s},s:s}", "protocolVersion", v,
                     "capabilities", "tools", "listChanged", 0, "logging", "serverInfo",
                     "name", "loom", "title", "Loom", "version", loom_version(), "instructions",
                     INSTRUCTIONS);
}

static size_t page_size(const mcps_server *srv)
{
    return srv->opts.page_size ? srv->opts.page_size : 50;
}

static json_t *tools_list(mcps_conn *c, const json_t *params, const char **why)
{
    size_t start = 0;
    const json_t *cursor = json_object_get(params, "cursor");
    if (cursor && !json_is_null(cursor)) {
        const char *cs = json_string_value(cursor);
        char *end = NULL;
        unsigned long long n = cs && !strncmp(cs, "loom:", 5) ? strtoull(cs + 5, &end, 10) : 0;
        if (!cs || strncmp(cs, "loom:", 5) || !end || *end || end == cs + 5) {
            *why = "invalid cursor: pass a nextCursor from an earlier tools/list";
            return NULL;
        }
        start = (size_t)n;
    }
    json_t *all = mcps_tools_list(c->srv);
    size_t total = json_array_size(all);
    if (start > total) {
        json_decref(all);
        *why = "invalid cursor: past the end of the list";
        return NULL;
    }
    size_t n = page_size(c->srv);
    json_t *page = json_array();
    for (size_t i = start; i < total && i < start + n; i++)
        json_array_append(page, json_array_get(all, i));
    json_t *res = json_pack("{s:o}", "tools", page);
    if (start + n < total) {
        char next[40];
        snprintf(next, sizeof next, "loom:%zu", start + n);
        json_object_set_new(res, "nextCursor", json_string(next));
    }
    json_decref(all);
    return res;
}

static void cancel_request(mcps_conn *c, const json_t *params)
{
    const json_t *rid = json_object_get(params, "requestId");
    if (!valid_id(rid))
        return;
    pthread_mutex_lock(&c->lock);
    for (mcps_call *k = c->calls; k; k = k->next) {
        if (!json_equal(k->id, (json_t *)rid))
            continue;
        k->cancelled = true;
        loom_run *r = atomic_load(&k->run);
        if (r)
            loom_run_cancel(r);
    }
    pthread_mutex_unlock(&c->lock);
}

static void call_free(mcps_call *k)
{
    json_decref(k->id);
    json_decref(k->args);
    json_decref(k->progress_token);
    free(k->name);
    free(k);
}

static void *call_main(void *arg)
{
    mcps_call *k = arg;
    mcps_conn *c = k->conn;
    json_t *res = mcps_tool_run(c->srv, k);
    pthread_mutex_lock(&c->lock);
    bool cancelled = k->cancelled;
    for (mcps_call **p = &c->calls; *p; p = &(*p)->next)
        if (*p == k) {
            *p = k->next;
            break;
        }
    pthread_mutex_unlock(&c->lock);
    /* A cancelled request gets no answer (MCP: cancellation). */
    if (cancelled) {
        json_decref(res);
        k->sink.send(k->sink.ctx, NULL, true);
    } else {
        k->sink.send(k->sink.ctx, result_msg(k->id, res), true);
    }
    if (k->sink.release)
        k->sink.release(k->sink.ctx);
    call_free(k);
    pthread_mutex_lock(&c->lock);
    if (--c->n_calls == 0)
        pthread_cond_broadcast(&c->idle);
    pthread_mutex_unlock(&c->lock);
    mcps_conn_release(c);
    return NULL;
}

static mcps_outcome tools_call(mcps_conn *c, const json_t *params, const json_t *id,
                               const mcps_sink *sink)
{
    const char *name = json_string_value(json_object_get(params, "name"));
    const json_t *args = json_object_get(params, "arguments");
    if (!json_is_object(params) || !name)
        return reply(sink, error_msg(id, MCPS_INVALID_PARAMS,
                                     "tools/call needs params.name (a string)"));
    if (args && !json_is_null(args) && !json_is_object(args))
        return reply(sink, error_msg(id, MCPS_INVALID_PARAMS,
                                     "tools/call: params.arguments must be an object"));
    if (!mcps_tool_known(c->srv, name)) {
        loom_str m = LOOM_STR_INIT;
        str_printf(&m, "Unknown tool: %s (tools/list names them)", name);
        json_t *e = error_msg(id, MCPS_INVALID_PARAMS, str_cstr(&m));
        str_free(&m);
        return reply(sink, e);
    }
    mcps_call *k = xcalloc(1, sizeof *k);
    k->conn = c;
    k->id = json_deep_copy(id);
    k->name = xstrdup(name);
    k->args = args && json_is_object(args) ? json_deep_copy(args) : json_object();
    const json_t *tok = json_object_get(json_object_get(params, "_meta"), "progressToken");
    if (tok && (json_is_string(tok) || json_is_integer(tok)))
        k->progress_token = json_deep_copy(tok);
    k->sink = *sink;
    if (sink->retain)
        sink->retain(sink->ctx);
    pthread_mutex_lock(&c->lock);
    if (c->closing) {
        pthread_mutex_unlock(&c->lock);
        if (sink->release)
            sink->release(sink->ctx);
        call_free(k);
        return reply(sink, error_msg(id, MCPS_INTERNAL_ERROR, "the session is closing"));
    }
    k->next = c->calls;
    c->calls = k;
    c->n_calls++;
    c->refs++;
    pthread_mutex_unlock(&c->lock);
    pthread_t t;
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    if (pthread_create(&t, &attr, call_main, k) != 0) {
        pthread_attr_destroy(&attr);
        pthread_mutex_lock(&c->lock);
        c->calls = k->next;
        c->n_calls--;
        c->refs--;
        pthread_mutex_unlock(&c->lock);
        if (sink->release)
            sink->release(sink->ctx);
        call_free(k);
        return reply(sink, error_msg(id, MCPS_INTERNAL_ERROR, "cannot start a thread"));
    }
    pthread_attr_destroy(&attr);
    return MCPS_ASYNC;
}

void mcps_call_progress(mcps_call *k, double progress, const char *message)
{
    if (!k->progress_token)
        return;
    pthread_mutex_lock(&k->conn->lock);
    bool cancelled = k->cancelled;
    pthread_mutex_unlock(&k->conn->lock);
    if (cancelled)
        return;
    json_t *p = json_pack("{s:O,s:f}", "progressToken", k->progress_token, "progress", progress);
    if (message)
        json_object_set_new(p, "message", json_string(message));
    k->sink.send(k->sink.ctx,
                 json_pack("{s:s,s:s,s:o}", "jsonrpc", "2.0", "method",
                           "notifications/progress", "params", p),
                 false);
}

static mcps_outcome handle(mcps_conn *c, const char *buf, size_t len, const mcps_sink *sink);

mcps_outcome mcps_handle(mcps_conn *c, const char *buf, size_t len, const mcps_sink *sink)
{
    pthread_mutex_lock(&c->handling);
    mcps_outcome out = handle(c, buf, len, sink);
    pthread_mutex_unlock(&c->handling);
    return out;
}

static mcps_outcome handle(mcps_conn *c, const char *buf, size_t len, const mcps_sink *sink)
{
    json_error_t jerr;
    json_t *msg = buf ? json_loadb(buf, len, JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, &jerr) : NULL;
    if (!msg) {
        char m[300];
        snprintf(m, sizeof m, "Parse error: %s (line %d, column %d)",
                 buf ? jerr.text : "no message", buf ? jerr.line : 0, buf ? jerr.column : 0);
        return reply(sink, error_msg(NULL, MCPS_PARSE_ERROR, m));
    }
    mcps_outcome out;
    if (json_is_array(msg)) {
        out = reply(sink, error_msg(NULL, MCPS_INVALID_REQUEST,
                                    "Invalid Request: batches are not part of MCP since "
                                    "2025-06-18; send one message at a time"));
        goto done;
    }
    if (!json_is_object(msg)) {
        out = reply(sink, error_msg(NULL, MCPS_INVALID_REQUEST,
                                    "Invalid Request: a message is a JSON object"));
        goto done;
    }
    const json_t *id = json_object_get(msg, "id");
    const json_t *jv = json_object_get(msg, "jsonrpc");
    const json_t *mv = json_object_get(msg, "method");
    const char *method = json_string_value(mv);
    bool is_response = !mv && (json_object_get(msg, "result") || json_object_get(msg, "error"));
    if (!json_is_string(jv) || strcmp(json_string_value(jv), "2.0") != 0 ||
        (!is_response && !method) || (id && !json_is_null(id) && !valid_id(id)) ||
        (id && json_is_null(id))) {
        /* A bad id is not echoed back: it is not a valid id. */
        out = reply(sink, error_msg(valid_id(id) ? id : NULL, MCPS_INVALID_REQUEST,
                                    "Invalid Request: needs \"jsonrpc\": \"2.0\", a string "
                                    "\"method\", and an id that is a string or an integer"));
        goto done;
    }
    if (is_response) { /* the client answering a request of ours: we send none */
        out = MCPS_NO_REPLY;
        goto done;
    }
    const json_t *params = json_object_get(msg, "params");
    if (params && !json_is_object(params) && !json_is_null(params)) {
        out = id ? reply(sink, error_msg(id, MCPS_INVALID_PARAMS,
                                         "Invalid params: params must be an object"))
                 : MCPS_NO_REPLY;
        goto done;
    }
    if (!id) { /* a notification */
        if (!strcmp(method, "notifications/initialized"))
            c->ready = true;
        else if (!strcmp(method, "notifications/cancelled"))
            cancel_request(c, params);
        out = MCPS_NO_REPLY;
        goto done;
    }
    const char *why = NULL;
    json_t *res = NULL;
    if (!strcmp(method, "initialize")) {
        res = initialize(c, params, id, &why);
        out = reply(sink, res ? result_msg(id, res)
                              : error_msg(id, c->initialized ? MCPS_INVALID_REQUEST
                                                             : MCPS_INVALID_PARAMS,
                                          why));
        goto done;
    }
    if (!strcmp(method, "ping")) {
        out = reply(sink, result_msg(id, json_object()));
        goto done;
    }
    if (!c->initialized) {
        char m[300];
        snprintf(m, sizeof m, "Invalid Request: %.100s before initialize: send initialize first",
                 method);
        out = reply(sink, error_msg(id, MCPS_INVALID_REQUEST, m));
        goto done;
    }
    if (!strcmp(method, "tools/list")) {
        res = tools_list(c, params, &why);
        out = reply(sink, res ? result_msg(id, res) : error_msg(id, MCPS_INVALID_PARAMS, why));
    } else if (!strcmp(method, "tools/call")) {
        out = tools_call(c, params, id, sink);
    } else if (!strcmp(method, "logging/setLevel")) {
        const char *lv = json_string_value(json_object_get(params, "level"));
        int found = -1;
        for (int i = 0; lv && log_levels[i]; i++)
            if (!strcmp(lv, log_levels[i]))
                found = i;
        if (found < 0) {
            out = reply(sink, error_msg(id, MCPS_INVALID_PARAMS,
                                        "logging/setLevel: level must be one of debug, info, "
                                        "notice, warning, error, critical, alert, emergency"));
        } else {
            c->log_level = found;
            out = reply(sink, result_msg(id, json_object()));
        }
    } else {
        char m[300];
        snprintf(m, sizeof m, "Method not found: %.200s", method);
        out = reply(sink, error_msg(id, MCPS_METHOD_NOT_FOUND, m));
    }
done:
    json_decref(msg);
    return out;
}
