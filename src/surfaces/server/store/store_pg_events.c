/* store_pg_events.c — the PostgreSQL store's run events (store.h
 * append_events, append_batch, events_after, max_seq) and artifact
 * contents (put_blob, get_blob, bytea).
 *
 * An append is one transaction on one connection: each run's events in a
 * SAVEPOINT of their own, so a run that is refused (a seq out of order, an
 * event that is not JSON) is rolled back alone and the others commit. In
 * it the run's highest seq is read and the batch must continue it exactly
 * (store_check_seqs, the same refusal as the SQLite store's). Two writers
 * (threads of one loom-serve or two processes) appending the same run at
 * once both read the same highest seq; the primary key (run_id, seq) makes
 * the second one's insert wait for the first one's commit and then fail
 * as a unique violation, which is the same refusal: seq was taken, nothing
 * of the batch is written, no hole and no rewrite. Any other failure (the
 * connection, the server) fails every run of the transaction, since none
 * of it is known to be stored.
 *
 * Threading: see store_pg_int.h; nothing here keeps state. */
#include "surfaces/server/store/store_pg_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One statement whose result is not needed; 0 or -1 with err. */
static int pg_do(pg_store *q, PGconn *c, const char *sql, int n, const char *const *vals,
                 const char *op, srv_error *err, char sqlstate[6])
{
    PGresult *r = pg_query(q, c, sql, n, vals, op, err, sqlstate);
    PQclear(r);
    return r ? 0 : -1;
}

/* The highest seq of run_id, 0 when none, -1 on failure. */
static int64_t pg_run_max(pg_store *q, PGconn *c, const char *run_id, const char *op,
                          srv_error *err)
{
    const char *vals[] = {run_id};
    PGresult *r = pg_query(q, c, "SELECT coalesce(max(seq), 0) FROM loom_events WHERE run_id = $1",
                           1, vals, op, err, NULL);
    if (!r)
        return -1;
    int64_t v = strtoll(PQgetvalue(r, 0, 0), NULL, 10);
    PQclear(r);
    return v;
}

/* One run's check and inserts inside the open savepoint. 0; -1 with err (a
 * refusal: invalid_state_transition or invalid_request; anything else is a
 * failure of the whole transaction); STORE_FENCED when its fence refused it
 * (the lease row is locked first, see store_pg_lease.c). */
static int pg_append_run(pg_store *q, PGconn *c, const store_append *it, const char *op,
                         srv_error *err)
{
    if (it->fence.epoch != 0) {
        int f = pg_fence_check(q, c, it->run_id, &it->fence, op, err);
        if (f != 0)
            return f;
    }
    int64_t max = pg_run_max(q, c, it->run_id, op, err);
    if (max < 0 || store_check_seqs(it->run_id, max, it->evs, it->n, err) < 0)
        return -1;
    for (size_t i = 0; i < it->n; i++) {
        char seq[24], state[6];
        snprintf(seq, sizeof seq, "%lld", (long long)it->evs[i].seq);
        const char *vals[] = {it->run_id, seq, it->evs[i].json};
        if (pg_do(q, c, "INSERT INTO loom_events (run_id, seq, json) VALUES ($1, $2, $3)", 3,
                  vals, op, err, state) < 0) {
            if (!strcmp(state, "23505")) /* unique_violation: another writer took seq */
                store_refuse_taken(it->run_id, it->evs, it->n, it->evs[i].seq, err);
            else if (err && err->code == LOOM_ERR_INVALID_REQUEST)
                srv_error_set_run(err, it->run_id);
            return -1;
        }
    }
    return 0;
}

static bool pg_refusal(const srv_error *e)
{
    return e->code == LOOM_ERR_INVALID_STATE_TRANSITION || e->code == LOOM_ERR_INVALID_REQUEST;
}

static int pg_check_item(pg_store *q, store_append *it)
{
    if (!it->run_id || !*it->run_id)
        return srv_fail(&it->err, LOOM_ERR_INVALID_REQUEST, "store %s: append_events: no run id",
                        q->shown);
    for (size_t i = 0; i < it->n; i++)
        if (!it->evs || !it->evs[i].json)
            return srv_fail(&it->err, LOOM_ERR_INVALID_REQUEST,
                            "store %s: append_events run %s: event %zu has no JSON", q->shown,
                            it->run_id, i + 1);
    return 0;
}

