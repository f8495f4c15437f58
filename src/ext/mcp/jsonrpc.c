/* jsonrpc.c — the JSON-RPC 2.0 reader and writers of jsonrpc.h.
 *
 * Owns nothing beyond the batch it returns: a batch owns the parsed
 * document, and every jsonrpc_msg borrows from it. The reader treats the
 * text as hostile: size cap first, then the parse (jansson, through
 * base/json's fast path), then the shape of every message; the first
 * problem found is the error, naming the server, the batch member when
 * there is more than one, and the message (its id or method) when known.
 *
 * Pure functions; any thread.
 */
#include "ext/mcp/jsonrpc.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/json.h"
#include "base/str.h"
#include "base/utf8.h"

/* Whether the n bytes are valid UTF-8 (NUL bytes are left to the parser). */
static bool utf8_valid(const char *s, size_t n)
{
    const unsigned char *p = (const unsigned char *)s;
    for (size_t i = 0; i < n;) {
        if (p[i] < 0x80) {
            i++;
            continue;
        }
        size_t k = utf8_seq_len(p + i, n - i);
        if (k == 0)
            return false;
        i += k;
    }
    return true;
}

/* Which message an error is about: "" for a lone message, "message 3 of 7
 * of the batch: " for a batch member. */
typedef struct where {
    const char *who;
    char member[64];
} where;

/* A short description of an id for an error message ("id 7", "id \"a\""). */
static void describe_id(const json_t *id, char *out, size_t cap)
{
    if (!id)
        snprintf(out, cap, "no id");
    else if (json_is_integer(id))
        snprintf(out, cap, "id %lld", (long long)json_integer_value(id));
    else if (json_is_string(id))
        snprintf(out, cap, "id \"%.40s\"", json_string_value(id));
    else if (json_is_null(id))
        snprintf(out, cap, "id null");
    else
        snprintf(out, cap, "an id of type %s",
                 json_is_real(id)                          ? "number (not an integer)"
                 : json_is_boolean(id)                     ? "boolean"
                 : json_is_array(id)                       ? "array"
                                                           : "object");
}

static const char *type_name(const json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_OBJECT:
        return "an object";
    case JSON_ARRAY:
        return "an array";
    case JSON_STRING:
        return "a string";
    case JSON_INTEGER:
        return "an integer";
    case JSON_REAL:
        return "a number";
    case JSON_TRUE:
    case JSON_FALSE:
        return "a boolean";
    default:
        return "null";
    }
}

#define BAD(w, ...) bad((w), err, __VA_ARGS__)

