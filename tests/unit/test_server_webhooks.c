/* test_server_webhooks.c — loom serve's webhook sender (webhooks.h) against
 * a tiny HTTP listener in this file: a thread with a loopback socket that
 * records every request (headers, body, when) and answers from a script of
 * statuses (the last one repeats). The deliveries are logged into a small
 * in-memory store (put/get/list; what webhooks use). A signature is checked
 * by recomputing it and by the reference implementation, the npm package
 * standardwebhooks (tests/webhooks/verify.mjs). Threads: the test, the
 * listener and the sender; the listener's record is under its mutex. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <arpa/inet.h>
#include <jansson.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/str.h"
#include "surfaces/server/webhooks/webhooks.h"

#include "tmpdir.h"

/* ---- an in-memory store: documents only ---- */

typedef struct mem_doc {
    store_kind kind;
    char *id, *json;
} mem_doc;

typedef struct mem_store {
    store base;
    pthread_mutex_t mu;
    mem_doc docs[64];
    size_t n;
} mem_store;

static int mem_put(store *s, store_kind kind, const char *id, const store_doc_keys *keys,
                   const char *json, srv_error *err)
{
    (void)keys, (void)err;
    mem_store *m = (mem_store *)s;
    pthread_mutex_lock(&m->mu);
    size_t i = 0;
    while (i < m->n && !(m->docs[i].kind == kind && strcmp(m->docs[i].id, id) == 0))
        i++;
    if (i == m->n && m->n < 64) {
        m->docs[m->n++] = (mem_doc){kind, strdup(id), NULL};
    }
    if (i < m->n) {
        free(m->docs[i].json);
        m->docs[i].json = strdup(json);
    }
    pthread_mutex_unlock(&m->mu);
    return 0;
}

static char *mem_get(store *s, store_kind kind, const char *id, srv_error *err)
{
    mem_store *m = (mem_store *)s;
    char *out = NULL;
    pthread_mutex_lock(&m->mu);
    for (size_t i = 0; i < m->n; i++)
        if (m->docs[i].kind == kind && strcmp(m->docs[i].id, id) == 0)
            out = strdup(m->docs[i].json);
    pthread_mutex_unlock(&m->mu);
    if (!out)
        srv_fail(err, LOOM_ERR_RESOURCE_NOT_FOUND, "no %s", id);
    return out;
}

static char *mem_list(store *s, store_kind kind, const store_list_query *q, char **next,
                      srv_error *err)
{
    (void)q, (void)err;
    mem_store *m = (mem_store *)s;
    json_t *arr = json_array();
    pthread_mutex_lock(&m->mu);
    for (size_t i = 0; i < m->n; i++)
        if (m->docs[i].kind == kind)
            json_array_append_new(arr, json_loads(m->docs[i].json, 0, NULL));
    pthread_mutex_unlock(&m->mu);
    *next = NULL;
    char *text = json_dumps(arr, JSON_COMPACT);
    json_decref(arr);
    return text;
}

static void mem_close(store *s)
{
    mem_store *m = (mem_store *)s;
    for (size_t i = 0; i < m->n; i++)
        free(m->docs[i].id), free(m->docs[i].json);
    pthread_mutex_destroy(&m->mu);
    free(m);
}

static const store_ops mem_ops = {.put = mem_put, .get = mem_get, .list = mem_list,
                                  .close = mem_close};

static mem_store *mem_new(void)
{
    mem_store *m = calloc(1, sizeof *m);
    m->base.ops = &mem_ops;
    pthread_mutex_init(&m->mu, NULL);
    return m;
}

/* The only delivery document (the tests emit to one webhook), parsed. */
static json_t *only_delivery(mem_store *m)
{
    char *next = NULL;
    char *text = mem_list(&m->base, STORE_DELIVERY, NULL, &next, NULL);
    json_t *arr = json_loads(text, 0, NULL);
    free(text);
    assert_int_equal(json_array_size(arr), 1);
    json_t *d = json_incref(json_array_get(arr, 0));
    json_decref(arr);
    return d;
}

/* ---- the listener ---- */

typedef struct req {
    char *head, *body;
    int64_t at_ms;
} req;

typedef struct listener {
    int fd, port;
    int script[8];
    size_t n_script;
    req reqs[16];
    size_t n_reqs;
    pthread_mutex_t mu;
    volatile int stop;
    pthread_t th;
} listener;