/* Every item still to be written fails with why (the transaction is gone). */
static void pg_fail_all(store_append *items, size_t n, const bool *todo, const srv_error *why)
{
    for (size_t i = 0; i < n; i++) {
        if (!todo[i])
            continue;
        items[i].ret = -1;
        srv_fail(&items[i].err, why->code, "%s", why->message);
        items[i].err.retryable = why->retryable;
        srv_error_set_run(&items[i].err, items[i].run_id);
    }
}

int pg_append_batch(store *s, store_append *items, size_t n, srv_error *err)
{
    pg_store *q = (pg_store *)s;
    bool *todo = calloc(n ? n : 1, sizeof *todo);
    if (!todo)
        return srv_fail(err, LOOM_ERR_INTERNAL, "store %s: append_batch: out of memory",
                        q->shown);
    size_t work = 0;
    for (size_t i = 0; i < n; i++) {
        items[i].ret = pg_check_item(q, &items[i]);
        todo[i] = items[i].ret == 0 && items[i].n > 0;
        work += todo[i];
    }
    if (work == 0) {
        free(todo);
        return 0;
    }
    srv_error why = {0};
    const char *op = "append_events";
    PGconn *c = pg_take(q);
    if (pg_do(q, c, "BEGIN", 0, NULL, op, &why, NULL) < 0)
        goto abort;
    for (size_t i = 0; i < n; i++) {
        if (!todo[i])
            continue;
        store_append *it = &items[i];
        char rop[128];
        snprintf(rop, sizeof rop, "append_events run %s", it->run_id);
        if (pg_do(q, c, "SAVEPOINT loom_run", 0, NULL, rop, &why, NULL) < 0)
            goto abort;
        it->ret = pg_append_run(q, c, it, rop, &it->err);
        if (it->ret == 0) {
            if (pg_do(q, c, "RELEASE SAVEPOINT loom_run", 0, NULL, rop, &why, NULL) < 0)
                goto abort;
            continue;
        }
        todo[i] = false; /* refused or failed: its error is its own */
        if (!pg_refusal(&it->err)) {
            why = it->err;
            why.details_json = NULL;
            goto abort;
        }
        if (pg_do(q, c, "ROLLBACK TO SAVEPOINT loom_run", 0, NULL, rop, &why, NULL) < 0 ||
            pg_do(q, c, "RELEASE SAVEPOINT loom_run", 0, NULL, rop, &why, NULL) < 0)
            goto abort;
    }
    if (pg_do(q, c, "COMMIT", 0, NULL, op, &why, NULL) == 0) {
        pg_give(q, c);
        free(todo);
        return 0;
    }
abort:
    /* pg_give ends what is left of the transaction. Every item that had
     * not been refused on its own fails: none of it is known stored. */
    pg_give(q, c);
    for (size_t i = 0; i < n; i++)
        if (items[i].ret == 0 && items[i].n > 0)
            todo[i] = true;
    pg_fail_all(items, n, todo, &why);
    free(todo);
    srv_fail(err, why.code, "%s", why.message);
    if (err)
        err->retryable = why.retryable;
    return -1;
}

int pg_append_events(store *s, const char *run_id, const store_event *evs, size_t n,
                     srv_error *err)
{
    store_append it = {.run_id = run_id, .evs = evs, .n = n};
    pg_append_batch(s, &it, 1, NULL);
    if (it.ret < 0 && err) {
        srv_fail(err, it.err.code, "%s", it.err.message);
        err->retryable = it.err.retryable;
        srv_error_set_run(err, it.err.run_id);
    }
    srv_error_clear(&it.err);
    return it.ret;
}

char *pg_events_after(store *s, const char *run_id, int64_t after, int limit,
                      int64_t *last_seq, srv_error *err)
{
    pg_store *q = (pg_store *)s;
    if (last_seq)
        *last_seq = after;
    if (!run_id || limit < 1 || limit > STORE_EVENTS_MAX_LIMIT) {
        srv_fail(err, LOOM_ERR_INVALID_REQUEST, "events limit %d is not within 1-%d", limit,
                 STORE_EVENTS_MAX_LIMIT);
        return NULL;
    }
    char op[128], from[24], lim[16];
    snprintf(op, sizeof op, "events_after run %s", run_id);
    snprintf(from, sizeof from, "%lld", (long long)after);
    snprintf(lim, sizeof lim, "%d", limit);
    const char *vals[] = {run_id, from, lim};
    PGconn *c = pg_take(q);
    PGresult *r = pg_query(q, c,
                           "SELECT seq, json FROM loom_events WHERE run_id = $1 AND seq > $2 "
                           "ORDER BY seq LIMIT $3",
                           3, vals, op, err, NULL);
    pg_give(q, c);
    if (!r)
        return NULL;
    store_buf out = {0};
    int rows = PQntuples(r), ok = store_buf_add(&out, "[", 1) == 0;
    int64_t last = after;
    for (int i = 0; ok && i < rows; i++) {
        const char *json = PQgetvalue(r, i, 1);
        last = strtoll(PQgetvalue(r, i, 0), NULL, 10);
        ok = (i == 0 || store_buf_add(&out, ",", 1) == 0) &&
             store_buf_add(&out, json, strlen(json)) == 0;
    }
    ok = ok && store_buf_add(&out, "]", 1) == 0;
    PQclear(r);
    if (!ok) {
        srv_fail(err, LOOM_ERR_INTERNAL, "store %s: %s: out of memory", q->shown, op);
        free(out.p);
        return NULL;
    }
    if (last_seq)
        *last_seq = last;
    return out.p;
}

