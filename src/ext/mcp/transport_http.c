/* transport_http.c — the Streamable HTTP transport (MCP 2025-03-26 and
 * later, as 2025-11-25 describes it): every message a POST to the one
 * endpoint, the reply JSON or an SSE stream, plus one long-lived GET stream
 * for what the server sends on its own.
 *
 * Owns the session state of one connection (Mcp-Session-Id, the negotiated
 * MCP-Protocol-Version, the expired flag), the worker thread of every
 * request in flight, the GET stream's thread, and the cancel flag that
 * close raises to abort them all.
 *
 * Why a thread per request: a tools/call may stream for minutes; send
 * must return at once so other calls (and the answers to the server's own
 * requests, which arrive on that stream) can go out meanwhile.
 * Notifications and responses are POSTed on the caller's thread: the server
 * answers them with 202 at once, their order is kept, and a refusal is
 * send's own error.
 *
 * A request whose POST fails (HTTP 4xx/5xx, refused connection, a stream
 * that ends for good before its response) gets a synthetic JSON-RPC error
 * response through on_message, so the waiting caller learns why at once
 * instead of at its timeout.
 *
 * on_closed is never called: each POST stands alone, so no single failure
 * ends the transport for good (a dead server fails each request instead).
 *
 * Threading: send from any thread; on_message is called from the workers
 * and the GET thread, one call at a time (deliver_mu), in the order each
 * stream carried them. close joins every thread before it frees.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "base/clock.h"
#include "base/log.h"
#include "base/str.h"
#include "ext/mcp/config.h"
#include "ext/mcp/jsonrpc.h"
#include "ext/mcp/transport.h"
#include "ext/mcp/transport_http_util.h"
#include "net/http.h"
#include "net/sse.h"

/* When the server names no `retry`, a resumption waits this long. */
#define RESUME_DEFAULT_MS 1000L
/* Failed reconnections in a row before a request's resumption gives up. */
#define RESUME_ATTEMPTS 5
/* The standalone GET stream's reconnect backoff. */
#define GET_BACKOFF_MIN_MS 1000L
#define GET_BACKOFF_MAX_MS 30000L
/* A stream may be silent this long while a tool works (the client's own
 * timeout is what ends a call). */
#define STREAM_IDLE_MS (6L * 3600 * 1000)
#define DELETE_TIMEOUT_MS 2000L

typedef struct post_job post_job;

typedef struct mcp_http {
    mcp_transport base; /* first: the ops see an mcp_transport */
    char *server;
    char *url;
    char *where;        /* url without query or userinfo, for messages */
    char **cfg_headers; /* "Name: value", NULL-terminated */
    long timeout_ms;
    loom_cancel cancel; /* raised by close: aborts every transfer */

    pthread_mutex_t mu; /* everything below */
    pthread_cond_t cv;  /* close wakes the sleepers */
    char *session_id;
    char *version;
    bool expired;
    bool closing;
    post_job *jobs;
    bool get_started;   /* get_thread is to be joined */
    bool get_done;      /* ... and has ended (a 404, 405): may start anew */
    pthread_t get_thread;

    /* One on_message at a time. Recursive: on_message may send, and a
     * send's reply may carry messages. */
    pthread_mutex_t deliver_mu;
} mcp_http;

/* One request in flight, on its own thread. */
struct post_job {
    mcp_http *h;
    char *text;
    size_t len;
    json_t *id;         /* the request's id (owned) */
    bool initialize;
    atomic_bool answered; /* its response arrived, on whichever stream */
    atomic_bool finished;
    pthread_t thread;
    post_job *next;
};

/* One response body being read: a POST's reply or a GET stream. */
typedef struct stream_rx {
    mcp_http *h;
    http_response *resp;
    post_job *job;      /* whose response we wait for (NULL: the GET stream) */
    bool capture_session;
    bool started, sse_mode;
    sse_parser *sse;
    loom_str body;      /* a JSON reply */
    bool too_big;
    char *last_id;      /* the stream's last event id (owned; carried over on resume) */
    long retry_ms;      /* the server's retry, -1 none */
    size_t events;
} stream_rx;

