/* http.c — the Streamable HTTP transport (MCP 2025-06-18/2025-11-25,
 * "Transports"): one endpoint, /mcp. POST carries one message: a
 * notification or response is answered 202, a request with application/json,
 * or — tools/call, which may send progress first — with a text/event-stream
 * whose last event is the answer. initialize opens a session (the
 * Mcp-Session-Id response header; every later request carries it, 404 once
 * it is gone), DELETE ends one, GET (a server-to-client stream) is 405.
 * Bound to loopback only unless a token is configured; without one, the
 * Host and Origin headers must name loopback (DNS rebinding), with one,
 * every request needs "Authorization: Bearer TOKEN". One thread per
 * connection (libmicrohttpd), so a stream's reader may block. */
#include "surfaces/mcp_server/mcps.h"

#include <arpa/inet.h>
#include <errno.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "base/json.h"
#include "base/str.h"

#define MAX_BODY (8u << 20)

/* ---- sessions -------------------------------------------------------------- */

typedef struct sess {
    mcps_conn *conn;
    struct sess *next;
} sess;

static pthread_mutex_t sess_lock = PTHREAD_MUTEX_INITIALIZER;
static sess *sessions;

static mcps_conn *sess_find(const char *id)
{
    mcps_conn *c = NULL;
    pthread_mutex_lock(&sess_lock);
    for (sess *s = sessions; s && !c; s = s->next)
        if (!strcmp(mcps_conn_id(s->conn), id))
            c = s->conn;
    if (c)
        mcps_conn_retain(c);
    pthread_mutex_unlock(&sess_lock);
    return c;
}

static void sess_add(mcps_conn *c)
{
    sess *s = xcalloc(1, sizeof *s);
    mcps_conn_retain(c);
    s->conn = c;
    pthread_mutex_lock(&sess_lock);
    s->next = sessions;
    sessions = s;
    pthread_mutex_unlock(&sess_lock);
}

/* Takes the session out of the table; the table's reference is returned. */
static mcps_conn *sess_remove(const char *id)
{
    mcps_conn *c = NULL;
    pthread_mutex_lock(&sess_lock);
    for (sess **p = &sessions; *p; p = &(*p)->next)
        if (!strcmp(mcps_conn_id((*p)->conn), id)) {
            sess *s = *p;
            *p = s->next;
            c = s->conn;
            free(s);
            break;
        }
    pthread_mutex_unlock(&sess_lock);
    return c;
}

/* ---- a response's messages ------------------------------------------------ */

typedef struct msgq {
    char *text;
    struct msgq *next;
} msgq;

typedef struct stream {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    int refs;
    msgq *head, *tail;
    size_t n;
    bool done;       /* the final message is queued */
    bool gone;       /* the client went away */
    loom_str out;    /* SSE bytes not yet handed to the connection */
    size_t off;
} stream;

static stream *stream_new(void)
{
    stream *s = xcalloc(1, sizeof *s);
    pthread_mutex_init(&s->lock, NULL);
    pthread_cond_init(&s->cond, NULL);
    s->refs = 1;
    return s;
}

static void stream_retain(void *ctx)
{
    stream *s = ctx;
    pthread_mutex_lock(&s->lock);
    s->refs++;
    pthread_mutex_unlock(&s->lock);
}

static void stream_release(void *ctx)
{
    stream *s = ctx;
    pthread_mutex_lock(&s->lock);
    int left = --s->refs;
    pthread_mutex_unlock(&s->lock);
    if (left)
        return;
    for (msgq *q = s->head, *nx; q; q = nx) {
        nx = q->next;
        free(q->text);
        free(q);
    }
    str_free(&s->out);
    pthread_mutex_destroy(&s->lock);
    pthread_cond_destroy(&s->cond);
    free(s);
}

static void stream_send(void *ctx, json_t *msg, bool final)
{
    stream *s = ctx;
    char *text = msg ? json_dump_compact(msg) : NULL;
    json_decref(msg);
    pthread_mutex_lock(&s->lock);
    if (text && !s->gone && !s->done) {
        msgq *q = xcalloc(1, sizeof *q);
        q->text = text;
        text = NULL;
        if (s->tail)
            s->tail->next = q;
        else
            s->head = q;
        s->tail = q;
        s->n++;
    }
    if (final)
        s->done = true;
    pthread_cond_broadcast(&s->cond);
    pthread_mutex_unlock(&s->lock);
    free(text);
}

