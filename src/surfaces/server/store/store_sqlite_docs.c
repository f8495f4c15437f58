/* store_sqlite_docs.c — the SQLite store's documents (store.h put, get,
 * list) and its listing cursor. A document is one row of its kind's table:
 * the JSON text plus the columns a listing filters on. put goes through the
 * writer (one autocommit statement, durable when it returns); get and list
 * through a reader slot. The cursor's text is store_cursor.c's (shared with
 * the PostgreSQL store): the next page is the rows after its (created_at,
 * id) pair, a seek on the index.
 *
 * Threading: see store_sqlite_int.h; nothing here keeps state. */
#include "surfaces/server/store/store_sqlite_int.h"
#include "surfaces/server/store/store_cursor.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int sq_kind_ok(sq_store *q, store_kind kind, const char *op, srv_error *err)
{
    if ((int)kind < 0 || kind >= STORE_KIND_END)
        return srv_fail(err, LOOM_ERR_INTERNAL, "store %s: %s: no document kind %d", q->path,
                        op, (int)kind);
    return 0;
}

static void sq_bind_opt(sqlite3_stmt *st, int i, const char *v)
{
    if (v)
        sqlite3_bind_text(st, i, v, -1, SQLITE_STATIC);
    else
        sqlite3_bind_null(st, i);
}

int sq_put(store *s, store_kind kind, const char *id, const store_doc_keys *keys,
           const char *json, srv_error *err)
{
    sq_store *q = (sq_store *)s;
    if (sq_kind_ok(q, kind, "put", err) < 0)
        return -1;
    if (!id || !*id || !json)
        return srv_fail(err, LOOM_ERR_INVALID_REQUEST, "store %s: put %s: no id or no document",
                        q->path, store_sqlite_tables[kind]);
    char op[160];
    snprintf(op, sizeof op, "put %s %s", store_sqlite_tables[kind], id);
    char sql[512];
    snprintf(sql, sizeof sql,
             "INSERT INTO %s (id, tenant_id, parent_id, state, created_at, json) "
             "VALUES (?1, ?2, ?3, ?4, ?5, ?6) ON CONFLICT (id) DO UPDATE SET "
             "tenant_id = excluded.tenant_id, parent_id = excluded.parent_id, "
             "state = excluded.state, created_at = excluded.created_at, json = excluded.json",
             store_sqlite_tables[kind]);
    pthread_mutex_lock(&q->wlock);
    int ret = -1;
    sqlite3_stmt *st = sq_stmt(q, q->w, &q->w_put[kind], sql, op, err);
    if (st) {
        sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
        sq_bind_opt(st, 2, keys ? keys->tenant_id : NULL);
        sq_bind_opt(st, 3, keys ? keys->parent_id : NULL);
        sq_bind_opt(st, 4, keys ? keys->state : NULL);
        sqlite3_bind_text(st, 5, keys && keys->created_at ? keys->created_at : "", -1,
                          SQLITE_STATIC);
        sqlite3_bind_text(st, 6, json, -1, SQLITE_STATIC);
        int rc = sqlite3_step(st);
        ret = rc == SQLITE_DONE ? 0 : sq_fail(q, q->w, rc, op, err);
        sqlite3_reset(st);
        sqlite3_clear_bindings(st);
    }
    pthread_mutex_unlock(&q->wlock);
    return ret;
}

