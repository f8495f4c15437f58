/* routes_console.c — the run console (docs/console.md): GET / (index.html)
 * and GET /console/{name} (console.css, console.js), the page's three files
 * compiled into the program from src/surfaces/server/console/ (CMake's
 * loom_embed_text), so the console works offline and needs no files beside
 * the binary. Also the two listings the API lacked for the page: GET
 * /profiles (which profile to start a run with) and GET /usage (each run's
 * cost, model and tool outcomes, for the list and the charts).
 *
 * The page is public (it holds no data; every call it makes carries the
 * token the person typed), so it must not be something another origin can
 * frame or inject into: every file goes out with a strict
 * Content-Security-Policy (default-src 'self', no inline script or style,
 * no frames), nosniff, no referrer. Each answer has an ETag (FNV-1a of the
 * bytes) and Cache-Control: no-cache, so a browser revalidates and gets a
 * 304 until the binary changes.
 *
 * The files are const data and the ETags are computed per request; no
 * state, any thread. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/str.h"
#include "surfaces/server/http/http_internal.h"

extern const char loom_console_index_html[];
extern const size_t loom_console_index_html_len;
extern const char loom_console_css[];
extern const size_t loom_console_css_len;
extern const char loom_console_js[];
extern const size_t loom_console_js_len;

typedef struct console_file {
    const char *name;
    const char *type;
    const char *bytes;
    const size_t *len;
} console_file;

static const console_file FILES[] = {
    {"index.html", "text/html; charset=utf-8", loom_console_index_html,
     &loom_console_index_html_len},
    {"console.css", "text/css; charset=utf-8", loom_console_css, &loom_console_css_len},
    {"console.js", "text/javascript; charset=utf-8", loom_console_js, &loom_console_js_len},
};

#define CONSOLE_CSP                                                                        \
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "     \
    "connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'none'; "        \
    "frame-ancestors 'none'"

static void serve(http_req *r, const console_file *f)
{
    if (!query_only(r, NULL))
        return;
    uint64_t h = 1469598103934665603ULL;
    for (size_t i = 0; i < *f->len; i++)
        h = (h ^ (unsigned char)f->bytes[i]) * 1099511628211ULL;
    char etag[24];
    snprintf(etag, sizeof etag, "\"%016llx\"", (unsigned long long)h);
    loom_str hdr = LOOM_STR_INIT;
    str_printf(&hdr,
               "ETag: %s\nCache-Control: no-cache\nContent-Security-Policy: %s\n"
               "X-Content-Type-Options: nosniff\nReferrer-Policy: no-referrer\n"
               "X-Frame-Options: DENY\n",
               etag, CONSOLE_CSP);
    /* If-None-Match may list several tags, or be *; a match is a 304. */
    bool fresh = r->if_none_match &&
                 (strstr(r->if_none_match, etag) || strcmp(r->if_none_match, "*") == 0);
    if (fresh) {
        reply_json(r, 304, NULL);
    } else {
        char *body = xmalloc(*f->len + 1);
        memcpy(body, f->bytes, *f->len);
        body[*f->len] = '\0';
        reply_json(r, 200, body);
        r->reply.len = *f->len;
    }
    r->reply.content_type = xstrdup(f->type);
    r->reply.headers = str_steal(&hdr);
}

void route_console_index(http_req *r)
{
    serve(r, &FILES[0]);
}

void route_console_file(http_req *r)
{
    for (size_t i = 0; i < sizeof FILES / sizeof FILES[0]; i++)
        if (strcmp(r->params[0], FILES[i].name) == 0) {
            serve(r, &FILES[i]);
            return;
        }
    reply_fail(r, 0, LOOM_ERR_RESOURCE_NOT_FOUND, NULL, "no console file %.64s", r->params[0]);
}

void route_profile_list(http_req *r)
{
    if (!query_only(r, NULL))
        return;
    if (!r->ctx->be->profile_list) { /* a backend without listings (a test's fake) */
        reply_fail(r, 0, LOOM_ERR_RESOURCE_NOT_FOUND, NULL, "this server lists no profiles");
        return;
    }
    srv_error err = {0};
    char *j = r->ctx->be->profile_list(r->ctx->svc, &r->who, &err);
    reply_result(r, j, 200, &err);
}

/* The server's run states, for ?state= (as GET /runs checks it). */
static const char *const USAGE_STATES[] = {
    "queued", "running", "waiting_approval", "waiting_external", "paused", "completed",
    "failed", "cancelled", "blocked_by_policy", "blocked_by_capability", NULL,
};

void route_usage_list(http_req *r)
{
    static const char *const q[] = {"session_id", "state", "limit", "cursor", NULL};
    int64_t limit;
    if (!query_only(r, q) || !query_int(r, "limit", 1, 200, 50, &limit))
        return;
    const char *state = query_get(r, "state");
    bool known = !state;
    for (size_t i = 0; state && USAGE_STATES[i] && !known; i++)
        known = strcmp(state, USAGE_STATES[i]) == 0;
    if (!known) {
        reply_fail(r, 0, LOOM_ERR_INVALID_REQUEST, NULL, "state \"%.64s\" is not a run state",
                   state);
        return;
    }
    if (!r->ctx->be->usage_list) {
        reply_fail(r, 0, LOOM_ERR_RESOURCE_NOT_FOUND, NULL, "this server lists no usage");
        return;
    }
    srv_error err = {0};
    char *j = r->ctx->be->usage_list(r->ctx->svc, &r->who, query_get(r, "session_id"), state,
                                     query_get(r, "cursor"), (int)limit, &err);
    reply_result(r, j, 200, &err);
}