static char *stream_pop(stream *s)
{
    msgq *q = s->head;
    if (!q)
        return NULL;
    s->head = q->next;
    if (!s->head)
        s->tail = NULL;
    s->n--;
    char *t = q->text;
    free(q);
    return t;
}

static ssize_t sse_read(void *cls, uint64_t pos, char *buf, size_t max)
{
    (void)pos;
    stream *s = cls;
    pthread_mutex_lock(&s->lock);
    while (s->off >= s->out.len) {
        str_clear(&s->out);
        s->off = 0;
        char *t = stream_pop(s);
        if (t) {
            str_printf(&s->out, "event: message\ndata: %s\n\n", t);
            free(t);
            break;
        }
        if (s->done) {
            pthread_mutex_unlock(&s->lock);
            return MHD_CONTENT_READER_END_OF_STREAM;
        }
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_sec += 15;
        if (pthread_cond_timedwait(&s->cond, &s->lock, &until) == ETIMEDOUT &&
            !s->head && !s->done) {
            str_puts(&s->out, ": keep-alive\n\n");
            break;
        }
    }
    size_t n = s->out.len - s->off;
    if (n > max)
        n = max;
    memcpy(buf, s->out.ptr + s->off, n);
    s->off += n;
    pthread_mutex_unlock(&s->lock);
    return (ssize_t)n;
}

static void sse_free(void *cls)
{
    stream *s = cls;
    pthread_mutex_lock(&s->lock);
    s->gone = true;
    pthread_mutex_unlock(&s->lock);
    stream_release(s);
}

/* ---- requests ------------------------------------------------------------- */

typedef struct req {
    loom_str body;
    bool too_big;
} req;

static const mcps_http_options *hopts;

static enum MHD_Result send_text(struct MHD_Connection *conn, unsigned status, const char *type,
                                 const char *text, const char *session)
{
    struct MHD_Response *r = MHD_create_response_from_buffer(strlen(text), (void *)text,
                                                             MHD_RESPMEM_MUST_COPY);
    if (type)
        MHD_add_response_header(r, "Content-Type", type);
    if (session)
        MHD_add_response_header(r, "Mcp-Session-Id", session);
    if (status == MHD_HTTP_METHOD_NOT_ALLOWED)
        MHD_add_response_header(r, "Allow", "POST, DELETE");
    if (status == MHD_HTTP_UNAUTHORIZED)
        MHD_add_response_header(r, "WWW-Authenticate", "Bearer");
    enum MHD_Result rc = MHD_queue_response(conn, status, r);
    MHD_destroy_response(r);
    return rc;
}

/* An HTTP error with a JSON-RPC error body. */
static enum MHD_Result send_error(struct MHD_Connection *conn, unsigned status, int code,
                                  const char *message)
{
    json_t *m = json_pack("{s:s,s:n,s:{s:i,s:s}}", "jsonrpc", "2.0", "id", "error", "code",
                          code, "message", message);
    char *t = json_dump_compact(m);
    json_decref(m);
    enum MHD_Result rc = send_text(conn, status, "application/json", t ? t : "{}", NULL);
    free(t);
    return rc;
}

static bool loopback_host(const char *h, size_t n)
{
    static const char *const names[] = {"localhost", "127.0.0.1", "[::1]", NULL};
    for (size_t i = 0; names[i]; i++) {
        size_t k = strlen(names[i]);
        if (n == k && !strncasecmp(h, names[i], k))
            return true;
    }
    return false;
}

/* "host[:port]" names loopback. */
static bool host_ok(const char *host)
{
    if (!host)
        return false;
    size_t n = strlen(host);
    const char *colon = host[0] == '[' ? strchr(host, ']') : strchr(host, ':');
    if (host[0] == '[' && colon)
        n = (size_t)(colon - host) + 1;
    else if (colon)
        n = (size_t)(colon - host);
    return loopback_host(host, n);
}

static bool origin_ok(const char *origin)
{
    if (!origin)
        return true;
    for (size_t i = 0; hopts->allowed_origins && hopts->allowed_origins[i]; i++)
        if (!strcmp(origin, hopts->allowed_origins[i]))
            return true;
    const char *p = strstr(origin, "://");
    if (!p || (strncmp(origin, "http://", 7) && strncmp(origin, "https://", 8)))
        return false;
    return host_ok(p + 3);
}

