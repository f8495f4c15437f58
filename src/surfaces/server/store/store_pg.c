/* store_pg.c — the PostgreSQL store (store.h) on libpq: reading the
 * --store URL (and the name messages use for it, without the password),
 * the pool of connections, the forward-only schema migrations applied once
 * under an advisory lock, the mapping of SQLSTATEs to the seed's error
 * codes, and closing. The documents are in store_pg_docs.c, the events and
 * blobs in store_pg_events.c.
 *
 * Why this shape: PostgreSQL takes many writers at once (row locks, MVCC),
 * so unlike the SQLite store there is no single writer: every operation
 * takes any free connection of the pool, and the server does the group
 * commit itself. Several loom-serve processes may share one database; the
 * schema is theirs together, so a migration takes pg_advisory_xact_lock
 * first and the others wait for it and find the work done.
 *
 * Durability: PostgreSQL's synchronous_commit (on by default): a commit
 * returned once its WAL record is flushed, so an acknowledged put or
 * append survives kill -9 of loom-serve and of the database server.
 *
 * SQL: every statement is a constant text; values go only through
 * PQexecParams' parameters, never into the text.
 *
 * Threading: store_pg_open and close on one thread with no call in flight;
 * the ops from any thread (see store_pg_int.h). */
#include "surfaces/server/store/store_pg_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What every document kind is called in the kind column and in messages
 * (the SQLite store's table names, so both stores' messages read alike). */
const char *const store_pg_kinds[STORE_KIND_END] = {
    "sessions", "tasks", "runs", "approvals", "artifacts", "deliveries",
};

/* Step 1: the tables and their indexes.
 *
 * One documents table keyed (kind, id): the contract's kinds share its
 * columns, and a later claim of queued runs (SELECT … WHERE kind = 'runs'
 * AND state = 'queued' … FOR UPDATE SKIP LOCKED, a lease in added columns)
 * is one more index and one more step here. Text is COLLATE "C" so the
 * order of (created_at, id) is the bytes' order, as in SQLite, whatever
 * the database's locale. json (not jsonb): it checks the text is JSON and
 * keeps it as given, byte for byte, which get answers. Every listing is in
 * one tenant and ordered by (created_at, id), so each index leads with
 * (kind, tenant_id) and ends with (created_at, id): a listing walks one in
 * order and a cursor is a seek. */
