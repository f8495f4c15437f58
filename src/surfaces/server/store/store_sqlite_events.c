/* store_sqlite_events.c — the SQLite store's run events (store.h
 * append_events, events_after, max_seq) and artifact contents (put_blob,
 * get_blob).
 *
 * An append reads the run's highest seq inside an IMMEDIATE transaction on
 * the writer, refuses the whole batch unless the batch continues it exactly
 * (max+1, max+2, …), inserts, and commits with synchronous=FULL, so when it
 * returns the events are on disk. Appends from several threads that arrive
 * together share one transaction and one fsync (group commit, below), each
 * in its own savepoint so a refusal stays its own. Holding the writer mutex
 * keeps our own threads out; IMMEDIATE keeps another process out between
 * the read of the highest seq and the inserts.
 *
 * Threading: see store_sqlite_int.h; nothing here keeps state. */
#include "surfaces/server/store/store_sqlite_int.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Steps one statement that answers no row; 0 or -1 with err. */
static int sq_step_done(sq_store *q, sqlite3_stmt *st, const char *op, srv_error *err)
{
    int rc = sqlite3_step(st);
    sqlite3_reset(st);
    return rc == SQLITE_DONE ? 0 : sq_fail(q, q->w, rc, op, err);
}

/* The highest seq of run_id on db through *slot, 0 when none, -1 on failure. */
static int64_t sq_run_max(sq_store *q, sqlite3 *db, sqlite3_stmt **slot, const char *run_id,
                          const char *op, srv_error *err)
{
    sqlite3_stmt *st = sq_stmt(
        q, db, slot, "SELECT seq FROM events WHERE run_id = ?1 ORDER BY seq DESC LIMIT 1", op,
        err);
    if (!st)
        return -1;
    sqlite3_bind_text(st, 1, run_id, -1, SQLITE_STATIC);
    int rc = sqlite3_step(st);
    int64_t v = rc == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
    if (rc != SQLITE_ROW && rc != SQLITE_DONE)
        v = sq_fail(q, db, rc, op, err);
    sqlite3_reset(st);
    sqlite3_clear_bindings(st);
    return v;
}

/* The body of the transaction: the check and the inserts. */
static int sq_append_tx(sq_store *q, const char *run_id, const store_event *evs, size_t n,
                        const char *op, srv_error *err)
{
    int64_t max = sq_run_max(q, q->w, &q->w_max_seq, run_id, op, err);
    if (max < 0 || store_check_seqs(run_id, max, evs, n, err) < 0)
        return -1;
    sqlite3_stmt *st = sq_stmt(q, q->w, &q->w_insert_event,
                               "INSERT INTO events (run_id, seq, json) VALUES (?1, ?2, ?3)", op,
                               err);
    if (!st)
        return -1;
    for (size_t i = 0; i < n; i++) {
        sqlite3_bind_text(st, 1, run_id, -1, SQLITE_STATIC);
        sqlite3_bind_int64(st, 2, evs[i].seq);
        sqlite3_bind_text(st, 3, evs[i].json, -1, SQLITE_STATIC);
        int rc = sq_step_done(q, st, op, err);
        sqlite3_clear_bindings(st);
        if (rc < 0)
            return -1;
    }
    return 0;
}

/* Fails every request of the group with why (the transaction is gone). */
static void sq_group_fail(sq_append_req *group, const srv_error *why)
{
    for (sq_append_req *r = group; r; r = r->next) {
        r->ret = -1;
        r->e = *why;
        r->e.details_json = NULL;
        srv_error_set_run(&r->e, r->run_id);
    }
}

/* Commits a group of appends in one transaction (the writer held): each
 * request inside its own savepoint, so a refused one (a seq out of order,
 * an event that is not JSON) is rolled back alone and the others go on;
 * any other failure (I/O, a lost transaction) fails the whole group, since
 * none of it is known to be on disk. */