char *sq_get(store *s, store_kind kind, const char *id, srv_error *err)
{
    sq_store *q = (sq_store *)s;
    if (sq_kind_ok(q, kind, "get", err) < 0)
        return NULL;
    const char *table = store_sqlite_tables[kind];
    char op[160];
    snprintf(op, sizeof op, "get %s %s", table, id ? id : "");
    char sql[128];
    snprintf(sql, sizeof sql, "SELECT json FROM %s WHERE id = ?1", table);
    sq_reader *r = sq_reader_take(q);
    char *out = NULL;
    sqlite3_stmt *st = sq_stmt(q, r->db, &r->get[kind], sql, op, err);
    if (st) {
        sqlite3_bind_text(st, 1, id ? id : "", -1, SQLITE_STATIC);
        int rc = sqlite3_step(st);
        if (rc == SQLITE_ROW) {
            const char *t = (const char *)sqlite3_column_text(st, 0);
            out = strdup(t ? t : "null");
            if (!out)
                srv_fail(err, LOOM_ERR_INTERNAL, "store %s: %s: out of memory", q->path, op);
        } else if (rc == SQLITE_DONE) {
            /* A client-facing answer: the id, not the server's file path. */
            srv_fail(err, LOOM_ERR_RESOURCE_NOT_FOUND, "%s %s not found", store_kind_noun(kind),
                     id ? id : "");
        } else {
            sq_fail(q, r->db, rc, op, err);
        }
        sqlite3_reset(st);
        sqlite3_clear_bindings(st);
    }
    sq_reader_give(q, r);
    return out;
}

/* Prepares the listing of one shape: shape bit 0 = a parent filter, bit 1 =
 * a state filter. Parameters: ?1 tenant, ?2 parent, ?3 state, ?4/?5 the
 * cursor's (created_at, id) ('' and '' from the start: every id is longer),
 * ?6 the limit. */
static sqlite3_stmt *sq_list_stmt(sq_store *q, sq_reader *r, store_kind kind, int shape,
                                  const char *op, srv_error *err)
{
    char sql[512];
    snprintf(sql, sizeof sql,
             "SELECT id, created_at, json FROM %s WHERE tenant_id = ?1%s%s "
             "AND (created_at, id) > (?4, ?5) ORDER BY created_at, id LIMIT ?6",
             store_sqlite_tables[kind], shape & 1 ? " AND parent_id = ?2" : "",
             shape & 2 ? " AND state = ?3" : "");
    return sq_stmt(q, r->db, &r->list[kind][shape], sql, op, err);
}

/* Steps the listing into out (a JSON array); a limit+1'th row means another
 * page, whose cursor is the limit'th row's key. */
static int sq_list_rows(sq_store *q, sqlite3 *db, sqlite3_stmt *st, int limit, store_buf *out,
                        char **next_cursor, const char *op, srv_error *err)
{
    int count = 0, rc;
    char *last_at = NULL, *last_id = NULL;
    int ret = 0;
    if (store_buf_add(out, "[", 1) < 0)
        ret = srv_fail(err, LOOM_ERR_INTERNAL, "store %s: %s: out of memory", q->path, op);
    while (ret == 0 && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        if (count == limit) {
            *next_cursor = store_cursor_encode(last_at, last_id);
            if (!*next_cursor)
                ret = srv_fail(err, LOOM_ERR_INTERNAL, "store %s: %s: out of memory", q->path,
                               op);
            break;
        }
        const char *json = (const char *)sqlite3_column_text(st, 2);
        free(last_id);
        free(last_at);
        const char *cid = (const char *)sqlite3_column_text(st, 0);
        const char *cat = (const char *)sqlite3_column_text(st, 1);
        last_id = strdup(cid ? cid : "");
        last_at = strdup(cat ? cat : "");
        if (!last_id || !last_at || (count > 0 && store_buf_add(out, ",", 1) < 0) ||
            store_buf_add(out, json ? json : "null", json ? strlen(json) : 4) < 0)
            ret = srv_fail(err, LOOM_ERR_INTERNAL, "store %s: %s: out of memory", q->path, op);
        count++;
    }
    if (ret == 0 && rc != SQLITE_ROW && rc != SQLITE_DONE)
        ret = sq_fail(q, db, rc, op, err);
    if (ret == 0 && store_buf_add(out, "]", 1) < 0)
        ret = srv_fail(err, LOOM_ERR_INTERNAL, "store %s: %s: out of memory", q->path, op);
    free(last_at);
    free(last_id);
    return ret;
}

