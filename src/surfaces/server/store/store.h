/* store.h — where loom serve keeps its objects and every run's events: the
 * interface (a const vtable, DESIGN.md §9), implemented twice: by SQLite
 * (store_sqlite*.c, the default: WAL, one writer, migrations) and by
 * PostgreSQL (store_pg*.c, libpq: a connection pool, migrations under an
 * advisory lock; several loom-serve processes may share one database). The
 * parts both must answer alike are store_rules.h and store_cursor.h. The
 * session JSONL files stay the truth for conversations; the store keeps
 * what the server adds: sessions, tasks, runs, approvals, artifacts (with
 * their content), webhook deliveries, and the events with their per-run
 * sequence numbers.
 *
 * Documents: each object is a JSON text under (kind, id) with the columns a
 * listing filters on copied out of it by the caller (tenant, parent, state,
 * created_at). put replaces the whole document. Listings are ordered by
 * (created_at, id) ascending and paged by an opaque cursor.
 *
 * Events: (run_id, seq) is the key; seq starts at 1 and a run's events are
 * appended in seq order with no hole: append refuses a seq that is not
 * max_seq + 1 (invalid_state_transition) — an event a client saw can never
 * be renumbered. A successful append is durable (synchronous commit) before
 * it returns, so an event is stored before any client can see it.
 *
 * Threading: every function may be called from any thread at once (SQLite
 * serializes writes on its one writer connection and reads on a pool of
 * readers; PostgreSQL runs both on a pool of connections). Strings returned
 * are malloc'd (caller frees). Errors: -1 (or NULL) with err set, a message
 * naming the store (the path, or the URL without its password) and the
 * operation. */
#ifndef LOOM_SERVER_STORE_H
#define LOOM_SERVER_STORE_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "surfaces/server/server_error.h"

typedef enum store_kind {
    STORE_SESSION = 0,
    STORE_TASK = 1,
    STORE_RUN = 2,
    STORE_APPROVAL = 3,
    STORE_ARTIFACT = 4,
    STORE_DELIVERY = 5, /* webhook deliveries */
    STORE_KIND_END = 6,
} store_kind;

/* The columns a document is found by, copied out of its JSON. parent is the
 * session for a task or run, the run for an approval or artifact, the
 * tenant's webhook for a delivery. state is a run's state or an approval's
 * status (NULL where the kind has none). created_at is ISO 8601 text. */
typedef struct store_doc_keys {
    const char *tenant_id;
    const char *parent_id;
    const char *state;
    const char *created_at;
} store_doc_keys;

typedef struct store_list_query {
    const char *tenant_id;  /* required: a listing never crosses tenants */
    const char *parent_id;  /* NULL: any */
    const char *state;      /* NULL: any */
    const char *cursor;     /* NULL: from the start */
    int limit;              /* 1–1000 */
} store_list_query;

typedef struct store_event {
    int64_t seq;
    const char *json;       /* the whole event object */
} store_event;

/* A write of a leased run made conditional on the lease (fencing): it is
 * refused unless worker still holds the run's lease at epoch, the number
 * the claim that took it gave out. epoch 0: no condition (a run no worker
 * holds, SQLite). Why: a worker stalled past its lease (SIGSTOP, a long
 * GC-like pause, a partition) whose run another worker reclaimed must not
 * write that run's events or state any more; the lease row, locked in the
 * write's transaction, says whose the run is. */
typedef struct store_fence {
    const char *worker;
    int64_t epoch;
} store_fence;

/* What the fenced writes return when the lease is gone (err
 * invalid_state_transition, "... lease ... is no longer WORKER's"). */
#define STORE_FENCED (-2)

/* One run's events in an append_batch: in, the run, its events and the
 * fence (epoch 0: none); out, ret (0; -1 with err: that run's events
 * refused, nothing of them written, the other runs' go on; STORE_FENCED:
 * refused by the fence). */
typedef struct store_append {
    const char *run_id;
    const store_event *evs;
    size_t n;
    store_fence fence;
    int ret;
    srv_error err;
} store_append;

/* A lease as a claim or a renewal answers it: the run and the epoch the
 * holder's fenced writes must carry. */
typedef struct store_lease {
    char *run_id;
    int64_t epoch;
} store_lease;