int64_t pg_max_seq(store *s, const char *run_id, srv_error *err)
{
    pg_store *q = (pg_store *)s;
    if (!run_id)
        return srv_fail(err, LOOM_ERR_INVALID_REQUEST, "store %s: max_seq: no run id", q->shown);
    char op[128];
    snprintf(op, sizeof op, "max_seq run %s", run_id);
    PGconn *c = pg_take(q);
    int64_t v = pg_run_max(q, c, run_id, op, err);
    pg_give(q, c);
    return v;
}

int pg_put_blob(store *s, const char *run_id, const char *name, const void *data, size_t len,
                srv_error *err)
{
    pg_store *q = (pg_store *)s;
    if (!run_id || !*run_id || !name || !*name || (!data && len))
        return srv_fail(err, LOOM_ERR_INVALID_REQUEST, "store %s: put_blob: no run, name or data",
                        q->shown);
    if (len > 0x3fffffff) /* bytea's limit is 1 GB; libpq's lengths are int */
        return srv_fail(err, LOOM_ERR_INVALID_REQUEST,
                        "store %s: put_blob %s/%s: %zu bytes is more than 1 GiB", q->shown,
                        run_id, name, len);
    char op[256];
    snprintf(op, sizeof op, "put_blob %s/%s", run_id, name);
    /* The content as a binary parameter: bytes as they are, no escaping. */
    const char *vals[] = {run_id, name, len ? data : ""};
    const int lens[] = {0, 0, (int)len};
    const int fmts[] = {0, 0, 1};
    PGconn *c = pg_take(q);
    PGresult *r = PQexecParams(c,
                               "INSERT INTO loom_blobs (run_id, name, data) VALUES ($1, $2, $3) "
                               "ON CONFLICT (run_id, name) DO UPDATE SET data = excluded.data",
                               3, NULL, vals, lens, fmts, 0);
    int ret = pg_check(q, c, r, op, err, NULL);
    PQclear(ret == 0 ? r : NULL);
    pg_give(q, c);
    return ret;
}

void *pg_get_blob(store *s, const char *run_id, const char *name, size_t *len,
                  srv_error *err)
{
    pg_store *q = (pg_store *)s;
    if (len)
        *len = 0;
    if (!run_id || !name) {
        srv_fail(err, LOOM_ERR_INVALID_REQUEST, "store %s: get_blob: no run or name", q->shown);
        return NULL;
    }
    char op[256];
    snprintf(op, sizeof op, "get_blob %s/%s", run_id, name);
    const char *vals[] = {run_id, name};
    PGconn *c = pg_take(q);
    /* Binary results: the bytea comes back as its bytes. */
    PGresult *r = PQexecParams(c, "SELECT data FROM loom_blobs WHERE run_id = $1 AND name = $2", 2,
                               NULL, vals, NULL, NULL, 1);
    int ok = pg_check(q, c, r, op, err, NULL) == 0;
    pg_give(q, c);
    if (!ok)
        return NULL;
    void *out = NULL;
    if (PQntuples(r) == 0) {
        srv_fail(err, LOOM_ERR_RESOURCE_NOT_FOUND, "artifact %s of run %s not found", name,
                 run_id);
    } else {
        size_t n = (size_t)PQgetlength(r, 0, 0);
        if (!(out = malloc(n ? n : 1))) {
            srv_fail(err, LOOM_ERR_INTERNAL, "store %s: %s: out of memory", q->shown, op);
        } else {
            memcpy(out, PQgetvalue(r, 0, 0), n);
            if (len)
                *len = n;
        }
    }
    PQclear(r);
    return out;
}
