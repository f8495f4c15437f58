/* server.c — the HTTP side of mockllm: collects a request body, routes it to
 * a wire format by path, picks the scripted turn from the conversation,
 * applies that attempt's fault, queues the (possibly streaming) response,
 * and logs the exchange. Any input, however broken, gets an HTTP answer. */
#include "mockllm.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

/* Generous for any real conversation, small enough that a runaway client
 * cannot exhaust the test machine. */
#define MAX_BODY (64u * 1024 * 1024)

typedef struct {
    mbuf body;
    size_t received; /* body bytes the client sent, kept or not */
    bool too_large;
} req_state;

static atomic_ulong request_counter;

static const mock_format *route(const char *url)
{
    static const struct {
        const char *path;
        const mock_format *fmt;
    } routes[] = {
        {"/v1/messages", &anthropic_format},
        {"/messages", &anthropic_format},
        {"/v1/chat/completions", &chat_format},
        {"/chat/completions", &chat_format},
        {"/v1/responses", &responses_format},
        {"/responses", &responses_format},
    };
    for (size_t i = 0; i < sizeof routes / sizeof routes[0]; i++)
        if (!strcmp(url, routes[i].path))
            return routes[i].fmt;
    return NULL;
}

static enum MHD_Result collect_header(void *cls, enum MHD_ValueKind kind,
                                      const char *key, const char *value)
{
    json_t *headers = cls;
    (void)kind;
    if (!key)
        return MHD_YES;
    char *name = xstrdup(key);
    for (char *p = name; *p; p++)
        *p = (char)tolower((unsigned char)*p);
    size_t n;
    char *v = utf8_sanitize(value ? value : "", value ? strlen(value) : 0, &n);
    /* Repeated headers are joined the way HTTP allows folding them. */
    const char *prev = json_string_value(json_object_get(headers, name));
    if (prev) {
        char *joined = xprintf("%s, %s", prev, v);
        free(v);
        v = joined;
    }
    json_object_set_new(headers, name, json_string(v));
    free(v);
    free(name);
    return MHD_YES;
}

/* The token estimate for a request body: the default input usage, and what
 * "context_window" is compared with. */
static long estimate_tokens(size_t body_len)
{
    return (long)(body_len / 4) + 1;
}

/* Defaults derive from sizes so they are plausible and deterministic;
 * anything the scenario scripts wins. */
static mock_usage resolve_usage(const mock_reply *rep, size_t body_len)
{
    size_t out_bytes = 0;
    if (rep->text)
        out_bytes += strlen(rep->text);
    if (rep->thinking)
        out_bytes += strlen(rep->thinking);
    for (size_t i = 0; i < rep->n_calls; i++)
        out_bytes += strlen(rep->calls[i].arguments) + strlen(rep->calls[i].name);
    mock_usage u = {
        .input = estimate_tokens(body_len),
        .output = (long)(out_bytes / 4) + 1,
        .reasoning = rep->thinking ? (long)(strlen(rep->thinking) / 4) + 1 : 0,
    };
    const struct {
        const char *key;
        long *field;
    } keys[] = {
        {"input_tokens", &u.input},
        {"output_tokens", &u.output},
        {"cache_read_input_tokens", &u.cache_read},
        {"cache_creation_input_tokens", &u.cache_creation},
        {"cache_creation_1h_input_tokens", &u.cache_creation_1h},
        {"reasoning_tokens", &u.reasoning},
    };
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        json_t *v = json_object_get(rep->usage, keys[i].key);
        if (json_is_integer(v))
            *keys[i].field = (long)json_integer_value(v);
    }
    return u;
}

static struct MHD_Response *text_response(const char *s, size_t n, const char *ctype)
{
    struct MHD_Response *r =
        MHD_create_response_from_buffer(n, (void *)s, MHD_RESPMEM_MUST_COPY);
    if (r && ctype)
        MHD_add_response_header(r, "Content-Type", ctype);
    return r;
}

/* Takes ownership of j. */
static struct MHD_Response *json_response(json_t *j)
{
    char *s = j ? json_dumps(j, JSON_COMPACT) : NULL;
    json_decref(j);
    struct MHD_Response *r = text_response(s ? s : "{}", s ? strlen(s) : 2,
                                           "application/json");
    free(s);
    return r;
}

static bool has_header(const json_t *headers, const char *name)
{
    const char *key;
    json_t *v;
    json_object_foreach((json_t *)headers, key, v)
        if (!strcasecmp(key, name))
            return true;
    return false;
}

static struct MHD_Response *status_fault_response(const mock_format *fmt,
                                                  const mock_fault *f)
{
    struct MHD_Response *r;
    bool own_ctype = has_header(f->headers, "content-type");
    if (json_is_string(f->body)) {
        /* A string body is sent raw: an HTML proxy page, a truncated JSON. */
        r = text_response(json_string_value(f->body), json_string_length(f->body),
                          own_ctype ? NULL : "text/plain; charset=utf-8");
    } else {
        json_t *body = f->body ? json_deep_copy(f->body) : fmt->error(f->status, NULL);
        char *s = json_dumps(body, JSON_COMPACT | JSON_ENCODE_ANY);
        json_decref(body);
        r = text_response(s ? s : "{}", s ? strlen(s) : 2,
                          own_ctype ? NULL : "application/json");
        free(s);
    }
    if (!r)
        return NULL;
    const char *name;
    json_t *v;
    json_object_foreach((json_t *)f->headers, name, v)
        MHD_add_response_header(r, name, json_string_value(v));
    return r;
}

