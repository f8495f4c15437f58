/* http_internal.h — what the parts of http/ share: the request as a handler
 * sees it (method, decoded path parameters, query, body, principal), the
 * reply it fills in, the route table, and the helpers that parse and check
 * a request the same way in every handler.
 *
 * A request belongs to its connection's thread from the first byte to the
 * reply; nothing in it is shared. The context (backend, service, options,
 * stop flag) is shared read-only by every thread; the stop flag is atomic. */
#ifndef LOOM_SERVER_HTTP_INTERNAL_H
#define LOOM_SERVER_HTTP_INTERNAL_H

#include <jansson.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "surfaces/server/http/http.h"

typedef struct http_ctx {
    const http_backend *be;
    service *svc;
    const server_objects *objs;
    http_options opts;
    atomic_bool stopping;     /* set by http_stop: streams end */
    atomic_ulong next_request; /* X-Request-Id: req_<n> */
} http_ctx;

typedef struct sse_stream sse_stream;

typedef struct http_reply {
    int status;               /* 0 until a handler replied */
    char *body;               /* malloc'd */
    size_t len;
    char *content_type;       /* malloc'd; NULL: application/json; charset=utf-8 */
    char *allow;              /* malloc'd Allow header of a 405 */
    char *headers;            /* malloc'd extra "Name: value\n" lines (the console's
                               * ETag, Cache-Control, CSP); one with Cache-Control
                               * replaces the default no-store */
    sse_stream *sse;          /* set: the answer is this event stream */
} http_reply;

#define HTTP_MAX_PARAMS 2
#define HTTP_MAX_QUERY 16

typedef struct http_req {
    const http_ctx *ctx;
    const char *method;
    char *raw_uri;            /* as the client sent it, still percent-encoded */
    char *params[HTTP_MAX_PARAMS]; /* {id}, {name}: decoded */
    size_t n_params;
    char *qkey[HTTP_MAX_QUERY], *qval[HTTP_MAX_QUERY]; /* decoded */
    size_t n_query;
    const char *authorization;  /* header values (owned by MHD) */
    const char *last_event_id;
    const char *if_none_match;  /* the console's conditional GET */
    const char *host;           /* the Host header (the A2A card names the server by it) */
    char *body;               /* NUL-terminated; NULL when there was none */
    size_t body_len;
    json_t *json;             /* the body parsed (an object), after body_check */
    principal who;
    http_reply reply;
} http_req;

/* ---- reply.c ---------------------------------------------------------------- */
/* The one status table: a code's HTTP status. */
int http_status_for(loom_error_code code);
/* Takes ownership of json (a malloc'd JSON text). */
void reply_json(http_req *r, int status, char *json);
/* The envelope for err (its message, run id, details, retryability) with
 * the table's status. Clears err. */
void reply_error(http_req *r, srv_error *err);
/* reply_error with a fresh error; status 0 means the table's. */
void reply_fail(http_req *r, int status, loom_error_code code, const char *details_json,
                const char *fmt, ...) __attribute__((format(printf, 5, 6)));
/* The backend's answer: json with ok_status, or err's envelope when NULL. */
void reply_result(http_req *r, char *json, int ok_status, srv_error *err);
/* The envelope's JSON text (malloc'd), for the daemon's own early replies. */
char *error_envelope(loom_error_code code, const char *message, bool retryable,
                     const char *run_id, const char *details_json);
void reply_free(http_reply *rep);

/* ---- request checks (reply.c) ----------------------------------------------- */
/* A query parameter's decoded value, or NULL. */
const char *query_get(const http_req *r, const char *key);
/* Every query key is one of allowed (NULL-terminated); else 400 naming it. */
bool query_only(http_req *r, const char *const *allowed);
/* An integer parameter in [lo, hi] (absent: def); false after a 400 reply. */
bool query_int(http_req *r, const char *key, int64_t lo, int64_t hi, int64_t def, int64_t *out);
/* The visibility list (user,system,audit; default user,system) as a mask;
 * audit needs the principal's audit flag. false after a 400 reply. */
