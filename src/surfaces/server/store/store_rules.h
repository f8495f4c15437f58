/* store_rules.h — the parts of store.h's contract that both stores (SQLite
 * and PostgreSQL) must answer word for word, kept once: the limits a
 * listing and an events read accept, the noun a not-found answer names,
 * the refusal of an append that does not continue a run's events, and the
 * JSON array text listings answer. No state; any thread. */
#ifndef LOOM_SERVER_STORE_RULES_H
#define LOOM_SERVER_STORE_RULES_H

#include <stddef.h>
#include <stdint.h>

#include "surfaces/server/store/store.h"

#define STORE_LIST_MAX_LIMIT 1000    /* list: limit 1..this */
#define STORE_EVENTS_MAX_LIMIT 10000 /* events_after: limit 1..this */

/* The checks every list does before its query, answered alike by both
 * stores: a tenant and a cursor out given, limit within 1..the max, the
 * cursor one this server gave out (decoded into *at and *id, the caller's
 * to free; both NULL without a cursor). shown names the store, op the
 * operation ("list runs"). 0, or -1 with err invalid_request. */
int store_list_check(const store_list_query *qry, char **next_cursor, const char *shown,
                     const char *op, char **at, char **id, srv_error *err);

/* "session", "task", "run", "approval", "artifact", "webhook delivery":
 * what a client-facing "… not found" names. NULL for a kind out of range. */
const char *store_kind_noun(store_kind kind);

/* 0 when evs (n of them) continue a run whose highest seq is max exactly
 * (max+1, max+2, …); otherwise -1 with err invalid_state_transition, the
 * run set in it, and a message that says which event and whether it would
 * rewrite a stored event or leave a hole. */
int store_check_seqs(const char *run_id, int64_t max, const store_event *evs, size_t n,
                     srv_error *err);

/* The same refusal when the store learns only at insert time that seq is
 * already taken (another writer stored it between the read of the highest
 * seq and the insert: the PostgreSQL store's unique key). */
int store_refuse_taken(const char *run_id, const store_event *evs, size_t n, int64_t seq,
                       srv_error *err);

/* A growing text (a JSON array under construction); p is NUL-terminated,
 * malloc'd, the caller's to free. */
typedef struct store_buf {
    char *p;
    size_t len, cap;
} store_buf;
/* Appends n bytes of s; 0, or -1 when out of memory (b unchanged). */
int store_buf_add(store_buf *b, const char *s, size_t n);

#endif
