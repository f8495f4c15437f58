/* store_sqlite.c — the SQLite store (store.h): opening a database file,
 * its pragmas, the forward-only schema migrations, the one writer
 * connection and the pool of reader connections, and closing. The
 * documents are in store_sqlite_docs.c, the events and blobs in
 * store_sqlite_events.c.
 *
 * Why this shape: SQLite allows one writer at a time per database, so the
 * store keeps exactly one writer connection behind a mutex (no
 * SQLITE_BUSY between our own threads) and lets reads run beside it on
 * SQ_READERS reader connections, which WAL lets see the last commit without
 * waiting for the writer. Every connection is opened SQLITE_OPEN_NOMUTEX:
 * our own locking already keeps each one to a single thread at a time.
 *
 * Durability: journal_mode=WAL with synchronous=FULL, so a commit has
 * reached the disk (the WAL is fsynced) before append_events returns —
 * an acknowledged event survives kill -9 and a power cut.
 * Checkpoints: SQLite's autocheckpoint (every 1000 WAL pages, run by the
 * writer at the end of the commit that crosses it, PASSIVE so it never
 * waits for a reader); the last connection closed checkpoints and removes
 * the WAL. No thread of our own.
 *
 * Threading: store_sqlite_open and close on one thread with no call in
 * flight; the ops from any thread (see store_sqlite_int.h). */
#include "surfaces/server/store/store_sqlite_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/fileio.h"

/* One document table; every kind has the same columns. created_at is ISO
 * 8601 text, so text order is time order. */
#define SQ_DOC_TABLE(t)                                                                     \
    "CREATE TABLE " t " (id TEXT PRIMARY KEY NOT NULL, tenant_id TEXT, parent_id TEXT, "   \
    "state TEXT, created_at TEXT NOT NULL, json TEXT NOT NULL CHECK (json_valid(json)));"

/* Every listing is within one tenant and ordered by (created_at, id), so
 * each index leads with tenant_id and ends with (created_at, id): the
 * listing walks the index in order, with no sort, and the keyset cursor is
 * a seek. The parent and state indexes are the (parent_id) and (state) ones
 * of the design with those two added. */
#define SQ_DOC_INDEXES(t)                                                                   \
    "CREATE INDEX " t "_tenant ON " t " (tenant_id, created_at, id);"                     \
    "CREATE INDEX " t "_parent ON " t " (tenant_id, parent_id, created_at, id);"          \
    "CREATE INDEX " t "_state ON " t " (tenant_id, state, created_at, id);"

const char *const store_sqlite_tables[STORE_KIND_END] = {
    "sessions", "tasks", "runs", "approvals", "artifacts", "deliveries",
};

/* Step 1: the tables. Step 2: their indexes. */
const char *const store_sqlite_migrations[] = {
    SQ_DOC_TABLE("sessions") SQ_DOC_TABLE("tasks") SQ_DOC_TABLE("runs")
    SQ_DOC_TABLE("approvals") SQ_DOC_TABLE("artifacts") SQ_DOC_TABLE("deliveries")
    "CREATE TABLE events (run_id TEXT NOT NULL, seq INTEGER NOT NULL CHECK (seq >= 1), "
    "json TEXT NOT NULL CHECK (json_valid(json)), PRIMARY KEY (run_id, seq)) WITHOUT ROWID;"
    "CREATE TABLE blobs (run_id TEXT NOT NULL, name TEXT NOT NULL, data BLOB NOT NULL, "
    "PRIMARY KEY (run_id, name));",

    SQ_DOC_INDEXES("sessions") SQ_DOC_INDEXES("tasks") SQ_DOC_INDEXES("runs")
    SQ_DOC_INDEXES("approvals") SQ_DOC_INDEXES("artifacts") SQ_DOC_INDEXES("deliveries"),
};
const int store_sqlite_schema_version =
    (int)(sizeof store_sqlite_migrations / sizeof store_sqlite_migrations[0]);

