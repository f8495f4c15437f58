/* test_server_store.c — the SQLite store of loom serve (store.h): documents
 * (put/get/replace, not found, listings with filters and cursors, tenants),
 * events (append, after, max_seq, gaps and rewrites refused whole), blobs,
 * reopening, schema migrations (forward from an older version, a newer one
 * refused), files that are not a store, durability across kill -9 of a
 * child in the middle of appends, and 8 appending threads (sharing group
 * commits, some of their batches refused) beside 4 reading ones. Each test has its own temporary folder. The tests run one at a time;
 * the concurrency test makes its own threads. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <pthread.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdatomic.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tmpdir.h"

#include "surfaces/server/store/store.h"
#include "surfaces/server/store/store_sqlite_int.h"

typedef struct fx {
    char dir[1024];
    char db[PATH_MAX];
    store *s;
} fx;

static int fx_setup(void **state)
{
    fx *f = calloc(1, sizeof *f);
    assert_non_null(f);
    assert_int_equal(tmpdir_make(f->dir, sizeof f->dir, "loom-store", false), 0);
    snprintf(f->db, sizeof f->db, "%s/sub/dir/store.db", f->dir);
    *state = f;
    return 0;
}

static int fx_teardown(void **state)
{
    fx *f = *state;
    store_close(f->s);
    tmpdir_remove(f->dir);
    free(f);
    return 0;
}

static store *open_ok(fx *f)
{
    char spec[PATH_MAX + 32];
    snprintf(spec, sizeof spec, "sqlite:%s", f->db);
    srv_error err = {0};
    store *s = store_open(spec, &err);
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
    /* kinds are separate tables: the same id in another kind is another doc */
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
    assert_non_null(strstr(err.message, f->db));
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
    char *c = sq_cursor_encode("2026|x\n\"y", "id|with\\odd");
    char *at = NULL, *id = NULL;
    assert_int_equal(sq_cursor_decode(c, &at, &id), 0);
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

static int64_t db_int(const char *path, const char *sql)
{
    sqlite3 *db = NULL;
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    sqlite3_stmt *st = NULL;
    assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    int64_t v = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    sqlite3_close(db);
    return v;
}

static void db_exec(const char *path, const char *sql)
{
    sqlite3 *db = NULL;
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    char *msg = NULL;
    if (sqlite3_exec(db, sql, NULL, NULL, &msg) != SQLITE_OK)
        fail_msg("%s: %s", sql, msg);
    sqlite3_close(db);
}

static void test_migrate_from_v1(void **state)
{
    fx *f = *state;
    assert_true(store_sqlite_schema_version >= 2);
    snprintf(f->db, sizeof f->db, "%s/old.db", f->dir);
    db_exec(f->db, "CREATE TABLE schema_version (version INTEGER NOT NULL);"
                   "INSERT INTO schema_version VALUES (1);");
    db_exec(f->db, store_sqlite_migrations[0]);
    db_exec(f->db, "INSERT INTO runs VALUES ('run_old', 't1', 'sess_1', 'queued', "
                   "'2026-01-01T00:00:00.000Z', '{\"run_id\":\"run_old\"}');"
                   "INSERT INTO events VALUES ('run_old', 1, '{\"seq\":1}');");
    f->s = open_ok(f);
    srv_error err = {0};
    char *doc = f->s->ops->get(f->s, STORE_RUN, "run_old", &err);
    assert_string_equal(doc, "{\"run_id\":\"run_old\"}");
    free(doc);
    assert_int_equal(f->s->ops->max_seq(f->s, "run_old", &err), 1);
    append_ok(f->s, "run_old", 2, 3);
    store_close(f->s);
    f->s = NULL;
    assert_int_equal(db_int(f->db, "SELECT max(version) FROM schema_version"),
                     store_sqlite_schema_version);
    assert_int_equal(db_int(f->db, "SELECT count(*) FROM schema_version"), 1);
    assert_int_equal(db_int(f->db, "SELECT count(*) FROM sqlite_master WHERE type='index' "
                                   "AND name='runs_tenant'"),
                     1);
    f->s = open_ok(f); /* and opening again at the current version is a no-op */
}

