/* transport_sse.c — the legacy HTTP+SSE transport of MCP 2024-11-05: one
 * long GET stream carries everything the server sends; its first event,
 * `endpoint`, names the URL every message of ours is POSTed to.
 *
 * Owns the stream's reader thread, the endpoint URL it learned, and the
 * cancel flag that close raises to end the stream. The endpoint must be on
 * the SSE URL's origin: a server that could point our POSTs (with the
 * configured headers, often a key) at another host is refused.
 *
 * This transport has no resumption: the server ties its session to the
 * stream, so a stream that ends is the end of the connection (on_closed).
 *
 * Threading: send from any thread (each POST is synchronous: the server
 * answers 202 at once and the reply comes on the stream); on_message and
 * on_closed run on the reader thread. close joins it before it frees.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/log.h"
#include "base/str.h"
#include "ext/mcp/config.h"
#include "ext/mcp/jsonrpc.h"
#include "ext/mcp/transport.h"
#include "ext/mcp/transport_http_util.h"
#include "net/http.h"
#include "net/sse.h"

#define SSE_IDLE_MS (6L * 3600 * 1000)

typedef struct mcp_sse {
    mcp_transport base; /* first: the ops see an mcp_transport */
    char *server;
    char *url;
    char *where;
    char **cfg_headers;
    long timeout_ms;
    loom_cancel cancel;

    pthread_mutex_t mu; /* everything below */
    pthread_cond_t cv;  /* the endpoint arrived, or the stream ended */
    char *endpoint;     /* resolved; NULL until the event came */
    char *refused;      /* why the reader itself ended the stream (a bad endpoint, an oversized event) */
    bool ended;
    char *why;          /* how the stream ended */
    bool closing;
    pthread_t thread;

    sse_parser *sse;    /* the reader thread's */
} mcp_sse;

static int on_event(void *ctx, const sse_event *ev)
{
    mcp_sse *s = ctx;
    if (strcmp(ev->type, "endpoint") == 0) {
        pthread_mutex_lock(&s->mu);
        bool have = s->endpoint != NULL;
        pthread_mutex_unlock(&s->mu);
        if (have)
            return 0; /* only the first one counts */
        char *url = mcp_http_resolve_endpoint(s->url, ev->data);
        pthread_mutex_lock(&s->mu);
        if (url) {
            s->endpoint = url;
        } else {
            loom_str w = LOOM_STR_INIT;
            str_printf(&w, "the endpoint event names \"%.200s\", which is not on %s's origin",
                       ev->data, s->where);
            s->refused = str_steal(&w);
        }
        pthread_cond_broadcast(&s->cv);
        pthread_mutex_unlock(&s->mu);
        return url ? 0 : 1;
    }
    if (ev->data_len && strcmp(ev->type, "message") == 0 && s->base.ev.on_message)
        s->base.ev.on_message(s->base.ev.ctx, ev->data, ev->data_len);
    return 0;
}

static int on_body(void *ctx, const char *data, size_t len)
{
    mcp_sse *s = ctx;
    if (sse_parser_feed(s->sse, data, len) != 0)
        return 1;
    /* One event may not grow without end (a line over the parser's own cap
     * stops it above). */
    if (sse_parser_buffered(s->sse) > JSONRPC_MAX_MESSAGE) {
        pthread_mutex_lock(&s->mu);
        if (!s->refused)
            s->refused = xstrdup("an event on the stream is over the message size cap");
        pthread_mutex_unlock(&s->mu);
        return 1;
    }
    return 0;
}

static void *reader_main(void *arg)
{
    mcp_sse *s = arg;
    const char *hdrs[64 + 2];
    size_t n = 0;
    hdrs[n++] = "Accept: text/event-stream";
    for (char **c = s->cfg_headers; c && *c && n < sizeof hdrs / sizeof *hdrs - 1; c++)
        hdrs[n++] = *c;
    hdrs[n] = NULL;
    http_request req = {.method = "GET", .url = s->url, .headers = hdrs,
                        .idle_timeout_ms = SSE_IDLE_MS, .cancel = &s->cancel};
    http_response resp;
    loom_error err;
    s->sse = sse_parser_new(on_event, s);
    int rc = http_perform(&req, on_body, s, &resp, &err);
    if (rc == 0 && resp.status >= 200 && resp.status < 300)
        sse_parser_finish(s->sse);

    loom_str why = LOOM_STR_INIT;
    if (rc == 0 && (resp.status < 200 || resp.status >= 300)) {
        char snippet[240];
        mcp_http_snippet(str_cstr(&resp.error_body), snippet, sizeof snippet);
        str_printf(&why, "MCP server \"%s\": HTTP %ld from %s%s%s", s->server, resp.status,
                   s->where, *snippet ? ": " : "", snippet);
    } else if (s->refused) {
        str_printf(&why, "MCP server \"%s\": %s", s->server, s->refused);
    } else if (rc != 0) {
        str_printf(&why, "MCP server \"%s\": %s", s->server, err.message);
    } else {
        str_printf(&why, "MCP server \"%s\": the SSE stream from %s ended", s->server, s->where);
    }
    http_response_free(&resp);
    pthread_mutex_lock(&s->mu);
    bool live = s->endpoint != NULL && !s->closing;
    s->ended = true;
    s->why = str_steal(&why);
    pthread_cond_broadcast(&s->cv);
    pthread_mutex_unlock(&s->mu);
    /* Before the endpoint came, open reports it; after, the owner learns. */
    if (live && s->base.ev.on_closed)
        s->base.ev.on_closed(s->base.ev.ctx, s->why);
    return NULL;
}

