/* store_pg_lease.c — the PostgreSQL store's part for workers sharing it
 * (store.h lease_claim, lease_renew, lease_release, control_send,
 * control_take): leases of runs in loom_leases, controls for a run's
 * holder in loom_controls (schema step 2, store_pg.c).
 *
 * Why this shape (the way pg-boss, graphile-worker and River claim jobs):
 * the claim locks the candidate run rows with FOR UPDATE SKIP LOCKED, so
 * two workers never wait on each other's rows, and writes the lease with
 * an upsert that only replaces an expired one, so a run is held by one
 * worker at a time whatever the race. Expiry is by the database's clock
 * (now()), never a worker's. The claim also takes a transaction-scoped
 * advisory lock first: the per-tenant cap and the one-run-per-session rule
 * count the leases of every worker, and that count is only exact when two
 * claims do not interleave (a claim is one short statement, so they queue
 * for microseconds).
 *
 * Fencing (pg_fence_check, pg_put_fenced): each claim stamps its lease with
 * a new epoch, and a holder's writes of the run lock the lease row FOR
 * SHARE in their own transaction and check (worker, epoch): a claim taking
 * the run over waits for such a write to commit, and a write after the
 * claim sees the new epoch and is refused. Lock order, so that no two of
 * these deadlock: lease rows are always locked in run id order (the claim
 * inserts ordered by id, the renewal locks ORDER BY run_id, the event
 * writer's batch is sorted by run id); a fenced put locks the document
 * row before the lease row, as the claim does.
 *
 * Threading: see store_pg_int.h; nothing here keeps state. */
#include "surfaces/server/store/store_pg_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* "loom" in the high half, 2 (the claim) in the low. */
#define PG_CLAIM_LOCK "7309475736900714498" /* 0x6c6f6f6d00000002 */

/* $1 the worker, $2 the lease in ms, $3 how many, $4/$5 the tenants and
 * their caps (text[] and bigint[] literals). held: the live leases with
 * their run's tenant and session; cand: the runs nobody holds that a
 * worker should run (queued, or active under an expired lease), the
 * oldest of each session whose other runs are not held; ranked: each
 * tenant's by priority (the run document's "priority", highest first),
 * then age (turn), so ORDER BY turn takes tenants in turn: a tenant's
 * priorities order its own runs and never let it pass another tenant. */
static const char CLAIM_SQL[] =
    "WITH held AS (SELECT d.tenant_id, d.parent_id FROM loom_leases l "
    "  JOIN loom_documents d ON d.kind = 'runs' AND d.id = l.run_id "
    "  WHERE l.expires_at >= now()), "
    "caps AS (SELECT * FROM unnest($4::text[], $5::bigint[]) AS c(tenant_id, cap)), "
    "cand AS (SELECT d.id, d.tenant_id, d.created_at, "
    "  CASE WHEN json_typeof(d.json->'priority') = 'number' "
    "  THEN (d.json->>'priority')::numeric ELSE 0 END AS prio, row_number() OVER "
    "  (PARTITION BY d.parent_id ORDER BY d.created_at, d.id) AS in_session "
    "  FROM loom_documents d LEFT JOIN loom_leases l ON l.run_id = d.id "
    "  WHERE d.kind = 'runs' AND d.state IN ('queued', 'running', 'waiting_approval', "
    "  'waiting_external') AND (l.run_id IS NULL OR l.expires_at < now()) "
    "  AND d.parent_id NOT IN (SELECT parent_id FROM held WHERE parent_id IS NOT NULL)), "
    "ranked AS (SELECT c.id, c.tenant_id, c.created_at, row_number() OVER "
    "  (PARTITION BY c.tenant_id ORDER BY c.prio DESC, c.created_at, c.id) AS turn, "
    "  (SELECT count(*) FROM held h WHERE h.tenant_id = c.tenant_id) AS have "
    "  FROM cand c WHERE c.in_session = 1), "
    "chosen AS (SELECT r.id FROM ranked r LEFT JOIN caps ON caps.tenant_id = r.tenant_id "
    "  WHERE caps.cap IS NULL OR caps.cap <= 0 OR r.have + r.turn <= caps.cap "
    "  ORDER BY r.turn, r.created_at, r.id LIMIT $3), "
    "picked AS (SELECT d.id FROM loom_documents d WHERE d.kind = 'runs' "
    "  AND d.id IN (SELECT id FROM chosen) FOR UPDATE OF d SKIP LOCKED) "
    "INSERT INTO loom_leases (run_id, worker_id, expires_at, epoch) "
    "SELECT id, $1, now() + $2::bigint * interval '1 millisecond', "
    "nextval('loom_lease_epochs') FROM (SELECT id FROM picked ORDER BY id) p "
    "ON CONFLICT (run_id) DO UPDATE SET worker_id = excluded.worker_id, "
    "expires_at = excluded.expires_at, epoch = excluded.epoch "
    "WHERE loom_leases.expires_at < now() "
    "RETURNING run_id, epoch";

/* A PostgreSQL array literal of texts ({"a","b"}): every element quoted,
 * '"' and '\' escaped. NULL out of memory. */
