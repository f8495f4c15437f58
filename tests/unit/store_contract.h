/* store_contract.h — the cases of store.h's contract, run against every
 * store: test_server_store.c runs them on SQLite, test_server_store_pg.c on
 * a PostgreSQL server of its own (tests/pg/with_pg.sh). Documents
 * (put/get/replace, not found, listings with filters and cursors, tenants),
 * events (append, after, max_seq, gaps and rewrites refused whole, batches
 * of several runs with one refused), blobs, reopening, a child killed with
 * SIGKILL in the middle of appends (every acknowledged event stored, no
 * hole), and 8 appending threads (some of their batches refused) beside 4
 * reading ones checking for holes.
 *
 * Each including file defines its fixture's setup and teardown (a fresh,
 * empty store for every case: f->spec, or f->db for SQLite) and lists
 * STORE_CONTRACT_TESTS(setup, teardown) in its group. Header-only (static),
 * included after cmocka.h, once per test program. */
#ifndef LOOM_TESTS_STORE_CONTRACT_H
#define LOOM_TESTS_STORE_CONTRACT_H

#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "surfaces/server/store/store.h"
#include "surfaces/server/store/store_cursor.h"

typedef struct fx {
    char dir[1024];
    char db[PATH_MAX];            /* SQLite: the file */
    char spec[PATH_MAX + 32];     /* PostgreSQL: the URL ("" for SQLite) */
    char sqlite_spec[PATH_MAX + 32];
    store *s;
} fx;

/* The --store value of the fixture's store: its spec (PostgreSQL), or
 * sqlite: and its file (f->db, which a test may point elsewhere). */
static const char *fx_spec(fx *f)
{
    if (!f->spec[0])
        snprintf(f->sqlite_spec, sizeof f->sqlite_spec, "sqlite:%s", f->db);
    return f->spec[0] ? f->spec : f->sqlite_spec;
}

/* What the store's messages name: the URL (without a password), or the file. */
static const char *fx_shown(const fx *f)
{
    return f->spec[0] ? f->spec : f->db;
}

static store *open_ok(fx *f)
{
    srv_error err = {0};
    store *s = store_open(fx_spec(f), &err);
    if (!s)
        fail_msg("store_open: %s", err.message);
    return s;
}

static void put_ok(store *s, store_kind k, const char *id, const char *tenant,
                   const char *parent, const char *state, const char *at, const char *json)
{
    store_doc_keys keys = {tenant, parent, state, at};
    srv_error err = {0};
    if (s->ops->put(s, k, id, &keys, json, &err) != 0)
        fail_msg("put %s: %s", id, err.message);
}

/* The seqs of a JSON array of events {"seq":N,…}, checked to run first,
 * first+1, … with no hole; the count, or -1 on a hole. */
static long seq_run(const char *arr, int64_t first)
{
    long n = 0;
    for (const char *p = strstr(arr, "\"seq\":"); p; p = strstr(p + 1, "\"seq\":")) {
        if (strtoll(p + 6, NULL, 10) != first + n)
            return -1;
        n++;
    }
    return n;
}

static void append_ok(store *s, const char *run, int64_t from, int64_t to)
{
    size_t n = (size_t)(to - from + 1);
    store_event *evs = calloc(n, sizeof *evs);
    char **texts = calloc(n, sizeof *texts);
    for (size_t i = 0; i < n; i++) {
        texts[i] = malloc(96);
        snprintf(texts[i], 96, "{\"seq\":%lld,\"run_id\":\"%s\",\"type\":\"t\"}",
                 (long long)(from + (int64_t)i), run);
        evs[i].seq = from + (int64_t)i;
        evs[i].json = texts[i];
    }
    srv_error err = {0};
    int rc = s->ops->append_events(s, run, evs, n, &err);
    for (size_t i = 0; i < n; i++)
        free(texts[i]);
    free(texts);
    free(evs);
    if (rc != 0)
        fail_msg("append %s %lld-%lld: %s", run, (long long)from, (long long)to, err.message);
}