static void sq_append_group(sq_store *q, sq_append_req *group)
{
    srv_error why = {0};
    const char *op = "append_events";
    sqlite3_stmt *b = sq_stmt(q, q->w, &q->w_begin, "BEGIN IMMEDIATE", op, &why);
    sqlite3_stmt *c = b ? sq_stmt(q, q->w, &q->w_commit, "COMMIT", op, &why) : NULL;
    sqlite3_stmt *rb = c ? sq_stmt(q, q->w, &q->w_rollback, "ROLLBACK", op, &why) : NULL;
    sqlite3_stmt *sp = rb ? sq_stmt(q, q->w, &q->w_savepoint, "SAVEPOINT a", op, &why) : NULL;
    sqlite3_stmt *rel = sp ? sq_stmt(q, q->w, &q->w_release, "RELEASE a", op, &why) : NULL;
    sqlite3_stmt *rto =
        rel ? sq_stmt(q, q->w, &q->w_rollback_to, "ROLLBACK TO a", op, &why) : NULL;
    if (!rto || sq_step_done(q, b, op, &why) < 0) {
        sq_group_fail(group, &why);
        return;
    }
    for (sq_append_req *r = group; r; r = r->next) {
        char rop[128];
        snprintf(rop, sizeof rop, "append_events run %s", r->run_id);
        if (sq_step_done(q, sp, rop, &why) < 0)
            goto abort;
        r->ret = sq_append_tx(q, r->run_id, r->evs, r->n, rop, &r->e);
        if (r->ret == 0) {
            if (sq_step_done(q, rel, rop, &why) < 0)
                goto abort;
            continue;
        }
        if (r->e.code != LOOM_ERR_INVALID_STATE_TRANSITION &&
            r->e.code != LOOM_ERR_INVALID_REQUEST) {
            why = r->e;
            goto abort;
        }
        if (sq_step_done(q, rto, rop, &why) < 0 || sq_step_done(q, rel, rop, &why) < 0)
            goto abort;
    }
    if (sq_step_done(q, c, op, &why) == 0)
        return;
abort:
    /* A failed COMMIT or statement can leave the transaction open; end it
     * so the next group does not find itself inside this one. */
    if (!sqlite3_get_autocommit(q->w)) {
        sqlite3_step(rb);
        sqlite3_reset(rb);
    }
    sq_group_fail(group, &why);
}

/* Group commit: with synchronous=FULL every commit costs an fsync, so
 * appends that arrive while one commit is on its way to the disk wait in a
 * queue and the next leader commits all of them in one transaction (one
 * fsync). The caller still returns only once its own events are on disk.
 * The first waiter that finds no leader becomes the next one. */
/* Queues the requests first..last (linked, all at once, so one group
 * holds them all) for a group commit and waits until they are on disk or
 * refused; the first waiter that finds no leader leads the next group. */
static void sq_commit_queued(sq_store *q, sq_append_req *first, sq_append_req *last)
{
    pthread_mutex_lock(&q->qlock);
    *q->qtail = first;
    q->qtail = &last->next;
    while (!last->done) {
        if (q->qleader) {
            pthread_cond_wait(&q->qdone, &q->qlock);
            continue;
        }
        q->qleader = true;
        sq_append_req *group = q->qhead;
        q->qhead = NULL;
        q->qtail = &q->qhead;
        pthread_mutex_unlock(&q->qlock);
        pthread_mutex_lock(&q->wlock);
        sq_append_group(q, group);
        pthread_mutex_unlock(&q->wlock);
        pthread_mutex_lock(&q->qlock);
        for (sq_append_req *r = group, *next; r; r = next) {
            next = r->next;
            r->done = true;
        }
        q->qleader = false;
        pthread_cond_broadcast(&q->qdone);
    }
    pthread_mutex_unlock(&q->qlock);
}

static int sq_check_request(sq_store *q, const char *run_id, const store_event *evs, size_t n,
                            srv_error *err)
{
    if (!run_id || !*run_id)
        return srv_fail(err, LOOM_ERR_INVALID_REQUEST, "store %s: append_events: no run id",
                        q->path);
    for (size_t i = 0; i < n; i++)
        if (!evs[i].json)
            return srv_fail(err, LOOM_ERR_INVALID_REQUEST,
                            "store %s: append_events run %s: event %zu has no JSON", q->path,
                            run_id, i + 1);
    return 0;
}

static void sq_copy_error(srv_error *to, const sq_append_req *req)
{
    if (req->ret < 0 && to) {
        srv_fail(to, req->e.code, "%s", req->e.message);
        to->retryable = req->e.retryable;
        srv_error_set_run(to, req->e.run_id);
    }
}