/* The answer for a request that reached a scripted turn. Templates in the
 * reply are resolved against the raw body; the regexes of those that found
 * nothing are appended to misses. */
static struct MHD_Response *reply_response(mock_scenario *sc, const mock_format *fmt,
                                           const json_t *req, const char *body,
                                           size_t body_len, size_t turn_idx,
                                           unsigned long reqno,
                                           const mock_fault *fault, bool stream,
                                           json_t *misses)
{
    const mock_turn *turn = &sc->turns[turn_idx];
    if (fault && fault->kind == FAULT_STATUS)
        return status_fault_response(fmt, fault);

    mock_reply_inst inst;
    const mock_reply *rep = template_render(&turn->reply, body, body_len, &inst, misses);
    mock_render r = {
        .reply = rep,
        .req = req,
        .model = json_string_value(json_object_get(req, "model")),
        .reqno = reqno,
        .chunk_size = turn->chunk_size,
        .whole_items = turn->whole_items,
        .usage = resolve_usage(rep, body_len),
        .created = (long)time(NULL),
    };
    mock_events ev = {0};
    struct MHD_Response *resp;
    if (stream) {
        fmt->stream(&r, &ev);
        template_release(&inst);
        resp = stream_response(&ev, turn->drip_ms, fault);
        if (resp) {
            MHD_add_response_header(resp, "Content-Type",
                                    "text/event-stream; charset=utf-8");
            MHD_add_response_header(resp, "Cache-Control", "no-cache");
        }
        return resp;
    }
    json_t *msg = fmt->message(&r);
    template_release(&inst);
    if (!fault)
        return json_response(msg);
    /* Non-streaming replies suffer faults too: the body is one "event", a
     * malformed fault replaces it, drop and stall act on it as on a stream. */
    if (fault->kind == FAULT_MALFORMED) {
        events_add_raw(&ev, fault->malformed, strlen(fault->malformed));
        json_decref(msg);
        fault = NULL;
    } else {
        char *s = json_dumps(msg, JSON_COMPACT);
        json_decref(msg);
        events_add_raw(&ev, s ? s : "{}", s ? strlen(s) : 2);
        free(s);
    }
    /* A JSON body has no ping event: its keep-alive is whitespace. */
    mock_fault blank;
    if (fault && fault->kind == FAULT_PING) {
        blank = *fault;
        blank.ping_text = "\n";
        fault = &blank;
    }
    resp = stream_response(&ev, 0, fault);
    if (resp)
        MHD_add_response_header(resp, "Content-Type", "application/json");
    return resp;
}

