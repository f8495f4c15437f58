/* test_server_store_pg.c — the PostgreSQL store of loom serve (store.h)
 * against a real PostgreSQL 15 server: the contract's cases
 * (store_contract.h, the same ones test_server_store.c runs on SQLite) and
 * PostgreSQL's own: several processes migrating one database at once, a
 * schema newer than the program refused, threads racing to append to one
 * run (every acknowledged event stored once, no hole), a batch whose runs
 * are refused one by one, an append that loses the race on the primary key
 * inside the server, connections the server drops, URLs (the password
 * never in a message), and the leases and controls of workers sharing the
 * store (claims per session, expiry, fairness and caps across tenants).
 *
 * The server is this test's own: ctest runs it through tests/pg/with_pg.sh,
 * which starts one (tests/pg/start.sh) and sets LOOM_TEST_PG_URL. Every case
 * starts from an empty database (the public schema dropped and made again).
 * The tests run one at a time; the concurrent ones make their own threads
 * and processes. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <libpq-fe.h>

#include "tmpdir.h"

#include "store_contract.h"
#include "surfaces/server/store/store_pg_int.h"

static const char *pg_url(void)
{
    const char *url = getenv("LOOM_TEST_PG_URL");
    if (!url || !*url)
        fail_msg("LOOM_TEST_PG_URL is not set: run this test through tests/pg/with_pg.sh "
                 "(ctest does)");
    return url;
}

static void quiet(void *arg, const char *msg)
{
    (void)arg;
    (void)msg;
}

/* Runs sql on a connection of the test's own; the first value of the
 * first row as a number (0 when there is none). */
static long long db_sql(const char *sql)
{
    PGconn *c = PQconnectdb(pg_url());
    if (PQstatus(c) != CONNECTION_OK)
        fail_msg("connect: %s", PQerrorMessage(c));
    PQsetNoticeProcessor(c, quiet, NULL);
    PGresult *r = PQexec(c, sql);
    ExecStatusType es = PQresultStatus(r);
    if (es != PGRES_COMMAND_OK && es != PGRES_TUPLES_OK)
        fail_msg("%s: %s", sql, PQresultErrorMessage(r));
    long long v = es == PGRES_TUPLES_OK && PQntuples(r) > 0 ? strtoll(PQgetvalue(r, 0, 0), NULL, 10)
                                                             : 0;
    PQclear(r);
    PQfinish(c);
    return v;
}