static int sse_send(mcp_transport *t, const char *text, size_t len, loom_error *err)
{
    mcp_sse *s = (mcp_sse *)t;
    pthread_mutex_lock(&s->mu);
    char *endpoint = s->ended || s->closing ? NULL : xstrdup(s->endpoint);
    pthread_mutex_unlock(&s->mu);
    if (!endpoint)
        return loom_error_set(err, LOOM_ERR_TOOL_EXECUTION_FAILED,
                              "MCP server \"%s\": the connection is closed", s->server);
    const char *hdrs[64 + 3];
    size_t n = 0;
    hdrs[n++] = "Content-Type: application/json";
    for (char **c = s->cfg_headers; c && *c && n < sizeof hdrs / sizeof *hdrs - 1; c++)
        hdrs[n++] = *c;
    hdrs[n] = NULL;
    http_request req = {.method = "POST", .url = endpoint, .headers = hdrs, .body = text,
                        .body_len = len, .total_timeout_ms = s->timeout_ms,
                        .cancel = &s->cancel};
    http_response resp;
    int rc = http_perform(&req, NULL, NULL, &resp, err);
    if (rc == 0 && (resp.status < 200 || resp.status >= 300)) {
        char snippet[240];
        char *where = mcp_http_where(endpoint);
        mcp_http_snippet(str_cstr(&resp.error_body), snippet, sizeof snippet);
        rc = loom_error_set(err, LOOM_ERR_TOOL_EXECUTION_FAILED, "MCP server \"%s\": HTTP %ld from %s%s%s",
                            s->server, resp.status, where, *snippet ? ": " : "", snippet);
        err->http_status = (int)resp.status;
        free(where);
    } else if (rc != 0) {
        loom_error_prefix(err, "MCP server \"%s\"", s->server);
    }
    http_response_free(&resp);
    free(endpoint);
    return rc;
}

static void sse_close(mcp_transport *t)
{
    mcp_sse *s = (mcp_sse *)t;
    pthread_mutex_lock(&s->mu);
    s->closing = true;
    pthread_mutex_unlock(&s->mu);
    atomic_store(&s->cancel, CANCEL_RUN);
    pthread_join(s->thread, NULL);
    sse_parser_free(s->sse);
    mcp_http_free_lines(s->cfg_headers);
    free(s->endpoint);
    free(s->refused);
    free(s->why);
    free(s->server);
    free(s->url);
    free(s->where);
    pthread_mutex_destroy(&s->mu);
    pthread_cond_destroy(&s->cv);
    free(s);
}

static pid_t sse_pid(const mcp_transport *t)
{
    (void)t;
    return 0;
}

static const mcp_transport_ops sse_ops = {
    .kind = "sse",
    .send = sse_send,
    .close = sse_close,
    .pid = sse_pid,
};

static const char *const reserved[] = {"content-type", "accept", NULL};

mcp_transport *mcp_sse_open(const char *server, const mcp_http_spec *spec,
                            const mcp_transport_events *ev, loom_error *err)
{
    if (!spec || !spec->url || !mcp_http_url_ok(spec->url)) {
        loom_error_set(err, LOOM_ERR_CONFIG,
                       "MCP server \"%s\": the url must be http:// or https://", server);
        return NULL;
    }
    char **hdrs = NULL;
    if (mcp_http_config_headers(server, spec->headers, reserved, &hdrs, err) != 0)
        return NULL;
    mcp_sse *s = xcalloc(1, sizeof *s);
    s->base.ops = &sse_ops;
    if (ev)
        s->base.ev = *ev;
    s->server = xstrdup(server);
    s->url = xstrdup(spec->url);
    s->where = mcp_http_where(spec->url);
    s->cfg_headers = hdrs;
    s->timeout_ms = spec->timeout_ms > 0 ? spec->timeout_ms : 0;
    atomic_init(&s->cancel, CANCEL_NONE);
    pthread_mutex_init(&s->mu, NULL);
    pthread_cond_init(&s->cv, NULL);
    if (pthread_create(&s->thread, NULL, reader_main, s) != 0) {
        loom_error_set(err, LOOM_ERR_INTERNAL, "MCP server \"%s\": cannot start a thread", server);
        mcp_http_free_lines(hdrs);
        free(s->server);
        free(s->url);
        free(s->where);
        free(s);
        return NULL;
    }

    long wait_ms = s->timeout_ms > 0 ? s->timeout_ms : MCP_DEFAULT_CONNECT_TIMEOUT_MS;
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += wait_ms / 1000;
    until.tv_nsec += (wait_ms % 1000) * 1000000L;
    if (until.tv_nsec >= 1000000000L) {
        until.tv_sec++;
        until.tv_nsec -= 1000000000L;
    }
    pthread_mutex_lock(&s->mu);
    int wrc = 0;
    while (!s->endpoint && !s->ended && wrc != ETIMEDOUT)
        wrc = pthread_cond_timedwait(&s->cv, &s->mu, &until);
    bool ok = s->endpoint != NULL;
    if (!ok) {
        if (s->ended)
            loom_error_set(err, LOOM_ERR_TOOL_EXECUTION_FAILED, "%s", s->why);
        else if (s->refused)
            loom_error_set(err, LOOM_ERR_TOOL_EXECUTION_FAILED, "MCP server \"%s\": %s", server,
                           s->refused);
        else
            loom_error_set(err, LOOM_ERR_TOOL_EXECUTION_FAILED,
                           "MCP server \"%s\": %s sent no endpoint event within %ld ms", server,
                           s->where, wait_ms);
    }
    pthread_mutex_unlock(&s->mu);
    if (!ok) {
        sse_close(&s->base);
        return NULL;
    }
    return &s->base;
}