static const char *const capture[] = {"Mcp-Session-Id", NULL};

/* ---- delivery ---- */

/* Marks the job whose response this is. Cheap enough: one parse of a
 * message that the client parses again. */
static void note_response(mcp_http *h, const char *text, size_t len)
{
    json_t *doc = json_loadb(text, len, 0, NULL);
    json_t *id = json_is_object(doc) ? json_object_get(doc, "id") : NULL;
    if (id && !json_object_get(doc, "method") &&
        (json_object_get(doc, "result") || json_object_get(doc, "error"))) {
        pthread_mutex_lock(&h->mu);
        for (post_job *j = h->jobs; j; j = j->next)
            if (j->id && json_equal(j->id, id))
                atomic_store(&j->answered, true);
        pthread_mutex_unlock(&h->mu);
    }
    json_decref(doc);
}

static void deliver(mcp_http *h, const char *text, size_t len)
{
    if (len == 0)
        return;
    note_response(h, text, len);
    pthread_mutex_lock(&h->deliver_mu);
    if (h->base.ev.on_message)
        h->base.ev.on_message(h->base.ev.ctx, text, len);
    pthread_mutex_unlock(&h->deliver_mu);
}

/* The synthetic error response that ends a request the server cannot
 * answer. */
static void deliver_error(mcp_http *h, post_job *job, long status, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static void deliver_error(mcp_http *h, post_job *job, long status, const char *fmt, ...)
{
    if (!job || !job->id || atomic_load(&job->answered))
        return;
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    LOG_W("mcp", "%s", msg);
    json_t *data = status ? json_pack("{s:I}", "httpStatus", (json_int_t)status) : NULL;
    json_t *e = json_pack("{s:s,s:O,s:{s:i,s:s}}", "jsonrpc", "2.0", "id", job->id, "error",
                          "code", JSONRPC_INTERNAL_ERROR, "message", msg);
    if (e && data)
        json_object_set_new(json_object_get(e, "error"), "data", data);
    else
        json_decref(data);
    char *text = e ? json_dumps(e, JSON_COMPACT) : NULL;
    json_decref(e);
    if (text)
        deliver(h, text, strlen(text));
    free(text);
}

/* ---- reading a reply ---- */

static int on_event(void *ctx, const sse_event *ev)
{
    stream_rx *rx = ctx;
    rx->events++;
    /* A priming event (an id, no data) and other event types carry no
     * message. */
    if (ev->data_len && strcmp(ev->type, "message") == 0)
        deliver(rx->h, ev->data, ev->data_len);
    return 0;
}

static void take_session(stream_rx *rx)
{
    const char *sid = rx->resp->captured[0];
    if (!rx->capture_session || !sid || !*sid)
        return;
    rx->capture_session = false;
    if (!mcp_http_token_ok(sid)) {
        LOG_W("mcp", "MCP server \"%s\": ignoring a malformed Mcp-Session-Id", rx->h->server);
        return;
    }
    pthread_mutex_lock(&rx->h->mu);
    free(rx->h->session_id);
    rx->h->session_id = xstrdup(sid);
    pthread_mutex_unlock(&rx->h->mu);
}

static void rx_start(stream_rx *rx)
{
    rx->started = true;
    take_session(rx);
    const char *ct = rx->resp->content_type;
    if (ct && strncasecmp(ct, "text/event-stream", 17) == 0) {
        rx->sse_mode = true;
        rx->sse = sse_parser_new(on_event, rx);
    }
}

static void rx_track(stream_rx *rx)
{
    const char *id = sse_parser_last_id(rx->sse);
    if (*id && (!rx->last_id || strcmp(rx->last_id, id) != 0)) {
        free(rx->last_id);
        rx->last_id = xstrdup(id);
    }
    if (sse_parser_retry_ms(rx->sse) >= 0)
        rx->retry_ms = sse_parser_retry_ms(rx->sse);
}

static int on_body(void *ctx, const char *data, size_t len)
{
    stream_rx *rx = ctx;
    if (!rx->started)
        rx_start(rx);
    if (rx->sse_mode) {
        /* A line over the parser's cap stops it; an event of many lines is
         * capped here: a server cannot make us hold one without end. */
        if (sse_parser_feed(rx->sse, data, len) != 0 ||
            sse_parser_buffered(rx->sse) > JSONRPC_MAX_MESSAGE) {
            rx->too_big = true;
            return 1;
        }
        rx_track(rx);
        /* Its response arrived: nothing more to wait for on this stream. */
        return rx->job && atomic_load(&rx->job->answered) ? 1 : 0;
    }
    if (rx->body.len + len > JSONRPC_MAX_MESSAGE) {
        rx->too_big = true;
        return 1;
    }
    str_append(&rx->body, data, len);
    return 0;
}

/* The transfer ended with the whole body: flush what is buffered. */
static void rx_finish(stream_rx *rx)
{
    if (!rx->started)
        rx_start(rx);
    if (rx->sse_mode) {
        sse_parser_finish(rx->sse);
        rx_track(rx);
    } else if (rx->body.len) {
        deliver(rx->h, str_cstr(&rx->body), rx->body.len);
    }
}

static void rx_reset(stream_rx *rx)
{
    sse_parser_free(rx->sse);
    rx->sse = NULL;
    str_free(&rx->body);
    rx->started = rx->sse_mode = rx->too_big = false;
}

/* ---- one HTTP exchange ---- */

typedef struct exchange {
    const char *method;
    const char *body;
    size_t len;
    const char *last_event_id;
    long total_ms;
    bool no_cancel;     /* the DELETE of close, after the flag was raised */
    bool no_session;    /* initialize: it starts a session, it never joins one */
    bool sent_session;  /* out: a session id went with it */
} exchange;

static int perform(mcp_http *h, exchange *x, stream_rx *rx, http_response *resp, loom_error *err)
{
    loom_str lines[6];
    const char *hdrs[6 + 64];
    size_t n = 0, nl = 0;
    memset(lines, 0, sizeof lines);
    if (x->body) {
        hdrs[n++] = "Content-Type: application/json";
        hdrs[n++] = "Accept: application/json, text/event-stream";
    } else if (strcmp(x->method, "GET") == 0) {
        hdrs[n++] = "Accept: text/event-stream";
    }
    pthread_mutex_lock(&h->mu);
    if (h->version)
        str_printf(&lines[nl++], "MCP-Protocol-Version: %s", h->version);
    x->sent_session = h->session_id != NULL && !x->no_session;
    if (x->sent_session)
        str_printf(&lines[nl++], "Mcp-Session-Id: %s", h->session_id);
    pthread_mutex_unlock(&h->mu);
    if (x->last_event_id && mcp_http_token_ok(x->last_event_id))
        str_printf(&lines[nl++], "Last-Event-ID: %s", x->last_event_id);
    for (size_t i = 0; i < nl; i++)
        hdrs[n++] = str_cstr(&lines[i]);
    for (char **c = h->cfg_headers; c && *c && n < sizeof hdrs / sizeof *hdrs - 1; c++)
        hdrs[n++] = *c;
    hdrs[n] = NULL;

    http_request req = {
        .method = x->method,
        .url = h->url,
        .headers = hdrs,
        .body = x->body,
        .body_len = x->len,
        .idle_timeout_ms = STREAM_IDLE_MS,
        .total_timeout_ms = x->total_ms,
        .cancel = x->no_cancel ? NULL : &h->cancel,
        .capture_headers = capture,
    };
    if (rx)
        rx->resp = resp;
    int rc = http_perform(&req, rx ? on_body : NULL, rx, resp, err);
    for (size_t i = 0; i < nl; i++)
        str_free(&lines[i]);
    return rc;
}

static bool closing(mcp_http *h)
{
    pthread_mutex_lock(&h->mu);
    bool c = h->closing;
    pthread_mutex_unlock(&h->mu);
    return c;
}

/* Sleeps ms unless close comes first; false when it did. */
static bool pause_unless_closing(mcp_http *h, long ms)
{
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += ms / 1000;
    until.tv_nsec += (ms % 1000) * 1000000L;
    if (until.tv_nsec >= 1000000000L) {
        until.tv_sec++;
        until.tv_nsec -= 1000000000L;
    }
    pthread_mutex_lock(&h->mu);
    while (!h->closing && pthread_cond_timedwait(&h->cv, &h->mu, &until) != ETIMEDOUT)
        ;
    bool ok = !h->closing;
    pthread_mutex_unlock(&h->mu);
    return ok;
}

/* A 404 for the session we sent: the server forgot it. */
static void session_gone(mcp_http *h)
{
    pthread_mutex_lock(&h->mu);
    free(h->session_id);
    h->session_id = NULL;
    h->expired = true;
    pthread_mutex_unlock(&h->mu);
}

/* Whether a refusal of a request that carried our session id says the
 * server no longer knows it: the spec's 404, or the 400 "No valid session
 * ID provided" that servers built on the TypeScript SDK's examples send
 * (server-everything among them) for an id they do not have. */
static bool session_refused(const http_response *resp, bool sent_session)
{
    if (!sent_session)
        return false;
    if (resp->status == 404)
        return true;
    if (resp->status != 400)
        return false;
    for (const char *b = str_cstr(&resp->error_body); *b; b++)
        if (!strncasecmp(b, "session", 7))
            return true;
    return false;
}

/* "HTTP 500 from URL: first line of the body". */
static void status_text(mcp_http *h, const http_response *resp, char *out, size_t cap)
{
    char snippet[240];
    mcp_http_snippet(str_cstr(&resp->error_body), snippet, sizeof snippet);
    snprintf(out, cap, "HTTP %ld from %s%s%s", resp->status, h->where, *snippet ? ": " : "",
             snippet);
}

/* ---- a request's worker ---- */

/* The stream of job's reply ended before its response: resume with GET and
 * Last-Event-ID after the server's retry delay (the response may come on the
 * resumed stream). A server that polls (closes the stream now and then while
 * the tool works) may do so any number of times, until the request's own cap
 * (the configured timeout, else MCP_DEFAULT_CALL_TIMEOUT_MS) has passed;
 * RESUME_ATTEMPTS failed connections in a row, or a refusal, end it sooner. */
static void resume(mcp_http *h, post_job *job, stream_rx *rx, int64_t started_ms)
{
    long cap = h->timeout_ms > 0 ? h->timeout_ms : MCP_DEFAULT_CALL_TIMEOUT_MS;
    int failures = 0;
    char last_why[sizeof ((loom_error *)0)->message] = "";
    while (failures < RESUME_ATTEMPTS && clock_mono_ms() - started_ms < cap) {
        if (atomic_load(&job->answered))
            return;
        if (!pause_unless_closing(h, rx->retry_ms >= 0 ? rx->retry_ms : RESUME_DEFAULT_MS))
            return;
        if (atomic_load(&job->answered))
            return;
        exchange x = {.method = "GET", .last_event_id = rx->last_id};
        http_response resp;
        loom_error err;
        rx_reset(rx);
        int rc = perform(h, &x, rx, &resp, &err);
        bool ok_status = resp.status >= 200 && resp.status < 300;
        if (rc == 0 && ok_status)
            rx_finish(rx);
        bool done = atomic_load(&job->answered) || closing(h);
        if (!done && rx->too_big) {
            deliver_error(h, job, 0,
                          "MCP server \"%s\": an event on the reply stream from %s is over the "
                          "%u-byte message cap",
                          h->server, h->where, JSONRPC_MAX_MESSAGE);
            done = true;
        } else if (!done && rc == 0 && !ok_status) {
            if (resp.status == 404 && x.sent_session)
                session_gone(h);
            char why[512];
            status_text(h, &resp, why, sizeof why);
            deliver_error(h, job, resp.status,
                          "MCP server \"%s\": resuming the reply stream failed: %s", h->server,
                          why);
            done = true;
        }
        if (rc != 0 && !(rx->started && ok_status)) {
            failures++;
            snprintf(last_why, sizeof last_why, "%s", err.message);
        } else {
            failures = 0;
        }
        http_response_free(&resp);
        if (done)
            return;
    }
    if (failures)
        deliver_error(h, job, 0, "MCP server \"%s\": resuming the reply stream failed: %s",
                      h->server, last_why);
    else
        deliver_error(h, job, 0,
                      "MCP server \"%s\": no response on the reply stream from %s within %ld ms",
                      h->server, h->where, cap);
}

static void *post_main(void *arg)
{
    post_job *job = arg;
    mcp_http *h = job->h;
    int64_t started_ms = clock_mono_ms();
    stream_rx rx = {.h = h, .job = job, .capture_session = job->initialize, .retry_ms = -1};
    exchange x = {.method = "POST", .body = job->text, .len = job->len, .total_ms = h->timeout_ms,
                  .no_session = job->initialize};
    http_response resp;
    loom_error err;
    int rc = perform(h, &x, &rx, &resp, &err);
    bool ok_status = resp.status >= 200 && resp.status < 300;
    if (rc == 0 && ok_status)
        rx_finish(&rx);
    if (closing(h) || atomic_load(&job->answered)) {
        /* close aborted it, or the response came and we stopped reading */
    } else if (rx.too_big) {
        deliver_error(h, job, resp.status,
                      "MCP server \"%s\": the reply from %s is over the %u-byte message cap",
                      h->server, h->where, JSONRPC_MAX_MESSAGE);
    } else if (rc == 0 && !ok_status) {
        bool gone = session_refused(&resp, x.sent_session);
        if (gone)
            session_gone(h);
        char why[512];
        status_text(h, &resp, why, sizeof why);
        deliver_error(h, job, resp.status, "MCP server \"%s\": %s%s", h->server, why,
                      gone ? " (the session expired)" : "");
    } else if (rx.sse_mode && rx.last_id) {
        /* The stream ended (cleanly or not) before the response. */
        resume(h, job, &rx, started_ms);
    } else if (rc != 0) {
        deliver_error(h, job, resp.status, "MCP server \"%s\": %s", h->server, err.message);
    } else if (rx.sse_mode) {
        deliver_error(h, job, resp.status,
                      "MCP server \"%s\": the reply stream from %s ended before the response "
                      "(and named no event id to resume from)",
                      h->server, h->where);
    }
    /* A 202 to a request: the response will come on the GET stream. */
    http_response_free(&resp);
    rx_reset(&rx);
    free(rx.last_id);
    pthread_mutex_lock(&h->mu);
    atomic_store(&job->finished, true);
    pthread_mutex_unlock(&h->mu);
    return NULL;
}

/* ---- the standalone GET stream ---- */

static void *get_main(void *arg)
{
    mcp_http *h = arg;
    stream_rx rx = {.h = h, .retry_ms = -1};
    long backoff = GET_BACKOFF_MIN_MS;
    while (!closing(h)) {
        exchange x = {.method = "GET", .last_event_id = rx.last_id};
        http_response resp;
        loom_error err;
        rx_reset(&rx);
        size_t before = rx.events;
        int rc = perform(h, &x, &rx, &resp, &err);
        long status = resp.status;
        if (rc == 0 && status >= 200 && status < 300)
            rx_finish(&rx);
        http_response_free(&resp);
        if (closing(h))
            break;
        if (rc == 0 && status == 404 && x.sent_session) {
            session_gone(h);
            break;
        }
        /* 405 is how a server says it offers no such stream; any other 4xx
         * is a refusal too, which asking again would not change. */
        if (rc == 0 && status >= 400 && status < 500) {
            LOG_D("mcp", "MCP server \"%s\" offers no GET stream (HTTP %ld)", h->server, status);
            break;
        }
        if (rc == 0 && (status < 200 || status >= 300))
            LOG_W("mcp", "MCP server \"%s\": GET stream: HTTP %ld from %s", h->server, status,
                  h->where);
        else if (rc != 0)
            LOG_D("mcp", "MCP server \"%s\": GET stream: %s", h->server, err.message);
        long wait = backoff;
        if (rx.events > before) {
            backoff = GET_BACKOFF_MIN_MS; /* it worked for a while: start over */
            wait = rx.retry_ms >= 0 ? rx.retry_ms : backoff;
        } else {
            backoff = backoff * 2 > GET_BACKOFF_MAX_MS ? GET_BACKOFF_MAX_MS : backoff * 2;
        }
        if (!pause_unless_closing(h, wait))
            break;
    }
    rx_reset(&rx);
    free(rx.last_id);
    pthread_mutex_lock(&h->mu);
    h->get_done = true;
    pthread_mutex_unlock(&h->mu);
    return NULL;
}

/* Starts the GET stream, again if an earlier one ended (the session
 * expired and a new one began). */
static void start_get_stream(mcp_http *h)
{
    pthread_mutex_lock(&h->mu);
    if (h->get_started && h->get_done) {
        pthread_join(h->get_thread, NULL); /* it has ended: at once */
        h->get_started = false;
    }
    if (!h->get_started && !h->closing &&
        pthread_create(&h->get_thread, NULL, get_main, h) == 0) {
        h->get_started = true;
        h->get_done = false;
    }
    pthread_mutex_unlock(&h->mu);
}

/* ---- ops ---- */

/* Joins and frees the workers that are done (all of them when all). */
static void reap(mcp_http *h, bool all)
{
    for (;;) {
        post_job *victim = NULL;
        pthread_mutex_lock(&h->mu);
        for (post_job **pp = &h->jobs; *pp; pp = &(*pp)->next) {
            if (all || atomic_load(&(*pp)->finished)) {
                victim = *pp;
                *pp = victim->next;
                break;
            }
        }
        pthread_mutex_unlock(&h->mu);
        if (!victim)
            return;
        pthread_join(victim->thread, NULL);
        json_decref(victim->id);
        free(victim->text);
        free(victim);
    }
}

static bool has_session(mcp_http *h)
{
    pthread_mutex_lock(&h->mu);
    bool has = h->session_id != NULL;
    pthread_mutex_unlock(&h->mu);
    return has;
}

/* A notification or a response: POSTed here, 202 expected. */
static int send_now(mcp_http *h, const char *text, size_t len, bool initialized, loom_error *err)
{
    stream_rx rx = {.h = h, .retry_ms = -1};
    exchange x = {.method = "POST", .body = text, .len = len, .total_ms = h->timeout_ms};
    http_response resp;
    int rc = perform(h, &x, &rx, &resp, err);
    if (rc == 0 && resp.status >= 200 && resp.status < 300) {
        rx_finish(&rx); /* a server may answer with messages even here */
        /* The standalone stream belongs to a session; a server that keeps
         * none (stateless) has nothing to say outside a request. */
        if (initialized && has_session(h))
            start_get_stream(h);
    } else if (rc == 0) {
        if (resp.status == 404 && x.sent_session)
            session_gone(h);
        char why[512];
        status_text(h, &resp, why, sizeof why);
        rc = loom_error_set(err, LOOM_ERR_TOOL_EXECUTION_FAILED, "MCP server \"%s\": %s",
                            h->server, why);
        err->http_status = (int)resp.status;
    } else {
        loom_error_prefix(err, "MCP server \"%s\"", h->server);
    }
    http_response_free(&resp);
    rx_reset(&rx);
    free(rx.last_id);
    return rc;
}

static int http_send(mcp_transport *t, const char *text, size_t len, loom_error *err)
{
    mcp_http *h = (mcp_http *)t;
    if (closing(h))
        return loom_error_set(err, LOOM_ERR_TOOL_EXECUTION_FAILED,
                              "MCP server \"%s\": the connection is closed", h->server);
    reap(h, false);
    json_t *doc = json_loadb(text, len, 0, NULL);
    const char *method = json_string_value(json_object_get(doc, "method"));
    json_t *id = json_object_get(doc, "id");
    if (!method || !id || json_is_null(id)) {
        bool initialized = method && strcmp(method, "notifications/initialized") == 0;
        json_decref(doc);
        return send_now(h, text, len, initialized, err);
    }
    post_job *job = xcalloc(1, sizeof *job);
    job->h = h;
    job->text = xstrndup(text, len);
    job->len = len;
    job->id = json_incref(id);
    job->initialize = strcmp(method, "initialize") == 0;
    json_decref(doc);
    pthread_mutex_lock(&h->mu);
    if (pthread_create(&job->thread, NULL, post_main, job) != 0) {
        pthread_mutex_unlock(&h->mu);
        json_decref(job->id);
        free(job->text);
        free(job);
        return loom_error_set(err, LOOM_ERR_INTERNAL, "MCP server \"%s\": cannot start a thread",
                              h->server);
    }
    job->next = h->jobs;
    h->jobs = job;
    pthread_mutex_unlock(&h->mu);
    return 0;
}

static void http_close(mcp_transport *t)
{
    mcp_http *h = (mcp_http *)t;
    pthread_mutex_lock(&h->mu);
    h->closing = true;
    pthread_cond_broadcast(&h->cv);
    bool get = h->get_started;
    pthread_mutex_unlock(&h->mu);
    atomic_store(&h->cancel, CANCEL_RUN);
    if (get)
        pthread_join(h->get_thread, NULL);
    reap(h, true);
    if (h->session_id) {
        /* Ends the session on the server; 405 (it does not let clients) and
         * every failure are fine: we are leaving anyway. */
        exchange x = {.method = "DELETE", .total_ms = DELETE_TIMEOUT_MS, .no_cancel = true};
        http_response resp;
        perform(h, &x, NULL, &resp, NULL);
        http_response_free(&resp);
    }
    mcp_http_free_lines(h->cfg_headers);
    free(h->session_id);
    free(h->version);
    free(h->server);
    free(h->url);
    free(h->where);
    pthread_mutex_destroy(&h->mu);
    pthread_mutex_destroy(&h->deliver_mu);
    pthread_cond_destroy(&h->cv);
    free(h);
}

static pid_t http_pid(const mcp_transport *t)
{
    (void)t;
    return 0;
}

static void http_set_version(mcp_transport *t, const char *version)
{
    mcp_http *h = (mcp_http *)t;
    pthread_mutex_lock(&h->mu);
    free(h->version);
    h->version = version && mcp_http_token_ok(version) ? xstrdup(version) : NULL;
    pthread_mutex_unlock(&h->mu);
}

static bool http_session_expired(mcp_transport *t)
{
    mcp_http *h = (mcp_http *)t;
    pthread_mutex_lock(&h->mu);
    bool e = h->expired;
    h->expired = false;
    pthread_mutex_unlock(&h->mu);
    return e;
}

static const mcp_transport_ops http_ops = {
    .kind = "http",
    .send = http_send,
    .close = http_close,
    .pid = http_pid,
    .set_protocol_version = http_set_version,
    .session_expired = http_session_expired,
};

/* The headers we set ourselves are not the configuration's to override. */
static const char *const reserved[] = {"content-type",   "accept",        "mcp-session-id",
                                       "mcp-protocol-version", "last-event-id", NULL};

mcp_transport *mcp_http_open(const char *server, const mcp_http_spec *spec,
                             const mcp_transport_events *ev, loom_error *err)
{
    if (!spec || !spec->url || !mcp_http_url_ok(spec->url)) {
        loom_error_set(err, LOOM_ERR_CONFIG, "MCP server \"%s\": the url must be http:// or https://",
                       server);
        return NULL;
    }
    char **hdrs = NULL;
    if (mcp_http_config_headers(server, spec->headers, reserved, &hdrs, err) != 0)
        return NULL;
    mcp_http *h = xcalloc(1, sizeof *h);
    h->base.ops = &http_ops;
    if (ev)
        h->base.ev = *ev;
    h->server = xstrdup(server);
    h->url = xstrdup(spec->url);
    h->where = mcp_http_where(spec->url);
    h->cfg_headers = hdrs;
    h->timeout_ms = spec->timeout_ms > 0 ? spec->timeout_ms : 0;
    atomic_init(&h->cancel, CANCEL_NONE);
    pthread_mutex_init(&h->mu, NULL);
    pthread_mutexattr_t attr;
    pthread_mutexattr_init(&attr);
    pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_RECURSIVE);
    pthread_mutex_init(&h->deliver_mu, &attr);
    pthread_mutexattr_destroy(&attr);
    pthread_cond_init(&h->cv, NULL);
    return &h->base;
}