static int fx_setup(void **state)
{
    fx *f = calloc(1, sizeof *f);
    assert_non_null(f);
    assert_int_equal(tmpdir_make(f->dir, sizeof f->dir, "loom-store-pg", false), 0);
    snprintf(f->spec, sizeof f->spec, "%s", pg_url());
    db_sql("DROP SCHEMA public CASCADE; CREATE SCHEMA public");
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

/* Six processes open the same empty database at the same moment (released
 * together by closing a pipe): every open succeeds, the schema is made once
 * (one version row, the current one), and the store works after. */
static void test_migrate_at_once(void **state)
{
    fx *f = *state;
    enum { KIDS = 6 };
    int go[2];
    assert_int_equal(pipe(go), 0);
    pid_t kids[KIDS];
    fflush(NULL);
    for (int i = 0; i < KIDS; i++) {
        kids[i] = fork();
        assert_true(kids[i] >= 0);
        if (kids[i] == 0) {
            close(go[1]);
            char b;
            if (read(go[0], &b, 1) != 0)
                _exit(5);
            srv_error err = {0};
            store *s = store_open(f->spec, &err);
            if (!s) {
                fprintf(stderr, "child %d: %s\n", i, err.message);
                _exit(2);
            }
            char run[32];
            snprintf(run, sizeof run, "run_kid%d", i);
            store_event ev = {1, "{\"seq\":1}"};
            int rc = s->ops->append_events(s, run, &ev, 1, &err);
            store_close(s);
            _exit(rc == 0 ? 0 : 3);
        }
    }
    close(go[0]);
    close(go[1]); /* all of them go */
    for (int i = 0; i < KIDS; i++) {
        int status = 0;
        assert_int_equal(waitpid(kids[i], &status, 0), kids[i]);
        assert_true(WIFEXITED(status));
        assert_int_equal(WEXITSTATUS(status), 0);
    }
    assert_int_equal(db_sql("SELECT count(*) FROM loom_schema_version"), 1);
    assert_int_equal(db_sql("SELECT version FROM loom_schema_version"), store_pg_schema_version);
    assert_int_equal(db_sql("SELECT count(*) FROM loom_events"), KIDS);
    f->s = open_ok(f);
    srv_error err = {0};
    assert_int_equal(f->s->ops->max_seq(f->s, "run_kid3", &err), 1);
}

static void test_newer_schema_refused(void **state)
{
    fx *f = *state;
    f->s = open_ok(f);
    put_ok(f->s, STORE_RUN, "run_1", "t1", NULL, "queued", "2026-12-03T00:00:00Z", "{}");
    store_close(f->s);
    f->s = NULL;
    db_sql("UPDATE loom_schema_version SET version = 99");
    srv_error err = {0};
    assert_null(store_open(f->spec, &err));
    assert_int_equal(err.code, LOOM_ERR_CONFIG);
    assert_non_null(strstr(err.message, f->spec));
    assert_non_null(strstr(err.message, "99"));
    char mine[32];
    snprintf(mine, sizeof mine, "program's %d", store_pg_schema_version);
    assert_non_null(strstr(err.message, mine));
    /* and it was left as it was */
    assert_int_equal(db_sql("SELECT version FROM loom_schema_version"), 99);
    assert_int_equal(db_sql("SELECT count(*) FROM loom_documents"), 1);
}

/* Threads racing to append to ONE run, each reading max_seq and appending
 * the next 1–3 events, again when refused: the run ends with seq 1..N, no
 * hole, and each thread's acknowledged events are exactly the ones stored
 * under its name (none lost, none overwritten by another thread). */
#define RACE_THREADS 6
#define RACE_N 240

typedef struct racer {
    store *s;
    int idx;
    long acked, refused, failed;
} racer;

static void *race_one(void *arg)
{
    racer *r = arg;
    unsigned rnd = (unsigned)r->idx * 2654435761u + 1;
    for (;;) {
        srv_error err = {0};
        int64_t max = r->s->ops->max_seq(r->s, "run_race", &err);
        if (max < 0) {
            r->failed++;
            return NULL;
        }
        if (max >= RACE_N)
            return NULL;
        rnd = rnd * 1103515245u + 12345u;
        size_t k = 1 + (rnd >> 16) % 3;
        store_event evs[3];
        char texts[3][64];
        for (size_t i = 0; i < k; i++) {
            evs[i].seq = max + 1 + (int64_t)i;
            snprintf(texts[i], sizeof texts[i], "{\"seq\":%lld,\"by\":%d}",
                     (long long)evs[i].seq, r->idx);
            evs[i].json = texts[i];
        }
        if (r->s->ops->append_events(r->s, "run_race", evs, k, &err) == 0)
            r->acked += (long)k;
        else if (err.code == LOOM_ERR_INVALID_STATE_TRANSITION)
            r->refused++;
        else {
            fprintf(stderr, "racer %d: %s\n", r->idx, err.message);
            r->failed++;
            return NULL;
        }
    }
}

static void test_same_run_threads(void **state)
{
    fx *f = *state;
    f->s = open_ok(f);
    pthread_t th[RACE_THREADS];
    racer rs[RACE_THREADS];
    for (int i = 0; i < RACE_THREADS; i++) {
        rs[i] = (racer){.s = f->s, .idx = i};
        assert_int_equal(pthread_create(&th[i], NULL, race_one, &rs[i]), 0);
    }
    long acked = 0;
    for (int i = 0; i < RACE_THREADS; i++) {
        pthread_join(th[i], NULL);
        assert_int_equal(rs[i].failed, 0);
        acked += rs[i].acked;
    }
    srv_error err = {0};
    int64_t max = f->s->ops->max_seq(f->s, "run_race", &err);
    assert_true(max >= RACE_N && max < RACE_N + 3);
    assert_int_equal(acked, max);
    int64_t last = 0;
    char *arr = f->s->ops->events_after(f->s, "run_race", 0, 10000, &last, &err);
    assert_int_equal(seq_run(arr, 1), max);
    free(arr);
    for (int i = 0; i < RACE_THREADS; i++) {
        char sql[160];
        snprintf(sql, sizeof sql,
                 "SELECT count(*) FROM loom_events WHERE run_id = 'run_race' AND "
                 "(json->>'by')::int = %d",
                 i);
        assert_int_equal(db_sql(sql), rs[i].acked);
    }
}

/* One transaction, five runs: a good one, one leaving a hole, one with an
 * event that is not JSON, one rewriting a stored event, another good one.
 * The three refused alone with their own code and run; the two good ones
 * stored whole; the refused ones left exactly as they were. */
static void test_batch_refusals(void **state)
{
    fx *f = *state;
    f->s = open_ok(f);
    append_ok(f->s, "run_hole", 1, 3);
    append_ok(f->s, "run_rewrite", 1, 2);
    store_event good1[2] = {{1, "{\"g\":1}"}, {2, "{\"g\":2}"}};
    store_event hole[1] = {{5, "{\"h\":5}"}};
    store_event notjson[2] = {{1, "{\"ok\":1}"}, {2, "{nope"}};
    store_event rewrite[1] = {{2, "{\"r\":2}"}};
    store_event good2[1] = {{1, "{\"g\":1}"}};
    store_append items[5] = {{.run_id = "run_good1", .evs = good1, .n = 2},
                             {.run_id = "run_hole", .evs = hole, .n = 1},
                             {.run_id = "run_notjson", .evs = notjson, .n = 2},
                             {.run_id = "run_rewrite", .evs = rewrite, .n = 1},
                             {.run_id = "run_good2", .evs = good2, .n = 1}};
    srv_error err = {0};
    assert_int_equal(store_append_batch(f->s, items, 5, &err), 0);
    assert_int_equal(items[0].ret, 0);
    assert_int_equal(items[4].ret, 0);
    assert_int_equal(items[1].ret, -1);
    assert_int_equal(items[1].err.code, LOOM_ERR_INVALID_STATE_TRANSITION);
    assert_non_null(strstr(items[1].err.message, "hole"));
    assert_string_equal(items[1].err.run_id, "run_hole");
    assert_int_equal(items[2].ret, -1);
    assert_int_equal(items[2].err.code, LOOM_ERR_INVALID_REQUEST);
    assert_string_equal(items[2].err.run_id, "run_notjson");
    assert_non_null(strstr(items[2].err.message, "append_events run run_notjson"));
    assert_int_equal(items[3].ret, -1);
    assert_non_null(strstr(items[3].err.message, "rewrite"));
    assert_int_equal(f->s->ops->max_seq(f->s, "run_good1", &err), 2);
    assert_int_equal(f->s->ops->max_seq(f->s, "run_good2", &err), 1);
    assert_int_equal(f->s->ops->max_seq(f->s, "run_hole", &err), 3);
    assert_int_equal(f->s->ops->max_seq(f->s, "run_notjson", &err), 0);
    assert_int_equal(f->s->ops->max_seq(f->s, "run_rewrite", &err), 2);
    assert_int_equal(db_sql("SELECT count(*) FROM loom_events WHERE json::text = '{\"r\":2}'"), 0);
    for (int i = 0; i < 5; i++)
        srv_error_clear(&items[i].err);
}

typedef struct blocked_append {
    store *s;
    int ret;
    srv_error err;
} blocked_append;

static void *append_seq1(void *arg)
{
    blocked_append *b = arg;
    store_event ev = {1, "{\"from\":\"store\"}"};
    b->ret = b->s->ops->append_events(b->s, "run_taken", &ev, 1, &b->err);
    return NULL;
}

/* Another writer (a second loom-serve, here a plain connection) has
 * inserted seq 1 of a run and not committed yet: the store's append of seq
 * 1 reads the highest seq as 0, waits on the key inside the server, and
 * once the other commits is refused as a rewrite — not an I/O failure,
 * not a duplicate — and the other's event is the one stored. */
static void test_append_loses_race(void **state)
{
    fx *f = *state;
    f->s = open_ok(f);
    PGconn *other = PQconnectdb(f->spec);
    assert_int_equal(PQstatus(other), CONNECTION_OK);
    PQclear(PQexec(other, "BEGIN"));
    PGresult *r = PQexec(other, "INSERT INTO loom_events VALUES ('run_taken', 1, "
                                "'{\"from\":\"other\"}')");
    assert_int_equal(PQresultStatus(r), PGRES_COMMAND_OK);
    PQclear(r);
    blocked_append b = {.s = f->s, .ret = 99};
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, append_seq1, &b), 0);
    /* wait until the store's insert is waiting on the other's lock */
    long long waiting = 0;
    for (int i = 0; i < 20000 && !waiting; i++) {
        waiting = db_sql("SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' "
                         "AND query LIKE 'INSERT INTO loom_events%'");
        if (!waiting)
            usleep(1000);
    }
    assert_int_equal(waiting, 1);
    PQclear(PQexec(other, "COMMIT"));
    pthread_join(th, NULL);
    PQfinish(other);
    assert_int_equal(b.ret, -1);
    assert_int_equal(b.err.code, LOOM_ERR_INVALID_STATE_TRANSITION);
    assert_non_null(strstr(b.err.message, "another writer"));
    assert_string_equal(b.err.run_id, "run_taken");
    srv_error err = {0};
    int64_t last = 0;
    char *arr = f->s->ops->events_after(f->s, "run_taken", 0, 10, &last, &err);
    assert_string_equal(arr, "[{\"from\":\"other\"}]");
    free(arr);
    /* and the store goes on from there */
    append_ok(f->s, "run_taken", 2, 3);
}