/* Group commit: with synchronous=FULL every commit costs an fsync, so
 * appends that arrive while one commit is on its way to the disk wait in a
 * queue and the next leader commits all of them in one transaction (one
 * fsync). The caller still returns only once its own events are on disk. */
int sq_append_events(store *s, const char *run_id, const store_event *evs, size_t n,
                     srv_error *err)
{
    sq_store *q = (sq_store *)s;
    if (sq_check_request(q, run_id, evs, n, err) < 0)
        return -1;
    if (n == 0)
        return 0;
    sq_append_req req = {.run_id = run_id, .evs = evs, .n = n, .ret = -1};
    sq_commit_queued(q, &req, &req);
    sq_copy_error(err, &req);
    return req.ret;
}

int sq_append_batch(store *s, store_append *items, size_t n, srv_error *err)
{
    sq_store *q = (sq_store *)s;
    sq_append_req *reqs = calloc(n ? n : 1, sizeof *reqs);
    if (!reqs)
        return srv_fail(err, LOOM_ERR_INTERNAL, "store %s: append_batch: out of memory", q->path);
    sq_append_req *first = NULL, *last = NULL;
    for (size_t i = 0; i < n; i++) {
        items[i].ret = sq_check_request(q, items[i].run_id, items[i].evs, items[i].n,
                                        &items[i].err);
        if (items[i].ret < 0 || items[i].n == 0)
            continue;
        reqs[i] = (sq_append_req){.run_id = items[i].run_id, .evs = items[i].evs,
                                  .n = items[i].n, .ret = -1};
        if (last)
            last->next = &reqs[i];
        else
            first = &reqs[i];
        last = &reqs[i];
    }
    if (first)
        sq_commit_queued(q, first, last);
    for (size_t i = 0; i < n; i++)
        if (reqs[i].run_id) {
            items[i].ret = reqs[i].ret;
            sq_copy_error(&items[i].err, &reqs[i]);
        }
    free(reqs);
    return 0;
}

/* Steps the rows of events_after into out; 0, -1 out of memory, -2 a
 * failure already in err. */
static int sq_event_rows(sq_store *q, sqlite3 *db, sqlite3_stmt *st, store_buf *out,
                         int64_t *last, const char *op, srv_error *err)
{
    int rc, count = 0;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        const char *json = (const char *)sqlite3_column_text(st, 1);
        *last = sqlite3_column_int64(st, 0);
        if ((count++ > 0 && store_buf_add(out, ",", 1) < 0) ||
            store_buf_add(out, json ? json : "null", json ? strlen(json) : 4) < 0)
            return -1;
    }
    if (rc != SQLITE_DONE) {
        sq_fail(q, db, rc, op, err);
        return -2;
    }
    return 0;
}

char *sq_events_after(store *s, const char *run_id, int64_t after, int limit,
                      int64_t *last_seq, srv_error *err)
{
    sq_store *q = (sq_store *)s;
    if (last_seq)
        *last_seq = after;
    if (!run_id || limit < 1 || limit > STORE_EVENTS_MAX_LIMIT) {
        srv_fail(err, LOOM_ERR_INVALID_REQUEST, "events limit %d is not within 1-%d", limit,
                 STORE_EVENTS_MAX_LIMIT);
        return NULL;
    }
    char op[128];
    snprintf(op, sizeof op, "events_after run %s", run_id);
    store_buf out = {0};
    int ret = store_buf_add(&out, "[", 1);
    int64_t last = after;
    sq_reader *r = sq_reader_take(q);
    sqlite3_stmt *st = sq_stmt(q, r->db, &r->events_after,
                               "SELECT seq, json FROM events WHERE run_id = ?1 AND seq > ?2 "
                               "ORDER BY seq LIMIT ?3",
                               op, err);
    if (!st) {
        ret = -2;
    } else if (ret == 0) {
        sqlite3_bind_text(st, 1, run_id, -1, SQLITE_STATIC);
        sqlite3_bind_int64(st, 2, after);
        sqlite3_bind_int(st, 3, limit);
        ret = sq_event_rows(q, r->db, st, &out, &last, op, err);
        sqlite3_reset(st);
        sqlite3_clear_bindings(st);
    }
    sq_reader_give(q, r);
    if (ret == 0 && store_buf_add(&out, "]", 1) < 0)
        ret = -1;
    if (ret < 0) {
        if (ret == -1)
            srv_fail(err, LOOM_ERR_INTERNAL, "store %s: %s: out of memory", q->path, op);
        free(out.p);
        return NULL;
    }
    if (last_seq)
        *last_seq = last;
    return out.p;
}

