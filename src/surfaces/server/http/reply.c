/* reply.c — JSON replies, the error envelope with the ONE status table of
 * the wire contract (docs/server.md, "Status codes"), and the request
 * checks every handler shares (query parameters, visibility, strict bodies),
 * so a wrong request gets the same 400 whichever route it hit.
 *
 * No state; a request's thread only touches its own request. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/json.h"
#include "base/str.h"
#include "surfaces/server/http/http_internal.h"

int http_status_for(loom_error_code code)
{
    switch (code) {
    case LOOM_OK:
        return 200;
    case LOOM_ERR_INVALID_REQUEST:
        return 400;
    case LOOM_ERR_UNAUTHENTICATED:
        return 401;
    case LOOM_ERR_PROJECT_SCOPE_DENIED:
    case LOOM_ERR_KNOWLEDGE_SOURCE_SCOPE_DENIED:
    case LOOM_ERR_ARTIFACT_SCOPE_DENIED:
    case LOOM_ERR_RUN_BLOCKED_BY_POLICY:
    case LOOM_ERR_KNOWLEDGE_SOURCE_DENIED:
        return 403;
    case LOOM_ERR_RESOURCE_NOT_FOUND:
        return 404;
    case LOOM_ERR_INVALID_STATE_TRANSITION:
    case LOOM_ERR_RUN_NOT_RESUMABLE:
        return 409;
    case LOOM_ERR_RUN_APPROVAL_EXPIRED:
        return 410;
    case LOOM_ERR_TENANT_QUOTA_EXCEEDED:
        return 429;
    case LOOM_ERR_RUN_WAITING_APPROVAL:
        return 202; /* sync POST /runs: accepted, an approval is open */
    case LOOM_ERR_MODEL_RATE_LIMITED:
    case LOOM_ERR_MODEL_OVERLOADED:
    case LOOM_ERR_MODEL_UNAVAILABLE:
    case LOOM_ERR_MODEL_PROMPT_TOO_LONG:
    case LOOM_ERR_MODEL_REQUEST_REJECTED:
    case LOOM_ERR_MODEL_AUTH:
    case LOOM_ERR_MODEL_PROTOCOL:
    case LOOM_ERR_MODEL_TIMEOUT:
        return 502; /* the model behind us failed, not the request */
    default:
        return 500; /* config_invalid, internal_error, io_failed and the rest */
    }
}

/* A JSON string of s; bytes that are not UTF-8 (an id or a path echoed
 * back as the client sent it) become '?', since jansson refuses them and
 * the envelope must still say something. */
static json_t *text_json(const char *s)
{
    json_t *j = json_string(s);
    if (j)
        return j;
    char *copy = xstrdup(s);
    for (unsigned char *p = (unsigned char *)copy; *p; p++)
        if (*p >= 0x80 || *p < 0x20)
            *p = '?';
    j = json_string(copy);
    free(copy);
    return j;
}

char *error_envelope(loom_error_code code, const char *message, bool retryable,
                     const char *run_id, const char *details_json)
{
    json_t *details = NULL;
    if (details_json && *details_json) {
        details = json_loads(details_json, 0, NULL);
        if (details && !json_is_object(details)) {
            json_decref(details);
            details = NULL;
        }
    }
    const char *name = loom_error_code_name(code);
    json_t *e = json_object();
    json_object_set_new(e, "code", json_string(name ? name : "internal_error"));
    json_object_set_new(e, "message", text_json(message && *message ? message : "failed"));
    json_object_set_new(e, "retryable", json_boolean(retryable));
    json_object_set_new(e, "run_id", run_id && *run_id ? text_json(run_id) : json_null());
    json_object_set_new(e, "details", details ? details : json_object());
    json_t *env = json_object();
    json_object_set_new(env, "error", e);
    char *text = json_dump_compact(env);
    json_decref(env);
    return text;
}