/* The value of header name in head (a copy), or NULL. */
static char *header(const char *head, const char *name)
{
    size_t nl = strlen(name);
    for (const char *p = strstr(head, "\r\n"); p; p = strstr(p + 2, "\r\n")) {
        const char *line = p + 2;
        if (strncasecmp(line, name, nl) == 0 && line[nl] == ':') {
            const char *v = line + nl + 1;
            while (*v == ' ')
                v++;
            const char *e = strstr(v, "\r\n");
            return strndup(v, e ? (size_t)(e - v) : strlen(v));
        }
    }
    return NULL;
}

static void serve_one(listener *l, int c)
{
    loom_str in = LOOM_STR_INIT;
    char buf[4096];
    const char *end = NULL;
    while (!(end = strstr(str_cstr(&in), "\r\n\r\n"))) {
        ssize_t n = read(c, buf, sizeof buf);
        if (n <= 0)
            goto out;
        str_append(&in, buf, (size_t)n);
    }
    size_t head_len = (size_t)(end - str_cstr(&in)) + 4;
    char *head = strndup(str_cstr(&in), head_len);
    char *cl = header(head, "content-length");
    size_t want = cl ? (size_t)atol(cl) : 0;
    free(cl);
    while (in.len - head_len < want) {
        ssize_t n = read(c, buf, sizeof buf);
        if (n <= 0)
            break;
        str_append(&in, buf, (size_t)n);
    }
    pthread_mutex_lock(&l->mu);
    size_t k = l->n_reqs;
    int status = l->script[k < l->n_script ? k : l->n_script - 1];
    if (k < 16) {
        l->reqs[k] = (req){head, strndup(str_cstr(&in) + head_len, want), clock_mono_ms()};
        l->n_reqs++;
    } else {
        free(head);
    }
    pthread_mutex_unlock(&l->mu);
    char ans[128];
    int n = snprintf(ans, sizeof ans,
                     "HTTP/1.1 %d Scripted\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok",
                     status);
    (void)!write(c, ans, (size_t)n);
out:
    str_free(&in);
    close(c);
}

static void *listener_main(void *arg)
{
    listener *l = arg;
    while (!l->stop) {
        struct pollfd p = {l->fd, POLLIN, 0};
        if (poll(&p, 1, 20) <= 0)
            continue;
        int c = accept(l->fd, NULL, NULL);
        if (c >= 0)
            serve_one(l, c);
    }
    return NULL;
}

static listener *listener_start(const int *script, size_t n)
{
    listener *l = calloc(1, sizeof *l);
    memcpy(l->script, script, n * sizeof *script);
    l->n_script = n;
    pthread_mutex_init(&l->mu, NULL);
    l->fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    assert_int_equal(bind(l->fd, (struct sockaddr *)&a, sizeof a), 0);
    assert_int_equal(listen(l->fd, 16), 0);
    socklen_t al = sizeof a;
    getsockname(l->fd, (struct sockaddr *)&a, &al);
    l->port = ntohs(a.sin_port);
    pthread_create(&l->th, NULL, listener_main, l);
    return l;
}

static size_t listener_count(listener *l)
{
    pthread_mutex_lock(&l->mu);
    size_t n = l->n_reqs;
    pthread_mutex_unlock(&l->mu);
    return n;
}

static void listener_stop(listener *l)
{
    l->stop = 1;
    pthread_join(l->th, NULL);
    close(l->fd);
    for (size_t i = 0; i < l->n_reqs; i++)
        free(l->reqs[i].head), free(l->reqs[i].body);
    pthread_mutex_destroy(&l->mu);
    free(l);
}

/* ---- a tenant with one webhook ---- */

#define SECRET "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"

typedef struct one_tenant {
    tenant_config t;
    tenant_webhook w;
    char url[128];
    char *events[2];
} one_tenant;

static void tenant_init(one_tenant *o, const char *url, const char *only_event)
{
    memset(o, 0, sizeof *o);
    snprintf(o->url, sizeof o->url, "%s", url);
    o->w.id = "wh_1";
    o->w.url = o->url;
    o->w.secret = SECRET;
    if (only_event) {
        o->events[0] = (char *)only_event;
        o->w.events = (str_list){o->events, 1};
    }
    o->t.id = "acme";
    o->t.webhooks = &o->w;
    o->t.n_webhooks = 1;
}