/* The server drops every connection of the store (a restart, an
 * administrator): calls fail with io_failed, retryable, naming the store,
 * until each connection has reconnected; then everything works again and
 * nothing stored was lost. */
static void test_connections_dropped(void **state)
{
    fx *f = *state;
    f->s = open_ok(f);
    append_ok(f->s, "run_d", 1, 5);
    /* the store's own server processes, by pid: not a leftover of an
     * earlier case's child that the server has not reaped yet */
    pg_store *q = (pg_store *)f->s;
    char sql[512];
    int at = snprintf(sql, sizeof sql, "SELECT count(pg_terminate_backend(pid)) FROM "
                                       "pg_stat_activity WHERE pid IN (");
    for (int i = 0; i < PG_POOL; i++)
        at += snprintf(sql + at, sizeof sql - (size_t)at, "%s%d", i ? ", " : "",
                       PQbackendPID(q->conns[i]));
    snprintf(sql + at, sizeof sql - (size_t)at, ")");
    long long killed = db_sql(sql);
    assert_int_equal(killed, PG_POOL);
    int failures = 0, ok_in_a_row = 0;
    for (int i = 0; i < 4 * PG_POOL && ok_in_a_row < 2 * PG_POOL; i++) {
        srv_error err = {0};
        int64_t v = f->s->ops->max_seq(f->s, "run_d", &err);
        if (v == 5) {
            ok_in_a_row++;
            continue;
        }
        ok_in_a_row = 0;
        failures++;
        assert_int_equal(v, -1);
        assert_int_equal(err.code, LOOM_ERR_IO);
        assert_true(err.retryable);
        assert_non_null(strstr(err.message, f->spec));
    }
    assert_true(failures <= PG_POOL);
    assert_int_equal(ok_in_a_row, 2 * PG_POOL);
    append_ok(f->s, "run_d", 6, 6);
}