static loom_error_code sq_code(int rc)
{
    switch (rc & 0xff) {
    case SQLITE_NOTADB:
        return LOOM_ERR_CONFIG;
    case SQLITE_CONSTRAINT:
    case SQLITE_TOOBIG:
    case SQLITE_MISMATCH:
        return LOOM_ERR_INVALID_REQUEST;
    case SQLITE_NOMEM:
    case SQLITE_MISUSE:
    case SQLITE_ERROR:
    case SQLITE_RANGE:
        return LOOM_ERR_INTERNAL;
    default: /* IOERR, CORRUPT, FULL, CANTOPEN, READONLY, BUSY, LOCKED, … */
        return LOOM_ERR_IO;
    }
}

int sq_fail(sq_store *q, sqlite3 *db, int rc, const char *op, srv_error *err)
{
    if (db && sqlite3_extended_errcode(db) != SQLITE_OK)
        rc = sqlite3_extended_errcode(db);
    const char *msg = db ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
    srv_fail(err, sq_code(rc), "store %s: %s: %s", q->path, op, msg);
    /* Another process holding the database is the one transient case. */
    if (err && ((rc & 0xff) == SQLITE_BUSY || (rc & 0xff) == SQLITE_LOCKED))
        err->retryable = true;
    return -1;
}

sqlite3_stmt *sq_stmt(sq_store *q, sqlite3 *db, sqlite3_stmt **slot, const char *sql,
                      const char *op, srv_error *err)
{
    if (*slot)
        return *slot;
    int rc = sqlite3_prepare_v3(db, sql, -1, SQLITE_PREPARE_PERSISTENT, slot, NULL);
    if (rc != SQLITE_OK) {
        sq_fail(q, db, rc, op, err);
        *slot = NULL;
        return NULL;
    }
    return *slot;
}

sq_reader *sq_reader_take(sq_store *q)
{
    pthread_mutex_lock(&q->plock);
    for (;;) {
        for (int i = 0; i < SQ_READERS; i++) {
            if (!q->busy[i]) {
                q->busy[i] = true;
                pthread_mutex_unlock(&q->plock);
                return &q->readers[i];
            }
        }
        pthread_cond_wait(&q->pfree, &q->plock);
    }
}

void sq_reader_give(sq_store *q, sq_reader *r)
{
    pthread_mutex_lock(&q->plock);
    q->busy[r - q->readers] = false;
    pthread_cond_signal(&q->pfree);
    pthread_mutex_unlock(&q->plock);
}

/* Runs one statement that may answer a row (a pragma), for its error. */
static int sq_exec(sq_store *q, sqlite3 *db, const char *sql, const char *op, srv_error *err)
{
    char *msg = NULL;
    int rc = sqlite3_exec(db, sql, NULL, NULL, &msg);
    sqlite3_free(msg);
    return rc == SQLITE_OK ? 0 : sq_fail(q, db, rc, op, err);
}

static int sq_pragma_text(sq_store *q, sqlite3 *db, const char *sql, char *out, size_t cap,
                          const char *op, srv_error *err)
{
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(db, sql, -1, &st, NULL);
    if (rc == SQLITE_OK)
        rc = sqlite3_step(st);
    if (rc != SQLITE_ROW) {
        sq_fail(q, db, rc, op, err);
        sqlite3_finalize(st);
        return -1;
    }
    const unsigned char *t = sqlite3_column_text(st, 0);
    snprintf(out, cap, "%s", t ? (const char *)t : "");
    sqlite3_finalize(st);
    return 0;
}

/* The single integer a query answers (0 for no row or NULL), or -1. */
static int64_t sq_query_int(sq_store *q, sqlite3 *db, const char *sql, const char *op,
                            srv_error *err)
{
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(db, sql, -1, &st, NULL);
    if (rc != SQLITE_OK) {
        sq_fail(q, db, rc, op, err);
        return -1;
    }
    rc = sqlite3_step(st);
    int64_t v = rc == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
    if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
        sq_fail(q, db, rc, op, err);
        v = -1;
    }
    sqlite3_finalize(st);
    return v;
}

static int sq_writer_pragmas(sq_store *q, srv_error *err);

/* Brings the schema up to store_sqlite_schema_version, one transaction per
 * step, so a step that fails leaves the database at the version before it.
 * A database with tables but no schema_version is someone else's, and one
 * newer than this program is not ours to change: both refused before
 * anything is written (WAL mode included). */