static void test_put_get_replace(void **state)
{
    fx *f = *state;
    f->s = open_ok(f);
    store *s = f->s;
    put_ok(s, STORE_SESSION, "sess_1", "t1", NULL, NULL, "2026-12-02T10:00:00.000Z",
           "{\"session_id\":\"sess_1\",\"v\":1}");
    put_ok(s, STORE_RUN, "sess_1", "t1", "sess_1", "queued", "2026-12-02T10:00:00.000Z",
           "{\"kind\":\"run\"}");
    srv_error err = {0};
    char *got = s->ops->get(s, STORE_SESSION, "sess_1", &err);
    assert_non_null(got);
    assert_string_equal(got, "{\"session_id\":\"sess_1\",\"v\":1}");
    free(got);
    /* kinds are apart: the same id in another kind is another doc */
    got = s->ops->get(s, STORE_RUN, "sess_1", &err);
    assert_string_equal(got, "{\"kind\":\"run\"}");
    free(got);
    put_ok(s, STORE_SESSION, "sess_1", "t1", NULL, NULL, "2026-12-02T10:00:00.000Z",
           "{\"session_id\":\"sess_1\",\"v\":2}");
    got = s->ops->get(s, STORE_SESSION, "sess_1", &err);
    assert_string_equal(got, "{\"session_id\":\"sess_1\",\"v\":2}");
    free(got);
    /* a replaced run's state column follows the new keys */
    put_ok(s, STORE_RUN, "sess_1", "t1", "sess_1", "running", "2026-12-02T10:00:00.000Z",
           "{\"kind\":\"run\",\"state\":\"running\"}");
    store_list_query q = {.tenant_id = "t1", .state = "queued", .limit = 10};
    char *next = NULL;
    char *arr = s->ops->list(s, STORE_RUN, &q, &next, &err);
    assert_string_equal(arr, "[]");
    assert_null(next);
    free(arr);
    /* a document that is not JSON is refused */
    store_doc_keys keys = {"t1", NULL, NULL, "x"};
    assert_int_equal(s->ops->put(s, STORE_TASK, "task_1", &keys, "{not json", &err), -1);
    assert_int_equal(err.code, LOOM_ERR_INVALID_REQUEST);
    assert_non_null(strstr(err.message, fx_shown(f)));
    assert_non_null(strstr(err.message, "put tasks task_1"));
}

static void test_not_found(void **state)
{
    fx *f = *state;
    f->s = open_ok(f);
    store *s = f->s;
    srv_error err = {0};
    assert_null(s->ops->get(s, STORE_APPROVAL, "apv_nope", &err));
    assert_int_equal(err.code, LOOM_ERR_RESOURCE_NOT_FOUND);
    assert_string_equal(err.message, "approval apv_nope not found");
    assert_null(s->ops->get(s, STORE_DELIVERY, "whd_nope", &err));
    assert_string_equal(err.message, "webhook delivery whd_nope not found");
    memset(&err, 0, sizeof err);
    size_t len = 99;
    assert_null(s->ops->get_blob(s, "run_x", "patch.diff", &len, &err));
    assert_int_equal(err.code, LOOM_ERR_RESOURCE_NOT_FOUND);
    assert_int_equal(len, 0);
    assert_int_equal(s->ops->max_seq(s, "run_none", &err), 0);
    int64_t last = -1;
    char *arr = s->ops->events_after(s, "run_none", 7, 10, &last, &err);
    assert_string_equal(arr, "[]");
    assert_int_equal(last, 7);
    free(arr);
}

/* 250 runs of tenant t1 over two sessions and two states, created_at in
 * an order unlike insertion and with ties (id breaks them), plus t2's. */
static void put_250(store *s)
{
    for (int i = 0; i < 250; i++) {
        int t = (i * 37) % 125; /* every created_at twice */
        char id[32], at[40], json[128];
        snprintf(id, sizeof id, "run_%03d", i);
        snprintf(at, sizeof at, "2026-12-02T10:%02d:%02d.000Z", t / 60, t % 60);
        snprintf(json, sizeof json, "{\"run_id\":\"%s\",\"at\":\"%s\"}", id, at);
        put_ok(s, STORE_RUN, id, "t1", i % 2 ? "sess_b" : "sess_a",
               i % 3 ? "running" : "queued", at, json);
    }
    for (int i = 0; i < 20; i++) {
        char id[32];
        snprintf(id, sizeof id, "run_t2_%02d", i);
        char json[128];
        snprintf(json, sizeof json,
                 "{\"run_id\":\"%s\",\"at\":\"2026-12-02T09:00:00.000Z\",\"tenant\":\"t2\"}",
                 id);
        put_ok(s, STORE_RUN, id, "t2", "sess_a", "queued", "2026-12-02T09:00:00.000Z", json);
    }
}