/* URLs: a password never reaches a message; what libpq cannot read, a
 * server that is not there and a database that does not exist are each
 * a clear refusal. */
static void test_urls(void **state)
{
    fx *f = *state;
    srv_error err = {0};
    char url[PATH_MAX + 64];
    snprintf(url, sizeof url, "postgresql://loom:s3cret-pw@/loomtest?host=%s/nothing-here",
             f->dir);
    assert_null(store_open(url, &err));
    assert_int_equal(err.code, LOOM_ERR_IO);
    assert_null(strstr(err.message, "s3cret"));
    char shown[PATH_MAX + 64];
    snprintf(shown, sizeof shown, "store postgresql://loom@/loomtest?host=%s/nothing-here: open",
             f->dir);
    assert_non_null(strstr(err.message, shown));
    memset(&err, 0, sizeof err);
    assert_null(store_open("postgresql://loom:s3cret-pw@/loomtest?nosuchoption=1", &err));
    assert_int_equal(err.code, LOOM_ERR_CONFIG);
    assert_null(strstr(err.message, "s3cret"));
    memset(&err, 0, sizeof err);
    assert_null(store_open("postgres://loom:s3cret-%zz@/x", &err));
    assert_int_equal(err.code, LOOM_ERR_CONFIG);
    assert_null(strstr(err.message, "s3cret"));
    memset(&err, 0, sizeof err);
    assert_null(store_open("postgresql:host=/tmp password=s3cret", &err));
    assert_int_equal(err.code, LOOM_ERR_CONFIG);
    assert_null(strstr(err.message, "s3cret"));
    /* the real server, a database it does not have */
    const char *q = strchr(f->spec, '?');
    assert_non_null(q);
    snprintf(url, sizeof url, "postgresql://loom@/no_such_db%s", q);
    memset(&err, 0, sizeof err);
    assert_null(store_open(url, &err));
    assert_non_null(strstr(err.message, "no_such_db"));
    assert_non_null(strstr(err.message, "does not exist"));
    /* and the postgres:// spelling opens the same store */
    snprintf(url, sizeof url, "postgres://%s", f->spec + strlen("postgresql://"));
    memset(&err, 0, sizeof err);
    f->s = store_open(url, &err);
    if (!f->s)
        fail_msg("%s", err.message);
}

/* ---- leases (store_pg_lease.c) ------------------------------------------ */

static void put_run(store *s, const char *id, const char *tenant, const char *session,
                    const char *state, const char *created_at)
{
    char json[256];
    snprintf(json, sizeof json, "{\"run_id\":\"%s\",\"state\":\"%s\"}", id, state);
    store_doc_keys k = {tenant, session, state, created_at};
    srv_error err = {0};
    assert_int_equal(s->ops->put(s, STORE_RUN, id, &k, json, &err), 0);
}

