/* test_server_http.c — the HTTP surface of loom serve alone, over real
 * HTTP: the daemon on an ephemeral loopback port with a FAKE backend (an
 * http_backend of this file's functions: no store, no service, no model),
 * driven with libcurl.
 *
 * It proves the wire contract the http layer owns: routing (every route,
 * :action suffixes, percent-encoded ids that stay one segment), 404 for no
 * route and 405 with Allow for a wrong method on every route, 413 past the
 * body cap, 400 for bad JSON naming line and column, for an unknown body
 * key naming it, and for query ints out of range, 401 without or with an
 * unknown token, 403 for a role too low, the one status table for every
 * error code (with the envelope's code, retryable, run_id), the common
 * headers, POST /runs sync/async statuses, and SSE: retry first, id/event/
 * data framing, Last-Event-ID and ?after, keep-alive comments, the end
 * event, a client disconnect freeing the feed, and a stop that ends open
 * streams.
 *
 * The fake backend is called from the daemon's connection threads: its
 * counters are atomics and the recorded arguments are guarded by a mutex. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <curl/curl.h>
#include <jansson.h>
#include <pthread.h>
#include <stdatomic.h>
#include <time.h>
#include <unistd.h>

#include "surfaces/server/http/http.h"
#include "surfaces/server/http/http_internal.h"

/* ---- the fake backend ------------------------------------------------------ */

static pthread_mutex_t fake_mu = PTHREAD_MUTEX_INITIALIZER;
static char last_call[64], last_id[256], last_arg[256], last_body[4096];
static unsigned last_mask;
static int64_t last_after;
static long last_wait;
static int last_limit;
static atomic_int feeds_open, feeds_closed;

static void record(const char *call, const char *id, const char *arg, const char *body)
{
    pthread_mutex_lock(&fake_mu);
    snprintf(last_call, sizeof last_call, "%s", call);
    snprintf(last_id, sizeof last_id, "%s", id ? id : "");
    snprintf(last_arg, sizeof last_arg, "%s", arg ? arg : "");
    snprintf(last_body, sizeof last_body, "%s", body ? body : "");
    pthread_mutex_unlock(&fake_mu);
}

static bool fake_auth(const server_objects *objs, const char *bearer, principal *out)
{
    (void)objs;
    static const struct {
        const char *tok;
        token_role role;
        bool audit;
    } toks[] = {
        {"tok-admin", ROLE_ADMIN, true},
        {"tok-member", ROLE_MEMBER, false},
        {"tok-viewer", ROLE_VIEWER, false},
    };
    for (size_t i = 0; i < sizeof toks / sizeof toks[0]; i++) {
        if (strcmp(bearer, toks[i].tok) == 0) {
            out->tenant_id = "acme";
            out->project_id = NULL;
            out->actor_id = toks[i].tok;
            out->role = toks[i].role;
            out->audit = toks[i].audit;
            return true;
        }
    }
    return false;
}

/* An id "err_<n>" makes the call fail with error code n (run_id set when
 * the id also has "_run"). */
static bool fake_error(const char *id, srv_error *err)
{
    if (!id || strncmp(id, "err_", 4) != 0)
        return false;
    int code = atoi(id + 4);
    srv_fail(err, (loom_error_code)code, "fake failure %d for %s", code, id);
    if (strstr(id, "_run"))
        srv_error_set_run(err, "run_fake");
    srv_error_set_details(err, strdup("{\"why\":\"fake\"}"));
    return true;
}

static char *obj_json(const char *key, const char *id)
{
    json_t *o = json_pack("{ss}", key, id);
    char *t = json_dumps(o, JSON_COMPACT);
    json_decref(o);
    return t;
}

