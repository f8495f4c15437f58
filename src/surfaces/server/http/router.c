/* router.c — the route table of loom serve as data (method, pattern with
 * {param} segments and an optional :action suffix on the last segment,
 * handler, whether it needs a token, the least role), and the matcher.
 *
 * Matching works on the raw, still percent-encoded path: it is split at
 * '/' and the action at the last segment's first ':' before any decoding,
 * so an id with an encoded slash or colon (%2F, %3A) stays one parameter
 * and never turns into an action. Then each parameter is decoded; a bad
 * escape or an encoded NUL is a 400.
 *
 * The table is const; any thread. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/str.h"
#include "surfaces/server/a2a/a2a.h"
#include "surfaces/server/http/http_internal.h"

#define PUB false, ROLE_VIEWER
#define VIEW true, ROLE_VIEWER
#define MEMBER true, ROLE_MEMBER
#define APPROVER true, ROLE_APPROVER
#define ADMIN true, ROLE_ADMIN

static const http_route ROUTES[] = {
    {"GET", "/healthz", NULL, route_healthz, PUB},
    {"GET", "/openapi.json", NULL, route_openapi, PUB},
    {"GET", "/metrics", NULL, route_metrics, ADMIN},
    {"POST", "/sessions", NULL, route_session_create, MEMBER},
    {"GET", "/sessions/{id}", NULL, route_session_get, VIEW},
    {"POST", "/tasks", NULL, route_task_create, MEMBER},
    {"GET", "/tasks/{id}", NULL, route_task_get, VIEW},
    {"POST", "/runs", NULL, route_run_create, MEMBER},
    {"GET", "/runs", NULL, route_run_list, VIEW},
    {"GET", "/usage", NULL, route_usage_list, VIEW},
    {"GET", "/runs/{id}", NULL, route_run_get, VIEW},
    {"POST", "/runs/{id}", ":cancel", route_run_cancel, MEMBER},
    {"POST", "/runs/{id}", ":input", route_run_input, MEMBER},
    {"POST", "/runs/{id}", ":pause", route_run_pause, MEMBER},
    {"POST", "/runs/{id}", ":resume", route_run_resume, MEMBER},
    {"GET", "/runs/{id}/events", NULL, route_run_events, VIEW},
    {"GET", "/runs/{id}/stream", NULL, route_stream, VIEW},
    {"GET", "/runs/{id}/artifacts", NULL, route_run_artifacts, VIEW},
    {"GET", "/runs/{id}/artifacts/{name}", NULL, route_run_artifact, VIEW},
    {"GET", "/runs/{id}/transcript", NULL, route_run_transcript, VIEW},
    {"GET", "/runs/{id}/citations", NULL, route_run_citations, VIEW},
    {"GET", "/approvals", NULL, route_approval_list, VIEW},
    {"GET", "/approvals/{id}", NULL, route_approval_get, VIEW},
    {"POST", "/approvals/{id}", ":approve", route_approval_approve, APPROVER},
    {"POST", "/approvals/{id}", ":reject", route_approval_reject, APPROVER},
    {"POST", "/knowledge/search", NULL, route_knowledge_search, VIEW},
    {"GET", "/profiles", NULL, route_profile_list, VIEW},
    {"GET", "/profiles/{id}", NULL, route_profile_get, VIEW},
    {"GET", "/policies/{id}", NULL, route_policy_get, VIEW},
    {"GET", "/knowledge-sources/{id}", NULL, route_knowledge_source_get, VIEW},
    /* The run console (docs/console.md): public, it holds no data. */
    {"GET", "/", NULL, route_console_index, PUB},
    {"GET", "/console/{name}", NULL, route_console_file, PUB},
    {"GET", "/.well-known/agent-card.json", NULL, route_a2a_card, PUB},
    {"POST", "/a2a", NULL, route_a2a_rpc, VIEW},
};
#define N_ROUTES (sizeof ROUTES / sizeof ROUTES[0])

const http_route *router_routes(size_t *n)
{
    *n = N_ROUTES;
    return ROUTES;
}

#define MAX_SEGMENTS 8

/* Decodes %XX escapes of n bytes into a malloc'd string; with plus, '+' is
 * a space (query strings). NULL on a bad escape or an encoded NUL. */
static char *pct_decode(const char *s, size_t n, bool plus)
{
    char *out = xmalloc(n + 1);
    size_t o = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '%') {
            int hi = i + 1 < n ? str_hex_digit((unsigned char)s[i + 1]) : -1;
            int lo = i + 2 < n ? str_hex_digit((unsigned char)s[i + 2]) : -1;
            if (hi < 0 || lo < 0 || (hi == 0 && lo == 0)) {
                free(out);
                return NULL;
            }
            out[o++] = (char)(hi << 4 | lo);
            i += 2;
        } else if (plus && s[i] == '+') {
            out[o++] = ' ';
        } else {
            out[o++] = s[i];
        }
    }
    out[o] = '\0';
    return out;
}

typedef struct seg {
    const char *p;
    size_t n;
} seg;

/* Splits the raw path into segments (no empty ones but a lone "/"). */
static int split_path(const char *path, size_t len, seg *segs, size_t *n_segs)
{
    *n_segs = 0;
    if (len == 0 || path[0] != '/')
        return -1;
    size_t i = 1;
    while (i <= len) {
        size_t j = i;
        while (j < len && path[j] != '/')
            j++;
        if (j == i) {
            if (j == len && *n_segs > 0)
                return -1; /* a trailing slash: not a route */
            if (j < len)
                return -1; /* "//" */
            break;
        }
        if (*n_segs == MAX_SEGMENTS)
            return -1;
        segs[*n_segs].p = path + i;
        segs[*n_segs].n = j - i;
        (*n_segs)++;
        i = j + 1;
    }
    return 0;
}