/* Claims for worker; the ids sorted into one comma-joined text. */
static void claim(store *s, const char *worker, int ttl, int max, const store_tenant_cap *caps,
                  size_t ncaps, char *out, size_t cap)
{
    store_lease *ids = NULL;
    srv_error err = {0};
    int n = s->ops->lease_claim(s, worker, ttl, max, caps, ncaps, &ids, &err);
    if (n < 0)
        fail_msg("claim: %s", err.message);
    for (int i = 0; i < n; i++) { /* a few: insertion sort */
        assert_true(ids[i].epoch > 0);
        for (int j = i; j > 0 && strcmp(ids[j - 1].run_id, ids[j].run_id) > 0; j--) {
            store_lease t = ids[j];
            ids[j] = ids[j - 1];
            ids[j - 1] = t;
        }
    }
    out[0] = '\0';
    for (int i = 0; i < n; i++) {
        size_t l = strlen(out);
        snprintf(out + l, cap - l, "%s%s", i ? "," : "", ids[i].run_id);
    }
    store_leases_free(ids, n);
}

/* The epoch of run_id's lease, 0 when none. */
static int64_t epoch_of(const char *run_id)
{
    char sql[200];
    snprintf(sql, sizeof sql, "SELECT coalesce(max(epoch), 0) FROM loom_leases WHERE run_id = '%s'",
             run_id);
    return db_sql(sql);
}

static store *open_store(fx *f)
{
    srv_error err = {0};
    f->s = store_pg_open(f->spec, &err);
    if (!f->s)
        fail_msg("open: %s", err.message);
    return f->s;
}

/* One run per session, a held session's other runs left alone, a lease
 * won by one worker only, an ended run's release freeing its session. */
static void test_lease_claim_sessions(void **state)
{
    store *s = open_store(*state);
    put_run(s, "run_a1", "t1", "sess_a", "queued", "2026-01-01T00:00:01Z");
    put_run(s, "run_a2", "t1", "sess_a", "queued", "2026-01-01T00:00:02Z");
    put_run(s, "run_b1", "t1", "sess_b", "running", "2026-01-01T00:00:03Z");
    put_run(s, "run_c1", "t2", "sess_c", "completed", "2026-01-01T00:00:04Z");
    char got[256];
    claim(s, "wA", 60000, 10, NULL, 0, got, sizeof got);
    assert_string_equal(got, "run_a1,run_b1"); /* a2 waits for a1; c1 has ended */
    claim(s, "wB", 60000, 10, NULL, 0, got, sizeof got);
    assert_string_equal(got, "");
    srv_error err = {0};
    assert_int_equal(s->ops->lease_renew(s, "wA", 60000, NULL, &err), 2);
    assert_int_equal(s->ops->lease_renew(s, "wB", 60000, NULL, &err), 0);
    put_run(s, "run_a1", "t1", "sess_a", "completed", "2026-01-01T00:00:01Z");
    assert_int_equal(s->ops->lease_release(s, "run_a1", "wB", &err), 0); /* not B's: kept */
    claim(s, "wB", 60000, 10, NULL, 0, got, sizeof got);
    assert_string_equal(got, "");
    assert_int_equal(s->ops->lease_release(s, "run_a1", "wA", &err), 0);
    claim(s, "wB", 60000, 10, NULL, 0, got, sizeof got);
    assert_string_equal(got, "run_a2");
}

/* An expired lease is another worker's to take; its old holder's renewal
 * no longer covers it. */
static void test_lease_expiry(void **state)
{
    store *s = open_store(*state);
    put_run(s, "run_x", "t1", "sess_x", "running", "2026-01-01T00:00:01Z");
    char got[256];
    claim(s, "wA", 300, 10, NULL, 0, got, sizeof got);
    assert_string_equal(got, "run_x");
    claim(s, "wB", 60000, 10, NULL, 0, got, sizeof got);
    assert_string_equal(got, "");
    db_sql("SELECT pg_sleep(0.4)");
    claim(s, "wB", 60000, 10, NULL, 0, got, sizeof got);
    assert_string_equal(got, "run_x");
    srv_error err = {0};
    assert_int_equal(s->ops->lease_renew(s, "wA", 60000, NULL, &err), 0);
    assert_int_equal(db_sql("SELECT count(*) FROM loom_leases WHERE worker_id = 'wB'"), 1);
}

/* Tenants in turn, oldest first within one, a tenant at its cap (counted
 * over every worker's live leases) skipped; max respected. */
static void test_lease_fair_and_capped(void **state)
{
    store *s = open_store(*state);
    put_run(s, "run_t1a", "t1", "s1", "queued", "2026-01-01T00:00:01Z");
    put_run(s, "run_t1b", "t1", "s2", "queued", "2026-01-01T00:00:02Z");
    put_run(s, "run_t1c", "t1", "s3", "queued", "2026-01-01T00:00:03Z");
    put_run(s, "run_t2a", "t2", "s4", "queued", "2026-01-01T00:00:09Z");
    char got[256];
    claim(s, "wA", 60000, 2, NULL, 0, got, sizeof got);
    assert_string_equal(got, "run_t1a,run_t2a"); /* not t1's three first */
    store_tenant_cap caps[] = {{"t1", 2}, {"t\"2", 5}};
    claim(s, "wB", 60000, 10, caps, 2, got, sizeof got);
    assert_string_equal(got, "run_t1b"); /* t1 holds one (wA's): one more to its cap */
    claim(s, "wC", 60000, 10, caps, 2, got, sizeof got);
    assert_string_equal(got, "");
}

