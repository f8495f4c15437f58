/* a2a_http.c — the A2A routes on loom serve's HTTP layer: GET
 * /.well-known/agent-card.json (public: a token, when one is sent and
 * known, adds its tenant's profiles to the skills) and POST /a2a (bearer
 * token like every route; the daemon's auth answers 401 before this). A
 * JSON-RPC answer is 200 with the response (errors too: JSON-RPC carries
 * them in the body); a streaming method's answer is text/event-stream
 * whose events' data are JSON-RPC responses; a notification (no id) is
 * 204. No state; any thread. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/str.h"
#include "surfaces/server/a2a/a2a.h"
#include "surfaces/server/http/http_internal.h"

/* The server's own address as the client reached it: the Host header
 * when it is a plain host[:port], else the listen address. */
static void base_url(const http_req *r, char *out, size_t cap)
{
    const char *h = r->host;
    bool ok = h && *h && strlen(h) < 200;
    for (const char *p = h; ok && *p; p++)
        ok = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
             strchr(".-:[]", *p);
    if (ok)
        snprintf(out, cap, "http://%s", h);
    else
        snprintf(out, cap, "http://%s:%d", r->ctx->opts.host, r->ctx->opts.port);
}

static void env_of(const http_req *r, a2a_env *env, char *url, size_t cap)
{
    base_url(r, url, cap);
    *env = (a2a_env){.be = r->ctx->be, .svc = r->ctx->svc, .objs = r->ctx->objs,
                     .base_url = url};
}

void route_a2a_card(http_req *r)
{
    if (!query_only(r, NULL))
        return;
    char url[256];
    a2a_env env;
    env_of(r, &env, url, sizeof url);
    principal who = {0};
    const char *h = r->authorization;
    bool have = false;
    if (h && strncasecmp(h, "Bearer ", 7) == 0) {
        const char *tok = h + 7;
        while (*tok == ' ')
            tok++;
        have = *tok && r->ctx->be->authenticate(r->ctx->objs, tok, &who);
    }
    reply_json(r, 200, a2a_card_json(&env, have ? &who : NULL));
}

static int src_next(void *cls, char **data, int timeout_ms)
{
    return a2a_stream_next(cls, data, timeout_ms);
}

static void src_free(void *cls)
{
    a2a_stream_free(cls);
}

void route_a2a_rpc(http_req *r)
{
    if (!query_only(r, NULL))
        return;
    char url[256];
    a2a_env env;
    env_of(r, &env, url, sizeof url);
    a2a_answer a = a2a_dispatch(&env, &r->who, r->body, r->body_len);
    if (a.notification) {
        free(a.json);
        a2a_stream_free(a.stream);
        reply_free(&r->reply);
        r->reply.status = 204;
        r->reply.body = xstrdup("");
        r->reply.len = 0;
        return;
    }
    if (a.stream) {
        sse_reply_source(r, (sse_source){.cls = a.stream, .next = src_next, .free = src_free});
        return;
    }
    reply_json(r, 200, a.json);
}
