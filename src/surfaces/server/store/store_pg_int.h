/* store_pg_int.h — the PostgreSQL store's private parts, shared by its
 * three files (store_pg.c: open, the connection pool, migrations, errors,
 * close; store_pg_docs.c: documents; store_pg_events.c: events and blobs)
 * and by its unit test, which reaches the migration list. Not part of the
 * store.h contract.
 *
 * Threading: a libpq connection is not safe to use from two threads at
 * once, so each one in the pool belongs to the thread that took it
 * (pg_take) until it gives it back (pg_give); the pool's flags are under
 * plock. The fields set at open (shown, conninfo, ops) are read-only after
 * it. */
#ifndef LOOM_SERVER_STORE_PG_INT_H
#define LOOM_SERVER_STORE_PG_INT_H

#include <libpq-fe.h>
#include <pthread.h>
#include <stdbool.h>

#include "surfaces/server/store/store.h"
#include "surfaces/server/store/store_rules.h"

/* Connections per store (per loom-serve process): enough for the event
 * writer, a few runs and the HTTP threads' reads at once; a caller past
 * them waits for one. Each is a server process on the PostgreSQL side. */
#define PG_POOL 4

typedef struct pg_store {
    store base;
    char *shown;    /* the URL without its password: what messages name */
    char *conninfo; /* the --store value as given, for libpq only */
    pthread_mutex_t plock;
    pthread_cond_t pfree;
    bool busy[PG_POOL];
    PGconn *conns[PG_POOL];
    /* The lease renewal's own connection (made at its first use), so a
     * renewal never waits for the pool behind runs' writes and reads. */
    pthread_mutex_t renew_lock;
    PGconn *renew_conn;
    /* the listener (store_pg_listen.c) */
    bool listening;
    pthread_t listen_thr;
    int listen_pipe[2]; /* written by close: the thread ends */
    store_notice_fn notice_fn;
    void *notice_ctx;
} pg_store;

/* The schema steps, oldest first: step i takes a database from version i
 * to i+1. Never edit a step that has shipped; add one. */
extern const char *const store_pg_migrations[];
extern const int store_pg_schema_version;

/* The kind column's value per store_kind (also the word the messages use). */
extern const char *const store_pg_kinds[STORE_KIND_END];

/* A new connection with the store's defaults (store_pg.c), or NULL with err. */
PGconn *pg_connect(pg_store *q, const char *op, srv_error *err);
int pg_listen(store *s, store_notice_fn fn, void *ctx, srv_error *err);
/* Reads one notification of the schema's triggers (store_pg_listen.c):
 * channel loom_events "RUN SEQ", loom_controls "RUN", loom_runs "RUN STATE".
 * 0 with *what, run (NUL-terminated, < cap), *state (into payload; "" when
 * none) and *seq (0 when none); -1 for anything else, which is ignored. */
int store_pg_notice_parse(const char *channel, const char *payload, store_notice *what,
                          char *run, size_t cap, const char **state, int64_t *seq);
void pg_listen_stop(pg_store *q); /* ends the listener thread, if any */
void pg_unlisten(store *s);

/* Takes a connection (waits for a free one; reconnects one the server
 * dropped) / gives it back (ending a transaction a failure left open). */
PGconn *pg_take(pg_store *q);
void pg_give(pg_store *q, PGconn *c);

/* Runs one parameterized statement (n text parameters, NULL for SQL NULL;
 * text results). The result (PQclear it), or NULL with err set from the
 * failure ("store URL: OP: MESSAGE") and, when sqlstate is not NULL, the
 * five-character SQLSTATE in it ("" when there is none, e.g. a lost
 * connection). */
PGresult *pg_query(pg_store *q, PGconn *c, const char *sql, int n, const char *const *vals,
                   const char *op, srv_error *err, char sqlstate[6]);
/* Checks a result of PQexec/PQexecParams: 0, or -1 with err and sqlstate
 * filled as pg_query does (res is cleared then). */
int pg_check(pg_store *q, PGconn *c, PGresult *res, const char *op, srv_error *err,
             char sqlstate[6]);

/* put on a connection taken (inside a transaction or not). */
int pg_put_on(pg_store *q, PGconn *c, store_kind kind, const char *id,
              const store_doc_keys *keys, const char *json, const char *op, srv_error *err);

/* The ops the other files implement. */
int pg_put(store *s, store_kind kind, const char *id, const store_doc_keys *keys,
           const char *json, srv_error *err);
char *pg_get(store *s, store_kind kind, const char *id, srv_error *err);
char *pg_list(store *s, store_kind kind, const store_list_query *qry, char **next_cursor,
              srv_error *err);
char *pg_count_states(store *s, store_kind kind, const char *tenant_id, srv_error *err);
int pg_append_batch(store *s, store_append *items, size_t n, srv_error *err);
int pg_append_events(store *s, const char *run_id, const store_event *evs, size_t n,
                     srv_error *err);
char *pg_events_after(store *s, const char *run_id, int64_t after, int limit,
                      int64_t *last_seq, srv_error *err);
int64_t pg_max_seq(store *s, const char *run_id, srv_error *err);
int pg_put_blob(store *s, const char *run_id, const char *name, const void *data, size_t len,
                srv_error *err);
int pg_lease_claim(store *s, const char *worker, int ttl_ms, int max,
                   const store_tenant_cap *caps, size_t ncaps, store_lease **out,
                   srv_error *err);
int pg_lease_renew(store *s, const char *worker, int ttl_ms, store_lease **held,
                   srv_error *err);
int pg_put_fenced(store *s, store_kind kind, const char *id, const store_doc_keys *keys,
                  const char *json, const store_fence *fence, srv_error *err);
/* Inside an open transaction on c: locks run_id's lease row (FOR SHARE, so
 * a claim taking the run waits for this transaction, or this one sees the
 * claim's new epoch) and checks it is fence's. 0; STORE_FENCED with err
 * when it is not; -1 with err on failure. */
int pg_fence_check(pg_store *q, PGconn *c, const char *run_id, const store_fence *fence,
                   const char *op, srv_error *err);
int pg_lease_release(store *s, const char *run_id, const char *worker, srv_error *err);
int pg_lease_check(store *s, const char *run_id, const char *worker, int64_t epoch, int ttl_ms,
                   srv_error *err);
int pg_control_send(store *s, const char *run_id, const char *json, srv_error *err);
char *pg_control_take(store *s, const char *worker, srv_error *err);
int pg_records_append(store *s, const char *session_id, int64_t first_seq,
                      const char *const *lines, size_t n, const char *run_id,
                      const store_fence *fence, srv_error *err);
char *pg_records_load(store *s, const char *session_id, size_t *len, srv_error *err);
void *pg_get_blob(store *s, const char *run_id, const char *name, size_t *len,
                  srv_error *err);

#endif
