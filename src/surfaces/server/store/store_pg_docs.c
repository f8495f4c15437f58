/* store_pg_docs.c — the PostgreSQL store's documents (store.h put, get,
 * list): one row of loom_documents per (kind, id), the JSON text as given
 * plus the columns a listing filters on. put is one autocommit upsert
 * (durable when it returns); get and list one query each. The cursor is
 * store_cursor.c's, the same text the SQLite store hands out.
 *
 * Threading: see store_pg_int.h; nothing here keeps state. */
#include "surfaces/server/store/store_pg_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "surfaces/server/store/store_cursor.h"

static int pg_kind_ok(pg_store *q, store_kind kind, const char *op, srv_error *err)
{
    if ((int)kind < 0 || kind >= STORE_KIND_END)
        return srv_fail(err, LOOM_ERR_INTERNAL, "store %s: %s: no document kind %d", q->shown,
                        op, (int)kind);
    return 0;
}

int pg_put_on(pg_store *q, PGconn *c, store_kind kind, const char *id,
              const store_doc_keys *keys, const char *json, const char *op, srv_error *err)
{
    if (pg_kind_ok(q, kind, "put", err) < 0)
        return -1;
    if (!id || !*id || !json)
        return srv_fail(err, LOOM_ERR_INVALID_REQUEST, "store %s: put %s: no id or no document",
                        q->shown, store_pg_kinds[kind]);
    const char *vals[] = {
        store_pg_kinds[kind],
        id,
        keys ? keys->tenant_id : NULL,
        keys ? keys->parent_id : NULL,
        keys ? keys->state : NULL,
        keys && keys->created_at ? keys->created_at : "",
        json,
    };
    PGresult *r = pg_query(q, c,
                           "INSERT INTO loom_documents (kind, id, tenant_id, parent_id, state, "
                           "created_at, json) VALUES ($1, $2, $3, $4, $5, $6, $7) "
                           "ON CONFLICT (kind, id) DO UPDATE SET tenant_id = excluded.tenant_id, "
                           "parent_id = excluded.parent_id, state = excluded.state, "
                           "created_at = excluded.created_at, json = excluded.json",
                           7, vals, op, err, NULL);
    PQclear(r);
    return r ? 0 : -1;
}

int pg_put(store *s, store_kind kind, const char *id, const store_doc_keys *keys,
           const char *json, srv_error *err)
{
    pg_store *q = (pg_store *)s;
    char op[160];
    snprintf(op, sizeof op, "put %s %s", (int)kind >= 0 && kind < STORE_KIND_END ?
             store_pg_kinds[kind] : "?", id ? id : "");
    PGconn *c = pg_take(q);
    int rc = pg_put_on(q, c, kind, id, keys, json, op, err);
    pg_give(q, c);
    return rc;
}

char *pg_get(store *s, store_kind kind, const char *id, srv_error *err)
{
    pg_store *q = (pg_store *)s;
    if (pg_kind_ok(q, kind, "get", err) < 0)
        return NULL;
    char op[160];
    snprintf(op, sizeof op, "get %s %s", store_pg_kinds[kind], id ? id : "");
    const char *vals[] = {store_pg_kinds[kind], id ? id : ""};
    PGconn *c = pg_take(q);
    PGresult *r = pg_query(q, c, "SELECT json FROM loom_documents WHERE kind = $1 AND id = $2",
                           2, vals, op, err, NULL);
    pg_give(q, c);
    if (!r)
        return NULL;
    char *out = NULL;
    if (PQntuples(r) == 0) {
        /* A client-facing answer: the id, not the server's URL. */
        srv_fail(err, LOOM_ERR_RESOURCE_NOT_FOUND, "%s %s not found", store_kind_noun(kind),
                 id ? id : "");
    } else if (!(out = strdup(PQgetvalue(r, 0, 0)))) {
        srv_fail(err, LOOM_ERR_INTERNAL, "store %s: %s: out of memory", q->shown, op);
    }
    PQclear(r);
    return out;
}

/* The four shapes of a listing (bit 0: a parent filter, bit 1: a state
 * filter), constant texts. Parameters: $1 kind, $2 tenant, $3/$4 the
 * cursor's (created_at, id) ('' and '' from the start: every id is
 * longer), $5 the limit, then $6 the parent and/or the state. */