void reply_free(http_reply *rep)
{
    free(rep->body);
    free(rep->content_type);
    free(rep->allow);
    free(rep->headers);
    if (rep->sse)
        sse_stream_free(rep->sse);
    memset(rep, 0, sizeof *rep);
}

void reply_json(http_req *r, int status, char *json)
{
    reply_free(&r->reply);
    r->reply.status = status;
    r->reply.body = json;
    r->reply.len = json ? strlen(json) : 0;
}

void reply_error(http_req *r, srv_error *err)
{
    loom_error_code code = err->code == LOOM_OK ? LOOM_ERR_INTERNAL : err->code;
    char *env = error_envelope(code, err->message, err->retryable, err->run_id,
                               err->details_json);
    reply_json(r, http_status_for(code), env);
    srv_error_clear(err);
}

void reply_fail(http_req *r, int status, loom_error_code code, const char *details_json,
                const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    char *env = error_envelope(code, msg, srv_code_retryable(code), NULL, details_json);
    reply_json(r, status ? status : http_status_for(code), env);
}

void reply_result(http_req *r, char *json, int ok_status, srv_error *err)
{
    if (json) {
        reply_json(r, ok_status, json);
        srv_error_clear(err);
    } else {
        reply_error(r, err);
    }
}

/* ---- query ---------------------------------------------------------------- */

const char *query_get(const http_req *r, const char *key)
{
    for (size_t i = 0; i < r->n_query; i++)
        if (strcmp(r->qkey[i], key) == 0)
            return r->qval[i];
    return NULL;
}

bool query_only(http_req *r, const char *const *allowed)
{
    for (size_t i = 0; i < r->n_query; i++) {
        bool known = false;
        for (size_t j = 0; allowed && allowed[j]; j++)
            known = known || strcmp(r->qkey[i], allowed[j]) == 0;
        if (!known) {
            reply_fail(r, 0, LOOM_ERR_INVALID_REQUEST, NULL,
                       "unknown query parameter \"%s\"", r->qkey[i]);
            return false;
        }
    }
    return true;
}

/* A whole decimal number, no sign tricks or spaces; false on anything else
 * or on overflow (so "10abc" and "1e3" are refused, not truncated). */
static bool parse_int(const char *s, int64_t *out)
{
    if (!s || !*s || strlen(s) > 18)
        return false;
    int64_t v = 0;
    size_t i = 0;
    bool neg = s[0] == '-';
    if (neg && !s[++i])
        return false;
    for (; s[i]; i++) {
        if (s[i] < '0' || s[i] > '9')
            return false;
        v = v * 10 + (s[i] - '0');
    }
    *out = neg ? -v : v;
    return true;
}

bool query_int(http_req *r, const char *key, int64_t lo, int64_t hi, int64_t def, int64_t *out)
{
    const char *v = query_get(r, key);
    if (!v) {
        *out = def;
        return true;
    }
    int64_t n;
    if (!parse_int(v, &n) || n < lo || n > hi) {
        reply_fail(r, 0, LOOM_ERR_INVALID_REQUEST, NULL,
                   "query parameter %s must be a whole number from %lld to %lld, not \"%.64s\"",
                   key, (long long)lo, (long long)hi, v);
        return false;
    }
    *out = n;
    return true;
}

bool query_visibility(http_req *r, unsigned *mask)
{
    const char *v = query_get(r, "visibility");
    if (!v || !*v) {
        *mask = 1u << LOOM_VIS_USER | 1u << LOOM_VIS_SYSTEM;
        return true;
    }
    unsigned m = 0;
    const char *p = v;
    while (*p) {
        size_t n = strcspn(p, ",");
        int found = -1;
        for (int vis = 0; vis < LOOM_VISIBILITY_END; vis++) {
            const char *name = loom_visibility_name((loom_visibility)vis);
            if (name && strlen(name) == n && strncmp(p, name, n) == 0)
                found = vis;
        }
        if (found < 0) {
            reply_fail(r, 0, LOOM_ERR_INVALID_REQUEST, NULL,
                       "visibility must be a comma list of user, system, audit, not \"%.64s\"",
                       v);
            return false;
        }
        m |= 1u << found;
        p += n;
        if (*p == ',')
            p++;
    }
    if ((m & 1u << LOOM_VIS_AUDIT) && !r->who.audit) {
        reply_fail(r, 0, LOOM_ERR_INVALID_REQUEST, NULL, "visibility audit needs an audit token");
        return false;
    }
    *mask = m;
    return true;
}