/* Pages through a listing with limit; asserts ascending (at, id) and
 * returns the ids seen, in order (count in *n). */
static char **page_all(store *s, const char *tenant, const char *parent, const char *st,
                       int limit, int *n)
{
    char **ids = calloc(400, sizeof *ids);
    *n = 0;
    char *cursor = NULL;
    char prev[128] = "";
    int pages = 0;
    do {
        store_list_query q = {tenant, parent, st, cursor, limit};
        srv_error err = {0};
        char *next = NULL;
        char *arr = s->ops->list(s, STORE_RUN, &q, &next, &err);
        if (!arr)
            fail_msg("list: %s", err.message);
        free(cursor);
        cursor = next;
        int in_page = 0;
        for (const char *p = strstr(arr, "\"run_id\":\""); p; p = strstr(p + 1, "\"run_id\":\"")) {
            const char *v = p + 10;
            char id[32], key[128];
            snprintf(id, sizeof id, "%.*s", (int)(strchr(v, '"') - v), v);
            const char *at = strstr(p, "\"at\":\"") + 6;
            snprintf(key, sizeof key, "%.24s|%s", at, id);
            assert_true(strcmp(prev, key) < 0);
            snprintf(prev, sizeof prev, "%s", key);
            ids[(*n)++] = strdup(id);
            in_page++;
        }
        assert_true(in_page <= limit);
        if (cursor)
            assert_int_equal(in_page, limit);
        free(arr);
        assert_true(++pages < 400);
    } while (cursor);
    return ids;
}

static void free_ids(char **ids, int n)
{
    for (int i = 0; i < n; i++)
        free(ids[i]);
    free(ids);
}

static void test_list_pages(void **state)
{
    fx *f = *state;
    f->s = open_ok(f);
    store *s = f->s;
    put_250(s);
    int limits[] = {1, 7, 50, 250, 1000};
    for (size_t li = 0; li < sizeof limits / sizeof limits[0]; li++) {
        int n = 0;
        char **ids = page_all(s, "t1", NULL, NULL, limits[li], &n);
        assert_int_equal(n, 250);
        /* every doc once: sorted order is checked, so no repeats; count is 250 */
        for (int i = 0; i < n; i++)
            assert_null(strstr(ids[i], "t2"));
        free_ids(ids, n);
    }
    int n = 0;
    char **ids = page_all(s, "t1", "sess_b", NULL, 9, &n);
    assert_int_equal(n, 125);
    free_ids(ids, n);
    ids = page_all(s, "t1", NULL, "queued", 9, &n);
    assert_int_equal(n, 84); /* i % 3 == 0 for i in 0..249 */
    free_ids(ids, n);
    ids = page_all(s, "t1", "sess_a", "queued", 4, &n);
    assert_int_equal(n, 42); /* i even and i % 3 == 0 */
    free_ids(ids, n);
}

static void test_list_tenant_and_bad_input(void **state)
{
    fx *f = *state;
    f->s = open_ok(f);
    store *s = f->s;
    put_250(s);
    int n = 0;
    char **ids = page_all(s, "t2", NULL, NULL, 6, &n);
    assert_int_equal(n, 20);
    for (int i = 0; i < n; i++)
        assert_non_null(strstr(ids[i], "run_t2_"));
    free_ids(ids, n);
    ids = page_all(s, "t3", NULL, NULL, 6, &n);
    assert_int_equal(n, 0);
    free_ids(ids, n);

    const char *bad[] = {"garbage", "c1.", "c1.!!!!", "c1.YWJj", /* no NUL */
                         "c1.YWJjAA", /* nothing after the NUL */ "c2.YWJjAGlk", "c1.YWJjAGlkAA"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        store_list_query q = {"t1", NULL, NULL, bad[i], 10};
        srv_error err = {0};
        char *next = (char *)"x";
        assert_null(s->ops->list(s, STORE_RUN, &q, &next, &err));
        assert_int_equal(err.code, LOOM_ERR_INVALID_REQUEST);
        assert_null(next);
    }
    /* a well-formed one this store could have made works */
    store_list_query ok = {"t1", NULL, NULL, "c1.YWJjAGlk", 10}; /* "abc\0id" */
    srv_error err = {0};
    char *next = NULL;
    char *arr = s->ops->list(s, STORE_RUN, &ok, &next, &err);
    assert_non_null(arr);
    free(arr);
    free(next);
    store_list_query nolimit = {"t1", NULL, NULL, NULL, 0};
    assert_null(s->ops->list(s, STORE_RUN, &nolimit, &next, &err));
    assert_int_equal(err.code, LOOM_ERR_INVALID_REQUEST);
    store_list_query notenant = {NULL, NULL, NULL, NULL, 10};
    assert_null(s->ops->list(s, STORE_RUN, &notenant, &next, &err));
    assert_int_equal(err.code, LOOM_ERR_INVALID_REQUEST);
    /* cursors round-trip odd text */
    char *c = store_cursor_encode("2026|x\n\"y", "id|with\\odd");
    char *at = NULL, *id = NULL;
    assert_int_equal(store_cursor_decode(c, &at, &id), 0);
    assert_string_equal(at, "2026|x\n\"y");
    assert_string_equal(id, "id|with\\odd");
    free(c);
    free(at);
    free(id);
}

