/* store_rules.c — what both stores answer the same way (store_rules.h):
 * kind nouns, a listing's argument checks, the refusal of an append out of
 * order, the growing text of a JSON array. No state; any thread. */
#include "surfaces/server/store/store_rules.h"

#include <stdlib.h>
#include <string.h>

#include "surfaces/server/store/store_cursor.h"

const char *store_kind_noun(store_kind kind)
{
    static const char *const noun[STORE_KIND_END] = {
        "session", "task", "run", "approval", "artifact", "webhook delivery",
    };
    return (int)kind >= 0 && kind < STORE_KIND_END ? noun[kind] : NULL;
}

int store_check_seqs(const char *run_id, int64_t max, const store_event *evs, size_t n,
                     srv_error *err)
{
    for (size_t i = 0; i < n; i++) {
        int64_t want = max + 1 + (int64_t)i;
        if (evs[i].seq == want)
            continue;
        srv_fail(err, LOOM_ERR_INVALID_STATE_TRANSITION,
                 "run %s: events seq %lld-%lld refused: event %zu has seq %lld where %lld is "
                 "next (%s); nothing was written",
                 run_id, (long long)evs[0].seq, (long long)evs[n - 1].seq, i + 1,
                 (long long)evs[i].seq, (long long)want,
                 evs[i].seq < want ? "it would rewrite a stored event" : "it would leave a hole");
        srv_error_set_run(err, run_id);
        return -1;
    }
    return 0;
}

int store_refuse_taken(const char *run_id, const store_event *evs, size_t n, int64_t seq,
                       srv_error *err)
{
    srv_fail(err, LOOM_ERR_INVALID_STATE_TRANSITION,
             "run %s: events seq %lld-%lld refused: seq %lld was stored by another writer "
             "meanwhile (it would rewrite a stored event); nothing was written",
             run_id, (long long)evs[0].seq, (long long)evs[n - 1].seq, (long long)seq);
    srv_error_set_run(err, run_id);
    return -1;
}

int store_buf_add(store_buf *b, const char *s, size_t n)
{
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->len + n + 1)
            cap *= 2;
        char *p = realloc(b->p, cap);
        if (!p)
            return -1;
        b->p = p;
        b->cap = cap;
    }
    memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = '\0';
    return 0;
}

int store_list_check(const store_list_query *qry, char **next_cursor, const char *shown,
                     const char *op, char **at, char **id, srv_error *err)
{
    *at = *id = NULL;
    if (!qry || !qry->tenant_id || !next_cursor)
        return srv_fail(err, LOOM_ERR_INVALID_REQUEST,
                        "store %s: %s: no tenant (or no cursor out) given", shown, op);
    if (qry->limit < 1 || qry->limit > STORE_LIST_MAX_LIMIT)
        return srv_fail(err, LOOM_ERR_INVALID_REQUEST, "limit %d is not within 1-%d",
                        qry->limit, STORE_LIST_MAX_LIMIT);
    if (qry->cursor && store_cursor_decode(qry->cursor, at, id) < 0)
        return srv_fail(err, LOOM_ERR_INVALID_REQUEST, "cursor is not one this server gave out");
    return 0;
}