int64_t sq_max_seq(store *s, const char *run_id, srv_error *err)
{
    sq_store *q = (sq_store *)s;
    if (!run_id)
        return srv_fail(err, LOOM_ERR_INVALID_REQUEST, "store %s: max_seq: no run id", q->path);
    char op[128];
    snprintf(op, sizeof op, "max_seq run %s", run_id);
    sq_reader *r = sq_reader_take(q);
    int64_t v = sq_run_max(q, r->db, &r->max_seq, run_id, op, err);
    sq_reader_give(q, r);
    return v;
}

int sq_put_blob(store *s, const char *run_id, const char *name, const void *data, size_t len,
                srv_error *err)
{
    sq_store *q = (sq_store *)s;
    if (!run_id || !*run_id || !name || !*name || (!data && len))
        return srv_fail(err, LOOM_ERR_INVALID_REQUEST, "store %s: put_blob: no run, name or data",
                        q->path);
    char op[256];
    snprintf(op, sizeof op, "put_blob %s/%s", run_id, name);
    pthread_mutex_lock(&q->wlock);
    int ret = -1;
    sqlite3_stmt *st = sq_stmt(q, q->w, &q->w_put_blob,
                               "INSERT INTO blobs (run_id, name, data) VALUES (?1, ?2, ?3) "
                               "ON CONFLICT (run_id, name) DO UPDATE SET data = excluded.data",
                               op, err);
    if (st) {
        sqlite3_bind_text(st, 1, run_id, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 2, name, -1, SQLITE_STATIC);
        /* An empty blob is zero bytes, not NULL (the column is NOT NULL). */
        if (len == 0)
            sqlite3_bind_zeroblob(st, 3, 0);
        else
            sqlite3_bind_blob64(st, 3, data, len, SQLITE_STATIC);
        ret = sq_step_done(q, st, op, err);
        sqlite3_clear_bindings(st);
    }
    pthread_mutex_unlock(&q->wlock);
    return ret;
}

void *sq_get_blob(store *s, const char *run_id, const char *name, size_t *len,
                  srv_error *err)
{
    sq_store *q = (sq_store *)s;
    if (len)
        *len = 0;
    if (!run_id || !name) {
        srv_fail(err, LOOM_ERR_INVALID_REQUEST, "store %s: get_blob: no run or name", q->path);
        return NULL;
    }
    char op[256];
    snprintf(op, sizeof op, "get_blob %s/%s", run_id, name);
    void *out = NULL;
    sq_reader *r = sq_reader_take(q);
    sqlite3_stmt *st = sq_stmt(q, r->db, &r->get_blob,
                               "SELECT data FROM blobs WHERE run_id = ?1 AND name = ?2", op, err);
    if (st) {
        sqlite3_bind_text(st, 1, run_id, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 2, name, -1, SQLITE_STATIC);
        int rc = sqlite3_step(st);
        if (rc == SQLITE_ROW) {
            const void *d = sqlite3_column_blob(st, 0);
            size_t n = (size_t)sqlite3_column_bytes(st, 0);
            out = malloc(n ? n : 1);
            if (!out)
                srv_fail(err, LOOM_ERR_INTERNAL, "store %s: %s: out of memory", q->path, op);
            else {
                if (n)
                    memcpy(out, d, n);
                if (len)
                    *len = n;
            }
        } else if (rc == SQLITE_DONE) {
            srv_fail(err, LOOM_ERR_RESOURCE_NOT_FOUND, "artifact %s of run %s not found", name,
                     run_id);
        } else {
            sq_fail(q, r->db, rc, op, err);
        }
        sqlite3_reset(st);
        sqlite3_clear_bindings(st);
    }
    sq_reader_give(q, r);
    return out;
}