static char *pg_array(const store_tenant_cap *caps, size_t n, bool numbers)
{
    store_buf b = {0};
    if (store_buf_add(&b, "{", 1) < 0)
        return NULL;
    for (size_t i = 0; i < n; i++) {
        if (i && store_buf_add(&b, ",", 1) < 0)
            goto oom;
        if (numbers) {
            char num[24];
            int k = snprintf(num, sizeof num, "%ld", caps[i].max_runs);
            if (store_buf_add(&b, num, (size_t)k) < 0)
                goto oom;
            continue;
        }
        if (store_buf_add(&b, "\"", 1) < 0)
            goto oom;
        for (const char *p = caps[i].tenant_id ? caps[i].tenant_id : ""; *p; p++) {
            if ((*p == '"' || *p == '\\') && store_buf_add(&b, "\\", 1) < 0)
                goto oom;
            if (store_buf_add(&b, p, 1) < 0)
                goto oom;
        }
        if (store_buf_add(&b, "\"", 1) < 0)
            goto oom;
    }
    if (store_buf_add(&b, "}", 2) < 0) /* with the NUL */
        goto oom;
    return b.p;
oom:
    free(b.p);
    return NULL;
}

/* The (run_id, epoch) rows of r as leases; their count. */
static int leases_of(PGresult *r, store_lease **out)
{
    int rows = PQntuples(r), n = 0;
    *out = calloc((size_t)rows + 1, sizeof **out);
    for (; *out && n < rows; n++) {
        (*out)[n].run_id = strdup(PQgetvalue(r, n, 0));
        (*out)[n].epoch = strtoll(PQgetvalue(r, n, 1), NULL, 10);
    }
    return n;
}

int pg_lease_claim(store *s, const char *worker, int ttl_ms, int max,
                   const store_tenant_cap *caps, size_t ncaps, store_lease **out,
                   srv_error *err)
{
    pg_store *q = (pg_store *)s;
    *out = NULL;
    if (max <= 0)
        return 0;
    const char *op = "claim runs";
    char *tenants = pg_array(caps, ncaps, false), *limits = pg_array(caps, ncaps, true);
    char ttl[24], lim[24];
    snprintf(ttl, sizeof ttl, "%d", ttl_ms);
    snprintf(lim, sizeof lim, "%d", max);
    int n = -1;
    if (!tenants || !limits) {
        srv_fail(err, LOOM_ERR_INTERNAL, "store %s: %s: out of memory", q->shown, op);
        goto out;
    }
    PGconn *c = pg_take(q);
    const char *lock[] = {PG_CLAIM_LOCK};
    const char *vals[] = {worker, ttl, lim, tenants, limits};
    PGresult *r = pg_query(q, c, "BEGIN", 0, NULL, op, err, NULL);
    if (r) {
        PQclear(r);
        r = pg_query(q, c, "SELECT pg_advisory_xact_lock($1::bigint)", 1, lock, op, err, NULL);
    }
    if (r) {
        PQclear(r);
        r = pg_query(q, c, CLAIM_SQL, 5, vals, op, err, NULL);
    }
    PGresult *done = r ? pg_query(q, c, "COMMIT", 0, NULL, op, err, NULL) : NULL;
    if (done) {
        n = leases_of(r, out);
        PQclear(done);
    }
    PQclear(r);
    pg_give(q, c); /* rolls back what a failure left open */
out:
    free(tenants);
    free(limits);
    return n;
}

int pg_lease_renew(store *s, const char *worker, int ttl_ms, store_lease **held,
                   srv_error *err)
{
    pg_store *q = (pg_store *)s;
    if (held)
        *held = NULL;
    char ttl[24];
    snprintf(ttl, sizeof ttl, "%d", ttl_ms);
    const char *vals[] = {worker, ttl};
    pthread_mutex_lock(&q->renew_lock);
    if (q->renew_conn && PQstatus(q->renew_conn) != CONNECTION_OK)
        PQreset(q->renew_conn);
    if (!q->renew_conn)
        q->renew_conn = pg_connect(q, "renew leases", err);
    PGconn *c = q->renew_conn;
    if (!c) {
        pthread_mutex_unlock(&q->renew_lock);
        return -1;
    }
    /* The rows locked in run id order first (see Fencing above). An
     * expired lease is not renewed: a claim may be taking it right now, so
     * the worker must treat it as lost (as pg_lease_check does). */
    PGresult *r = pg_query(q, c,
                           "WITH mine AS (SELECT run_id FROM loom_leases WHERE worker_id = $1 "
                           "ORDER BY run_id FOR UPDATE) "
                           "UPDATE loom_leases l SET expires_at = now() + $2::bigint * "
                           "interval '1 millisecond' FROM mine WHERE l.run_id = mine.run_id "
                           "AND l.worker_id = $1 AND l.expires_at > now() "
                           "RETURNING l.run_id, l.epoch",
                           2, vals, "renew leases", err, NULL);
    pthread_mutex_unlock(&q->renew_lock);
    if (!r)
        return -1;
    int n = PQntuples(r);
    if (held)
        n = leases_of(r, held);
    PQclear(r);
    return n;
}

