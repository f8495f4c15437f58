/* daemon.c — loom serve's libmicrohttpd daemon: one thread per connection
 * (MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION |
 * MHD_USE_POLL: an event stream holds its connection, and a blocking
 * handler is simplest to reason about; measured in bench/serve_load), a
 * connection limit, no per-IP limit, a 1 MB request body cap.
 *
 * A request's life: MHD's URI log callback makes the http_req with the
 * raw URI (MHD decodes the path before the access handler sees it, and the
 * router must split before decoding); the access handler reads the body
 * (refusing past the cap with 413), then routes, authenticates, parses the
 * query and runs the handler, and turns its http_reply into an MHD
 * response with the common headers (Content-Type, Cache-Control: no-store,
 * X-Request-Id); the completion callback frees the request.
 *
 * Threading: the daemon's threads call the handlers concurrently; the
 * context is read-only but for two atomics. http_stop sets the stop flag
 * (streams end within a slice) and MHD_stop_daemon joins every thread. */
#include <arpa/inet.h>
#include <microhttpd.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>

#include "base/str.h"
#include "surfaces/server/a2a/a2a.h"
#include "surfaces/server/http/http_internal.h"

struct http_server {
    struct MHD_Daemon *mhd;
    http_ctx ctx;
    int port;
};

typedef struct conn_req {
    http_req r;
    bool started;             /* the first access-handler call happened */
    bool too_big;             /* the body passed the cap: discarded, 413 */
    loom_str body;
} conn_req;

static void *on_uri(void *cls, const char *uri, struct MHD_Connection *c)
{
    (void)c;
    conn_req *cr = xcalloc(1, sizeof *cr);
    cr->r.ctx = cls;
    cr->r.raw_uri = xstrdup(uri ? uri : "/");
    return cr;
}

static void on_completed(void *cls, struct MHD_Connection *c, void **con_cls,
                         enum MHD_RequestTerminationCode toe)
{
    (void)cls, (void)c, (void)toe;
    conn_req *cr = *con_cls;
    if (!cr)
        return;
    http_req *r = &cr->r;
    free(r->raw_uri);
    for (size_t i = 0; i < r->n_params; i++)
        free(r->params[i]);
    for (size_t i = 0; i < r->n_query; i++) {
        free(r->qkey[i]);
        free(r->qval[i]);
    }
    json_decref(r->json);
    reply_free(&r->reply);
    str_free(&cr->body);
    free(cr);
    *con_cls = NULL;
}

static void common_headers(struct MHD_Response *resp, const http_ctx *ctx, bool stream,
                           const char *extra)
{
    char id[32];
    unsigned long n = atomic_fetch_add((atomic_ulong *)&ctx->next_request, 1) + 1;
    snprintf(id, sizeof id, "req_%lu", n);
    MHD_add_response_header(resp, "X-Request-Id", id);
    bool own_cache = false;
    for (const char *p = extra; p && *p;) {
        const char *nl = strchr(p, '\n'), *colon = strchr(p, ':');
        size_t ln = nl ? (size_t)(nl - p) : strlen(p);
        if (colon && colon < p + ln) {
            char name[64], value[512];
            snprintf(name, sizeof name, "%.*s", (int)(colon - p), p);
            const char *v = colon + 1;
            while (*v == ' ')
                v++;
            snprintf(value, sizeof value, "%.*s", (int)(p + ln - v), v);
            MHD_add_response_header(resp, name, value);
            own_cache = own_cache || strcasecmp(name, "Cache-Control") == 0;
        }
        p += ln + (nl ? 1 : 0);
    }
    if (!stream && !own_cache)
        MHD_add_response_header(resp, "Cache-Control", "no-store");
}

static enum MHD_Result send_reply(struct MHD_Connection *c, http_req *r)
{
    http_reply *rep = &r->reply;
    struct MHD_Response *resp;
    bool stream = rep->sse != NULL;
    if (stream) {
        resp = sse_response(rep->sse);
        rep->sse = NULL; /* MHD's free callback owns it now */
    } else {
        resp = MHD_create_response_from_buffer(rep->len, rep->body, MHD_RESPMEM_MUST_FREE);
        if (resp) {
            rep->body = NULL;
            MHD_add_response_header(resp, "Content-Type",
                                    rep->content_type ? rep->content_type
                                                      : "application/json; charset=utf-8");
            if (rep->allow)
                MHD_add_response_header(resp, "Allow", rep->allow);
        }
    }
    if (!resp)
        return MHD_NO;
    common_headers(resp, r->ctx, stream, rep->headers);
    enum MHD_Result ok = MHD_queue_response(c, (unsigned)rep->status, resp);
    MHD_destroy_response(resp);
    return ok;
}

static void too_big_reply(http_req *r)
{
    char details[64];
    snprintf(details, sizeof details, "{\"limit\":%zu}", r->ctx->opts.body_max);
    reply_fail(r, 413, LOOM_ERR_INVALID_REQUEST, details,
               "the request body is larger than %zu bytes", r->ctx->opts.body_max);
}