static enum MHD_Result dispatch(mock_scenario *sc, struct MHD_Connection *conn,
                                const char *url, const char *method, req_state *st)
{
    unsigned long reqno = atomic_fetch_add(&request_counter, 1) + 1;
    const mock_format *fmt = route(url);
    json_t *log = json_object();
    json_object_set_new(log, "method", json_string(method));
    size_t n;
    char *clean_url = utf8_sanitize(url, strlen(url), &n);
    json_object_set_new(log, "path", json_string(clean_url));
    free(clean_url);
    json_object_set_new(log, "format", fmt ? json_string(fmt->name) : json_null());

    json_error_t je = {0};
    json_t *req = st->body.len ? json_loadb(st->body.p, st->body.len,
                                            JSON_DECODE_ANY | JSON_ALLOW_NUL, &je)
                               : NULL;
    bool stream = json_is_true(json_object_get(req, "stream"));
    json_object_set_new(log, "stream", json_boolean(stream));

    int status = 200;
    long turn = -1, attempt = 0, seq = -1;
    long est_tokens = estimate_tokens(st->received);
    bool window_exceeded = false;
    const mock_fault *fault = NULL;
    char *error = NULL;
    json_t *misses = json_array();
    struct MHD_Response *resp = NULL;

    if (!fmt) {
        status = 404;
        error = xprintf("mockllm: no route for %s %s (use POST /v1/messages, "
                        "/v1/chat/completions or /v1/responses)", method, url);
        resp = json_response(json_pack("{s:{s:s, s:s, s:n, s:n}}", "error", "message",
                                       error, "type", "not_found_error", "param",
                                       "code"));
    } else if (strcmp(method, "POST")) {
        status = 405;
        error = xprintf("mockllm: %s %s is not supported; use POST", method, url);
        resp = json_response(fmt->error(405, error));
    } else if (st->too_large) {
        status = 413;
        error = xprintf("mockllm: request body exceeds %u bytes", MAX_BODY);
        resp = json_response(fmt->error(413, error));
    } else if (!json_is_object(req)) {
        status = 400;
        if (req)
            error = xstrdup("mockllm: request body is JSON but not an object");
        else if (!st->body.len)
            error = xstrdup("mockllm: request body is empty; expected a JSON object");
        else
            error = xprintf("mockllm: request body is not valid JSON: %s "
                            "(line %d, column %d)", je.text, je.line, je.column);
        resp = json_response(fmt->error(400, error));
    } else if (sc->context_window && est_tokens > sc->context_window) {
        /* Refused as the provider refuses an over-long prompt, before any
         * turn is chosen: no attempt is counted, the sequence stays put. */
        status = 400;
        window_exceeded = true;
        resp = json_response(fmt->window_error(est_tokens, sc->context_window));
    } else if (fmt->refuse && (error = fmt->refuse(req)) != NULL) {
        /* Refused before any turn is chosen, like the window. */
        status = 400;
        resp = json_response(fmt->error(400, error));
    } else {
        mock_conv conv = {0};
        fmt->summarize(req, &conv);
        conv.tools = (long)json_array_size(json_object_get(req, "tools"));
        conv.body = st->body.p;
        conv.body_len = st->body.len;
        turn = scenario_pick(sc, &conv, &attempt, &fault, &seq);
        if (turn < 0) {
            status = 500;
            error = scenario_describe_miss(sc, &conv);
            resp = json_response(fmt->error(500, error));
        } else {
            if (fault && fault->kind == FAULT_STATUS)
                status = fault->status;
            resp = reply_response(sc, fmt, req, st->body.p, st->body.len,
                                  (size_t)turn, reqno, fault, stream, misses);
        }
        conv_free(&conv);
    }

    char rid[48];
    snprintf(rid, sizeof rid, "req_mock_%lu", reqno);
    if (resp)
        MHD_add_response_header(resp, fmt ? fmt->request_id_header : "x-request-id", rid);

    json_object_set_new(log, "turn", turn >= 0 ? json_integer(turn) : json_null());
    json_object_set_new(log, "attempt", turn >= 0 ? json_integer(attempt) : json_null());
    json_object_set_new(log, "fault", fault ? json_string(fault->desc) : json_null());
    json_object_set_new(log, "status", json_integer(status));
    json_object_set_new(log, "request_id", json_string(rid));
    if (sc->sequence)
        json_object_set_new(log, "seq", seq >= 0 ? json_integer(seq) : json_null());
    if (sc->context_window) {
        json_object_set_new(log, "window_exceeded", json_boolean(window_exceeded));
        json_object_set_new(log, "est_tokens", json_integer(est_tokens));
    }
    if (json_array_size(misses))
        json_object_set(log, "template_misses", misses);
    json_decref(misses);
    if (error)
        json_object_set_new(log, "error", json_string(error));
    json_t *headers = json_object();
    MHD_get_connection_values(conn, MHD_HEADER_KIND, collect_header, headers);
    json_object_set_new(log, "headers", headers);
    if (req) {
        json_object_set(log, "body", req);
    } else {
        char *raw = utf8_sanitize(st->body.p ? st->body.p : "", st->body.len, &n);
        json_object_set_new(log, "body", json_stringn(raw, n));
        free(raw);
    }
    /* The client's exact bytes, so tests can compare request prefixes byte
     * for byte (jansson escapes; a JSON reader gets the bytes back). Only
     * invalid UTF-8, which a JSON string cannot carry, is replaced. */
    if (st->too_large) {
        json_object_set_new(log, "raw_body", json_null());
    } else {
        char *raw = utf8_sanitize(st->body.p ? st->body.p : "", st->body.len, &n);
        json_object_set_new(log, "raw_body", json_stringn(raw, n));
        free(raw);
    }
    reqlog_write(log);
    json_decref(log);
    json_decref(req);
    free(error);

    if (!resp)
        return MHD_NO; /* out of MHD resources: drop the connection */
    enum MHD_Result ret = MHD_queue_response(conn, (unsigned)status, resp);
    MHD_destroy_response(resp);
    return ret;
}

enum MHD_Result server_handle(void *cls, struct MHD_Connection *conn, const char *url,
                              const char *method, const char *version,
                              const char *upload_data, size_t *upload_data_size,
                              void **con_cls)
{
    (void)version;
    req_state *st = *con_cls;
    if (!st) {
        *con_cls = xcalloc(1, sizeof *st);
        return MHD_YES;
    }
    if (*upload_data_size) {
        /* Keep reading past the limit (discarding) so the client gets a
         * proper 413 instead of a reset connection. */
        st->received += *upload_data_size;
        if (!st->too_large && st->body.len + *upload_data_size > MAX_BODY)
            st->too_large = true;
        if (!st->too_large)
            mbuf_add(&st->body, upload_data, *upload_data_size);
        *upload_data_size = 0;
        return MHD_YES;
    }
    return dispatch(cls, conn, url, method, st);
}

void server_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
                      enum MHD_RequestTerminationCode toe)
{
    (void)cls;
    (void)conn;
    (void)toe;
    req_state *st = *con_cls;
    if (!st)
        return;
    free(st->body.p);
    free(st);
    *con_cls = NULL;
}