#define FAKE_GET(fn, key)                                                                     \
    static char *fn(service *svc, const principal *who, const char *id, srv_error *err)     \
    {                                                                                         \
        (void)svc, (void)who;                                                                 \
        record(#fn, id, NULL, NULL);                                                          \
        return fake_error(id, err) ? NULL : obj_json(key, id);                                \
    }
FAKE_GET(f_session_get, "session_id")
FAKE_GET(f_task_get, "task_id")
FAKE_GET(f_run_get, "run_id")
FAKE_GET(f_run_pause, "run_id")
FAKE_GET(f_artifacts_list, "run_id")
FAKE_GET(f_transcript, "run_id")
FAKE_GET(f_citations, "run_id")
FAKE_GET(f_approval_get, "approval_id")

#define FAKE_CREATE(fn, key, val)                                                             \
    static char *fn(service *svc, const principal *who, const char *body, srv_error *err)   \
    {                                                                                         \
        (void)svc, (void)who, (void)err;                                                      \
        record(#fn, NULL, NULL, body);                                                        \
        return obj_json(key, val);                                                            \
    }
FAKE_CREATE(f_session_create, "session_id", "sess_1")
FAKE_CREATE(f_task_create, "task_id", "task_1")
FAKE_CREATE(f_knowledge_search, "evidence_pack_id", "evp_1")

static char *f_run_create(service *svc, const principal *who, const char *body, long wait_ms,
                          bool *ended, srv_error *err)
{
    (void)svc, (void)who;
    record("f_run_create", NULL, NULL, body);
    pthread_mutex_lock(&fake_mu);
    last_wait = wait_ms;
    pthread_mutex_unlock(&fake_mu);
    if (strstr(body, "task_waits")) {
        srv_fail(err, LOOM_ERR_RUN_WAITING_APPROVAL, "the run waits for approval apv_1");
        srv_error_set_run(err, "run_w");
        return NULL;
    }
    *ended = wait_ms >= 0 && strstr(body, "task_ends") != NULL;
    return obj_json("run_id", "run_new");
}

static char *f_run_list(service *svc, const principal *who, const char *session_id,
                        const char *state, const char *cursor, int limit, srv_error *err)
{
    (void)svc, (void)who, (void)err, (void)cursor;
    record("f_run_list", session_id, state, NULL);
    pthread_mutex_lock(&fake_mu);
    last_limit = limit;
    pthread_mutex_unlock(&fake_mu);
    return strdup("{\"items\":[],\"next_cursor\":null}");
}

static char *f_run_cancel(service *svc, const principal *who, const char *id, const char *body,
                          srv_error *err)
{
    (void)svc, (void)who;
    record("f_run_cancel", id, NULL, body);
    return fake_error(id, err) ? NULL : obj_json("run_id", id);
}

static char *f_run_resume(service *svc, const principal *who, const char *id, const char *body,
                          srv_error *err)
{
    (void)svc, (void)who;
    record("f_run_resume", id, NULL, body);
    return fake_error(id, err) ? NULL : obj_json("run_id", id);
}

static char *f_events_page(service *svc, const principal *who, const char *run_id,
                           int64_t after, int limit, unsigned mask, srv_error *err)
{
    (void)svc, (void)who;
    record("f_events_page", run_id, NULL, NULL);
    pthread_mutex_lock(&fake_mu);
    last_after = after;
    last_limit = limit;
    last_mask = mask;
    pthread_mutex_unlock(&fake_mu);
    if (fake_error(run_id, err))
        return NULL;
    return strdup("{\"items\":[],\"next_after\":0,\"has_more\":false}");
}

static void *f_artifact_content(service *svc, const principal *who, const char *run_id,
                                const char *name, size_t *len, char **content_type,
                                srv_error *err)
{
    (void)svc, (void)who;
    record("f_artifact_content", run_id, name, NULL);
    if (fake_error(run_id, err))
        return NULL;
    static const char diff[] = "--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n";
    *len = sizeof diff - 1;
    *content_type = strdup("text/x-diff");
    return strdup(diff);
}

static char *f_approval_list(service *svc, const principal *who, const char *run_id,
                             const char *status, srv_error *err)
{
    (void)svc, (void)who, (void)err;
    record("f_approval_list", run_id, status, NULL);
    return strdup("{\"items\":[]}");
}

static char *f_approval_answer(service *svc, const principal *who, const char *id, bool approve,
                               const char *body, srv_error *err)
{
    (void)svc, (void)who;
    record(approve ? "approve" : "reject", id, NULL, body);
    return fake_error(id, err) ? NULL : obj_json("approval_id", id);
}

static char *f_object_get(service *svc, const principal *who, const char *kind, const char *id,
                          srv_error *err)
{
    (void)svc, (void)who;
    record("f_object_get", id, kind, NULL);
    return fake_error(id, err) ? NULL : obj_json("id", id);
}

/* A feed over a scripted run: "run_3" has events 1..3 and then ends;
 * "run_slow" gives event 1 only after three empty waits (so keep-alives
 * go out first) and then ends; "run_live" never ends. */
struct service_feed {
    char run[64];
    int64_t cursor;
    unsigned mask;
    int waits;
};

static service_feed *f_feed_open(service *svc, const principal *who, const char *run_id,
                                 int64_t after, unsigned mask, srv_error *err)
{
    (void)svc, (void)who;
    if (fake_error(run_id, err))
        return NULL;
    service_feed *f = calloc(1, sizeof *f);
    snprintf(f->run, sizeof f->run, "%s", run_id);
    f->cursor = after;
    f->mask = mask;
    atomic_fetch_add(&feeds_open, 1);
    return f;
}

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static int f_feed_next(service_feed *f, char **json, int64_t *seq, int timeout_ms)
{
    int64_t last = strcmp(f->run, "run_3") == 0 ? 3 : strcmp(f->run, "run_slow") == 0 ? 1 : -1;
    if (strcmp(f->run, "run_slow") == 0 && f->waits < 3) {
        f->waits++;
        sleep_ms(timeout_ms);
        return 0;
    }
    if (last < 0 || f->cursor >= last) {
        if (last >= 0) {
            *json = strdup("{\"state\":\"completed\"}");
            return -1;
        }
        sleep_ms(timeout_ms < 20 ? timeout_ms : 20);
        return 0;
    }
    f->cursor++;
    char buf[512];
    snprintf(buf, sizeof buf,
             "{\"event_id\":\"%s.%lld\",\"seq\":%lld,\"run_id\":\"%s\",\"type\":\"token.delta\","
             "\n \"visibility\":\"user\",\"payload\":{\"text\":\"line\\nbreak\"}}",
             f->run, (long long)f->cursor, (long long)f->cursor, f->run);
    *json = strdup(buf);
    *seq = f->cursor;
    return 1;
}

static void f_feed_close(service_feed *f)
{
    free(f);
    atomic_fetch_add(&feeds_closed, 1);
}

static const http_backend FAKE = {
    .authenticate = fake_auth,
    .session_create = f_session_create,
    .session_get = f_session_get,
    .task_create = f_task_create,
    .task_get = f_task_get,
    .run_create = f_run_create,
    .run_get = f_run_get,
    .run_list = f_run_list,
    .run_cancel = f_run_cancel,
    .run_pause = f_run_pause,
    .run_resume = f_run_resume,
    .events_page = f_events_page,
    .artifacts_list = f_artifacts_list,
    .artifact_content = f_artifact_content,
    .transcript = f_transcript,
    .citations = f_citations,
    .approval_list = f_approval_list,
    .approval_get = f_approval_get,
    .approval_answer = f_approval_answer,
    .knowledge_search = f_knowledge_search,
    .object_get = f_object_get,
    .feed_open = f_feed_open,
    .feed_next = f_feed_next,
    .feed_close = f_feed_close,
};

/* ---- the client ----------------------------------------------------------- */

static http_server *srv;
static int port;

typedef struct resp {
    long status;
    char *body;
    size_t len;
    char headers[4096];
    size_t hlen;
    size_t stop_after; /* SSE: abort once this many body bytes came (0: never) */
} resp;

static size_t on_body(char *p, size_t sz, size_t n, void *ud)
{
    resp *r = ud;
    size_t k = sz * n;
    r->body = realloc(r->body, r->len + k + 1);
    memcpy(r->body + r->len, p, k);
    r->len += k;
    r->body[r->len] = '\0';
    if (r->stop_after && r->len >= r->stop_after)
        return 0; /* the client goes away */
    return k;
}

static size_t on_header(char *p, size_t sz, size_t n, void *ud)
{
    resp *r = ud;
    size_t k = sz * n;
    if (r->hlen + k < sizeof r->headers) {
        memcpy(r->headers + r->hlen, p, k);
        r->hlen += k;
        r->headers[r->hlen] = '\0';
    }
    return k;
}

/* One request. token NULL: no Authorization. extra: one more header line. */
static resp call(const char *method, const char *path, const char *token, const char *body,
                 size_t body_len, const char *extra, size_t stop_after)
{
    resp r = {0};
    r.stop_after = stop_after;
    CURL *c = curl_easy_init();
    char url[2048];
    snprintf(url, sizeof url, "http://127.0.0.1:%d%s", port, path);
    struct curl_slist *h = NULL;
    char auth[128];
    if (token) {
        snprintf(auth, sizeof auth, "Authorization: Bearer %s", token);
        h = curl_slist_append(h, auth);
    }
    if (extra)
        h = curl_slist_append(h, extra);
    h = curl_slist_append(h, "Content-Type: application/json");
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
    curl_easy_setopt(c, CURLOPT_PATH_AS_IS, 1L); /* send %2F, // and .. as written */
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
    curl_easy_setopt(c, CURLOPT_NOPROXY, "*");
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(c, CURLOPT_TIMEOUT, 20L);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &r);
    curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(c, CURLOPT_HEADERDATA, &r);
    if (body) {
        curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
        curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)body_len);
    }
    curl_easy_perform(c);
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &r.status);
    curl_easy_cleanup(c);
    curl_slist_free_all(h);
    if (!r.body)
        r.body = strdup("");
    return r;
}