static int sq_migrate(sq_store *q, srv_error *err)
{
    int64_t has_ver = sq_query_int(q, q->w,
                                   "SELECT count(*) FROM sqlite_master WHERE type='table' "
                                   "AND name='schema_version'",
                                   "read the schema", err);
    if (has_ver < 0)
        return -1;
    int64_t ver = 0;
    if (has_ver == 0) {
        int64_t tables = sq_query_int(q, q->w,
                                      "SELECT count(*) FROM sqlite_master WHERE type='table'",
                                      "read the schema", err);
        if (tables < 0)
            return -1;
        if (tables > 0)
            return srv_fail(err, LOOM_ERR_CONFIG,
                            "store %s: open: an SQLite database with tables but no "
                            "schema_version table: not a loom store",
                            q->path);
    } else {
        ver = sq_query_int(q, q->w, "SELECT max(version) FROM schema_version",
                           "read schema_version", err);
        if (ver < 0)
            return -1;
        if (ver > store_sqlite_schema_version)
            return srv_fail(err, LOOM_ERR_CONFIG,
                            "store %s: the database is at schema version %lld, newer than "
                            "this program's %d; use a newer loom-serve",
                            q->path, (long long)ver, store_sqlite_schema_version);
    }
    /* Nothing is written before this point: a refused file is left as it was. */
    if (sq_writer_pragmas(q, err) < 0)
        return -1;
    if (has_ver == 0 && sq_exec(q, q->w, "CREATE TABLE schema_version (version INTEGER NOT NULL)",
                                "create schema_version", err) < 0)
        return -1;
    for (int64_t v = ver; v < store_sqlite_schema_version; v++) {
        char op[64];
        snprintf(op, sizeof op, "migrate to schema version %lld", (long long)v + 1);
        if (sq_exec(q, q->w, "BEGIN IMMEDIATE", op, err) < 0)
            return -1;
        char bump[96];
        snprintf(bump, sizeof bump,
                 "DELETE FROM schema_version; INSERT INTO schema_version VALUES (%lld);",
                 (long long)v + 1);
        if (sq_exec(q, q->w, store_sqlite_migrations[v], op, err) < 0 ||
            sq_exec(q, q->w, bump, op, err) < 0 || sq_exec(q, q->w, "COMMIT", op, err) < 0) {
            sqlite3_exec(q->w, "ROLLBACK", NULL, NULL, NULL);
            return -1;
        }
    }
    return 0;
}

static int sq_open_conn(sq_store *q, sqlite3 **db, bool writer, srv_error *err)
{
    int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX | (writer ? SQLITE_OPEN_CREATE : 0);
    int rc = sqlite3_open_v2(q->path, db, flags, NULL);
    if (rc != SQLITE_OK) {
        sq_fail(q, *db, rc, "open", err);
        sqlite3_close(*db);
        *db = NULL;
        return -1;
    }
    sqlite3_extended_result_codes(*db, 1);
    /* Another process (a second loom-serve, the sqlite3 shell) may hold the
     * lock for a moment; wait for it rather than fail at once. */
    sqlite3_busy_timeout(*db, 5000);
    return writer ? 0 : sq_exec(q, *db, "PRAGMA query_only=1", "open a reader", err);
}

/* The writer's settings, set once the file is known to be ours: WAL is
 * persistent in the file, so it is not switched on in someone else's. */
static int sq_writer_pragmas(sq_store *q, srv_error *err)
{
    char mode[32];
    if (sq_pragma_text(q, q->w, "PRAGMA journal_mode=WAL", mode, sizeof mode, "open", err) < 0)
        return -1;
    if (strcmp(mode, "wal") != 0)
        return srv_fail(err, LOOM_ERR_IO,
                        "store %s: open: the file system refused WAL mode (journal_mode "
                        "is %s)",
                        q->path, mode);
    return sq_exec(q, q->w, "PRAGMA synchronous=FULL; PRAGMA foreign_keys=ON", "open", err);
}

static void sq_reader_close(sq_reader *r)
{
    for (int k = 0; k < STORE_KIND_END; k++) {
        sqlite3_finalize(r->get[k]);
        for (int s = 0; s < SQ_LIST_SHAPES; s++)
            sqlite3_finalize(r->list[k][s]);
    }
    sqlite3_finalize(r->events_after);
    sqlite3_finalize(r->max_seq);
    sqlite3_finalize(r->get_blob);
    sqlite3_close(r->db);
    memset(r, 0, sizeof *r);
}