static enum MHD_Result do_post(struct MHD_Connection *conn, mcps_server *srv, req *rq)
{
    const char *sid = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Mcp-Session-Id");
    const char *pv = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "MCP-Protocol-Version");
    if (pv && !mcps_version_supported(pv) && strcmp(pv, "2025-03-26") != 0) {
        char m[200];
        snprintf(m, sizeof m, "Bad Request: unsupported MCP-Protocol-Version %.40s (this "
                              "server speaks 2025-11-25 and 2025-06-18)", pv);
        return send_error(conn, MHD_HTTP_BAD_REQUEST, MCPS_INVALID_REQUEST, m);
    }
    bool is_init = false;
    json_t *peek = mcps_peek(rq->body.ptr ? rq->body.ptr : "", rq->body.len, &is_init);
    bool parsed = peek != NULL;
    json_decref(peek);
    mcps_conn *c = NULL;
    bool fresh = false;
    if (sid) {
        c = sess_find(sid);
        if (!c)
            return send_error(conn, MHD_HTTP_NOT_FOUND, MCPS_INVALID_REQUEST,
                              "Session not found: start a new one with initialize");
    } else if (is_init) {
        c = mcps_conn_new(srv);
        fresh = true;
    } else if (!parsed) {
        return send_error(conn, MHD_HTTP_BAD_REQUEST, MCPS_PARSE_ERROR,
                          "Parse error: the body is not JSON");
    } else {
        return send_error(conn, MHD_HTTP_BAD_REQUEST, MCPS_INVALID_REQUEST,
                          "Bad Request: no Mcp-Session-Id header (send initialize first)");
    }
    stream *s = stream_new();
    mcps_sink sink = {stream_send, stream_retain, stream_release, s};
    mcps_outcome out = mcps_handle(c, rq->body.ptr ? rq->body.ptr : "", rq->body.len, &sink);
    const char *new_sid = NULL;
    if (fresh && mcps_conn_initialized(c)) {
        sess_add(c);
        new_sid = mcps_conn_id(c);
    }
    enum MHD_Result rc;
    if (out == MCPS_NO_REPLY) {
        rc = send_text(conn, MHD_HTTP_ACCEPTED, NULL, "", NULL);
        stream_release(s);
    } else if (out == MCPS_REPLIED) {
        pthread_mutex_lock(&s->lock);
        char *t = stream_pop(s);
        pthread_mutex_unlock(&s->lock);
        unsigned status = MHD_HTTP_OK;
        json_t *m = t ? json_loads(t, 0, NULL) : NULL;
        json_int_t code = json_integer_value(json_object_get(json_object_get(m, "error"), "code"));
        if (code == MCPS_PARSE_ERROR || code == MCPS_INVALID_REQUEST)
            status = MHD_HTTP_BAD_REQUEST;
        json_decref(m);
        rc = send_text(conn, status, "application/json", t ? t : "{}", new_sid);
        free(t);
        stream_release(s);
    } else {
        struct MHD_Response *r =
            MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 16 * 1024, sse_read, s, sse_free);
        MHD_add_response_header(r, "Content-Type", "text/event-stream");
        MHD_add_response_header(r, "Cache-Control", "no-cache");
        if (new_sid)
            MHD_add_response_header(r, "Mcp-Session-Id", new_sid);
        rc = MHD_queue_response(conn, MHD_HTTP_OK, r);
        MHD_destroy_response(r);
    }
    mcps_conn_release(c); /* the table holds its own reference */
    return rc;
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *conn, const char *url,
                              const char *method, const char *version, const char *upload,
                              size_t *upload_size, void **con_cls)
{
    (void)version;
    mcps_server *srv = cls;
    req *rq = *con_cls;
    if (!rq) {
        rq = xcalloc(1, sizeof *rq);
        *con_cls = rq;
        return MHD_YES;
    }
    if (*upload_size) {
        if (rq->body.len + *upload_size > MAX_BODY)
            rq->too_big = true;
        else
            str_append(&rq->body, upload, *upload_size);
        *upload_size = 0;
        return MHD_YES;
    }
    if (hopts->token) {
        const char *auth = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Authorization");
        if (!auth || strncasecmp(auth, "Bearer ", 7) || strcmp(auth + 7, hopts->token))
            return send_error(conn, MHD_HTTP_UNAUTHORIZED, MCPS_INVALID_REQUEST,
                              "Unauthorized: send Authorization: Bearer TOKEN");
    } else if (!host_ok(MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Host"))) {
        return send_error(conn, MHD_HTTP_FORBIDDEN, MCPS_INVALID_REQUEST,
                          "Forbidden: the Host header must name this machine (localhost, "
                          "127.0.0.1, [::1])");
    }
    if (!origin_ok(MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Origin")))
        return send_error(conn, MHD_HTTP_FORBIDDEN, MCPS_INVALID_REQUEST,
                          "Forbidden: Origin not allowed");
    if (strcmp(url, "/mcp") != 0)
        return send_error(conn, MHD_HTTP_NOT_FOUND, MCPS_INVALID_REQUEST,
                          "Not found: the MCP endpoint is /mcp");
    if (!strcmp(method, "POST")) {
        if (rq->too_big)
            return send_error(conn, 413, MCPS_INVALID_REQUEST,
                              "the message is larger than 8 MiB");
        return do_post(conn, srv, rq);
    }
    if (!strcmp(method, "DELETE")) {
        const char *sid = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Mcp-Session-Id");
        mcps_conn *c = sid ? sess_remove(sid) : NULL;
        if (!c)
            return send_error(conn, sid ? MHD_HTTP_NOT_FOUND : MHD_HTTP_BAD_REQUEST,
                              MCPS_INVALID_REQUEST,
                              sid ? "Session not found" : "no Mcp-Session-Id header");
        mcps_conn_close(c);
        return send_text(conn, MHD_HTTP_OK, NULL, "", NULL);
    }
    return send_error(conn, MHD_HTTP_METHOD_NOT_ALLOWED, MCPS_INVALID_REQUEST,
                      "Method not allowed: POST a message, DELETE a session (this server "
                      "opens no GET stream)");
}

static void completed(void *cls, struct MHD_Connection *conn, void **con_cls,
                      enum MHD_RequestTerminationCode why)
{
    (void)cls;
    (void)conn;
    (void)why;
    req *rq = *con_cls;
    if (!rq)
        return;
    str_free(&rq->body);
    free(rq);
    *con_cls = NULL;
}

int mcps_http_serve(mcps_server *srv, const mcps_http_options *o)
{
    hopts = o;
    struct sockaddr_in sa;
    memset(&sa, 0, sizeof sa);
    sa.sin_family = AF_INET;
    sa.sin_port = htons((uint16_t)o->port);
    const char *host = !strcmp(o->host, "localhost") ? "127.0.0.1" : o->host;
    if (inet_pton(AF_INET, host, &sa.sin_addr) != 1) {
        mcps_log("--http: %s is not an IPv4 address (127.0.0.1:PORT)", o->host);
        return 2;
    }
    bool loopback = (ntohl(sa.sin_addr.s_addr) >> 24) == 127;
    if (!loopback && !o->token) {
        mcps_log("--http %s: listening beyond loopback needs a token (--token or "
                 "LOOM_MCP_TOKEN): anyone who can reach it could run commands as you",
                 o->host);
        return 2;
    }
    sigset_t stop;
    sigemptyset(&stop);
    sigaddset(&stop, SIGINT);
    sigaddset(&stop, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &stop, NULL);
    signal(SIGPIPE, SIG_IGN);
    struct MHD_Daemon *d = MHD_start_daemon(
        MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ERROR_LOG,
        (uint16_t)o->port, NULL, NULL, handle, srv, MHD_OPTION_SOCK_ADDR,
        (const struct sockaddr *)&sa, MHD_OPTION_NOTIFY_COMPLETED, completed, NULL,
        MHD_OPTION_END);
    if (!d) {
        mcps_log("cannot listen on %s:%u (%s)", host, o->port, strerror(errno));
        return 1;
    }
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);
    unsigned port = info ? info->port : o->port;
    if (o->port_file) {
        FILE *f = fopen(o->port_file, "w");
        if (f) {
            fprintf(f, "%u\n", port);
            fclose(f);
        }
    }
    mcps_log("listening on http://%s:%u/mcp", host, port);
    int sig = 0;
    while (sigwait(&stop, &sig) != 0)
        ;
    mcps_conn *c;
    while (sessions && (c = sess_remove(mcps_conn_id(sessions->conn))))
        mcps_conn_close(c);
    MHD_stop_daemon(d);
    return 0;
}