/* Fencing: wA's lease expires and wB reclaims the run; wA's writes with its
 * old epoch are refused (events and the run document, nothing written)
 * and its renewal no longer names the run; wB's go through. A release
 * and a new claim give a larger epoch still. */
static void test_fencing(void **state)
{
    store *s = open_store(*state);
    put_run(s, "run_f", "t1", "sess_f", "running", "2026-01-01T00:00:01Z");
    char got[256];
    claim(s, "wA", 300, 10, NULL, 0, got, sizeof got);
    int64_t ea = epoch_of("run_f");
    srv_error err = {0};
    store_lease *held = NULL;
    assert_int_equal(s->ops->lease_renew(s, "wA", 300, &held, &err), 1);
    assert_string_equal(held[0].run_id, "run_f");
    assert_int_equal(held[0].epoch, ea);
    store_leases_free(held, 1);
    store_event e1[] = {{1, "{\"seq\":1,\"by\":\"A\"}"}};
    store_append a1 = {.run_id = "run_f", .evs = e1, .n = 1, .fence = {"wA", ea}};
    assert_int_equal(store_append_batch(s, &a1, 1, &err), 0);
    assert_int_equal(a1.ret, 0);
    db_sql("SELECT pg_sleep(0.4)");
    claim(s, "wB", 60000, 10, NULL, 0, got, sizeof got);
    assert_string_equal(got, "run_f");
    int64_t eb = epoch_of("run_f");
    assert_true(eb > ea);
    store_event e2[] = {{2, "{\"seq\":2,\"by\":\"A\"}"}};
    store_append a2 = {.run_id = "run_f", .evs = e2, .n = 1, .fence = {"wA", ea}};
    assert_int_equal(store_append_batch(s, &a2, 1, &err), 0);
    assert_int_equal(a2.ret, STORE_FENCED);
    assert_int_equal(a2.err.code, LOOM_ERR_INVALID_STATE_TRANSITION);
    assert_non_null(strstr(a2.err.message, "no longer wA's"));
    srv_error_clear(&a2.err);
    store_event e2b[] = {{2, "{\"seq\":2,\"by\":\"B\"}"}};
    store_append b2 = {.run_id = "run_f", .evs = e2b, .n = 1, .fence = {"wB", eb}};
    assert_int_equal(store_append_batch(s, &b2, 1, &err), 0);
    assert_int_equal(b2.ret, 0);
    assert_int_equal(db_sql("SELECT count(*) FROM loom_events WHERE run_id = 'run_f' "
                            "AND json->>'by' = 'A'"), 1);
    store_doc_keys k = {"t1", "sess_f", "completed", "2026-01-01T00:00:01Z"};
    store_fence fa = {"wA", ea}, fb = {"wB", eb};
    assert_int_equal(s->ops->put_fenced(s, STORE_RUN, "run_f", &k, "{\"by\":\"A\"}", &fa, &err),
                     STORE_FENCED);
    srv_error_clear(&err);
    assert_int_equal(db_sql("SELECT count(*) FROM loom_documents WHERE id = 'run_f' "
                            "AND state = 'running'"), 1);
    assert_int_equal(s->ops->put_fenced(s, STORE_RUN, "run_f", &k, "{\"by\":\"B\"}", &fb, &err),
                     0);
    assert_int_equal(db_sql("SELECT count(*) FROM loom_documents WHERE id = 'run_f' "
                            "AND state = 'completed'"), 1);
    assert_int_equal(s->ops->lease_renew(s, "wA", 300, &held, &err), 0);
    store_leases_free(held, 0);
    put_run(s, "run_f", "t1", "sess_f", "queued", "2026-01-01T00:00:01Z");
    assert_int_equal(s->ops->lease_release(s, "run_f", "wB", &err), 0);
    claim(s, "wA", 60000, 10, NULL, 0, got, sizeof got);
    assert_string_equal(got, "run_f");
    assert_true(epoch_of("run_f") > eb); /* a new claim after a release: larger still */
}

/* Session records (store_pg_records.c): a batch is stored whole and in
 * order, fenced by the run's lease; a refused batch leaves nothing; load
 * gives the lines back byte for byte, '\n' after each. */