const char *const store_pg_migrations[] = {
    "CREATE TABLE loom_documents (kind text COLLATE \"C\" NOT NULL, "
    "id text COLLATE \"C\" NOT NULL, tenant_id text COLLATE \"C\", "
    "parent_id text COLLATE \"C\", state text COLLATE \"C\", "
    "created_at text COLLATE \"C\" NOT NULL, json json NOT NULL, PRIMARY KEY (kind, id));"
    "CREATE INDEX loom_documents_tenant ON loom_documents (kind, tenant_id, created_at, id);"
    "CREATE INDEX loom_documents_parent ON loom_documents "
    "(kind, tenant_id, parent_id, created_at, id);"
    "CREATE INDEX loom_documents_state ON loom_documents "
    "(kind, tenant_id, state, created_at, id);"
    "CREATE TABLE loom_events (run_id text COLLATE \"C\" NOT NULL, "
    "seq bigint NOT NULL CHECK (seq >= 1), json json NOT NULL, PRIMARY KEY (run_id, seq));"
    "CREATE TABLE loom_blobs (run_id text COLLATE \"C\" NOT NULL, "
    "name text COLLATE \"C\" NOT NULL, data bytea NOT NULL, PRIMARY KEY (run_id, name));",
    /* Step 2: workers sharing the database (store_pg_lease.c). A lease row
     * per held run (its expiry by the database's clock, so the workers'
     * clocks never matter), and the controls waiting for a run's holder. */
    "CREATE TABLE loom_leases (run_id text COLLATE \"C\" PRIMARY KEY, "
    "worker_id text COLLATE \"C\" NOT NULL, expires_at timestamptz NOT NULL);"
    "CREATE INDEX loom_leases_worker ON loom_leases (worker_id);"
    "CREATE TABLE loom_controls (id bigserial PRIMARY KEY, run_id text COLLATE \"C\" NOT NULL, "
    "control json NOT NULL);"
    "CREATE INDEX loom_controls_run ON loom_controls (run_id, id);"
    "CREATE INDEX loom_documents_queue ON loom_documents (kind, state, created_at, id);",
    /* Step 3: fencing. Every claim gives its lease the next number of one
     * sequence, so a reclaimed run's new lease always has a larger epoch
     * than any its old holder saw, even after a release and a new claim
     * (a per-row counter would start over when the row is deleted). */
    "CREATE SEQUENCE loom_lease_epochs;"
    "ALTER TABLE loom_leases ADD COLUMN epoch bigint NOT NULL DEFAULT 0;",
    /* Step 4: notifications (store_pg_listen.c), made by triggers so that
     * every writer of the tables sends them, at its commit: an event
     * stored ("RUN SEQ" on loom_events), a control sent ("RUN" on
     * loom_controls), a run document stored ("RUN STATE" on loom_runs). */
    "CREATE FUNCTION loom_notify_event() RETURNS trigger LANGUAGE plpgsql AS "
    "$$BEGIN PERFORM pg_notify('loom_events', NEW.run_id || ' ' || NEW.seq); RETURN NULL; END$$;"
    "CREATE TRIGGER loom_events_notify AFTER INSERT ON loom_events "
    "FOR EACH ROW EXECUTE FUNCTION loom_notify_event();"
    "CREATE FUNCTION loom_notify_control() RETURNS trigger LANGUAGE plpgsql AS "
    "$$BEGIN PERFORM pg_notify('loom_controls', NEW.run_id); RETURN NULL; END$$;"
    "CREATE TRIGGER loom_controls_notify AFTER INSERT ON loom_controls "
    "FOR EACH ROW EXECUTE FUNCTION loom_notify_control();"
    "CREATE FUNCTION loom_notify_run() RETURNS trigger LANGUAGE plpgsql AS "
    "$$BEGIN PERFORM pg_notify('loom_runs', NEW.id || ' ' || coalesce(NEW.state, '')); "
    "RETURN NULL; END$$;"
    "CREATE TRIGGER loom_runs_notify AFTER INSERT OR UPDATE ON loom_documents "
    "FOR EACH ROW WHEN (NEW.kind = 'runs') EXECUTE FUNCTION loom_notify_run();",
    /* Step 5: sessions' records (store_pg_records.c): a loom session's
     * transcript as rows, each record's JSONL line as the file would hold
     * it (text, not json: kept byte for byte), seq its 0-based position. */
    "CREATE TABLE loom_session_records (session_id text COLLATE \"C\" NOT NULL, "
    "seq bigint NOT NULL CHECK (seq >= 0), line text NOT NULL, "
    "PRIMARY KEY (session_id, seq));",
};
const int store_pg_schema_version =
    (int)(sizeof store_pg_migrations / sizeof store_pg_migrations[0]);

/* The advisory lock every loom-serve migrating this database takes: "loom"
 * in the high half, 1 (the schema) in the low. */
#define PG_MIGRATE_LOCK "7309475736900714497" /* 0x6c6f6f6d00000001 */

/* The seed's code for a SQLSTATE (its class, the first two characters). */
static loom_error_code pg_code(const char *st, bool *retryable)
{
    *retryable = false;
    if (!st || strlen(st) != 5) { /* no answer from the server: the connection */
        *retryable = true;
        return LOOM_ERR_IO;
    }
    if (!strncmp(st, "22", 2) || !strncmp(st, "23", 2)) /* data, constraints */
        return LOOM_ERR_INVALID_REQUEST;
    if (!strncmp(st, "28", 2) || !strncmp(st, "3D", 2) || !strcmp(st, "42501"))
        return LOOM_ERR_CONFIG; /* authorization, no such database, privilege */
    if (!strncmp(st, "42", 2) || !strncmp(st, "0A", 2))
        return LOOM_ERR_INTERNAL; /* our SQL against a schema we did not make */
    if (!strncmp(st, "08", 2) || !strncmp(st, "40", 2) || !strncmp(st, "53", 2) ||
        !strncmp(st, "57", 2))
        *retryable = true; /* connection, deadlock/serialization, resources, shutdown */
    return LOOM_ERR_IO;
}