/* ---- tests ---- */

static void test_sign_known_vector(void **state)
{
    (void)state;
    /* The Standard Webhooks example (the reference library signs the same). */
    char *sig = webhooks_sign(SECRET, "msg_p5jXN8AQM9LWM0D4loKWxJek", 1614265330,
                              "{\"test\": 2432232314}");
    assert_string_equal(sig, "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=");
    free(sig);
    assert_null(webhooks_sign("whsec_not*base64", "m", 1, "{}"));
    assert_null(webhooks_sign("whsec_", "m", 1, "{}"));
}

static int node_verify(const char *id, const char *ts, const char *sig, const char *body)
{
    char dir[512];
    assert_int_equal(tmpdir_make(dir, sizeof dir, "loom-wh", false), 0);
    tmpdir_write(dir, "body.json", body);
    const char *data = getenv("LOOM_TEST_DATA");
    loom_str script = LOOM_STR_INIT, bodyf = LOOM_STR_INIT;
    str_printf(&script, "%s/webhooks/verify.mjs", data ? data : "tests");
    str_printf(&bodyf, "%s/body.json", dir);
    pid_t pid = fork();
    if (pid == 0) {
        execlp("node", "node", str_cstr(&script), SECRET, id, ts, sig, str_cstr(&bodyf),
               (char *)NULL);
        _exit(127);
    }
    int st = 0;
    waitpid(pid, &st, 0);
    str_free(&script), str_free(&bodyf);
    tmpdir_remove(dir);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void test_retried_then_delivered(void **state)
{
    (void)state;
    int script[] = {500, 500, 200};
    listener *l = listener_start(script, 3);
    mem_store *m = mem_new();
    webhooks_options o = {.max_attempts = 5, .first_backoff_ms = 100, .timeout_ms = 3000};
    webhooks *wh = webhooks_new(&m->base, &o, NULL);
    assert_non_null(wh);
    one_tenant t;
    char url[128];
    snprintf(url, sizeof url, "http://127.0.0.1:%d/hook", l->port);
    tenant_init(&t, url, NULL);
    webhooks_emit(wh, &t.t, "run.completed", "run_abc.7",
                  "{\"run_id\":\"run_abc\",\"state\":\"completed\"}");
    assert_true(webhooks_flush(wh, 10000));
    assert_int_equal(listener_count(l), 3);

    /* Growing gaps: ~100 ms, then ~200 ms. */
    int64_t g1 = l->reqs[1].at_ms - l->reqs[0].at_ms, g2 = l->reqs[2].at_ms - l->reqs[1].at_ms;
    assert_true(g1 >= 90);
    assert_true(g2 >= 190);
    assert_true(g2 > g1);

    /* The same message id every time; each attempt signed. */
    for (size_t i = 0; i < 3; i++) {
        char *id = header(l->reqs[i].head, "webhook-id");
        char *ct = header(l->reqs[i].head, "content-type");
        assert_string_equal(id, "run_abc.7");
        assert_string_equal(ct, "application/json");
        assert_string_equal(l->reqs[i].body, l->reqs[0].body);
        free(id), free(ct);
    }
    json_t *body = json_loads(l->reqs[2].body, 0, NULL);
    assert_string_equal(json_string_value(json_object_get(body, "type")), "run.completed");
    assert_non_null(json_string_value(json_object_get(body, "timestamp")));
    assert_string_equal(
        json_string_value(json_object_get(json_object_get(body, "data"), "state")), "completed");
    json_decref(body);

    char *id = header(l->reqs[2].head, "webhook-id");
    char *ts = header(l->reqs[2].head, "webhook-timestamp");
    char *sig = header(l->reqs[2].head, "webhook-signature");
    char *again = webhooks_sign(SECRET, id, atol(ts), l->reqs[2].body);
    assert_string_equal(sig, again);
    assert_int_equal(node_verify(id, ts, sig, l->reqs[2].body), 0);
    /* A changed body does not verify. */
    assert_int_equal(node_verify(id, ts, sig, "{\"type\":\"run.completed\"}"), 1);
    free(id), free(ts), free(sig), free(again);

    /* The log: delivered at the third attempt, each attempt recorded. */
    json_t *d = only_delivery(m);
    assert_string_equal(json_string_value(json_object_get(d, "status")), "delivered");
    assert_int_equal(json_integer_value(json_object_get(d, "attempt")), 3);
    assert_int_equal(json_integer_value(json_object_get(d, "http_status")), 200);
    assert_true(json_is_null(json_object_get(d, "error")));
    assert_string_equal(json_string_value(json_object_get(d, "event_id")), "run_abc.7");
    assert_string_equal(json_string_value(json_object_get(d, "webhook_id")), "wh_1");
    assert_string_equal(json_string_value(json_object_get(d, "tenant_id")), "acme");
    assert_int_equal(strncmp(json_string_value(json_object_get(d, "delivery_id")), "whd_", 4), 0);
    assert_int_equal(strlen(json_string_value(json_object_get(d, "delivery_id"))), 30);
    json_t *h = json_object_get(d, "attempts");
    assert_int_equal(json_array_size(h), 3);
    assert_int_equal(json_integer_value(json_object_get(json_array_get(h, 0), "http_status")),
                     500);
    json_decref(d);

    webhooks_free(wh);
    store_close(&m->base);
    listener_stop(l);
}

static void test_gone_stops(void **state)
{
    (void)state;
    int script[] = {410, 200};
    listener *l = listener_start(script, 2);
    mem_store *m = mem_new();
    webhooks_options o = {.max_attempts = 5, .first_backoff_ms = 50, .timeout_ms = 3000};
    webhooks *wh = webhooks_new(&m->base, &o, NULL);
    one_tenant t;
    char url[128];
    snprintf(url, sizeof url, "http://localhost:%d/", l->port);
    tenant_init(&t, url, NULL);
    webhooks_emit(wh, &t.t, "policy.denied", "run_x.3", "{}");
    assert_true(webhooks_flush(wh, 10000));
    usleep(200 * 1000); /* a retry would have come by now */
    assert_int_equal(listener_count(l), 1);
    json_t *d = only_delivery(m);
    assert_string_equal(json_string_value(json_object_get(d, "status")), "failed");
    assert_int_equal(json_integer_value(json_object_get(d, "http_status")), 410);
    assert_int_equal(json_integer_value(json_object_get(d, "attempt")), 1);
    json_decref(d);
    webhooks_free(wh);
    store_close(&m->base);
    listener_stop(l);
}

static void test_remote_refused(void **state)
{
    (void)state;
    const char *bad[] = {"http://10.1.2.3:9/hook", "http://127.0.0.1.example.com/",
                         "http://example.com@10.0.0.1/", "ftp://127.0.0.1/",
                         "http://[2001:db8::1]/"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        mem_store *m = mem_new();
        webhooks *wh = webhooks_new(&m->base, NULL, NULL);
        one_tenant t;
        tenant_init(&t, bad[i], NULL);
        webhooks_emit(wh, &t.t, "run.completed", "run_y.1", "{}");
        assert_true(webhooks_flush(wh, 5000));
        json_t *d = only_delivery(m);
        assert_string_equal(json_string_value(json_object_get(d, "status")), "failed");
        assert_int_equal(json_integer_value(json_object_get(d, "attempt")), 0);
        const char *e = json_string_value(json_object_get(d, "error"));
        assert_non_null(e);
        assert_non_null(strstr(e, "refused"));
        json_decref(d);
        webhooks_free(wh);
        store_close(&m->base);
    }
}

static void test_bad_secret_and_no_answer(void **state)
{
    (void)state;
    /* A secret that is not base64: refused, never sent unsigned. */
    mem_store *m = mem_new();
    webhooks *wh = webhooks_new(&m->base, NULL, NULL);
    one_tenant t;
    tenant_init(&t, "http://127.0.0.1:9/", NULL);
    t.w.secret = "whsec_***";
    webhooks_emit(wh, &t.t, "run.completed", "run_s.1", "{}");
    assert_true(webhooks_flush(wh, 5000));
    json_t *d = only_delivery(m);
    assert_string_equal(json_string_value(json_object_get(d, "status")), "failed");
    assert_non_null(strstr(json_string_value(json_object_get(d, "error")), "secret"));
    json_decref(d);
    webhooks_free(wh);
    store_close(&m->base);

    /* An event id that would break the header lines. */
    m = mem_new();
    wh = webhooks_new(&m->base, NULL, NULL);
    tenant_init(&t, "http://127.0.0.1:9/", NULL);
    webhooks_emit(wh, &t.t, "run.completed", "run_s.1\r\nx-evil: 1", "{}");
    assert_true(webhooks_flush(wh, 5000));
    d = only_delivery(m);
    assert_string_equal(json_string_value(json_object_get(d, "status")), "failed");
    assert_non_null(strstr(json_string_value(json_object_get(d, "error")), "control"));
    json_decref(d);
    webhooks_free(wh);
    store_close(&m->base);

    /* Nobody listening: each attempt fails at the transport, then it gives up. */
    listener *l = listener_start((int[]){200}, 1);
    int port = l->port;
    listener_stop(l); /* the port is closed now */
    m = mem_new();
    webhooks_options o = {.max_attempts = 2, .first_backoff_ms = 10, .timeout_ms = 2000};
    wh = webhooks_new(&m->base, &o, NULL);
    char url[128];
    snprintf(url, sizeof url, "http://127.0.0.1:%d/", port);
    tenant_init(&t, url, NULL);
    webhooks_emit(wh, &t.t, "run.completed", "run_s.2", "{}");
    assert_true(webhooks_flush(wh, 10000));
    d = only_delivery(m);
    assert_string_equal(json_string_value(json_object_get(d, "status")), "failed");
    assert_int_equal(json_integer_value(json_object_get(d, "attempt")), 2);
    assert_true(json_is_null(json_object_get(d, "http_status")));
    assert_non_null(strstr(json_string_value(json_object_get(d, "error")), "gave up after 2"));
    json_decref(d);
    webhooks_free(wh);
    store_close(&m->base);
}

static void test_unsubscribed_not_sent(void **state)
{
    (void)state;
    int script[] = {200};
    listener *l = listener_start(script, 1);
    mem_store *m = mem_new();
    webhooks *wh = webhooks_new(&m->base, NULL, NULL);
    one_tenant t;
    char url[128];
    snprintf(url, sizeof url, "http://127.0.0.1:%d/", l->port);
    tenant_init(&t, url, "run.completed");
    webhooks_emit(wh, &t.t, "approval.requested", "run_z.2", "{}");
    assert_true(webhooks_flush(wh, 5000));
    assert_int_equal(listener_count(l), 0);
    assert_int_equal(m->n, 0);
    webhooks_emit(wh, &t.t, "run.completed", "run_z.9", "{}");
    assert_true(webhooks_flush(wh, 5000));
    assert_int_equal(listener_count(l), 1);
    /* No subscription list: the four types, nothing else. */
    t.w.events = (str_list){NULL, 0};
    webhooks_emit(wh, &t.t, "tool.started", "run_z.3", "{}");
    webhooks_emit(wh, &t.t, "artifact.created", "run_z.4", "{}");
    assert_true(webhooks_flush(wh, 5000));
    assert_int_equal(listener_count(l), 2);
    webhooks_free(wh);
    store_close(&m->base);
    listener_stop(l);
}

static void test_free_while_retrying(void **state)
{
    (void)state;
    int script[] = {500};
    listener *l = listener_start(script, 1);
    mem_store *m = mem_new();
    webhooks_options o = {.max_attempts = 10, .first_backoff_ms = 400, .timeout_ms = 3000};
    webhooks *wh = webhooks_new(&m->base, &o, NULL);
    one_tenant t;
    char url[128];
    snprintf(url, sizeof url, "http://127.0.0.1:%d/", l->port);
    tenant_init(&t, url, NULL);
    webhooks_emit(wh, &t.t, "run.completed", "run_w.1", "{}");
    for (int i = 0; i < 200 && listener_count(l) < 1; i++)
        usleep(10 * 1000);
    assert_int_equal(listener_count(l), 1);
    assert_false(webhooks_flush(wh, 50)); /* still waiting for its retry */
    int64_t t0 = clock_mono_ms();
    webhooks_free(wh);
    assert_true(clock_mono_ms() - t0 < 1000);
    json_t *d = only_delivery(m);
    assert_string_equal(json_string_value(json_object_get(d, "status")), "pending");
    json_decref(d);
    store_close(&m->base);
    listener_stop(l);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sign_known_vector),
        cmocka_unit_test(test_retried_then_delivered),
        cmocka_unit_test(test_gone_stops),
        cmocka_unit_test(test_remote_refused),
        cmocka_unit_test(test_bad_secret_and_no_answer),
        cmocka_unit_test(test_unsubscribed_not_sent),
        cmocka_unit_test(test_free_while_retrying),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