static void test_events(void **state)
{
    fx *f = *state;
    f->s = open_ok(f);
    store *s = f->s;
    append_ok(s, "run_a", 1, 3);
    append_ok(s, "run_a", 4, 10);
    append_ok(s, "run_b", 1, 1);
    srv_error err = {0};
    assert_int_equal(s->ops->max_seq(s, "run_a", &err), 10);
    assert_int_equal(s->ops->max_seq(s, "run_b", &err), 1);
    int64_t last = 0;
    char *arr = s->ops->events_after(s, "run_a", 0, 100, &last, &err);
    assert_int_equal(seq_run(arr, 1), 10);
    assert_int_equal(last, 10);
    assert_int_equal(arr[0], '[');
    free(arr);
    arr = s->ops->events_after(s, "run_a", 5, 3, &last, &err);
    assert_int_equal(seq_run(arr, 6), 3);
    assert_int_equal(last, 8);
    free(arr);
    arr = s->ops->events_after(s, "run_a", 10, 3, &last, &err);
    assert_string_equal(arr, "[]");
    assert_int_equal(last, 10);
    free(arr);
    assert_null(s->ops->events_after(s, "run_a", 0, 0, &last, &err));
    assert_int_equal(err.code, LOOM_ERR_INVALID_REQUEST);
}

static int append_raw(store *s, const char *run, const int64_t *seqs, size_t n, srv_error *err)
{
    store_event evs[8];
    for (size_t i = 0; i < n; i++) {
        evs[i].seq = seqs[i];
        evs[i].json = "{\"x\":1}";
    }
    return s->ops->append_events(s, run, evs, n, err);
}