static void test_session_records(void **state)
{
    store *s = open_store(*state);
    put_run(s, "run_r", "t1", "sess_r", "running", "2026-01-01T00:00:01Z");
    char got[256];
    claim(s, "wA", 300, 10, NULL, 0, got, sizeof got);
    int64_t ea = epoch_of("run_r");
    srv_error err = {0};
    store_fence fa = {"wA", ea};
    const char *first[] = {"{\"type\":\"session-meta\",\"id\":\"m\"}",
                           "{\"type\":\"message\",\"text\":\"caf\u00e9 \\u2028 \\\"q\\\"\"}"};
    assert_int_equal(s->ops->records_append(s, "ls1", 0, first, 2, "run_r", &fa, &err), 0);
    /* Out of order (a gap, or a second writer from the same position). */
    const char *late[] = {"{\"type\":\"message\",\"n\":9}"};
    assert_int_equal(s->ops->records_append(s, "ls1", 5, late, 1, "run_r", &fa, &err), -1);
    assert_non_null(strstr(err.message, "out of order"));
    srv_error_clear(&err);
    assert_int_equal(s->ops->records_append(s, "ls1", 1, late, 1, "run_r", &fa, &err), -1);
    srv_error_clear(&err);
    /* Another worker takes the run over: the old holder's batch is refused. */
    db_sql("SELECT pg_sleep(0.4)");
    claim(s, "wB", 60000, 10, NULL, 0, got, sizeof got);
    assert_string_equal(got, "run_r");
    store_fence fb = {"wB", epoch_of("run_r")};
    const char *stale[] = {"{\"type\":\"message\",\"by\":\"A\"}",
                           "{\"type\":\"message\",\"by\":\"A2\"}"};
    assert_int_equal(s->ops->records_append(s, "ls1", 2, stale, 2, "run_r", &fa, &err),
                     STORE_FENCED);
    assert_non_null(strstr(err.message, "no longer wA's"));
    srv_error_clear(&err);
    const char *next[] = {"{\"type\":\"message\",\"by\":\"B\"}"};
    assert_int_equal(s->ops->records_append(s, "ls1", 2, next, 1, "run_r", &fb, &err), 0);
    assert_int_equal(db_sql("SELECT count(*) FROM loom_session_records WHERE line LIKE '%\"A%'"),
                     0);
    size_t len = 0;
    char *buf = s->ops->records_load(s, "ls1", &len, &err);
    assert_non_null(buf);
    char want[512];
    snprintf(want, sizeof want, "%s\n%s\n%s\n", first[0], first[1], next[0]);
    assert_int_equal(len, strlen(want));
    assert_memory_equal(buf, want, len);
    free(buf);
    buf = s->ops->records_load(s, "nobody", &len, &err);
    assert_non_null(buf);
    assert_int_equal(len, 0);
    free(buf);
}

/* Notices (store_pg_listen.c): what another store (another process) does
 * reaches a listening one, with the ids the triggers put in; a foreign
 * payload on one of the channels is ignored; an unlisten stops them. */
typedef struct notices {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    char seen[2048];
    int resyncs;
} notices;

static void on_notice(void *ctx, store_notice what, const char *run_id, const char *state,
                      int64_t seq)
{
    notices *n = ctx;
    pthread_mutex_lock(&n->mu);
    size_t l = strlen(n->seen);
    if (what == STORE_NOTICE_RESYNC)
        n->resyncs++;
    else
        snprintf(n->seen + l, sizeof n->seen - l, "%s%d:%s:%s:%lld", l ? " " : "", (int)what,
                 run_id, state, (long long)seq);
    pthread_cond_broadcast(&n->cv);
    pthread_mutex_unlock(&n->mu);
}

/* Waits (a bound, not a timing check: 20 s) until want is in what was seen. */
static bool saw(notices *n, const char *want)
{
    pthread_mutex_lock(&n->mu);
    for (int i = 0; i < 200 && !strstr(n->seen, want); i++) {
        struct timespec dl;
        clock_gettime(CLOCK_REALTIME, &dl);
        dl.tv_nsec += 100000000;
        if (dl.tv_nsec >= 1000000000)
            dl.tv_sec++, dl.tv_nsec -= 1000000000;
        pthread_cond_timedwait(&n->cv, &n->mu, &dl);
    }
    bool ok = strstr(n->seen, want) != NULL;
    pthread_mutex_unlock(&n->mu);
    return ok;
}

/* Waits (bounded) for the listener's first connection: notifications sent
 * before its LISTEN are not its. */
static void wait_listening(notices *n)
{
    for (int i = 0; i < 200; i++) {
        pthread_mutex_lock(&n->mu);
        int k = n->resyncs;
        pthread_mutex_unlock(&n->mu);
        if (k > 0)
            return;
        db_sql("SELECT pg_sleep(0.1)");
    }
    fail_msg("the listener never connected");
}