char *sq_list(store *s, store_kind kind, const store_list_query *qry, char **next_cursor,
              srv_error *err)
{
    sq_store *q = (sq_store *)s;
    if (next_cursor)
        *next_cursor = NULL;
    if (sq_kind_ok(q, kind, "list", err) < 0)
        return NULL;
    char op[96];
    snprintf(op, sizeof op, "list %s", store_sqlite_tables[kind]);
    char *at = NULL, *id = NULL;
    if (store_list_check(qry, next_cursor, q->path, op, &at, &id, err) < 0)
        return NULL;
    int shape = (qry->parent_id ? 1 : 0) | (qry->state ? 2 : 0);
    store_buf out = {0};
    int ret = -1;
    sq_reader *r = sq_reader_take(q);
    sqlite3_stmt *st = sq_list_stmt(q, r, kind, shape, op, err);
    if (st) {
        sqlite3_bind_text(st, 1, qry->tenant_id, -1, SQLITE_STATIC);
        sq_bind_opt(st, 2, qry->parent_id);
        sq_bind_opt(st, 3, qry->state);
        sqlite3_bind_text(st, 4, at ? at : "", -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 5, id ? id : "", -1, SQLITE_STATIC);
        sqlite3_bind_int(st, 6, qry->limit + 1);
        ret = sq_list_rows(q, r->db, st, qry->limit, &out, next_cursor, op, err);
        sqlite3_reset(st);
        sqlite3_clear_bindings(st);
    }
    sq_reader_give(q, r);
    free(at);
    free(id);
    if (ret < 0) {
        free(out.p);
        free(*next_cursor);
        *next_cursor = NULL;
        return NULL;
    }
    return out.p;
}

char *sq_count_states(store *s, store_kind kind, const char *tenant_id, srv_error *err)
{
    sq_store *q = (sq_store *)s;
    if (sq_kind_ok(q, kind, "count", err) < 0)
        return NULL;
    char op[96], sql[160];
    snprintf(op, sizeof op, "count %s", store_sqlite_tables[kind]);
    /* The table's name is one of ours (a constant), never input. */
    snprintf(sql, sizeof sql,
             "SELECT coalesce(state, ''), count(*) FROM %s WHERE tenant_id = ?1 GROUP BY 1",
             store_sqlite_tables[kind]);
    sq_reader *r = sq_reader_take(q);
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(r->db, sql, -1, &st, NULL);
    store_buf out = {0};
    int ok = rc == SQLITE_OK && store_buf_add(&out, "{", 1) == 0;
    if (rc != SQLITE_OK)
        sq_fail(q, r->db, rc, op, err);
    if (ok) {
        sqlite3_bind_text(st, 1, tenant_id ? tenant_id : "", -1, SQLITE_STATIC);
        int n = 0;
        while (ok && (rc = sqlite3_step(st)) == SQLITE_ROW) {
            const char *state = (const char *)sqlite3_column_text(st, 0);
            if (state && strpbrk(state, "\"\\")) /* not one of ours: no JSON escaping here */
                continue;
            char item[160];
            int k = snprintf(item, sizeof item, "%s\"%s\":%lld", n++ ? "," : "",
                             state ? state : "", (long long)sqlite3_column_int64(st, 1));
            ok = k > 0 && (size_t)k < sizeof item && store_buf_add(&out, item, (size_t)k) == 0;
        }
        if (ok && rc != SQLITE_DONE)
            ok = sq_fail(q, r->db, rc, op, err) == 0;
        ok = ok && store_buf_add(&out, "}", 2) == 0;
    }
    sqlite3_finalize(st);
    sq_reader_give(q, r);
    if (!ok) {
        if (err && err->code == LOOM_OK)
            srv_fail(err, LOOM_ERR_INTERNAL, "store %s: %s: out of memory", q->path, op);
        free(out.p);
        return NULL;
    }
    return out.p;
}