static void test_events_refused(void **state)
{
    fx *f = *state;
    f->s = open_ok(f);
    store *s = f->s;
    srv_error err = {0};
    int64_t first_gap[] = {2};
    assert_int_equal(append_raw(s, "run_g", first_gap, 1, &err), -1);
    assert_int_equal(err.code, LOOM_ERR_INVALID_STATE_TRANSITION);
    append_ok(s, "run_g", 1, 10);
    struct {
        int64_t seqs[4];
        size_t n;
        const char *why;
    } cases[] = {
        {{12}, 1, "hole"},
        {{11, 13}, 2, "hole"},
        {{11, 12, 12}, 3, "rewrite"},
        {{10}, 1, "rewrite"},
        {{5, 6}, 2, "rewrite"},
        {{0}, 1, "rewrite"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        memset(&err, 0, sizeof err);
        assert_int_equal(append_raw(s, "run_g", cases[i].seqs, cases[i].n, &err), -1);
        assert_int_equal(err.code, LOOM_ERR_INVALID_STATE_TRANSITION);
        assert_non_null(strstr(err.message, "run_g"));
        assert_non_null(strstr(err.message, cases[i].why));
        assert_string_equal(err.run_id, "run_g");
        /* nothing of the batch was written */
        assert_int_equal(s->ops->max_seq(s, "run_g", &err), 10);
    }
    int64_t last = 0;
    char *arr = s->ops->events_after(s, "run_g", 0, 100, &last, &err);
    assert_int_equal(seq_run(arr, 1), 10);
    free(arr);
    /* a batch whose one event is not JSON is refused whole too */
    store_event evs[2] = {{11, "{\"ok\":1}"}, {12, "{broken"}};
    assert_int_equal(s->ops->append_events(s, "run_g", evs, 2, &err), -1);
    assert_int_equal(err.code, LOOM_ERR_INVALID_REQUEST);
    assert_int_equal(s->ops->max_seq(s, "run_g", &err), 10);
    /* and the writer is usable after */
    append_ok(s, "run_g", 11, 12);
}

/* append_batch: several runs' events in one transaction, each run checked
 * on its own — a run whose events leave a hole is refused alone, the others
 * are stored; a run with nothing is fine. */
static void test_append_batch(void **state)
{
    fx *f = *state;
    f->s = open_ok(f);
    store *s = f->s;
    srv_error err = {0};
    append_ok(s, "run_b", 1, 2);
    store_event a[2] = {{1, "{\"a\":1}"}, {2, "{\"a\":2}"}};
    store_event b[2] = {{4, "{\"b\":4}"}, {5, "{\"b\":5}"}}; /* run_b is at 2: a hole */
    store_event c[1] = {{1, "{\"c\":1}"}};
    store_append items[4] = {{.run_id = "run_a", .evs = a, .n = 2},
                             {.run_id = "run_b", .evs = b, .n = 2},
                             {.run_id = "run_c", .evs = c, .n = 1},
                             {.run_id = "run_d", .evs = NULL, .n = 0}};
    assert_int_equal(store_append_batch(s, items, 4, &err), 0);
    assert_int_equal(items[0].ret, 0);
    assert_int_equal(items[1].ret, -1);
    assert_int_equal(items[1].err.code, LOOM_ERR_INVALID_STATE_TRANSITION);
    assert_non_null(strstr(items[1].err.message, "hole"));
    assert_int_equal(items[2].ret, 0);
    assert_int_equal(items[3].ret, 0);
    assert_int_equal(s->ops->max_seq(s, "run_a", &err), 2);
    assert_int_equal(s->ops->max_seq(s, "run_b", &err), 2);
    assert_int_equal(s->ops->max_seq(s, "run_c", &err), 1);
    for (int i = 0; i < 4; i++)
        srv_error_clear(&items[i].err);
}

static void test_blobs(void **state)
{
    fx *f = *state;
    f->s = open_ok(f);
    store *s = f->s;
    srv_error err = {0};
    unsigned char bin[3000];
    for (size_t i = 0; i < sizeof bin; i++)
        bin[i] = (unsigned char)(i * 7);
    assert_int_equal(s->ops->put_blob(s, "run_a", "patch.diff", bin, sizeof bin, &err), 0);
    assert_int_equal(s->ops->put_blob(s, "run_a", "empty.txt", NULL, 0, &err), 0);
    assert_int_equal(s->ops->put_blob(s, "run_b", "patch.diff", "B", 1, &err), 0);
    size_t len = 0;
    unsigned char *got = s->ops->get_blob(s, "run_a", "patch.diff", &len, &err);
    assert_int_equal(len, sizeof bin);
    assert_memory_equal(got, bin, sizeof bin);
    free(got);
    got = s->ops->get_blob(s, "run_a", "empty.txt", &len, &err);
    assert_non_null(got);
    assert_int_equal(len, 0);
    free(got);
    assert_int_equal(s->ops->put_blob(s, "run_a", "patch.diff", "new", 3, &err), 0);
    got = s->ops->get_blob(s, "run_a", "patch.diff", &len, &err);
    assert_int_equal(len, 3);
    assert_memory_equal(got, "new", 3);
    free(got);
    got = s->ops->get_blob(s, "run_b", "patch.diff", &len, &err);
    assert_int_equal(len, 1);
    free(got);
}

static void test_reopen(void **state)
{
    fx *f = *state;
    f->s = open_ok(f);
    put_250(f->s);
    append_ok(f->s, "run_r", 1, 40);
    srv_error err = {0};
    assert_int_equal(f->s->ops->put_blob(f->s, "run_r", "report.md", "# hi", 4, &err), 0);
    store_close(f->s);
    f->s = open_ok(f);
    int n = 0;
    char **ids = page_all(f->s, "t1", NULL, NULL, 100, &n);
    assert_int_equal(n, 250);
    free_ids(ids, n);
    assert_int_equal(f->s->ops->max_seq(f->s, "run_r", &err), 40);
    append_ok(f->s, "run_r", 41, 41);
    size_t len = 0;
    char *b = f->s->ops->get_blob(f->s, "run_r", "report.md", &len, &err);
    assert_memory_equal(b, "# hi", 4);
    free(b);
    char *doc = f->s->ops->get(f->s, STORE_RUN, "run_007", &err);
    assert_non_null(strstr(doc, "run_007"));
    free(doc);
}

/* The child: appends batches of 1–3 to run_k forever, writing the last seq
 * of each acknowledged batch to fd. */
static void kill_child(const char *spec, int fd)
{
    srv_error err = {0};
    store *s = store_open(spec, &err);
    if (!s)
        _exit(2);
    int64_t seq = 0;
    for (;;) {
        size_t k = (size_t)(1 + seq % 3);
        store_event evs[3];
        char texts[3][64];
        for (size_t i = 0; i < k; i++) {
            evs[i].seq = seq + 1 + (int64_t)i;
            snprintf(texts[i], sizeof texts[i], "{\"seq\":%lld}", (long long)evs[i].seq);
            evs[i].json = texts[i];
        }
        if (s->ops->append_events(s, "run_k", evs, k, &err) != 0)
            _exit(3);
        seq += (int64_t)k;
        if (write(fd, &seq, sizeof seq) != (ssize_t)sizeof seq)
            _exit(4);
    }
}

static void test_kill9_mid_append(void **state)
{
    fx *f = *state;
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        close(fds[0]);
        kill_child(fx_spec(f), fds[1]);
    }
    close(fds[1]);
    int64_t acked = 0, v;
    int acks = 0;
    while (acks < 120 && read(fds[0], &v, sizeof v) == (ssize_t)sizeof v) {
        acked = v;
        acks++;
    }
    assert_int_equal(acks, 120);
    assert_int_equal(kill(pid, SIGKILL), 0);
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFSIGNALED(status));
    /* whatever the child acknowledged before it died is still in the pipe */
    while (read(fds[0], &v, sizeof v) == (ssize_t)sizeof v)
        acked = v;
    close(fds[0]);
    f->s = open_ok(f);
    srv_error err = {0};
    int64_t max = f->s->ops->max_seq(f->s, "run_k", &err);
    assert_true(max >= acked);
    int64_t last = 0;
    char *arr = f->s->ops->events_after(f->s, "run_k", 0, 10000, &last, &err);
    assert_non_null(arr);
    assert_int_equal(seq_run(arr, 1), max);
    assert_int_equal(last, max);
    free(arr);
    /* and the run goes on from there */
    append_ok(f->s, "run_k", max + 1, max + 2);
}

