/* store_sqlite_int.h — the SQLite store's private parts, shared by its three
 * files (store_sqlite.c: open, schema, connections, close;
 * store_sqlite_docs.c: documents; store_sqlite_events.c: events
 * and blobs) and by its unit test and bench, which reach the migration list
 * and the synchronous knob. Not part of the store.h contract.
 *
 * Threading: the writer connection and its statements belong to whoever
 * holds wlock; a reader slot (connection plus its statements) to the one
 * thread that took it from the pool until it gives it back. The fields set at
 * open (path, ops) are read-only after it. */
#ifndef LOOM_SERVER_STORE_SQLITE_INT_H
#define LOOM_SERVER_STORE_SQLITE_INT_H

#include <pthread.h>
#include <sqlite3.h>
#include <stdbool.h>

#include "surfaces/server/store/store.h"
#include "surfaces/server/store/store_rules.h"

#define SQ_READERS 4
/* list's four shapes: parent filter yes/no × state filter yes/no. */
#define SQ_LIST_SHAPES 4

typedef struct sq_reader {
    sqlite3 *db;
    sqlite3_stmt *get[STORE_KIND_END];
    sqlite3_stmt *list[STORE_KIND_END][SQ_LIST_SHAPES];
    sqlite3_stmt *events_after;
    sqlite3_stmt *max_seq;
    sqlite3_stmt *get_blob;
} sq_reader;

/* One append_events call waiting for a group commit (store_sqlite_events.c):
 * on its caller's stack, linked into the queue under qlock. The leader
 * fills ret and e; the caller reads them once done is set. */
typedef struct sq_append_req {
    const char *run_id;
    const store_event *evs;
    size_t n;
    int ret;
    srv_error e;
    bool done;
    struct sq_append_req *next;
} sq_append_req;

typedef struct sq_store {
    store base;
    char *path;

    pthread_mutex_t wlock;  /* the writer and every w_* statement */
    sqlite3 *w;
    sqlite3_stmt *w_put[STORE_KIND_END];
    sqlite3_stmt *w_begin, *w_commit, *w_rollback;
    sqlite3_stmt *w_max_seq, *w_insert_event, *w_put_blob;
    sqlite3_stmt *w_savepoint, *w_release, *w_rollback_to;

    pthread_mutex_t qlock;  /* the append queue and the leader flag */
    pthread_cond_t qdone;
    sq_append_req *qhead, **qtail;
    bool qleader;           /* a thread is committing a group */

    pthread_mutex_t plock;  /* the pool's busy flags */
    pthread_cond_t pfree;
    bool busy[SQ_READERS];
    sq_reader readers[SQ_READERS];
} sq_store;

/* The schema steps, oldest first: step i takes a database from version i to
 * i+1. SQ_SCHEMA_VERSION is the number of steps. Never edit a step that has
 * shipped; add one. */
extern const char *const store_sqlite_migrations[];
extern const int store_sqlite_schema_version;

/* The six document tables, by store_kind. */
extern const char *const store_sqlite_tables[STORE_KIND_END];

/* Sets PRAGMA synchronous on the writer: full (the default: an acknowledged
 * append survives a power cut) or normal (survives a killed process, not a
 * power cut). For the bench's comparison. 0 or -1 with err. */
int store_sqlite_set_synchronous(store *s, bool full, srv_error *err);

/* Helpers the three files share. */
/* Fails err from the SQLite error on db (or rc when db is NULL), naming the
 * store path and the operation: "store PATH: OP: MESSAGE". Returns -1. */
int sq_fail(sq_store *q, sqlite3 *db, int rc, const char *op, srv_error *err);
/* Prepares sql once into *slot (persistent), or reuses it. NULL with err. */
sqlite3_stmt *sq_stmt(sq_store *q, sqlite3 *db, sqlite3_stmt **slot, const char *sql,
                      const char *op, srv_error *err);
/* Takes a reader slot (waits for one) / gives it back. */
sq_reader *sq_reader_take(sq_store *q);
void sq_reader_give(sq_store *q, sq_reader *r);

/* The ops the other files implement. */
int sq_put(store *s, store_kind kind, const char *id, const store_doc_keys *keys,
           const char *json, srv_error *err);
char *sq_get(store *s, store_kind kind, const char *id, srv_error *err);
char *sq_count_states(store *s, store_kind kind, const char *tenant_id, srv_error *err);
char *sq_list(store *s, store_kind kind, const store_list_query *qry, char **next_cursor,
              srv_error *err);
int sq_append_batch(store *s, store_append *items, size_t n, srv_error *err);
int sq_append_events(store *s, const char *run_id, const store_event *evs, size_t n,
                     srv_error *err);
char *sq_events_after(store *s, const char *run_id, int64_t after, int limit,
                      int64_t *last_seq, srv_error *err);
int64_t sq_max_seq(store *s, const char *run_id, srv_error *err);
int sq_put_blob(store *s, const char *run_id, const char *name, const void *data, size_t len,
                srv_error *err);
void *sq_get_blob(store *s, const char *run_id, const char *name, size_t *len,
                  srv_error *err);

#endif