/* libpq's message as one line: its newlines (a DETAIL, a HINT, the
 * second half of a connection failure) become "; ". */
static void pg_one_line(char *out, size_t cap, const char *msg)
{
    size_t o = 0;
    for (const char *p = msg ? msg : ""; *p && o + 3 < cap; p++) {
        if (*p == '\n') {
            if (p[1]) {
                out[o++] = ';';
                out[o++] = ' ';
            }
        } else {
            out[o++] = *p;
        }
    }
    out[o] = '\0';
}

int pg_check(pg_store *q, PGconn *c, PGresult *res, const char *op, srv_error *err,
             char sqlstate[6])
{
    ExecStatusType es = res ? PQresultStatus(res) : PGRES_FATAL_ERROR;
    if (es == PGRES_COMMAND_OK || es == PGRES_TUPLES_OK) {
        if (sqlstate)
            sqlstate[0] = '\0';
        return 0;
    }
    const char *st = res ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : NULL;
    char msg[400];
    pg_one_line(msg, sizeof msg, res ? PQresultErrorMessage(res) : PQerrorMessage(c));
    if (!msg[0])
        pg_one_line(msg, sizeof msg, PQerrorMessage(c));
    bool retry;
    loom_error_code code = pg_code(st, &retry);
    srv_fail(err, code, "store %s: %s: %s", q->shown, op, msg);
    if (err)
        err->retryable = retry;
    if (sqlstate)
        snprintf(sqlstate, 6, "%s", st ? st : "");
    PQclear(res);
    return -1;
}

PGresult *pg_query(pg_store *q, PGconn *c, const char *sql, int n, const char *const *vals,
                   const char *op, srv_error *err, char sqlstate[6])
{
    PGresult *res = PQexecParams(c, sql, n, NULL, vals, NULL, NULL, 0);
    return pg_check(q, c, res, op, err, sqlstate) == 0 ? res : NULL;
}

/* Notices (a CREATE … IF NOT EXISTS that found the thing) are not for the
 * server's stderr. */
static void pg_quiet(void *arg, const char *message)
{
    (void)arg;
    (void)message;
}

PGconn *pg_connect(pg_store *q, const char *op, srv_error *err)
{
    /* Defaults first: a value in the URL overrides them (libpq takes the
     * last one of a key, and expands dbname's URL in its place). UTF-8 on
     * the wire whatever PGCLIENTENCODING says: every text we send is.
     * idle_in_transaction_session_timeout: a process stopped inside one of
     * our transactions (SIGSTOP, a swapped-out machine) would hold its row
     * locks and the claim's advisory lock, and every other worker's claim
     * would wait for it; our transactions never wait between statements,
     * so the server may end such a session after 5 s (the stalled worker
     * finds its connection gone, reconnects, and is fenced). */
    const char *const keys[] = {"fallback_application_name", "connect_timeout", "client_encoding",
                                "options", "dbname", NULL};
    const char *const vals[] = {"loom-serve", "10", "UTF8",
                                "-c idle_in_transaction_session_timeout=5000", q->conninfo, NULL};
    PGconn *c = PQconnectdbParams(keys, vals, 1);
    if (!c) {
        srv_fail(err, LOOM_ERR_INTERNAL, "store %s: %s: out of memory", q->shown, op);
        return NULL;
    }
    if (PQstatus(c) != CONNECTION_OK) {
        char msg[400];
        pg_one_line(msg, sizeof msg, PQerrorMessage(c));
        srv_fail(err, LOOM_ERR_IO, "store %s: %s: cannot connect: %s", q->shown, op, msg);
        if (err)
            err->retryable = true;
        PQfinish(c);
        return NULL;
    }
    PQsetNoticeProcessor(c, pg_quiet, NULL);
    return c;
}

PGconn *pg_take(pg_store *q)
{
    PGconn *c = NULL;
    pthread_mutex_lock(&q->plock);
    for (;;) {
        for (int i = 0; i < PG_POOL && !c; i++) {
            if (!q->busy[i]) {
                q->busy[i] = true;
                c = q->conns[i];
            }
        }
        if (c)
            break;
        pthread_cond_wait(&q->pfree, &q->plock);
    }
    pthread_mutex_unlock(&q->plock);
    /* The server restarted or dropped us: one reconnect before the query,
     * which fails with the connection's own message when it cannot. */
    if (PQstatus(c) != CONNECTION_OK) {
        PQreset(c);
        if (PQstatus(c) == CONNECTION_OK)
            PQsetNoticeProcessor(c, pg_quiet, NULL);
    }
    return c;
}