static resp get(const char *path, const char *token)
{
    return call("GET", path, token, NULL, 0, NULL, 0);
}

static resp post(const char *path, const char *token, const char *body)
{
    return call("POST", path, token, body ? body : "", body ? strlen(body) : 0, NULL, 0);
}

/* The envelope's error code, or "" when the body is not an envelope. */
static void assert_envelope(const resp *r, long status, const char *code)
{
    if (r->status != status)
        fprintf(stderr, "status %ld, body %s\n", r->status, r->body);
    assert_int_equal(r->status, status);
    json_t *j = json_loads(r->body, 0, NULL);
    assert_non_null(j);
    json_t *e = json_object_get(j, "error");
    assert_true(json_is_object(e));
    assert_string_equal(json_string_value(json_object_get(e, "code")), code);
    assert_true(json_is_string(json_object_get(e, "message")));
    assert_true(json_is_boolean(json_object_get(e, "retryable")));
    json_t *rid = json_object_get(e, "run_id");
    assert_true(json_is_null(rid) || json_is_string(rid));
    assert_true(json_is_object(json_object_get(e, "details")));
    assert_int_equal(json_object_size(e), 5);
    json_decref(j);
}

static bool has_header(const resp *r, const char *line)
{
    return strcasestr(r->headers, line) != NULL;
}

static void resp_free(resp *r)
{
    free(r->body);
}

static int start(void **state)
{
    (void)state;
    curl_global_init(CURL_GLOBAL_ALL);
    http_options o = {.host = "127.0.0.1", .port = 0, .keepalive_ms = 60};
    srv_error err = {0};
    srv = http_start(&o, &FAKE, (service *)&fake_mu, NULL, &err);
    if (!srv)
        fprintf(stderr, "http_start: %s\n", err.message);
    assert_non_null(srv);
    port = http_port(srv);
    assert_true(port > 0);
    return 0;
}

static int stop(void **state)
{
    (void)state;
    http_stop(srv);
    srv = NULL;
    curl_global_cleanup();
    return 0;
}