#define CW 8   /* appending threads */
#define CR 4   /* reading threads */
#define CN 300 /* events per run */

typedef struct conc {
    store *s;
    int idx;
    atomic_int *writers_left;
    atomic_long *holes;
    atomic_long *checks;
    atomic_long *failures;
} conc;

static void *conc_writer(void *arg)
{
    conc *c = arg;
    char run[32];
    snprintf(run, sizeof run, "run_w%d", c->idx);
    int64_t seq = 0;
    unsigned r = (unsigned)c->idx * 2654435761u;
    while (seq < CN) {
        r = r * 1103515245u + 12345u;
        int64_t k = 1 + (int64_t)((r >> 16) % 7);
        if (seq + k > CN)
            k = CN - seq;
        store_event evs[8];
        char texts[8][80];
        for (int64_t i = 0; i < k; i++) {
            evs[i].seq = seq + 1 + i;
            snprintf(texts[i], sizeof texts[i], "{\"seq\":%lld,\"run\":\"%s\"}",
                     (long long)evs[i].seq, run);
            evs[i].json = texts[i];
        }
        srv_error err = {0};
        /* now and then a batch that must be refused, alone, in the middle of
         * others' appends sharing its transaction */
        if ((r >> 8) % 5 == 0) {
            store_event bad[2] = {{seq + 2, "{\"gap\":1}"}, {seq + 1, "{\"ok\":1}"}};
            if (c->s->ops->append_events(c->s, run, bad, 1, &err) != -1 ||
                err.code != LOOM_ERR_INVALID_STATE_TRANSITION)
                atomic_fetch_add(c->failures, 1);
            store_event broken[2] = {{seq + 1, "{\"ok\":1}"}, {seq + 2, "{broken"}};
            if (c->s->ops->append_events(c->s, run, broken, 2, &err) != -1 ||
                err.code != LOOM_ERR_INVALID_REQUEST)
                atomic_fetch_add(c->failures, 1);
        }
        if (c->s->ops->append_events(c->s, run, evs, (size_t)k, &err) != 0) {
            atomic_fetch_add(c->failures, 1);
            break;
        }
        seq += k;
    }
    atomic_fetch_sub(c->writers_left, 1);
    return NULL;
}