static void test_notices(void **state)
{
    fx *f = *state;
    store *s = open_store(f);
    notices n = {.mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER};
    srv_error err = {0};
    assert_int_equal(s->ops->listen(s, on_notice, &n, &err), 0);
    wait_listening(&n);
    srv_error oerr = {0};
    store *other = store_pg_open(f->spec, &oerr);
    assert_non_null(other);
    db_sql("SELECT pg_notify('loom_events', 'no-seq-here')"); /* ignored */
    put_run(other, "run_n", "t1", "sess_n", "queued", "2026-01-01T00:00:01Z");
    store_event ev[] = {{1, "{\"seq\":1}"}, {2, "{\"seq\":2}"}};
    assert_int_equal(other->ops->append_events(other, "run_n", ev, 2, &oerr), 0);
    assert_int_equal(other->ops->control_send(other, "run_n", "{\"what\":\"cancel\"}", &oerr), 0);
    assert_true(saw(&n, "2:run_n:queued:0"));
    assert_true(saw(&n, "0:run_n::2"));
    assert_true(saw(&n, "1:run_n::0"));
    pthread_mutex_lock(&n.mu);
    assert_null(strstr(n.seen, "no-seq-here"));
    assert_true(n.resyncs == 1); /* one connection, made once */
    pthread_mutex_unlock(&n.mu);
    s->ops->unlisten(s);
    store_close(other);
}

/* Priorities: a tenant's runs by their document's priority, highest first,
 * then oldest; tenants still in turn (one tenant's high priorities never
 * pass another tenant's runs); a priority that is not a number is 0. */
static void put_prio(store *s, const char *id, const char *tenant, const char *session,
                     const char *prio, const char *created_at)
{
    char json[256];
    snprintf(json, sizeof json, "{\"run_id\":\"%s\",\"state\":\"queued\",\"priority\":%s}", id,
             prio);
    store_doc_keys k = {tenant, session, "queued", created_at};
    srv_error err = {0};
    assert_int_equal(s->ops->put(s, STORE_RUN, id, &k, json, &err), 0);
}

static void test_lease_priority(void **state)
{
    store *s = open_store(*state);
    put_prio(s, "run_p_old", "t1", "s1", "0", "2026-01-01T00:00:01Z");
    put_prio(s, "run_p_hi", "t1", "s2", "5", "2026-01-01T00:00:05Z");
    put_prio(s, "run_p_mid", "t1", "s3", "2", "2026-01-01T00:00:04Z");
    put_prio(s, "run_p_odd", "t1", "s4", "\"9\"", "2026-01-01T00:00:02Z");
    put_prio(s, "run_q_low", "t2", "s5", "-3", "2026-01-01T00:00:09Z");
    char got[256];
    claim(s, "wA", 60000, 2, NULL, 0, got, sizeof got);
    assert_string_equal(got, "run_p_hi,run_q_low"); /* t1's highest, then t2's turn */
    claim(s, "wA", 60000, 1, NULL, 0, got, sizeof got);
    assert_string_equal(got, "run_p_mid");
    claim(s, "wA", 60000, 2, NULL, 0, got, sizeof got);
    assert_string_equal(got, "run_p_odd,run_p_old"); /* both 0: oldest first (sorted here) */
}

/* Controls reach only the run's holder, each once, in order. */
static void test_controls(void **state)
{
    store *s = open_store(*state);
    put_run(s, "run_k", "t1", "sess_k", "queued", "2026-01-01T00:00:01Z");
    char got[256];
    claim(s, "wA", 60000, 10, NULL, 0, got, sizeof got);
    assert_string_equal(got, "run_k");
    srv_error err = {0};
    assert_int_equal(s->ops->control_send(s, "run_k", "{\"what\":\"cancel\"}", &err), 0);
    assert_int_equal(s->ops->control_send(s, "run_k", "{\"what\":\"pause\"}", &err), 0);
    assert_int_equal(s->ops->control_send(s, "run_k", "not json", &err), -1);
    assert_int_equal(err.code, LOOM_ERR_INVALID_REQUEST);
    srv_error_clear(&err);
    char *b = s->ops->control_take(s, "wB", &err);
    assert_string_equal(b, "[]");
    free(b);
    char *a = s->ops->control_take(s, "wA", &err);
    assert_non_null(strstr(a, "cancel"));
    assert_true(strstr(a, "cancel") < strstr(a, "pause"));
    free(a);
    a = s->ops->control_take(s, "wA", &err);
    assert_string_equal(a, "[]");
    free(a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        STORE_CONTRACT_TESTS(fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_migrate_at_once, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_newer_schema_refused, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_same_run_threads, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_batch_refusals, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_append_loses_race, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_connections_dropped, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_urls, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_lease_claim_sessions, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_lease_expiry, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_lease_fair_and_capped, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_controls, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_fencing, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_session_records, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_notices, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_lease_priority, fx_setup, fx_teardown),
    };
    return cmocka_run_group_tests_name("store on PostgreSQL", tests, NULL, NULL);
}