static void handle(struct MHD_Connection *c, http_req *r)
{
    r->authorization = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Authorization");
    r->last_event_id = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Last-Event-ID");
    r->if_none_match = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "If-None-Match");
    r->host = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Host");
    if (r->ctx->opts.health_only && strcmp(r->raw_uri, "/healthz") != 0) {
        reply_fail(r, 404, LOOM_ERR_RESOURCE_NOT_FOUND, NULL,
                   "this node is a worker only (--worker-only): it serves /healthz alone");
        return;
    }
    const http_route *route = router_match(r);
    if (!route || !auth_check(r, route) || !router_parse_query(r))
        return;
    route->handler(r);
    if (!r->reply.status)
        reply_fail(r, 500, LOOM_ERR_INTERNAL, NULL, "the handler gave no answer");
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
                                  const char *method, const char *version,
                                  const char *upload, size_t *upload_size, void **con_cls)
{
    (void)cls, (void)url, (void)version;
    conn_req *cr = *con_cls;
    if (!cr)
        return MHD_NO; /* the URI callback always runs first */
    http_req *r = &cr->r;
    if (!cr->started) {
        cr->started = true;
        r->method = method;
        /* A declared length past the cap is refused before the body is
         * read (curl's Expect: 100-continue then never sends it). */
        const char *cl = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Content-Length");
        if (cl && strtoull(cl, NULL, 10) > r->ctx->opts.body_max) {
            too_big_reply(r);
            return send_reply(c, r);
        }
        return MHD_YES;
    }
    if (*upload_size) {
        if (!cr->too_big) {
            if (cr->body.len + *upload_size > r->ctx->opts.body_max) {
                cr->too_big = true;
                str_free(&cr->body);
            } else {
                str_append(&cr->body, upload, *upload_size);
            }
        }
        *upload_size = 0;
        return MHD_YES;
    }
    if (r->reply.status)
        return MHD_YES; /* replied early (413); MHD is draining */
    if (cr->too_big) {
        too_big_reply(r);
    } else {
        if (cr->body.len) {
            str_putc(&cr->body, '\0');
            r->body_len = cr->body.len - 1;
            r->body = cr->body.ptr;
        }
        handle(c, r);
    }
    return send_reply(c, r);
}

/* The listen address: a numeric IPv4/IPv6 address or a name such as
 * localhost, resolved once. */
static int resolve(const char *host, int port, struct sockaddr_storage *ss, bool *v6,
                   srv_error *err)
{
    struct addrinfo hints = {0}, *res = NULL;
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_NUMERICSERV | AI_PASSIVE;
    char ps[16];
    snprintf(ps, sizeof ps, "%d", port);
    int rc = getaddrinfo(host, ps, &hints, &res);
    if (rc != 0 || !res)
        return srv_fail(err, LOOM_ERR_CONFIG, "cannot resolve the listen address %s: %s", host,
                        gai_strerror(rc));
    memset(ss, 0, sizeof *ss);
    memcpy(ss, res->ai_addr, res->ai_addrlen);
    *v6 = res->ai_family == AF_INET6;
    freeaddrinfo(res);
    return 0;
}

http_server *http_start(const http_options *opts, const http_backend *backend, service *svc,
                        const server_objects *objs, srv_error *err)
{
    http_server *h = xcalloc(1, sizeof *h);
    h->ctx.be = backend;
    h->ctx.svc = svc;
    h->ctx.objs = objs;
    h->ctx.opts = *opts;
    if (!h->ctx.opts.host)
        h->ctx.opts.host = "127.0.0.1";
    if (h->ctx.opts.keepalive_ms <= 0)
        h->ctx.opts.keepalive_ms = 15000;
    if (!h->ctx.opts.connection_limit)
        h->ctx.opts.connection_limit = 4096;
    if (!h->ctx.opts.body_max)
        h->ctx.opts.body_max = 1024 * 1024;
    atomic_init(&h->ctx.stopping, false);
    atomic_init(&h->ctx.next_request, 0);
    struct sockaddr_storage ss;
    bool v6 = false;
    if (resolve(h->ctx.opts.host, opts->port, &ss, &v6, err) != 0) {
        free(h);
        return NULL;
    }
    /* An idle connection is closed after a minute; a stream is never idle
     * that long, it sends a keep-alive first. */
    unsigned timeout_s = 60;
    if ((unsigned)h->ctx.opts.keepalive_ms / 1000 * 4 > timeout_s)
        timeout_s = (unsigned)h->ctx.opts.keepalive_ms / 1000 * 4;
    unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION |
                     MHD_USE_POLL | MHD_USE_ITC | (v6 ? MHD_USE_IPv6 : 0);
    h->mhd = MHD_start_daemon(flags, (uint16_t)opts->port, NULL, NULL, on_request, &h->ctx,
                              MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&ss,
                              MHD_OPTION_URI_LOG_CALLBACK, on_uri, &h->ctx,
                              MHD_OPTION_NOTIFY_COMPLETED, on_completed, NULL,
                              MHD_OPTION_CONNECTION_LIMIT, h->ctx.opts.connection_limit,
                              MHD_OPTION_PER_IP_CONNECTION_LIMIT, 0u,
                              MHD_OPTION_CONNECTION_TIMEOUT, timeout_s,
                              MHD_OPTION_END);
    if (!h->mhd) {
        srv_fail(err, LOOM_ERR_IO, "cannot listen on %s:%d (in use, or not an address here)",
                 h->ctx.opts.host, opts->port);
        free(h);
        return NULL;
    }
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(h->mhd, MHD_DAEMON_INFO_BIND_PORT);
    h->port = info ? info->port : opts->port;
    return h;
}

int http_port(const http_server *h)
{
    return h ? h->port : 0;
}

void http_stop(http_server *h)
{
    if (!h)
        return;
    atomic_store(&h->ctx.stopping, true);
    a2a_shutdown(); /* its push watchers read the service, which goes next */
    MHD_stop_daemon(h->mhd);
    free(h);
}