/* ---- the tests ------------------------------------------------------------ */

static void test_public_routes_and_headers(void **state)
{
    (void)state;
    resp r = get("/healthz", NULL);
    assert_int_equal(r.status, 200);
    assert_non_null(strstr(r.body, "\"status\":\"ok\""));
    assert_non_null(strstr(r.body, "\"version\""));
    assert_true(has_header(&r, "Content-Type: application/json; charset=utf-8"));
    assert_true(has_header(&r, "Cache-Control: no-store"));
    assert_true(has_header(&r, "X-Request-Id: req_"));
    resp_free(&r);
    r = get("/openapi.json", NULL);
    assert_int_equal(r.status, 200);
    json_t *doc = json_loads(r.body, 0, NULL);
    assert_non_null(doc);
    assert_non_null(json_object_get(doc, "openapi"));
    json_decref(doc);
    resp_free(&r);
    /* Each request gets its own id. */
    resp a = get("/healthz", NULL), b = get("/healthz", NULL);
    const char *ia = strcasestr(a.headers, "X-Request-Id:"), *ib = strcasestr(b.headers, "X-Request-Id:");
    assert_non_null(ia);
    assert_non_null(ib);
    assert_true(strncmp(ia, ib, strcspn(ia, "\r\n")) != 0);
    resp_free(&a);
    resp_free(&b);
}

/* The route table and the OpenAPI document name the same operations:
 * every route is documented, and nothing is documented that is not
 * routed, with the same need for a token. */
static void test_openapi_matches_the_route_table(void **state)
{
    (void)state;
    json_t *doc = json_loadb(loom_openapi_json, loom_openapi_json_len, 0, NULL);
    assert_non_null(doc);
    json_t *paths = json_object_get(doc, "paths");
    size_t n, documented = 0;
    const http_route *routes = router_routes(&n);
    for (size_t i = 0; i < n; i++) {
        char path[128], method[8];
        snprintf(path, sizeof path, "%s%s", routes[i].pattern,
                 routes[i].action ? routes[i].action : "");
        snprintf(method, sizeof method, "%s", routes[i].method);
        for (char *p = method; *p; p++)
            *p = (char)(*p - 'A' + 'a');
        json_t *op = json_object_get(json_object_get(paths, path), method);
        if (!op)
            fprintf(stderr, "%s %s is not in openapi.json\n", routes[i].method, path);
        assert_non_null(op);
        json_t *sec = json_object_get(op, "security");
        bool is_public = json_is_array(sec) && json_array_size(sec) == 0;
        assert_int_equal(is_public, !routes[i].needs_auth);
    }
    const char *key;
    json_t *item;
    json_object_foreach(paths, key, item) documented += json_object_size(item);
    assert_int_equal(documented, n);
    json_decref(doc);
}