static void test_newer_schema_refused(void **state)
{
    fx *f = *state;
    f->s = open_ok(f);
    store_close(f->s);
    f->s = NULL;
    db_exec(f->db, "UPDATE schema_version SET version = 99");
    char spec[PATH_MAX + 32];
    snprintf(spec, sizeof spec, "sqlite:%s", f->db);
    srv_error err = {0};
    assert_null(store_open(spec, &err));
    assert_int_equal(err.code, LOOM_ERR_CONFIG);
    assert_non_null(strstr(err.message, f->db));
    assert_non_null(strstr(err.message, "99"));
    char mine[32];
    snprintf(mine, sizeof mine, "program's %d", store_sqlite_schema_version);
    assert_non_null(strstr(err.message, mine));
    /* and it was left as it was */
    assert_int_equal(db_int(f->db, "SELECT version FROM schema_version"), 99);
}

static void test_not_a_store(void **state)
{
    fx *f = *state;
    srv_error err = {0};
    /* text */
    char text[4096];
    memset(text, 'x', sizeof text - 1);
    text[sizeof text - 1] = '\0';
    tmpdir_write(f->dir, "garbage.db", text);
    char path[PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/garbage.db", f->dir);
    assert_null(store_open(path, &err));
    assert_true(err.code == LOOM_ERR_CONFIG || err.code == LOOM_ERR_IO);
    assert_non_null(strstr(err.message, path));
    /* a header-looking file with junk after it */
    char fake[8192];
    memset(fake, 0xA5, sizeof fake);
    memcpy(fake, "SQLite format 3", 16);
    snprintf(path, sizeof path, "%s/fake.db", f->dir);
    FILE *fp = fopen(path, "wb");
    fwrite(fake, 1, sizeof fake, fp);
    fclose(fp);
    memset(&err, 0, sizeof err);
    assert_null(store_open(path, &err));
    assert_true(err.code == LOOM_ERR_CONFIG || err.code == LOOM_ERR_IO);
    assert_non_null(strstr(err.message, path));
    /* someone else's SQLite database */
    snprintf(path, sizeof path, "%s/other.db", f->dir);
    db_exec(path, "CREATE TABLE t (x)");
    memset(&err, 0, sizeof err);
    assert_null(store_open(path, &err));
    assert_int_equal(err.code, LOOM_ERR_CONFIG);
    assert_non_null(strstr(err.message, "not a loom store"));
    /* left as it was: not switched to WAL, nothing added */
    assert_int_equal(db_int(path, "SELECT count(*) FROM pragma_journal_mode "
                                  "WHERE journal_mode = 'delete'"),
                     1);
    assert_int_equal(db_int(path, "SELECT count(*) FROM sqlite_master"), 1);
    /* a folder */
    memset(&err, 0, sizeof err);
    assert_null(store_open(f->dir, &err));
    assert_int_not_equal(err.code, LOOM_OK);
    assert_non_null(strstr(err.message, f->dir));
    /* specs */
    memset(&err, 0, sizeof err);
    assert_null(store_open("sqlite:", &err));
    assert_int_equal(err.code, LOOM_ERR_CONFIG);
    assert_null(store_open("postgres://u:secret@localhost/x", &err));
    assert_int_equal(err.code, LOOM_ERR_CONFIG);
    assert_null(strstr(err.message, "secret"));
    /* a bare path works, folders made */
    snprintf(path, sizeof path, "%s/a/b/c.db", f->dir);
    f->s = store_open(path, &err);
    assert_non_null(f->s);
}

/* The checkpoint thread moves the WAL into the database file: after some
 * thousands of WAL pages of appends, the database file itself grows. */
static void test_checkpoints(void **state)
{
    fx *f = *state;
    f->s = open_ok(f);
    char big[2048];
    memset(big, 'x', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    char *json = malloc(sizeof big + 64);
    for (int64_t seq = 1; seq <= 3000; seq++) {
        snprintf(json, sizeof big + 64, "{\"seq\":%lld,\"pad\":\"%s\"}", (long long)seq, big);
        store_event ev = {seq, json};
        srv_error err = {0};
        if (f->s->ops->append_events(f->s, "run_big", &ev, 1, &err) != 0)
            fail_msg("%s", err.message);
    }
    free(json);
    struct stat st = {0};
    for (int i = 0; i < 100; i++) {
        assert_int_equal(stat(f->db, &st), 0);
        if (st.st_size > 4 * 1024 * 1024)
            break;
        usleep(50 * 1000);
    }
    assert_true(st.st_size > 4 * 1024 * 1024);
    srv_error err = {0};
    assert_int_equal(f->s->ops->max_seq(f->s, "run_big", &err), 3000);
}

/* Overwrites 1 KiB of every third 4 KiB page of path from offset from on. */
static void corrupt_file(const char *path, long from)
{
    FILE *fp = fopen(path, "r+b");
    assert_non_null(fp);
    fseek(fp, 0, SEEK_END);
    long size = ftell(fp);
    assert_true(size > 16384);
    unsigned char junk[1024];
    for (size_t i = 0; i < sizeof junk; i++)
        junk[i] = (unsigned char)(i * 131 + 7);
    for (long off = from < 0 ? size / 2 : from; off + (long)sizeof junk < size; off += 3 * 4096) {
        fseek(fp, off, SEEK_SET);
        fwrite(junk, 1, sizeof junk, fp);
    }
    fclose(fp);
}

/* Reads everything of a damaged store: each call answers or fails with a
 * code and a message naming the file; none crashes. The number of failures. */
static int read_all_damaged(fx *f)
{
    int failures = 0;
    srv_error err = {0};
    for (int i = 0; i < 250; i++) {
        char id[32];
        snprintf(id, sizeof id, "run_%03d", i);
        memset(&err, 0, sizeof err);
        char *doc = f->s->ops->get(f->s, STORE_RUN, id, &err);
        if (!doc) {
            failures++;
            assert_int_not_equal(err.code, LOOM_OK);
        }
        free(doc);
    }
    store_list_query q = {"t1", NULL, NULL, NULL, 1000};
    char *next = NULL;
    memset(&err, 0, sizeof err);
    char *arr = f->s->ops->list(f->s, STORE_RUN, &q, &next, &err);
    if (!arr) {
        failures++;
        assert_non_null(strstr(err.message, f->db));
    }
    free(arr);
    free(next);
    int64_t last = 0;
    memset(&err, 0, sizeof err);
    arr = f->s->ops->events_after(f->s, "run_c", 0, 10000, &last, &err);
    if (!arr) {
        failures++;
        assert_non_null(strstr(err.message, f->db));
    }
    free(arr);
    return failures;
}

/* A store whose pages were overwritten after it was written, in its second
 * half (the schema intact: reads fail) and then from its second page (the
 * schema too: open fails): errors naming the file, never a crash. */
static void test_corrupt_pages(void **state)
{
    fx *f = *state;
    f->s = open_ok(f);
    put_250(f->s);
    append_ok(f->s, "run_c", 1, 2000);
    store_close(f->s);
    f->s = NULL;
    corrupt_file(f->db, -1);
    srv_error err = {0};
    f->s = store_sqlite_open(f->db, &err);
    if (f->s) {
        assert_true(read_all_damaged(f) > 0);
        store_close(f->s);
        f->s = NULL;
    } else {
        assert_non_null(strstr(err.message, f->db));
    }
    corrupt_file(f->db, 4096);
    memset(&err, 0, sizeof err);
    f->s = store_sqlite_open(f->db, &err);
    if (f->s)
        read_all_damaged(f);
    else
        assert_non_null(strstr(err.message, f->db));
}

/* The child: appends batches of 1–3 to run_k forever, writing the last seq
 * of each acknowledged batch to fd. */
static void kill_child(const char *db, int fd)
{
    srv_error err = {0};
    store *s = store_sqlite_open(db, &err);
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
        kill_child(f->db, fds[1]);
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_put_get_replace, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_not_found, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_list_pages, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_list_tenant_and_bad_input, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_events, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_events_refused, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_append_batch, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_blobs, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_reopen, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_migrate_from_v1, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_newer_schema_refused, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_not_a_store, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_checkpoints, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_corrupt_pages, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_kill9_mid_append, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_threads, fx_setup, fx_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
