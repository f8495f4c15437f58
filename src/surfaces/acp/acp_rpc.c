/* acp_rpc.c — JSON-RPC 2.0 framing for `loom acp` (acp.h): a line in is
 * classified as request, notification, response or invalid; every line out
 * goes through one writer, one mutex around each line, so the run threads'
 * session/update notifications and the reader's responses never interleave. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "base/json.h"
#include "base/str.h"
#include "surfaces/acp/acp.h"

void acp_writer_init(acp_writer *w, acp_write_fn fn, void *ctx)
{
    pthread_mutex_init(&w->mu, NULL);
    w->write = fn;
    w->ctx = ctx;
}

void acp_writer_destroy(acp_writer *w)
{
    pthread_mutex_destroy(&w->mu);
}

void acp_send(acp_writer *w, json_t *msg)
{
    if (!msg)
        return;
    /* Compact JSON never holds a raw newline: one message, one line. */
    char *text = json_dumps(msg, JSON_COMPACT | JSON_ENSURE_ASCII);
    json_decref(msg);
    if (!text)
        return;
    pthread_mutex_lock(&w->mu);
    if (w->write)
        w->write(w->ctx, text, strlen(text));
    pthread_mutex_unlock(&w->mu);
    free(text);
}

static json_t *id_copy(const json_t *id)
{
    return id ? json_deep_copy(id) : json_null();
}

void acp_send_result(acp_writer *w, const json_t *id, json_t *result)
{
    acp_send(w, json_pack("{s:s, s:o, s:o}", "jsonrpc", "2.0", "id", id_copy(id), "result",
                          result ? result : json_object()));
}

void acp_send_error(acp_writer *w, const json_t *id, int code, const char *fmt, ...)
{
    char text[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    acp_send(w, json_pack("{s:s, s:o, s:{s:i, s:s}}", "jsonrpc", "2.0", "id", id_copy(id),
                          "error", "code", code, "message", text));
}

void acp_send_notification(acp_writer *w, const char *method, json_t *params)
{
    acp_send(w, json_pack("{s:s, s:s, s:o}", "jsonrpc", "2.0", "method", method, "params",
                          params ? params : json_object()));
}

static void invalid(acp_msg *m, int code, const char *text)
{
    m->kind = ACP_MSG_INVALID;
    m->error_code = code;
    snprintf(m->error_text, sizeof m->error_text, "%s", text);
}

static bool valid_id(const json_t *id)
{
    return json_is_string(id) || json_is_integer(id) || json_is_null(id);
}

void acp_msg_parse(const char *line, size_t n, acp_msg *m)
{
    memset(m, 0, sizeof *m);
    json_error_t je;
    m->root = json_loadb(line, n, JSON_REJECT_DUPLICATES, &je);
    if (!m->root) {
        char text[256];
        snprintf(text, sizeof text, "Parse error: %s (column %d)", je.text, je.column);
        invalid(m, ACP_PARSE_ERROR, text);
        return;
    }
    if (!json_is_object(m->root)) {
        invalid(m, ACP_INVALID_REQUEST, "Invalid request: a message is a JSON object");
        return;
    }
    json_t *id = json_object_get(m->root, "id");
    if (id && valid_id(id))
        m->id = id;
    if (!json_is_string(json_object_get(m->root, "jsonrpc")) ||
        strcmp(json_string_value(json_object_get(m->root, "jsonrpc")), "2.0") != 0) {
        invalid(m, ACP_INVALID_REQUEST, "Invalid request: \"jsonrpc\" must be \"2.0\"");
        return;
    }
    if (id && !valid_id(id)) {
        invalid(m, ACP_INVALID_REQUEST, "Invalid request: \"id\" must be a string, integer or null");
        return;
    }
    json_t *method = json_object_get(m->root, "method");
    if (method) {
        if (!json_is_string(method)) {
            invalid(m, ACP_INVALID_REQUEST, "Invalid request: \"method\" must be a string");
            return;
        }
        m->method = json_string_value(method);
        json_t *params = json_object_get(m->root, "params");
        if (params && !json_is_object(params) && !json_is_array(params) && !json_is_null(params)) {
            invalid(m, ACP_INVALID_REQUEST,
                    "Invalid request: \"params\" must be an object or an array");
            return;
        }
        m->params = json_is_null(params) ? NULL : params;
        m->kind = id ? ACP_MSG_REQUEST : ACP_MSG_NOTIFICATION;
        return;
    }
    m->result = json_object_get(m->root, "result");
    m->error = json_object_get(m->root, "error");
    if (!id || (!m->result && !m->error)) {
        invalid(m, ACP_INVALID_REQUEST,
                "Invalid request: neither a request (\"method\") nor a response (\"id\" with "
                "\"result\" or \"error\")");
        return;
    }
    m->kind = ACP_MSG_RESPONSE;
}

void acp_msg_clear(acp_msg *m)
{
    json_decref(m->root);
    memset(m, 0, sizeof *m);
}