static int bad(const where *w, loom_error *err, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int bad(const where *w, loom_error *err, const char *fmt, ...)
{
    char what[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    return loom_error_set(err, LOOM_ERR_TOOL_EXECUTION_FAILED, "MCP server \"%s\": %s%s",
                          w->who ? w->who : "?", w->member, what);
}

/* A request or notification: method present. */
static int check_call(const where *w, json_t *o, jsonrpc_msg *m, loom_error *err)
{
    json_t *method = json_object_get(o, "method");
    if (!json_is_string(method))
        return BAD(w, "a message whose \"method\" is %s, not a string", type_name(method));
    m->method = json_string_value(method);
    if (json_object_get(o, "result") || json_object_get(o, "error"))
        return BAD(w, "\"%.80s\" has a method and also a result or error", m->method);
    json_t *params = json_object_get(o, "params");
    if (params && !json_is_object(params) && !json_is_array(params))
        return BAD(w, "\"%.80s\": params is %s, not an object or array", m->method,
                   type_name(params));
    m->params = params;
    json_t *id = json_object_get(o, "id");
    if (!id) {
        m->kind = JSONRPC_NOTIFICATION;
        return 0;
    }
    if (!json_is_string(id) && !json_is_integer(id)) {
        char d[96];
        describe_id(id, d, sizeof d);
        return BAD(w, "request \"%.80s\" has %s (a request id is a string or an integer)",
                   m->method, d);
    }
    m->kind = JSONRPC_REQUEST;
    m->id = id;
    return 0;
}

/* A response: no method; exactly one of result and error. */
static int check_response(const where *w, json_t *o, jsonrpc_msg *m, loom_error *err)
{
    json_t *id = json_object_get(o, "id");
    json_t *result = json_object_get(o, "result");
    json_t *error = json_object_get(o, "error");
    char d[96];
    describe_id(id, d, sizeof d);
    if (!result && !error)
        return BAD(w, "a message with %s has no method, result or error", d);
    if (result && error)
        return BAD(w, "the response with %s has both a result and an error", d);
    if (!id)
        return BAD(w, "a response without an id");
    if (result) {
        if (!json_is_string(id) && !json_is_integer(id))
            return BAD(w, "a result with %s (a response id is a string or an integer)", d);
        m->kind = JSONRPC_RESULT;
        m->id = id;
        m->result = result;
        return 0;
    }
    /* An error may have a null id: the peer could not read our message. */
    if (!json_is_string(id) && !json_is_integer(id) && !json_is_null(id))
        return BAD(w, "an error with %s (a response id is a string, an integer or null)", d);
    if (!json_is_object(error))
        return BAD(w, "the error response with %s: \"error\" is %s, not an object", d,
                   type_name(error));
    json_t *code = json_object_get(error, "code");
    json_t *message = json_object_get(error, "message");
    if (!json_is_integer(code))
        return BAD(w, "the error response with %s: its code is %s, not an integer", d,
                   code ? type_name(code) : "missing");
    if (!json_is_string(message))
        return BAD(w, "the error response with %s: its message is %s, not a string", d,
                   message ? type_name(message) : "missing");
    m->kind = JSONRPC_ERROR;
    m->id = id;
    m->error_code = (long long)json_integer_value(code);
    m->error_message = json_string_value(message);
    m->error_data = json_object_get(error, "data");
    return 0;
}

static int check_msg(const where *w, json_t *o, jsonrpc_msg *m, loom_error *err)
{
    memset(m, 0, sizeof *m);
    m->root = o;
    if (!json_is_object(o))
        return BAD(w, "a message that is %s, not an object", type_name(o));
    json_t *version = json_object_get(o, "jsonrpc");
    if (!json_is_string(version) || strcmp(json_string_value(version), "2.0") != 0) {
        if (json_is_string(version))
            return BAD(w, "a message with \"jsonrpc\": \"%.20s\" (it must be \"2.0\")",
                       json_string_value(version));
        return BAD(w, "a message whose \"jsonrpc\" is %s (it must be \"2.0\")",
                   version ? type_name(version) : "missing");
    }
    if (json_object_get(o, "method"))
        return check_call(w, o, m, err);
    return check_response(w, o, m, err);
}

int jsonrpc_parse(const char *who, const char *text, size_t len, jsonrpc_batch *out,
                  loom_error *err)
{
    memset(out, 0, sizeof *out);
    where w = {.who = who, .member = ""};
    if (len > JSONRPC_MAX_MESSAGE)
        return BAD(&w, "a message of %zu bytes is over the %u-byte cap", len,
                   JSONRPC_MAX_MESSAGE);
    if (!text || len == 0)
        return BAD(&w, "an empty message");
    json_error_t jerr;
    json_t *doc = json_parse_fast(text, len, 0, &jerr);
    if (!doc && !utf8_valid(text, len)) {
        /* Invalid UTF-8 (a server that cut a string inside a character):
         * the bytes become U+FFFD, as a Node client's decoder does, rather
         * than the whole answer being lost and its caller waiting for the
         * timeout. */
        size_t clean_len = 0;
        char *clean = utf8_sanitize(text, len, &clean_len);
        doc = json_parse_fast(clean, clean_len, 0, &jerr);
        free(clean);
    }
    if (!doc)
        return BAD(&w, "a message that is not JSON (%s, line %d column %d)", jerr.text,
                   jerr.line, jerr.column);
    size_t n = json_is_array(doc) ? json_array_size(doc) : 1;
    if (json_is_array(doc) && n == 0) {
        json_decref(doc);
        return BAD(&w, "an empty batch");
    }
    if (n > JSONRPC_MAX_BATCH) {
        json_decref(doc);
        return BAD(&w, "a batch of %zu messages (at most %d)", n, JSONRPC_MAX_BATCH);
    }
    jsonrpc_msg *msgs = xcalloc(n, sizeof *msgs);
    for (size_t i = 0; i < n; i++) {
        json_t *o = json_is_array(doc) ? json_array_get(doc, i) : doc;
        if (json_is_array(doc))
            snprintf(w.member, sizeof w.member, "message %zu of the batch of %zu: ", i + 1, n);
        int rc = check_msg(&w, o, &msgs[i], err);
        if (rc < 0) {
            free(msgs);
            json_decref(doc);
            return rc;
        }
    }
    out->msgs = msgs;
    out->n = n;
    out->doc = doc;
    return 0;
}

void jsonrpc_batch_free(jsonrpc_batch *b)
{
    if (!b)
        return;
    free(b->msgs);
    json_decref(b->doc);
    memset(b, 0, sizeof *b);
}

/* ---- builders ---------------------------------------------------------------- */

static char *dump_steal(json_t *o)
{
    char *s = json_dump_compact(o);
    json_decref(o);
    return s;
}

static json_t *envelope(void)
{
    json_t *o = json_object();
    json_object_set_new(o, "jsonrpc", json_string("2.0"));
    return o;
}

char *jsonrpc_request(long long id, const char *method, const json_t *params)
{
    json_t *o = envelope();
    json_object_set_new(o, "id", json_integer((json_int_t)id));
    json_object_set_new(o, "method", json_string(method));
    if (params)
        json_object_set(o, "params", (json_t *)params);
    return dump_steal(o);
}

char *jsonrpc_notification(const char *method, const json_t *params)
{
    json_t *o = envelope();
    json_object_set_new(o, "method", json_string(method));
    if (params)
        json_object_set(o, "params", (json_t *)params);
    return dump_steal(o);
}

char *jsonrpc_result(const json_t *id, const json_t *result)
{
    json_t *o = envelope();
    json_object_set(o, "id", id ? (json_t *)id : json_null());
    json_object_set_new(o, "result", result ? json_incref((json_t *)result) : json_object());
    return dump_steal(o);
}

char *jsonrpc_error(const json_t *id, long long code, const char *message, const json_t *data)
{
    json_t *o = envelope();
    json_object_set(o, "id", id ? (json_t *)id : json_null());
    json_t *e = json_object();
    json_object_set_new(e, "code", json_integer((json_int_t)code));
    json_t *text = json_string(message ? message : "");
    json_object_set_new(e, "message", text ? text : json_string("(not UTF-8)"));
    if (data)
        json_object_set(e, "data", (json_t *)data);
    json_object_set_new(o, "error", e);
    return dump_steal(o);
}

bool jsonrpc_id_int(const json_t *id, long long *out)
{
    if (!json_is_integer(id))
        return false;
    *out = (long long)json_integer_value(id);
    return true;
}