int pg_fence_check(pg_store *q, PGconn *c, const char *run_id, const store_fence *fence,
                   const char *op, srv_error *err)
{
    char epoch[24];
    snprintf(epoch, sizeof epoch, "%lld", (long long)fence->epoch);
    const char *vals[] = {run_id, fence->worker, epoch};
    PGresult *r = pg_query(q, c,
                           "SELECT 1 FROM loom_leases WHERE run_id = $1 AND worker_id = $2 "
                           "AND epoch = $3 FOR SHARE",
                           3, vals, op, err, NULL);
    if (!r)
        return -1;
    int rows = PQntuples(r);
    PQclear(r);
    if (rows == 1)
        return 0;
    srv_fail(err, LOOM_ERR_INVALID_STATE_TRANSITION,
             "run %s: the lease of epoch %lld is no longer %s's (another worker reclaimed "
             "the run); nothing was written",
             run_id, (long long)fence->epoch, fence->worker);
    srv_error_set_run(err, run_id);
    return STORE_FENCED;
}

int pg_put_fenced(store *s, store_kind kind, const char *id, const store_doc_keys *keys,
                  const char *json, const store_fence *fence, srv_error *err)
{
    pg_store *q = (pg_store *)s;
    if (!fence || fence->epoch == 0)
        return pg_put(s, kind, id, keys, json, err);
    char op[160];
    snprintf(op, sizeof op, "put %s %s", store_pg_kinds[kind], id ? id : "");
    PGconn *c = pg_take(q);
    PGresult *r = pg_query(q, c, "BEGIN", 0, NULL, op, err, NULL);
    int rc = r ? pg_put_on(q, c, kind, id, keys, json, op, err) : -1;
    PQclear(r);
    if (rc == 0)
        rc = pg_fence_check(q, c, id, fence, op, err);
    if (rc == 0) {
        r = pg_query(q, c, "COMMIT", 0, NULL, op, err, NULL);
        rc = r ? 0 : -1;
        PQclear(r);
    }
    pg_give(q, c); /* rolls back a refused or failed put */
    return rc;
}

int pg_lease_release(store *s, const char *run_id, const char *worker, srv_error *err)
{
    pg_store *q = (pg_store *)s;
    const char *vals[] = {run_id, worker};
    PGconn *c = pg_take(q);
    PGresult *r = pg_query(q, c, "DELETE FROM loom_leases WHERE run_id = $1 AND worker_id = $2",
                           2, vals, "release a lease", err, NULL);
    pg_give(q, c);
    PQclear(r);
    return r ? 0 : -1;
}

int pg_lease_check(store *s, const char *run_id, const char *worker, int64_t epoch, int ttl_ms,
                   srv_error *err)
{
    pg_store *q = (pg_store *)s;
    char ep[24], ttl[24];
    snprintf(ep, sizeof ep, "%lld", (long long)epoch);
    snprintf(ttl, sizeof ttl, "%d", ttl_ms);
    const char *vals[] = {run_id, worker, ep, ttl};
    PGconn *c = pg_take(q);
    /* Not expired, not only ours: a lease past its expiry may be in a
     * claim's hands right now, and a call started then could run twice. */
    PGresult *r = pg_query(q, c,
                           "UPDATE loom_leases SET expires_at = now() + $4::bigint * "
                           "interval '1 millisecond' WHERE run_id = $1 AND worker_id = $2 "
                           "AND epoch = $3 AND expires_at > now() RETURNING 1",
                           4, vals, "check a lease", err, NULL);
    pg_give(q, c);
    if (!r)
        return -1;
    int rows = PQntuples(r);
    PQclear(r);
    return rows == 1;
}

int pg_control_send(store *s, const char *run_id, const char *json, srv_error *err)
{
    pg_store *q = (pg_store *)s;
    const char *vals[] = {run_id, json};
    PGconn *c = pg_take(q);
    PGresult *r = pg_query(q, c, "INSERT INTO loom_controls (run_id, control) VALUES ($1, $2)",
                           2, vals, "send a control", err, NULL);
    pg_give(q, c);
    PQclear(r);
    return r ? 0 : -1;
}

char *pg_control_take(store *s, const char *worker, srv_error *err)
{
    pg_store *q = (pg_store *)s;
    const char *vals[] = {worker};
    PGconn *c = pg_take(q);
    PGresult *r = pg_query(
        q, c,
        "WITH t AS (DELETE FROM loom_controls k USING loom_leases l WHERE l.run_id = k.run_id "
        "AND l.worker_id = $1 RETURNING k.id, k.run_id, k.control) "
        "SELECT coalesce(json_agg(json_build_object('run_id', run_id, 'control', control) "
        "ORDER BY id), '[]') FROM t",
        1, vals, "take controls", err, NULL);
    pg_give(q, c);
    char *out = r && PQntuples(r) == 1 ? strdup(PQgetvalue(r, 0, 0)) : NULL;
    if (r && !out)
        srv_fail(err, LOOM_ERR_INTERNAL, "store %s: take controls: out of memory", q->shown);
    PQclear(r);
    return out;
}