bool query_visibility(http_req *r, unsigned *mask);

typedef enum body_type { BODY_STRING, BODY_OBJECT, BODY_STRINGS, BODY_INT } body_type;
typedef struct body_field {
    const char *name;
    body_type type;
    bool required;
    int64_t lo, hi;           /* BODY_INT only */
} body_field;
/* Parses the body (none or empty: {}) into r->json and checks it against
 * fields (terminated by a NULL name): an object, no unknown key, required
 * keys present, types right. false after a 400 reply. */
bool body_check(http_req *r, const body_field *fields);
/* The body text to hand to the backend ("{}" for none). */
const char *body_text(const http_req *r);

/* ---- router.c --------------------------------------------------------------- */
typedef void (*http_handler)(http_req *r);
typedef struct http_route {
    const char *method;
    const char *pattern;      /* "/runs/{id}/artifacts/{name}" */
    const char *action;       /* ":cancel" on the last segment, or NULL */
    http_handler handler;
    bool needs_auth;
    token_role min_role;
} http_route;
/* Matches r's path against the table: the route (params filled in), or
 * NULL after replying 404, 405 (with Allow) or 400 (bad percent-encoding). */
const http_route *router_match(http_req *r);
/* The whole table (the unit test checks it against openapi.json). */
const http_route *router_routes(size_t *n);
/* Parses the raw URI's query into r (decoded); false after a 400 reply. */
bool router_parse_query(http_req *r);

/* ---- auth.c ----------------------------------------------------------------- */
/* Authenticates r for route (a no-op for public routes) and checks the
 * route's role; false after a 401 or 403 reply. */
bool auth_check(http_req *r, const http_route *route);
const char *role_name(token_role role);

/* ---- sse.c ------------------------------------------------------------------ */
/* GET /runs/{id}/stream. */
void route_stream(http_req *r);
/* The MHD response of a stream reply (daemon.c queues it); takes the stream. */
struct MHD_Response;
struct MHD_Response *sse_response(sse_stream *s);
void sse_stream_free(sse_stream *s);
/* A stream whose events come from elsewhere (a2a/: JSON-RPC responses):
 * next gives one event's data, a line of JSON (malloc'd) — 1 with *data,
 * 0 after timeout_ms without one, -1 at the end (no `event: end` is
 * written; the body just ends). free releases cls when the stream goes. */
typedef struct sse_source {
    void *cls;
    int (*next)(void *cls, char **data, int timeout_ms);
    void (*free)(void *cls);
} sse_source;
/* Replies with the source's events as `data: <line>\n\n` frames (with the
 * usual keep-alive comments and stop handling); takes the source. */
void sse_reply_source(http_req *r, sse_source src);

/* ---- handlers (routes_*.c) ---------------------------------------------------- */
void route_healthz(http_req *r);
void route_openapi(http_req *r);
void route_metrics(http_req *r);
void route_session_create(http_req *r);
void route_session_get(http_req *r);
void route_task_create(http_req *r);
void route_task_get(http_req *r);
void route_run_create(http_req *r);
void route_run_list(http_req *r);
void route_run_get(http_req *r);
void route_run_cancel(http_req *r);
void route_run_input(http_req *r);
void route_run_pause(http_req *r);
void route_run_resume(http_req *r);
void route_run_events(http_req *r);
void route_run_artifacts(http_req *r);
void route_run_artifact(http_req *r);
void route_run_transcript(http_req *r);
void route_run_citations(http_req *r);
void route_approval_list(http_req *r);
void route_approval_get(http_req *r);
void route_approval_approve(http_req *r);
void route_approval_reject(http_req *r);
void route_knowledge_search(http_req *r);
void route_profile_get(http_req *r);
void route_policy_get(http_req *r);
void route_knowledge_source_get(http_req *r);
/* routes_console.c: the run console's static files (docs/console.md). */
void route_console_index(http_req *r);
void route_console_file(http_req *r);
/* routes_console.c too: the listings the console needs (GET /profiles,
 * GET /usage). */
void route_profile_list(http_req *r);
void route_usage_list(http_req *r);

#endif