static void test_routing_params_and_actions(void **state)
{
    (void)state;
    static const struct {
        const char *method, *path, *call, *id, *arg;
    } cases[] = {
        {"GET", "/sessions/sess_1", "f_session_get", "sess_1", ""},
        {"GET", "/tasks/task_1", "f_task_get", "task_1", ""},
        {"GET", "/runs/run_1", "f_run_get", "run_1", ""},
        {"GET", "/runs/run%5Fx%2Fy", "f_run_get", "run_x/y", ""},
        {"GET", "/runs/a%3Acancel", "f_run_get", "a:cancel", ""},
        {"POST", "/runs/run_1:cancel", "f_run_cancel", "run_1", ""},
        {"POST", "/runs/run_1:pause", "f_run_pause", "run_1", ""},
        {"POST", "/runs/run%3A1:resume", "f_run_resume", "run:1", ""},
        {"GET", "/runs/run_1/events", "f_events_page", "run_1", ""},
        {"GET", "/runs/run_1/artifacts", "f_artifacts_list", "run_1", ""},
        {"GET", "/runs/run_1/transcript", "f_transcript", "run_1", ""},
        {"GET", "/runs/run_1/citations", "f_citations", "run_1", ""},
        {"GET", "/approvals/apv_1", "f_approval_get", "apv_1", ""},
        {"POST", "/approvals/apv_1:approve", "approve", "apv_1", ""},
        {"POST", "/approvals/apv_1:reject", "reject", "apv_1", ""},
        {"GET", "/approvals?run_id=run_1&status=pending", "f_approval_list", "run_1", "pending"},
        {"GET", "/runs?session_id=sess%201&state=running", "f_run_list", "sess 1", "running"},
        {"GET", "/profiles/coding_default", "f_object_get", "coding_default", "profile"},
        {"GET", "/policies/p1", "f_object_get", "p1", "policy"},
        {"GET", "/knowledge-sources/repo_docs", "f_object_get", "repo_docs", "knowledge_source"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        resp r = call(cases[i].method, cases[i].path, "tok-admin", NULL, 0, NULL, 0);
        if (r.status != 200)
            fprintf(stderr, "%s %s: %ld %s\n", cases[i].method, cases[i].path, r.status, r.body);
        assert_int_equal(r.status, 200);
        pthread_mutex_lock(&fake_mu);
        assert_string_equal(last_call, cases[i].call);
        assert_string_equal(last_id, cases[i].id);
        assert_string_equal(last_arg, cases[i].arg);
        pthread_mutex_unlock(&fake_mu);
        resp_free(&r);
    }
    /* The artifact's bytes with its own content type. */
    resp r = get("/runs/run_1/artifacts/patch.diff", "tok-viewer");
    assert_int_equal(r.status, 200);
    assert_true(has_header(&r, "Content-Type: text/x-diff"));
    assert_string_equal(r.body, "--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n");
    assert_string_equal(last_arg, "patch.diff");
    resp_free(&r);
    /* Creates: 201 and the body handed on as sent. */
    r = post("/sessions", "tok-member", "{\"project_id\":\"default\",\"metadata\":{\"a\":1}}");
    assert_int_equal(r.status, 201);
    assert_string_equal(last_body, "{\"project_id\":\"default\",\"metadata\":{\"a\":1}}");
    resp_free(&r);
    r = post("/sessions", "tok-member", NULL); /* no body: {} */
    assert_int_equal(r.status, 201);
    assert_string_equal(last_body, "{}");
    resp_free(&r);
    r = post("/tasks", "tok-member", "{\"session_id\":\"sess_1\",\"goal\":\"fix it\"}");
    assert_int_equal(r.status, 201);
    resp_free(&r);
    r = post("/knowledge/search", "tok-viewer", "{\"query\":\"how\",\"limit\":5}");
    assert_int_equal(r.status, 200);
    resp_free(&r);
    /* Not routes: trailing slash, double slash, an unknown action, nothing. */
    /* ("/" is the run console's page, docs/console.md: a route since issue 18.) */
    static const char *const none[] = {"/runs/run_1/", "/runs//events", "/runs/run_1:explode",
                                       "/nope", "/runs/run_1/artifacts/a/b", "/runs/:cancel",
                                       "/console/", "/console/a/b"};
    for (size_t i = 0; i < sizeof none / sizeof none[0]; i++) {
        resp n = call(i == 2 || i == 5 ? "POST" : "GET", none[i], "tok-admin", NULL, 0, NULL, 0);
        assert_envelope(&n, 404, "resource_not_found");
        resp_free(&n);
    }
    /* A bad escape in an id. */
    resp b = get("/runs/run%zz", "tok-admin");
    assert_envelope(&b, 400, "invalid_request");
    resp_free(&b);
    /* Not UTF-8: the envelope still has its message. */
    b = get("/runs/err_3_%FF", "tok-admin");
    assert_envelope(&b, 404, "resource_not_found");
    resp_free(&b);
    b = get("/nope/\xff", "tok-admin");
    assert_envelope(&b, 404, "resource_not_found");
    resp_free(&b);
    b = get("/runs/run%00x", "tok-admin");
    assert_envelope(&b, 400, "invalid_request");
    resp_free(&b);
}

static void test_method_not_allowed_on_every_route(void **state)
{
    (void)state;
    static const struct {
        const char *method, *path, *allow;
    } cases[] = {
        {"POST", "/healthz", "GET"},
        {"DELETE", "/openapi.json", "GET"},
        {"GET", "/sessions", "POST"},
        {"DELETE", "/sessions/sess_1", "GET"},
        {"GET", "/tasks", "POST"},
        {"PUT", "/tasks/task_1", "GET"},
        {"DELETE", "/runs", "POST, GET"},
        {"POST", "/runs/run_1", "GET"},
        {"GET", "/runs/run_1:cancel", "POST"},
        {"GET", "/runs/run_1:pause", "POST"},
        {"DELETE", "/runs/run_1:resume", "POST"},
        {"POST", "/runs/run_1/events", "GET"},
        {"POST", "/runs/run_1/stream", "GET"},
        {"POST", "/runs/run_1/artifacts", "GET"},
        {"PUT", "/runs/run_1/artifacts/patch.diff", "GET"},
        {"POST", "/runs/run_1/transcript", "GET"},
        {"POST", "/runs/run_1/citations", "GET"},
        {"POST", "/approvals", "GET"},
        {"PATCH", "/approvals/apv_1", "GET"},
        {"GET", "/approvals/apv_1:approve", "POST"},
        {"GET", "/approvals/apv_1:reject", "POST"},
        {"GET", "/knowledge/search", "POST"},
        {"POST", "/profiles/p", "GET"},
        {"POST", "/policies/p", "GET"},
        {"DELETE", "/knowledge-sources/k", "GET"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        resp r = call(cases[i].method, cases[i].path, "tok-admin", NULL, 0, NULL, 0);
        assert_envelope(&r, 405, "invalid_request");
        char allow[64];
        snprintf(allow, sizeof allow, "Allow: %s\r\n", cases[i].allow);
        if (!has_header(&r, allow))
            fprintf(stderr, "%s %s: headers %s\n", cases[i].method, cases[i].path, r.headers);
        assert_true(has_header(&r, allow));
        resp_free(&r);
    }
}

static void test_bodies_are_strict(void **state)
{
    (void)state;
    resp r = post("/sessions", "tok-member", "{\"project_id\": \"p\",\n  \"oops\" 1}");
    assert_envelope(&r, 400, "invalid_request");
    assert_non_null(strstr(r.body, "line 2, column"));
    assert_non_null(strstr(r.body, "\"line\":2"));
    resp_free(&r);
    r = post("/sessions", "tok-member", "{\"project_id\":\"p\",\"colour\":\"red\"}");
    assert_envelope(&r, 400, "invalid_request");
    assert_non_null(strstr(r.body, "colour"));
    assert_non_null(strstr(r.body, "\"key\":\"colour\""));
    resp_free(&r);
    r = post("/sessions", "tok-member", "[1,2]");
    assert_envelope(&r, 400, "invalid_request");
    resp_free(&r);
    r = post("/sessions", "tok-member", "{\"a\":1,\"a\":2}");
    assert_envelope(&r, 400, "invalid_request");
    resp_free(&r);
    r = post("/tasks", "tok-member", "{\"session_id\":\"s\"}");
    assert_envelope(&r, 400, "invalid_request");
    assert_non_null(strstr(r.body, "goal"));
    resp_free(&r);
    r = post("/tasks", "tok-member", "{\"session_id\":\"s\",\"goal\":7}");
    assert_envelope(&r, 400, "invalid_request");
    resp_free(&r);
    r = post("/tasks", "tok-member", "{\"session_id\":\"s\",\"goal\":\"g\",\"knowledge_sources\":[1]}");
    assert_envelope(&r, 400, "invalid_request");
    resp_free(&r);
    r = post("/runs", "tok-member", "{\"task_id\":\"t\",\"multitask_strategy\":\"shove\"}");
    assert_envelope(&r, 400, "invalid_request");
    resp_free(&r);
    r = post("/runs/run_1:pause", "tok-member", "{\"why\":1}");
    assert_envelope(&r, 400, "invalid_request");
    resp_free(&r);
    r = post("/knowledge/search", "tok-member", "{\"query\":\"q\",\"limit\":0}");
    assert_envelope(&r, 400, "invalid_request");
    resp_free(&r);
    /* An explicit null for an optional key is leaving it out. */
    r = post("/runs/run_1:cancel", "tok-member", "{\"reason\":null}");
    assert_int_equal(r.status, 200);
    resp_free(&r);
}

static void test_body_too_big(void **state)
{
    (void)state;
    size_t n = 1024 * 1024 + 1;
    char *big = malloc(n);
    memset(big, ' ', n);
    big[0] = '{';
    big[n - 1] = '}';
    resp r = call("POST", "/sessions", "tok-member", big, n, NULL, 0);
    assert_envelope(&r, 413, "invalid_request");
    resp_free(&r);
    /* Exactly at the cap is fine. */
    big[n - 2] = '}';
    r = call("POST", "/sessions", "tok-member", big, n - 1, NULL, 0);
    assert_int_equal(r.status, 201);
    resp_free(&r);
    big[n - 2] = ' ';
    /* Chunked, so no Content-Length announces it. */
    r = call("POST", "/sessions", "tok-member", big, n, "Transfer-Encoding: chunked", 0);
    assert_envelope(&r, 413, "invalid_request");
    resp_free(&r);
    free(big);
    /* The daemon still answers. */
    r = get("/healthz", NULL);
    assert_int_equal(r.status, 200);
    resp_free(&r);
}

static void test_auth(void **state)
{
    (void)state;
    resp r = get("/runs/run_1", NULL);
    assert_envelope(&r, 401, "unauthenticated");
    resp_free(&r);
    r = get("/runs/run_1", "tok-nobody");
    assert_envelope(&r, 401, "unauthenticated");
    resp_free(&r);
    r = call("GET", "/runs/run_1", NULL, NULL, 0, "Authorization: Basic dTpw", 0);
    assert_envelope(&r, 401, "unauthenticated");
    resp_free(&r);
    r = call("GET", "/runs/run_1", NULL, NULL, 0, "Authorization: Bearer ", 0);
    assert_envelope(&r, 401, "unauthenticated");
    resp_free(&r);
    /* A viewer reads but does not create; a member does not answer approvals. */
    r = get("/runs/run_1", "tok-viewer");
    assert_int_equal(r.status, 200);
    resp_free(&r);
    r = post("/sessions", "tok-viewer", "{}");
    assert_envelope(&r, 403, "project_scope_denied");
    resp_free(&r);
    r = post("/approvals/apv_1:approve", "tok-member", "{}");
    assert_envelope(&r, 403, "project_scope_denied");
    resp_free(&r);
    /* Audit visibility needs an audit token. */
    r = get("/runs/run_1/events?visibility=user,audit", "tok-member");
    assert_envelope(&r, 400, "invalid_request");
    assert_non_null(strstr(r.body, "audit token"));
    resp_free(&r);
    r = get("/runs/run_1/events?visibility=user,audit", "tok-admin");
    assert_int_equal(r.status, 200);
    assert_int_equal(last_mask, 1u << LOOM_VIS_USER | 1u << LOOM_VIS_AUDIT);
    resp_free(&r);
}

static void test_status_table_for_every_code(void **state)
{
    (void)state;
    for (int code = 1; code < LOOM_ERROR_CODE_END; code++) {
        int want;
        bool retry = srv_code_retryable((loom_error_code)code);
        switch (code) {
        case LOOM_ERR_INVALID_REQUEST: want = 400; break;
        case LOOM_ERR_UNAUTHENTICATED: want = 401; break;
        case LOOM_ERR_PROJECT_SCOPE_DENIED:
        case LOOM_ERR_KNOWLEDGE_SOURCE_SCOPE_DENIED:
        case LOOM_ERR_ARTIFACT_SCOPE_DENIED:
        case LOOM_ERR_RUN_BLOCKED_BY_POLICY:
        case LOOM_ERR_KNOWLEDGE_SOURCE_DENIED: want = 403; break;
        case LOOM_ERR_RESOURCE_NOT_FOUND: want = 404; break;
        case LOOM_ERR_INVALID_STATE_TRANSITION:
        case LOOM_ERR_RUN_NOT_RESUMABLE: want = 409; break;
        case LOOM_ERR_RUN_APPROVAL_EXPIRED: want = 410; break;
        case LOOM_ERR_TENANT_QUOTA_EXCEEDED: want = 429; break;
        case LOOM_ERR_RUN_WAITING_APPROVAL: want = 202; break;
        case LOOM_ERR_MODEL_RATE_LIMITED:
        case LOOM_ERR_MODEL_OVERLOADED:
        case LOOM_ERR_MODEL_UNAVAILABLE:
        case LOOM_ERR_MODEL_PROMPT_TOO_LONG:
        case LOOM_ERR_MODEL_REQUEST_REJECTED:
        case LOOM_ERR_MODEL_AUTH:
        case LOOM_ERR_MODEL_PROTOCOL:
        case LOOM_ERR_MODEL_TIMEOUT: want = 502; break;
        default: want = 500; break;
        }
        char path[64];
        snprintf(path, sizeof path, "/runs/err_%d_run", code);
        resp r = get(path, "tok-admin");
        assert_envelope(&r, want, loom_error_code_name((loom_error_code)code));
        json_t *j = json_loads(r.body, 0, NULL);
        json_t *e = json_object_get(j, "error");
        assert_int_equal(json_is_true(json_object_get(e, "retryable")), retry);
        assert_string_equal(json_string_value(json_object_get(e, "run_id")), "run_fake");
        assert_string_equal(json_string_value(json_object_get(json_object_get(e, "details"), "why")),
                            "fake");
        json_decref(j);
        resp_free(&r);
    }
    /* Retryable exactly where the contract says. */
    assert_true(srv_code_retryable(LOOM_ERR_TENANT_QUOTA_EXCEEDED));
    assert_true(srv_code_retryable(LOOM_ERR_MODEL_TIMEOUT));
    assert_false(srv_code_retryable(LOOM_ERR_MODEL_AUTH));
}

static void test_run_create_sync_and_async(void **state)
{
    (void)state;
    resp r = post("/runs", "tok-member", "{\"task_id\":\"task_ends\"}");
    assert_int_equal(r.status, 201);
    assert_int_equal(last_wait, -1);
    resp_free(&r);
    r = post("/runs?wait=30", "tok-member", "{\"task_id\":\"task_ends\"}");
    assert_int_equal(r.status, 200);
    assert_int_equal(last_wait, 30000);
    resp_free(&r);
    r = post("/runs?wait=0", "tok-member", "{\"task_id\":\"task_runs\"}");
    assert_int_equal(r.status, 201); /* the wait ran out first: created, not ended */
    resp_free(&r);
    r = post("/runs?wait=300", "tok-member", "{\"task_id\":\"task_waits\"}");
    assert_envelope(&r, 202, "run_waiting_approval");
    assert_non_null(strstr(r.body, "\"run_id\":\"run_w\""));
    assert_non_null(strstr(r.body, "\"retryable\":true"));
    resp_free(&r);
    static const char *const bad[] = {"/runs?wait=301", "/runs?wait=-1", "/runs?wait=abc",
                                      "/runs?wait=1e3", "/runs?wait=", "/runs?colour=red",
                                      "/runs?wait=1&wait=2"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        r = post(bad[i], "tok-member", "{\"task_id\":\"t\"}");
        assert_envelope(&r, 400, "invalid_request");
        resp_free(&r);
    }
}

static void test_query_ranges(void **state)
{
    (void)state;
    resp r = get("/runs?limit=200", "tok-viewer");
    assert_int_equal(r.status, 200);
    assert_int_equal(last_limit, 200);
    resp_free(&r);
    r = get("/runs", "tok-viewer");
    assert_int_equal(last_limit, 50);
    resp_free(&r);
    static const char *const bad[] = {"/runs?limit=0", "/runs?limit=201", "/runs?state=sleeping",
                                      "/runs/r/events?limit=1001", "/runs/r/events?after=-1",
                                      "/runs/r/events?visibility=user,debug",
                                      "/approvals?status=maybe", "/runs/r?x=1"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        r = get(bad[i], "tok-admin");
        assert_envelope(&r, 400, "invalid_request");
        resp_free(&r);
    }
    r = get("/runs/r/events?after=7&limit=1000", "tok-viewer");
    assert_int_equal(r.status, 200);
    assert_int_equal(last_after, 7);
    assert_int_equal(last_limit, 1000);
    assert_int_equal(last_mask, 1u << LOOM_VIS_USER | 1u << LOOM_VIS_SYSTEM);
    resp_free(&r);
}

static void test_sse_framing_and_resume(void **state)
{
    (void)state;
    resp r = get("/runs/run_3/stream", "tok-viewer");
    assert_int_equal(r.status, 200);
    assert_true(has_header(&r, "Content-Type: text/event-stream"));
    assert_true(has_header(&r, "Cache-Control: no-cache"));
    assert_true(strncmp(r.body, "retry: 1000\n\n", 13) == 0);
    assert_non_null(strstr(r.body, "id: 1\nevent: token.delta\ndata: {"));
    const char *i2 = strstr(r.body, "id: 2\n"), *i3 = strstr(r.body, "id: 3\n");
    assert_non_null(i2);
    assert_non_null(i3);
    assert_true(i2 < i3);
    /* The event's own newline whitespace is gone: one data line each. */
    const char *d = strstr(r.body, "data: ");
    assert_non_null(strstr(d, "\"line\\nbreak\"}}\n\n"));
    const char *end = strstr(r.body, "event: end\ndata: {\"state\":\"completed\"}\n\n");
    assert_non_null(end);
    assert_true(end > i3);
    assert_int_equal(strlen(end), strlen("event: end\ndata: {\"state\":\"completed\"}\n\n"));
    resp_free(&r);
    /* Last-Event-ID beats ?after: events after 1 only, each once. */
    r = call("GET", "/runs/run_3/stream?after=0", "tok-viewer", NULL, 0, "Last-Event-ID: 1", 0);
    assert_int_equal(r.status, 200);
    assert_null(strstr(r.body, "id: 1\n"));
    assert_non_null(strstr(r.body, "id: 2\n"));
    assert_null(strstr(strstr(r.body, "id: 2\n") + 1, "id: 2\n"));
    resp_free(&r);
    r = get("/runs/run_3/stream?after=2", "tok-viewer");
    assert_null(strstr(r.body, "id: 2\n"));
    assert_non_null(strstr(r.body, "id: 3\n"));
    resp_free(&r);
    r = call("GET", "/runs/run_3/stream", "tok-viewer", NULL, 0, "Last-Event-ID: two", 0);
    assert_envelope(&r, 400, "invalid_request");
    resp_free(&r);
    r = get("/runs/err_3/stream", "tok-viewer");
    assert_envelope(&r, 404, "resource_not_found");
    resp_free(&r);
    r = get("/runs/run_3/stream", NULL);
    assert_envelope(&r, 401, "unauthenticated");
    resp_free(&r);
    /* Keep-alive comments while nothing happens (keepalive_ms 60 here). */
    r = get("/runs/run_slow/stream", "tok-viewer");
    assert_non_null(strstr(r.body, ": keep-alive\n\n"));
    assert_true(strstr(r.body, ": keep-alive\n\n") < strstr(r.body, "id: 1\n"));
    resp_free(&r);
}

static void test_sse_disconnect_frees_the_feed(void **state)
{
    (void)state;
    int before = atomic_load(&feeds_closed);
    resp r = call("GET", "/runs/run_live/stream", "tok-viewer", NULL, 0, NULL, 5);
    resp_free(&r);
    /* Every feed opened so far is closed in the end, this one included; an
     * earlier test's feed may still be closing on a loaded machine, so wait
     * for the counts to meet rather than for one more close. */
    for (int i = 0; i < 1000 && (atomic_load(&feeds_closed) == before ||
                                 atomic_load(&feeds_open) != atomic_load(&feeds_closed));
         i++)
        sleep_ms(10);
    assert_true(atomic_load(&feeds_closed) > before);
    assert_int_equal(atomic_load(&feeds_open), atomic_load(&feeds_closed));
}

static void *stream_thread(void *arg)
{
    resp *r = arg;
    *r = call("GET", "/runs/run_live/stream", "tok-viewer", NULL, 0, NULL, 0);
    return NULL;
}

static void test_stop_ends_open_streams(void **state)
{
    (void)state;
    resp r = {0};
    pthread_t t;
    int opened = atomic_load(&feeds_open);
    pthread_create(&t, NULL, stream_thread, &r);
    for (int i = 0; i < 200 && atomic_load(&feeds_open) == opened; i++)
        sleep_ms(10);
    assert_int_equal(atomic_load(&feeds_open), opened + 1);
    sleep_ms(100);
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    http_stop(srv);
    clock_gettime(CLOCK_MONOTONIC, &b);
    srv = NULL;
    pthread_join(t, NULL);
    double took = (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9;
    assert_true(took < 2.0);
    assert_true(strncmp(r.body, "retry: 1000\n\n", 13) == 0);
    assert_null(strstr(r.body, "event: end"));
    assert_int_equal(atomic_load(&feeds_open), atomic_load(&feeds_closed));
    resp_free(&r);
    /* Restart for whatever runs after. */
    start(NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_public_routes_and_headers),
        cmocka_unit_test(test_openapi_matches_the_route_table),
        cmocka_unit_test(test_routing_params_and_actions),
        cmocka_unit_test(test_method_not_allowed_on_every_route),
        cmocka_unit_test(test_bodies_are_strict),
        cmocka_unit_test(test_body_too_big),
        cmocka_unit_test(test_auth),
        cmocka_unit_test(test_status_table_for_every_code),
        cmocka_unit_test(test_run_create_sync_and_async),
        cmocka_unit_test(test_query_ranges),
        cmocka_unit_test(test_sse_framing_and_resume),
        cmocka_unit_test(test_sse_disconnect_frees_the_feed),
        cmocka_unit_test(test_stop_ends_open_streams),
    };
    return cmocka_run_group_tests(tests, start, stop);
}