void pg_give(pg_store *q, PGconn *c)
{
    /* A failure in the middle of a transaction leaves it open (or
     * aborted); the next user of this connection must start clean. */
    if (PQstatus(c) == CONNECTION_OK && PQtransactionStatus(c) != PQTRANS_IDLE)
        PQclear(PQexec(c, "ROLLBACK"));
    pthread_mutex_lock(&q->plock);
    for (int i = 0; i < PG_POOL; i++)
        if (q->conns[i] == c)
            q->busy[i] = false;
    pthread_cond_signal(&q->pfree);
    pthread_mutex_unlock(&q->plock);
}

/* The schema version recorded, 0 when the table is empty; -1 on failure. */
static long pg_version(pg_store *q, PGconn *c, srv_error *err)
{
    PGresult *r = pg_query(q, c, "SELECT coalesce(max(version), 0) FROM loom_schema_version", 0,
                           NULL, "read loom_schema_version", err, NULL);
    if (!r)
        return -1;
    long v = PQntuples(r) == 1 ? strtol(PQgetvalue(r, 0, 0), NULL, 10) : 0;
    PQclear(r);
    return v;
}

/* Brings the schema up to store_pg_schema_version in one transaction under
 * the migration lock: a second process opening at the same moment waits
 * on the lock, then finds the version current and does nothing; a step
 * that fails leaves the database as it was. A database newer than this
 * program is refused and left as it was (the transaction rolled back). */
static int pg_migrate(pg_store *q, PGconn *c, srv_error *err)
{
    const char *op = "migrate the schema";
    const char *lock[] = {PG_MIGRATE_LOCK};
    PGresult *r = pg_query(q, c, "BEGIN", 0, NULL, op, err, NULL);
    if (!r)
        return -1;
    PQclear(r);
    int ret = -1;
    if (!(r = pg_query(q, c, "SELECT pg_advisory_xact_lock($1::bigint)", 1, lock, op, err,
                       NULL)))
        goto done;
    PQclear(r);
    if (!(r = pg_query(q, c,
                       "CREATE TABLE IF NOT EXISTS loom_schema_version (version integer NOT NULL)",
                       0, NULL, op, err, NULL)))
        goto done;
    PQclear(r);
    long ver = pg_version(q, c, err);
    if (ver < 0)
        goto done;
    if (ver > store_pg_schema_version) {
        srv_fail(err, LOOM_ERR_CONFIG,
                 "store %s: the database is at schema version %ld, newer than this program's "
                 "%d; use a newer loom-serve",
                 q->shown, ver, store_pg_schema_version);
        goto done;
    }
    for (long v = ver; v < store_pg_schema_version; v++) {
        char vop[64], next[24];
        snprintf(vop, sizeof vop, "migrate to schema version %ld", v + 1);
        snprintf(next, sizeof next, "%ld", v + 1);
        const char *vals[] = {next};
        /* A step is several constant statements: PQexec, no parameters. */
        r = PQexec(c, store_pg_migrations[v]);
        if (pg_check(q, c, r, vop, err, NULL) < 0)
            goto done;
        PQclear(r);
        if (!(r = pg_query(q, c, "DELETE FROM loom_schema_version", 0, NULL, vop, err, NULL)))
            goto done;
        PQclear(r);
        if (!(r = pg_query(q, c, "INSERT INTO loom_schema_version (version) VALUES ($1::integer)",
                           1, vals, vop, err, NULL)))
            goto done;
        PQclear(r);
    }
    if ((r = pg_query(q, c, "COMMIT", 0, NULL, op, err, NULL))) {
        PQclear(r);
        ret = 0;
    }
done:
    if (PQtransactionStatus(c) != PQTRANS_IDLE)
        PQclear(PQexec(c, "ROLLBACK"));
    return ret;
}

/* The URL as messages show it: user, host, port and database from libpq's
 * own reading of it, never the password (nor any other option). NULL when
 * libpq cannot read it. */