/* Does the route's pattern (and action) fit the segments? Fills the
 * parameters' raw spans into raw[]. */
static bool pattern_fits(const http_route *rt, const seg *segs, size_t n_segs, const seg *act,
                         seg *raw, size_t *n_raw)
{
    const char *p = rt->pattern + 1;
    size_t k = 0;
    *n_raw = 0;
    while (*p || k < n_segs) {
        if (k >= n_segs || !*p)
            return false;
        size_t pn = strcspn(p, "/");
        if (p[0] == '{') {
            if (segs[k].n == 0 || *n_raw == HTTP_MAX_PARAMS)
                return false;
            raw[(*n_raw)++] = segs[k];
        } else if (pn != segs[k].n || strncmp(p, segs[k].p, pn) != 0) {
            return false;
        }
        p += pn;
        if (*p == '/')
            p++;
        k++;
    }
    if (!rt->action)
        return act->n == 0;
    return act->n == strlen(rt->action) && strncmp(act->p, rt->action, act->n) == 0;
}

const http_route *router_match(http_req *r)
{
    const char *uri = r->raw_uri ? r->raw_uri : "/";
    size_t len = strcspn(uri, "?#");
    seg segs[MAX_SEGMENTS];
    size_t n_segs = 0;
    seg act = {"", 0};
    /* "//" or a trailing slash: no route fits, a 404 (not "/", which is a
     * route: the console's page). */
    bool no_route = split_path(uri, len, segs, &n_segs) != 0;
    if (n_segs > 0) {
        seg *last = &segs[n_segs - 1];
        const char *colon = memchr(last->p, ':', last->n);
        if (colon) {
            act.p = colon;
            act.n = last->n - (size_t)(colon - last->p);
            last->n = (size_t)(colon - last->p);
        }
    }
    loom_str allow = LOOM_STR_INIT;
    const http_route *found = NULL;
    seg raw[HTTP_MAX_PARAMS];
    size_t n_raw = 0;
    for (size_t i = 0; i < N_ROUTES && !found && !no_route; i++) {
        seg got[HTTP_MAX_PARAMS];
        size_t n_got;
        if (!pattern_fits(&ROUTES[i], segs, n_segs, &act, got, &n_got))
            continue;
        if (strcmp(ROUTES[i].method, r->method) == 0) {
            found = &ROUTES[i];
            memcpy(raw, got, sizeof got);
            n_raw = n_got;
        } else if (!allow.ptr || !strstr(allow.ptr, ROUTES[i].method)) {
            str_printf(&allow, "%s%s", allow.len ? ", " : "", ROUTES[i].method);
        }
    }
    if (!found) {
        if (allow.len) {
            char details[128];
            snprintf(details, sizeof details, "{\"allow\":\"%s\"}", allow.ptr);
            reply_fail(r, 405, LOOM_ERR_INVALID_REQUEST, details,
                       "%s is not allowed on %.*s (allowed: %s)", r->method, (int)len, uri,
                       allow.ptr);
            r->reply.allow = str_steal(&allow);
        } else {
            reply_fail(r, 0, LOOM_ERR_RESOURCE_NOT_FOUND, NULL, "no route %s %.*s", r->method,
                       (int)(len > 200 ? 200 : len), uri);
        }
        str_free(&allow);
        return NULL;
    }
    str_free(&allow);
    for (size_t i = 0; i < n_raw; i++) {
        char *v = pct_decode(raw[i].p, raw[i].n, false);
        if (!v) {
            reply_fail(r, 0, LOOM_ERR_INVALID_REQUEST, NULL,
                       "bad percent-encoding in the path segment \"%.*s\"", (int)raw[i].n,
                       raw[i].p);
            return NULL;
        }
        r->params[r->n_params++] = v;
    }
    return found;
}

bool router_parse_query(http_req *r)
{
    const char *q = r->raw_uri ? strchr(r->raw_uri, '?') : NULL;
    if (!q)
        return true;
    q++;
    size_t qlen = strcspn(q, "#");
    size_t i = 0;
    while (i < qlen) {
        size_t n = 0;
        while (i + n < qlen && q[i + n] != '&')
            n++;
        if (n > 0) {
            const char *eq = memchr(q + i, '=', n);
            size_t kn = eq ? (size_t)(eq - (q + i)) : n;
            char *k = pct_decode(q + i, kn, true);
            char *v = eq ? pct_decode(eq + 1, n - kn - 1, true) : xstrdup("");
            if (!k || !v) {
                free(k);
                free(v);
                reply_fail(r, 0, LOOM_ERR_INVALID_REQUEST, NULL,
                           "bad percent-encoding in the query string");
                return false;
            }
            if (r->n_query == HTTP_MAX_QUERY || query_get(r, k)) {
                if (r->n_query == HTTP_MAX_QUERY)
                    reply_fail(r, 0, LOOM_ERR_INVALID_REQUEST, NULL, "too many query parameters");
                else
                    reply_fail(r, 0, LOOM_ERR_INVALID_REQUEST, NULL,
                               "query parameter %.64s given twice", k);
                free(k);
                free(v);
                return false;
            }
            r->qkey[r->n_query] = k;
            r->qval[r->n_query++] = v;
        }
        i += n + 1;
    }
    return true;
}
