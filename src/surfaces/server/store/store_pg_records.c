/* store_pg_records.c — a loom session's records as rows of
 * loom_session_records (schema step 5), the PostgreSQL store's side of the
 * transcript's rows port (docs/server-store.md, "Session records").
 *
 * A batch is one transaction: the run's lease row locked FOR SHARE and
 * checked against the fence (pg_fence_check: a claim taking the run over
 * waits for the batch, or the batch sees the claim's epoch and is
 * refused), the count of stored records compared with first_seq (a batch
 * that would leave a gap or overwrite is refused), then the lines. So the
 * rows of a session are a prefix of what its writers appended, whole
 * batches only — the torn-write rule of the JSONL file (a torn last line
 * is dropped) with the torn part never stored at all — and a worker that
 * lost its run adds nothing.
 *
 * Threading: see store_pg_int.h; nothing here keeps state. */
#include "surfaces/server/store/store_pg_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/str.h"

static int commit(pg_store *q, PGconn *c, const char *sql, const char *op, srv_error *err)
{
    PGresult *r = pg_query(q, c, sql, 0, NULL, op, err, NULL);
    PQclear(r);
    return r ? 0 : -1;
}

int pg_records_append(store *s, const char *session_id, int64_t first_seq,
                      const char *const *lines, size_t n, const char *run_id,
                      const store_fence *fence, srv_error *err)
{
    pg_store *q = (pg_store *)s;
    if (!session_id || !*session_id || (n && !lines) || first_seq < 0) {
        srv_fail(err, LOOM_ERR_INVALID_REQUEST, "store %s: records_append: no session", q->shown);
        return -1;
    }
    char op[200];
    snprintf(op, sizeof op, "append records of session %s", session_id);
    PGconn *c = pg_take(q);
    int rc = commit(q, c, "BEGIN", op, err);
    if (rc == 0 && fence && fence->epoch != 0)
        rc = pg_fence_check(q, c, run_id ? run_id : "", fence, op, err);
    if (rc == 0) {
        const char *vals[] = {session_id};
        PGresult *r = pg_query(q, c,
                               "SELECT count(*) FROM loom_session_records WHERE session_id = $1",
                               1, vals, op, err, NULL);
        rc = r ? 0 : -1;
        long long have = r ? strtoll(PQgetvalue(r, 0, 0), NULL, 10) : 0;
        PQclear(r);
        if (rc == 0 && have != first_seq) {
            srv_fail(err, LOOM_ERR_INVALID_REQUEST,
                     "session %s has %lld records stored; a batch from record %lld is out of "
                     "order (a second writer of the session?); nothing was written",
                     session_id, have, (long long)first_seq);
            rc = -1;
        }
    }
    for (size_t i = 0; rc == 0 && i < n; i++) {
        char seq[24];
        snprintf(seq, sizeof seq, "%lld", (long long)(first_seq + (int64_t)i));
        const char *vals[] = {session_id, seq, lines[i]};
        PGresult *r = pg_query(q, c,
                               "INSERT INTO loom_session_records (session_id, seq, line) "
                               "VALUES ($1, $2, $3)",
                               3, vals, op, err, NULL);
        rc = r ? 0 : -1;
        PQclear(r);
    }
    if (rc == 0)
        rc = commit(q, c, "COMMIT", op, err);
    pg_give(q, c); /* rolls back a refused or failed batch */
    return rc;
}

char *pg_records_load(store *s, const char *session_id, size_t *len, srv_error *err)
{
    pg_store *q = (pg_store *)s;
    *len = 0;
    char op[200];
    snprintf(op, sizeof op, "load records of session %s", session_id ? session_id : "");
    const char *vals[] = {session_id};
    PGconn *c = pg_take(q);
    PGresult *r = pg_query(q, c,
                           "SELECT line FROM loom_session_records WHERE session_id = $1 "
                           "ORDER BY seq",
                           1, vals, op, err, NULL);
    pg_give(q, c);
    if (!r)
        return NULL;
    loom_str out = LOOM_STR_INIT;
    for (int i = 0; i < PQntuples(r); i++) {
        str_append(&out, PQgetvalue(r, i, 0), (size_t)PQgetlength(r, i, 0));
        str_putc(&out, '\n');
    }
    PQclear(r);
    *len = out.len;
    return str_steal(&out);
}
