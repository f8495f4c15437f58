/* fuzz_server_a2a.c — loom serve's A2A JSON-RPC dispatcher
 * (src/surfaces/server/a2a/) on arbitrary bytes: a request body comes
 * from any client with a token. The first byte picks the state of the one
 * run the fake backend knows (run_1, in session sess_1), the rest is the
 * body, dispatched as a2a_dispatch does for POST /a2a; a stream answer is
 * read to its end. Any answer is fine as long as it is one JSON-RPC
 * response (jsonrpc "2.0", result or error with an integer code) — a
 * crash, a leak, or anything else is not. Push deliveries go to a sender
 * that drops them (no network). */
#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "surfaces/server/a2a/a2a.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const STATES[] = {"queued", "running", "waiting_approval", "paused",
                                     "completed", "failed", "cancelled", "blocked_by_policy"};
static const char *state = "completed";

struct service_feed {
    int at;
};

static char *nf(srv_error *e)
{
    srv_fail(e, LOOM_ERR_RESOURCE_NOT_FOUND, "not found");
    return NULL;
}

static char *run1(void)
{
    json_t *o = json_pack("{ss ss ss ss ss ss? ss}", "run_id", "run_1", "task_id", "task_1",
                          "session_id", "sess_1", "state", state, "goal", "g",
                          "pending_approval_id",
                          strcmp(state, "waiting_approval") == 0 ? "apv_1" : NULL, "updated_at",
                          "2026-12-02T10:00:00.000Z");
    char *s = json_dumps(o, JSON_COMPACT);
    json_decref(o);
    return s;
}

static char *s_create(service *s, const principal *w, const char *b, srv_error *e)
{
    (void)s, (void)w, (void)b, (void)e;
    return strdup("{\"session_id\":\"sess_1\",\"task_id\":\"task_1\"}");
}

static char *s_get(service *s, const principal *w, const char *id, srv_error *e)
{
    (void)s, (void)w;
    return strcmp(id, "sess_1") == 0 ? strdup("{\"session_id\":\"sess_1\"}") : nf(e);
}

static char *r_create(service *s, const principal *w, const char *b, long ms, bool *ended,
                      srv_error *e)
{
    (void)s, (void)w, (void)b, (void)ms, (void)e;
    *ended = false;
    return run1();
}

static char *r_get(service *s, const principal *w, const char *id, srv_error *e)
{
    (void)s, (void)w;
    return strcmp(id, "run_1") == 0 ? run1() : nf(e);
}

static char *r_list(service *s, const principal *w, const char *a, const char *b, const char *c,
                    int n, srv_error *e)
{
    (void)s, (void)w, (void)a, (void)b, (void)c, (void)n, (void)e;
    char *r = run1();
    size_t len = strlen(r) + 64;
    char *out = malloc(len);
    snprintf(out, len, "{\"items\":[%s],\"next_cursor\":\"c\"}", r);
    free(r);
    return out;
}

static char *r_act(service *s, const principal *w, const char *id, const char *b, srv_error *e)
{
    (void)s, (void)w, (void)b;
    if (strcmp(id, "run_1") != 0)
        return nf(e);
    if (strcmp(state, "completed") == 0) {
        srv_fail(e, LOOM_ERR_INVALID_STATE_TRANSITION, "ended");
        return NULL;
    }
    return run1();
}

static char *ev_page(service *s, const principal *w, const char *id, int64_t after, int limit,
                     unsigned mask, srv_error *e)
{
    (void)s, (void)w, (void)id, (void)after, (void)limit, (void)mask, (void)e;
    return strdup("{\"items\":[],\"next_after\":2,\"has_more\":false}");
}

static char *a_list(service *s, const principal *w, const char *id, srv_error *e)
{
    (void)s, (void)w, (void)id, (void)e;
    return strdup("{\"items\":[{\"artifact_id\":\"art_1\",\"name\":\"x.bin\"}]}");
}

static void *a_content(service *s, const principal *w, const char *id, const char *name,
                       size_t *len, char **ct, srv_error *e)
{
    (void)s, (void)w, (void)id, (void)name, (void)e;
    *ct = strdup("application/octet-stream");
    *len = 3;
    char *b = malloc(3);
    memcpy(b, "\xff\x00z", 3); /* not UTF-8, with a NUL: a raw part */
    return b;
}

static char *apv_get(service *s, const principal *w, const char *id, srv_error *e)
{
    (void)s, (void)w, (void)id, (void)e;
    return strdup("{\"question\":\"q?\"}");
}

static char *apv_answer(service *s, const principal *w, const char *id, bool yes, const char *b,
                        srv_error *e)
{
    (void)s, (void)w, (void)id, (void)yes, (void)b, (void)e;
    return strdup("{}");
}

static service_feed *f_open(service *s, const principal *w, const char *id, int64_t after,
                            unsigned mask, srv_error *e)
{
    (void)s, (void)w, (void)after, (void)mask;
    if (strcmp(id, "run_1") != 0)
        return (service_feed *)nf(e);
    return calloc(1, sizeof(service_feed));
}

static int f_next(service_feed *f, char **json, int64_t *seq, int ms)
{
    (void)ms;
    static const char *const EV[] = {
        "{\"type\":\"run.state_changed\",\"payload\":{\"state\":\"running\"}}",
        "{\"type\":\"artifact.created\",\"payload\":{\"name\":\"x.bin\"}}",
        "{\"type\":\"run.state_changed\",\"payload\":{\"state\":\"failed\"}}",
    };
    if (f->at < 3) {
        *json = strdup(EV[f->at]);
        *seq = ++f->at;
        return 1;
    }
    *json = strdup("{\"state\":\"failed\"}");
    return -1;
}

static void f_close(service_feed *f)
{
    free(f);
}

static const http_backend FAKE = {
    .session_create = s_create, .session_get = s_get, .task_create = s_create,
    .run_create = r_create, .run_get = r_get, .run_list = r_list, .run_cancel = r_act,
    .run_resume = r_act, .events_page = ev_page, .artifacts_list = a_list,
    .artifact_content = a_content, .approval_get = apv_get, .approval_answer = apv_answer,
    .feed_open = f_open, .feed_next = f_next, .feed_close = f_close,
};

static void drop(const char *url, const char *const *headers, const char *body)
{
    (void)url, (void)headers, (void)body;
}

static void check_response(const char *text)
{
    json_t *r = json_loads(text, 0, NULL);
    if (!r || strcmp(json_string_value(json_object_get(r, "jsonrpc")) ?: "", "2.0") != 0)
        abort();
    json_t *e = json_object_get(r, "error");
    if (!json_object_get(r, "result") && !(e && json_is_integer(json_object_get(e, "code"))))
        abort();
    json_decref(r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    a2a_push_set_sender(drop);
    state = STATES[data[0] % (sizeof STATES / sizeof STATES[0])];
    static const principal who = {"acme", NULL, "fuzz", ROLE_ADMIN, false};
    a2a_env env = {.be = &FAKE, .base_url = "http://127.0.0.1:1", .block_ms = 1};
    a2a_answer a = a2a_dispatch(&env, &who, (const char *)data + 1, size - 1);
    if (a.json) {
        check_response(a.json);
        free(a.json);
    } else if (a.stream) {
        char *j;
        for (int i = 0; i < 16 && a2a_stream_next(a.stream, &j, 0) == 1; i++) {
            check_response(j);
            free(j);
        }
        a2a_stream_free(a.stream);
    } else {
        abort(); /* every request gets an answer or a stream */
    }
    a2a_shutdown();
    return 0;
}