/* ---- body ----------------------------------------------------------------- */

const char *body_text(const http_req *r)
{
    return r->body && r->body_len ? r->body : "{}";
}

static const char *type_words(body_type t)
{
    switch (t) {
    case BODY_STRING:
        return "a string";
    case BODY_OBJECT:
        return "an object";
    case BODY_STRINGS:
        return "an array of strings";
    default:
        return "a whole number";
    }
}

static bool field_ok(const body_field *f, const json_t *v)
{
    switch (f->type) {
    case BODY_STRING:
        return json_is_string(v);
    case BODY_OBJECT:
        return json_is_object(v);
    case BODY_STRINGS: {
        if (!json_is_array(v))
            return false;
        size_t i;
        json_t *item;
        json_array_foreach(v, i, item) if (!json_is_string(item)) return false;
        return true;
    }
    default:
        return json_is_integer(v) && json_integer_value(v) >= f->lo &&
               json_integer_value(v) <= f->hi;
    }
}

static bool body_parse(http_req *r)
{
    if (!r->body || r->body_len == 0) {
        r->json = json_object();
        return true;
    }
    json_error_t je;
    json_t *v = json_loadb(r->body, r->body_len, JSON_REJECT_DUPLICATES, &je);
    if (!v) {
        char details[96];
        snprintf(details, sizeof details, "{\"line\":%d,\"column\":%d}", je.line, je.column);
        reply_fail(r, 0, LOOM_ERR_INVALID_REQUEST, details,
                   "the request body is not valid JSON: line %d, column %d: %s", je.line,
                   je.column, je.text);
        return false;
    }
    if (!json_is_object(v)) {
        json_decref(v);
        reply_fail(r, 0, LOOM_ERR_INVALID_REQUEST, NULL, "the request body must be a JSON object");
        return false;
    }
    r->json = v;
    return true;
}

bool body_check(http_req *r, const body_field *fields)
{
    if (!r->json && !body_parse(r))
        return false;
    const char *key;
    json_t *v;
    json_object_foreach(r->json, key, v) {
        const body_field *f = fields;
        while (f->name && strcmp(f->name, key) != 0)
            f++;
        if (!f->name) {
            json_t *d = json_pack("{ss}", "key", key);
            char *dt = json_dump_compact(d);
            json_decref(d);
            reply_fail(r, 0, LOOM_ERR_INVALID_REQUEST, dt,
                       "unknown key \"%.64s\" in the request body", key);
            free(dt);
            return false;
        }
        if (json_is_null(v) && !f->required)
            continue; /* an explicit null is the same as leaving it out */
        if (!field_ok(f, v)) {
            if (f->type == BODY_INT)
                reply_fail(r, 0, LOOM_ERR_INVALID_REQUEST, NULL,
                           "%s must be a whole number from %lld to %lld", key, (long long)f->lo,
                           (long long)f->hi);
            else
                reply_fail(r, 0, LOOM_ERR_INVALID_REQUEST, NULL, "%s must be %s", key,
                           type_words(f->type));
            return false;
        }
    }
    for (const body_field *f = fields; f->name; f++) {
        if (f->required && !json_object_get(r->json, f->name)) {
            reply_fail(r, 0, LOOM_ERR_INVALID_REQUEST, NULL,
                       "the request body needs \"%s\"", f->name);
            return false;
        }
    }
    return true;
}