static inline void store_leases_free(store_lease *l, int n)
{
    for (int i = 0; l && i < n; i++)
        free(l[i].run_id);
    free(l);
}

typedef struct store store;

/* A tenant's cap on runs held at once across every worker (its
 * concurrent_runs quota), for lease_claim. */
typedef struct store_tenant_cap {
    const char *tenant_id;
    long max_runs;
} store_tenant_cap;

/* What another process did to the shared store (store_ops.listen). */
typedef enum store_notice {
    STORE_NOTICE_EVENT,   /* run_id's events up to seq are stored */
    STORE_NOTICE_CONTROL, /* a control for run_id's holder was sent */
    STORE_NOTICE_RUN,     /* run_id's document was stored; state is its state */
    STORE_NOTICE_RESYNC,  /* notices may have been lost (a reconnection): read again */
} store_notice;

typedef void (*store_notice_fn)(void *ctx, store_notice what, const char *run_id,
                                const char *state, int64_t seq);

typedef struct store_ops {
    int (*put)(store *s, store_kind kind, const char *id, const store_doc_keys *keys,
               const char *json, srv_error *err);
    /* The document, or NULL: with err->code resource_not_found when there is
     * none, another code on failure. */
    char *(*get)(store *s, store_kind kind, const char *id, srv_error *err);
    /* A JSON array text of the documents, and *next_cursor (malloc'd, or NULL
     * at the end). */
    char *(*list)(store *s, store_kind kind, const store_list_query *q, char **next_cursor,
                  srv_error *err);
    /* How many documents of kind tenant_id has in each state: a JSON
     * object text {"STATE": N, …} (states with none are left out; a
     * document with no state is under ""). For /metrics. */
    char *(*count_states)(store *s, store_kind kind, const char *tenant_id, srv_error *err);
    /* Appends n events of run_id, seq max_seq+1 … max_seq+n, in one
     * transaction; refused whole (nothing written) when a seq is out of order. */
    int (*append_events)(store *s, const char *run_id, const store_event *evs, size_t n,
                         srv_error *err);
    /* append_events for several runs in one transaction (one fsync: the
     * server's event writer stores a batch of many runs' events at once).
     * Each run is checked and refused on its own (items[i].ret / .err);
     * -1 with err when the transaction itself failed (then every item is
     * -1 too). May be NULL: store_append_batch falls back to one
     * append_events per run. */
    int (*append_batch)(store *s, store_append *items, size_t n, srv_error *err);
    /* Up to limit events with seq > after, ascending, as a JSON array text of
     * the event objects; *last_seq gets the last one's seq (after when none). */
    char *(*events_after)(store *s, const char *run_id, int64_t after, int limit,
                          int64_t *last_seq, srv_error *err);
    /* The highest seq stored for run_id, 0 when none; -1 on failure. */
    int64_t (*max_seq)(store *s, const char *run_id, srv_error *err);
    /* An artifact's content (bytes, any length), keyed by (run_id, name). */
    int (*put_blob)(store *s, const char *run_id, const char *name, const void *data,
                    size_t len, srv_error *err);
    /* malloc'd bytes and *len, or NULL (resource_not_found when absent). */
    void *(*get_blob)(store *s, const char *run_id, const char *name, size_t *len,
                      srv_error *err);
    /* ---- workers sharing the store (store_pg_lease.c). NULL where the
     * store belongs to one process (SQLite): then the service runs what it
     * is given, as one process.
     *
     * A lease is (run, worker, expiry by the database's clock). lease_claim
     * takes up to max runs no live lease holds, in one transaction: queued
     * runs and active runs whose lease expired (a worker died), at most one
     * per session and none of a session another run of which is held,
     * oldest first within a tenant and tenants in turn, a tenant at its cap
     * skipped (the count is of live leases, over every worker). Each claim
     * gives the lease a new epoch (a database sequence: larger than any
     * before it, whoever held the run). The leases (malloc'd array, free
     * with store_leases_free) in *out, their count returned; -1 with err. */
    int (*lease_claim)(store *s, const char *worker, int ttl_ms, int max,
                       const store_tenant_cap *caps, size_t ncaps, store_lease **out,
                       srv_error *err);
    /* Moves the expiry of every unexpired lease worker holds to now + ttl_ms
     * (an expired one is not revived: a claim may be taking it);
     * how many it holds, or -1. When held is not NULL, *held gets them
     * (run and epoch): a run the worker thinks it holds and that is not
     * there was reclaimed by another worker. */
    int (*lease_renew)(store *s, const char *worker, int ttl_ms, store_lease **held,
                       srv_error *err);
    /* put, conditional on the fence (store_fence): 0, -1 with err, or
     * STORE_FENCED with err when the lease is not worker's at epoch any
     * more (nothing written). NULL where there are no leases. */
    int (*put_fenced)(store *s, store_kind kind, const char *id, const store_doc_keys *keys,
                      const char *json, const store_fence *fence, srv_error *err);
    /* Calls fn (on a thread of the store's, until close) for what every
     * process sharing the store does: events stored, controls sent, run
     * documents stored (PostgreSQL LISTEN/NOTIFY). Once per store. NULL
     * where the store is one process's. */
    int (*listen)(store *s, store_notice_fn fn, void *ctx, srv_error *err);
    /* Stops listen's calls (they have all returned when it returns). */
    void (*unlisten)(store *s);
    /* Right before one of run_id's tool calls starts: 1 when worker still
     * holds the run at epoch and the lease has not expired (its expiry is
     * then moved to now + ttl_ms, as a renewal), 0 when not (another worker
     * reclaimed it, or it expired and may be reclaimed any moment), -1 with
     * err. One statement on the lease row, so it and a claim are ordered. */
    int (*lease_check)(store *s, const char *run_id, const char *worker, int64_t epoch,
                       int ttl_ms, srv_error *err);
    /* Drops worker's lease of run_id (nothing when it holds none). */
    int (*lease_release)(store *s, const char *run_id, const char *worker, srv_error *err);
    /* A control for whoever holds run_id (cancel, an approval's answer):
     * a JSON object text, kept until taken. */
    int (*control_send)(store *s, const char *run_id, const char *json, srv_error *err);
    /* Takes (deletes and returns, oldest first) the controls of the runs
     * worker holds: a JSON array text of {"run_id", "control"}. */
    char *(*control_take)(store *s, const char *worker, srv_error *err);
    /* ---- a loom session's records as rows (store_pg_records.c). NULL
     * where the session's JSONL file is the record (SQLite).
     *
     * Stores n lines (each a record's JSONL line without its '\n') as
     * records first_seq … of session_id in one transaction, refused whole
     * (nothing written) when first_seq is not the number of records
     * stored, and fenced by run_id's lease (fence epoch 0: no condition):
     * 0, -1 with err, or STORE_FENCED with err. */
    int (*records_append)(store *s, const char *session_id, int64_t first_seq,
                          const char *const *lines, size_t n, const char *run_id,
                          const store_fence *fence, srv_error *err);
    /* Every record of session_id as JSONL (line + '\n' each, in seq
     * order), malloc'd, *len bytes ("" when none); NULL with err. */
    char *(*records_load)(store *s, const char *session_id, size_t *len, srv_error *err);
    void (*close)(store *s);
} store_ops;

struct store {
    const store_ops *ops;
};

/* Opens the store a --store value names: "sqlite:PATH" (the file and the
 * folder above it are made; PATH may be relative), a bare path (taken as
 * sqlite), or a PostgreSQL URL "postgresql://…" / "postgres://…" (libpq's
 * connection URI; the database must exist). Migrates the schema forward; a
 * schema newer than this program knows is config_invalid. NULL with err
 * set. */
store *store_open(const char *spec, srv_error *err);
store *store_sqlite_open(const char *path, srv_error *err);
store *store_pg_open(const char *url, srv_error *err);
static inline int store_append_batch(store *s, store_append *items, size_t n, srv_error *err)
{
    if (s->ops->append_batch)
        return s->ops->append_batch(s, items, n, err);
    for (size_t i = 0; i < n; i++)
        items[i].ret = s->ops->append_events(s, items[i].run_id, items[i].evs, items[i].n,
                                             &items[i].err);
    return 0;
}

static inline void store_close(store *s)
{
    if (s)
        s->ops->close(s);
}

#endif