static void sq_close(store *s)
{
    sq_store *q = (sq_store *)s;
    if (!q)
        return;
    for (int i = 0; i < SQ_READERS; i++)
        sq_reader_close(&q->readers[i]);
    for (int k = 0; k < STORE_KIND_END; k++)
        sqlite3_finalize(q->w_put[k]);
    sqlite3_stmt *ws[] = {q->w_begin,       q->w_commit,         q->w_rollback,
                          q->w_max_seq,     q->w_insert_event,   q->w_put_blob,
                          q->w_savepoint,   q->w_release,        q->w_rollback_to};
    for (size_t i = 0; i < sizeof ws / sizeof ws[0]; i++)
        sqlite3_finalize(ws[i]);
    /* The writer closes last: the last connection checkpoints the WAL into
     * the database and removes it. */
    sqlite3_close(q->w);
    pthread_mutex_destroy(&q->wlock);
    pthread_mutex_destroy(&q->plock);
    pthread_cond_destroy(&q->pfree);
    pthread_mutex_destroy(&q->qlock);
    pthread_cond_destroy(&q->qdone);
    free(q->path);
    free(q);
}

static const store_ops sq_ops = {
    .put = sq_put,
    .get = sq_get,
    .list = sq_list,
    .count_states = sq_count_states,
    .append_events = sq_append_events,
    .append_batch = sq_append_batch,
    .events_after = sq_events_after,
    .max_seq = sq_max_seq,
    .put_blob = sq_put_blob,
    .get_blob = sq_get_blob,
    .close = sq_close,
};

/* Makes the folder above path (mkdir -p); nothing for a bare file name. */
static int sq_make_parent(const char *path, srv_error *err)
{
    const char *slash = strrchr(path, '/');
    if (!slash || slash == path)
        return 0;
    char *dir = strndup(path, (size_t)(slash - path));
    if (!dir)
        return srv_fail(err, LOOM_ERR_INTERNAL, "store %s: open: out of memory", path);
    loom_error le;
    memset(&le, 0, sizeof le);
    int rc = file_mkdirs(dir, 0700, &le);
    free(dir);
    if (rc < 0)
        return srv_fail(err, LOOM_ERR_IO, "store %s: open: cannot make the folder above it: %s",
                        path, le.message);
    return 0;
}

store *store_sqlite_open(const char *path, srv_error *err)
{
    if (!path || !*path) {
        srv_fail(err, LOOM_ERR_CONFIG, "store: open: no database path given");
        return NULL;
    }
    if (!sqlite3_threadsafe()) {
        srv_fail(err, LOOM_ERR_CONFIG, "store %s: open: SQLite was built without threads", path);
        return NULL;
    }
    if (sq_make_parent(path, err) < 0)
        return NULL;
    sq_store *q = calloc(1, sizeof *q);
    if (!q || !(q->path = strdup(path))) {
        free(q);
        srv_fail(err, LOOM_ERR_INTERNAL, "store %s: open: out of memory", path);
        return NULL;
    }
    q->base.ops = &sq_ops;
    pthread_mutex_init(&q->wlock, NULL);
    pthread_mutex_init(&q->plock, NULL);
    pthread_cond_init(&q->pfree, NULL);
    pthread_mutex_init(&q->qlock, NULL);
    pthread_cond_init(&q->qdone, NULL);
    q->qtail = &q->qhead;
    if (sq_open_conn(q, &q->w, true, err) < 0 || sq_migrate(q, err) < 0)
        goto fail;
    for (int i = 0; i < SQ_READERS; i++)
        if (sq_open_conn(q, &q->readers[i].db, false, err) < 0)
            goto fail;
    return &q->base;
fail:
    sq_close(&q->base);
    return NULL;
}

int store_sqlite_set_synchronous(store *s, bool full, srv_error *err)
{
    sq_store *q = (sq_store *)s;
    pthread_mutex_lock(&q->wlock);
    int rc = sq_exec(q, q->w, full ? "PRAGMA synchronous=FULL" : "PRAGMA synchronous=NORMAL",
                     "set synchronous", err);
    pthread_mutex_unlock(&q->wlock);
    return rc;
}
