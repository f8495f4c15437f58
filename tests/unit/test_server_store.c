/* test_server_store.c — the SQLite store of loom serve (store.h): the
 * contract's cases (store_contract.h, the same ones test_server_store_pg.c
 * runs on PostgreSQL) and SQLite's own: schema migrations (forward from an
 * older version, a newer one refused), files that are not a store,
 * checkpoints, overwritten pages. Each test has its own temporary folder.
 * The tests run one at a time; the concurrency test makes its own threads. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <sqlite3.h>
#include <time.h>

#include "tmpdir.h"

#include "store_contract.h"
#include "surfaces/server/store/store_sqlite_int.h"

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
    /* a postgres: value that is not a URL is not taken as a file name, and
     * not echoed (it may hold a password) */
    assert_null(store_open("postgres:user=u password=secret", &err));
    assert_int_equal(err.code, LOOM_ERR_CONFIG);
    assert_null(strstr(err.message, "secret"));
    assert_int_equal(access("postgres:user=u password=secret", F_OK), -1);
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        STORE_CONTRACT_TESTS(fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_migrate_from_v1, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_newer_schema_refused, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_not_a_store, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_checkpoints, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_corrupt_pages, fx_setup, fx_teardown),
    };
    return cmocka_run_group_tests_name("store on SQLite", tests, NULL, NULL);
}