static void *conc_reader(void *arg)
{
    conc *c = arg;
    unsigned r = (unsigned)c->idx * 40503u + 7;
    while (atomic_load(c->writers_left) > 0) {
        r = r * 1103515245u + 12345u;
        char run[32];
        snprintf(run, sizeof run, "run_w%u", (r >> 16) % CW);
        srv_error err = {0};
        int64_t before = c->s->ops->max_seq(c->s, run, &err);
        int64_t after = (int64_t)((r >> 8) % 4 == 0 && before > 0 ? (r >> 4) % before : 0);
        int64_t last = 0;
        char *arr = c->s->ops->events_after(c->s, run, after, 10000, &last, &err);
        int64_t end = c->s->ops->max_seq(c->s, run, &err);
        if (!arr || before < 0 || end < 0) {
            atomic_fetch_add(c->failures, 1);
            free(arr);
            continue;
        }
        long n = seq_run(arr, after + 1);
        /* no hole, nothing before the first max_seq missing, nothing past the second */
        if (n < 0 || after + n < before || after + n > end || (n > 0 && last != after + n))
            atomic_fetch_add(c->holes, 1);
        atomic_fetch_add(c->checks, 1);
        free(arr);
    }
    return NULL;
}

static void test_threads(void **state)
{
    fx *f = *state;
    f->s = open_ok(f);
    atomic_int writers_left = CW;
    atomic_long holes = 0, checks = 0, failures = 0;
    pthread_t th[CW + CR];
    conc cs[CW + CR];
    for (int i = 0; i < CW + CR; i++) {
        cs[i] = (conc){f->s, i < CW ? i : i - CW, &writers_left, &holes, &checks, &failures};
        assert_int_equal(pthread_create(&th[i], NULL, i < CW ? conc_writer : conc_reader,
                                        &cs[i]),
                         0);
    }
    for (int i = 0; i < CW + CR; i++)
        pthread_join(th[i], NULL);
    assert_int_equal(atomic_load(&failures), 0);
    assert_int_equal(atomic_load(&holes), 0);
    assert_true(atomic_load(&checks) > 0);
    for (int i = 0; i < CW; i++) {
        char run[32];
        snprintf(run, sizeof run, "run_w%d", i);
        srv_error err = {0};
        assert_int_equal(f->s->ops->max_seq(f->s, run, &err), CN);
        int64_t last = 0;
        char *arr = f->s->ops->events_after(f->s, run, 0, 10000, &last, &err);
        assert_int_equal(seq_run(arr, 1), CN);
        free(arr);
    }
}

#define STORE_CONTRACT_TESTS(setup, teardown)                                              \
    cmocka_unit_test_setup_teardown(test_put_get_replace, setup, teardown),                \
    cmocka_unit_test_setup_teardown(test_not_found, setup, teardown),                      \
    cmocka_unit_test_setup_teardown(test_list_pages, setup, teardown),                     \
    cmocka_unit_test_setup_teardown(test_list_tenant_and_bad_input, setup, teardown),      \
    cmocka_unit_test_setup_teardown(test_events, setup, teardown),                         \
    cmocka_unit_test_setup_teardown(test_events_refused, setup, teardown),                 \
    cmocka_unit_test_setup_teardown(test_append_batch, setup, teardown),                   \
    cmocka_unit_test_setup_teardown(test_blobs, setup, teardown),                          \
    cmocka_unit_test_setup_teardown(test_reopen, setup, teardown),                         \
    cmocka_unit_test_setup_teardown(test_kill9_mid_append, setup, teardown),               \
    cmocka_unit_test_setup_teardown(test_threads, setup, teardown)

#endif