static char *pg_shown(const char *conninfo)
{
    char *perr = NULL;
    PQconninfoOption *opts = PQconninfoParse(conninfo, &perr);
    PQfreemem(perr);
    if (!opts)
        return NULL;
    const char *user = "", *host = "", *port = "", *db = "";
    for (PQconninfoOption *o = opts; o->keyword; o++) {
        if (!o->val)
            continue;
        if (!strcmp(o->keyword, "user"))
            user = o->val;
        else if (!strcmp(o->keyword, "host"))
            host = o->val;
        else if (!strcmp(o->keyword, "port"))
            port = o->val;
        else if (!strcmp(o->keyword, "dbname"))
            db = o->val;
    }
    /* A socket folder is not a host name in a URL: it goes in ?host=. */
    bool sock = host[0] == '/';
    size_t cap = strlen(user) + strlen(host) + strlen(port) + strlen(db) + 32;
    char *out = malloc(cap);
    if (out)
        snprintf(out, cap, "postgresql://%s%s%s%s%s/%s%s%s", user, *user ? "@" : "",
                 sock ? "" : host, *port ? ":" : "", port, db, sock ? "?host=" : "",
                 sock ? host : "");
    PQconninfoFree(opts);
    return out;
}

static void pg_close(store *s)
{
    pg_store *q = (pg_store *)s;
    if (!q)
        return;
    pg_listen_stop(q);
    for (int i = 0; i < PG_POOL; i++)
        if (q->conns[i])
            PQfinish(q->conns[i]);
    if (q->renew_conn)
        PQfinish(q->renew_conn);
    pthread_mutex_destroy(&q->renew_lock);
    pthread_mutex_destroy(&q->plock);
    pthread_cond_destroy(&q->pfree);
    free(q->shown);
    free(q->conninfo);
    free(q);
}

static const store_ops pg_ops = {
    .put = pg_put,
    .get = pg_get,
    .list = pg_list,
    .count_states = pg_count_states,
    .append_events = pg_append_events,
    .append_batch = pg_append_batch,
    .events_after = pg_events_after,
    .max_seq = pg_max_seq,
    .put_blob = pg_put_blob,
    .get_blob = pg_get_blob,
    .lease_claim = pg_lease_claim,
    .lease_renew = pg_lease_renew,
    .put_fenced = pg_put_fenced,
    .listen = pg_listen,
    .unlisten = pg_unlisten,
    .lease_release = pg_lease_release,
    .lease_check = pg_lease_check,
    .control_send = pg_control_send,
    .control_take = pg_control_take,
    .records_append = pg_records_append,
    .records_load = pg_records_load,
    .close = pg_close,
};

store *store_pg_open(const char *url, srv_error *err)
{
    if (!PQisthreadsafe()) {
        srv_fail(err, LOOM_ERR_CONFIG, "store: open: libpq was built without thread safety");
        return NULL;
    }
    char *shown = url ? pg_shown(url) : NULL;
    if (!shown) {
        /* libpq's reason may quote the part it could not read, which may be
         * the password: not echoed. */
        srv_fail(err, LOOM_ERR_CONFIG,
                 "store: the PostgreSQL URL is not one libpq can read (the form is "
                 "postgresql://USER[:PASSWORD]@HOST[:PORT]/DATABASE[?host=SOCKET_DIR])");
        return NULL;
    }
    pg_store *q = calloc(1, sizeof *q);
    if (!q || !(q->conninfo = strdup(url))) {
        srv_fail(err, LOOM_ERR_INTERNAL, "store %s: open: out of memory", shown);
        free(shown);
        free(q);
        return NULL;
    }
    q->shown = shown;
    q->base.ops = &pg_ops;
    pthread_mutex_init(&q->plock, NULL);
    pthread_mutex_init(&q->renew_lock, NULL);
    pthread_cond_init(&q->pfree, NULL);
    for (int i = 0; i < PG_POOL; i++)
        if (!(q->conns[i] = pg_connect(q, "open", err)))
            goto fail;
    if (pg_migrate(q, q->conns[0], err) < 0)
        goto fail;
    return &q->base;
fail:
    pg_close(&q->base);
    return NULL;
}