static const char *const pg_list_sql[4] = {
    "SELECT id, created_at, json FROM loom_documents WHERE kind = $1 AND tenant_id = $2 "
    "AND (created_at, id) > ($3, $4) ORDER BY created_at, id LIMIT $5",
    "SELECT id, created_at, json FROM loom_documents WHERE kind = $1 AND tenant_id = $2 "
    "AND parent_id = $6 AND (created_at, id) > ($3, $4) ORDER BY created_at, id LIMIT $5",
    "SELECT id, created_at, json FROM loom_documents WHERE kind = $1 AND tenant_id = $2 "
    "AND state = $6 AND (created_at, id) > ($3, $4) ORDER BY created_at, id LIMIT $5",
    "SELECT id, created_at, json FROM loom_documents WHERE kind = $1 AND tenant_id = $2 "
    "AND parent_id = $6 AND state = $7 AND (created_at, id) > ($3, $4) "
    "ORDER BY created_at, id LIMIT $5",
};

/* The rows of r as a JSON array into out; a limit+1'th row means another
 * page, whose cursor is the limit'th row's key. 0, or -1 out of memory. */
static int pg_list_rows(PGresult *r, int limit, store_buf *out, char **next_cursor)
{
    int rows = PQntuples(r);
    if (store_buf_add(out, "[", 1) < 0)
        return -1;
    for (int i = 0; i < rows && i < limit; i++) {
        const char *json = PQgetvalue(r, i, 2);
        if ((i > 0 && store_buf_add(out, ",", 1) < 0) ||
            store_buf_add(out, json, strlen(json)) < 0)
            return -1;
    }
    if (rows > limit &&
        !(*next_cursor = store_cursor_encode(PQgetvalue(r, limit - 1, 1),
                                             PQgetvalue(r, limit - 1, 0))))
        return -1;
    return store_buf_add(out, "]", 1);
}

char *pg_list(store *s, store_kind kind, const store_list_query *qry, char **next_cursor,
              srv_error *err)
{
    pg_store *q = (pg_store *)s;
    if (next_cursor)
        *next_cursor = NULL;
    if (pg_kind_ok(q, kind, "list", err) < 0)
        return NULL;
    char op[96];
    snprintf(op, sizeof op, "list %s", store_pg_kinds[kind]);
    char *at = NULL, *id = NULL;
    if (store_list_check(qry, next_cursor, q->shown, op, &at, &id, err) < 0)
        return NULL;
    int shape = (qry->parent_id ? 1 : 0) | (qry->state ? 2 : 0);
    char lim[16];
    snprintf(lim, sizeof lim, "%d", qry->limit + 1);
    const char *vals[7] = {store_pg_kinds[kind], qry->tenant_id, at ? at : "", id ? id : "", lim};
    int n = 5;
    if (qry->parent_id)
        vals[n++] = qry->parent_id;
    if (qry->state)
        vals[n++] = qry->state;
    PGconn *c = pg_take(q);
    PGresult *r = pg_query(q, c, pg_list_sql[shape], n, vals, op, err, NULL);
    pg_give(q, c);
    free(at);
    free(id);
    if (!r)
        return NULL;
    store_buf out = {0};
    if (pg_list_rows(r, qry->limit, &out, next_cursor) < 0) {
        srv_fail(err, LOOM_ERR_INTERNAL,
                 "store %s: %s: out of memory", q->shown, op);
        free(out.p);
        free(*next_cursor);
        *next_cursor = NULL;
        out.p = NULL;
    }
    PQclear(r);
    return out.p;
}

char *pg_count_states(store *s, store_kind kind, const char *tenant_id, srv_error *err)
{
    pg_store *q = (pg_store *)s;
    if (pg_kind_ok(q, kind, "count", err) < 0)
        return NULL;
    char op[96];
    snprintf(op, sizeof op, "count %s", store_pg_kinds[kind]);
    const char *vals[] = {store_pg_kinds[kind], tenant_id ? tenant_id : ""};
    PGconn *c = pg_take(q);
    PGresult *r = pg_query(q, c,
                           "SELECT coalesce(json_object_agg(state, n), '{}') FROM "
                           "(SELECT coalesce(state, '') AS state, count(*) AS n FROM loom_documents "
                           "WHERE kind = $1 AND tenant_id = $2 GROUP BY 1) t",
                           2, vals, op, err, NULL);
    pg_give(q, c);
    char *out = r && PQntuples(r) == 1 ? strdup(PQgetvalue(r, 0, 0)) : NULL;
    if (r && !out)
        srv_fail(err, LOOM_ERR_INTERNAL, "store %s: %s: out of memory", q->shown, op);
    PQclear(r);
    return out;
}
