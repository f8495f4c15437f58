/* history_keep.c — the request's history kept from turn to turn (see
 * history_keep.h). */
#include "context/history_keep.h"

#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "base/str.h"
#include "context/tokens.h"
#include "session/history.h"
#include "session/record.h"

void history_keep_init(history_keep *k)
{
    memset(k, 0, sizeof *k);
}

static void drop_view(history_keep *k)
{
    for (size_t i = 0; i < k->n_view; i++)
        json_decref(k->view[i]);
    k->n_view = 0;
    json_decref(k->leaf);
    k->leaf = NULL;
}

static void drop_msgs(history_keep *k)
{
    for (size_t i = 0; i < k->n_msgs; i++)
        msg_message_free(&k->msgs[i]);
    k->n_msgs = 0;
    k->msgs_tokens = 0;
    k->settled = 0;
}

void history_keep_reset(history_keep *k)
{
    drop_view(k);
    drop_msgs(k);
    k->t = NULL;
}

void history_keep_free(history_keep *k)
{
    history_keep_reset(k);
    free(k->view);
    free(k->msgs);
    memset(k, 0, sizeof *k);
}

/* Appends recs seen through edits to the view, one reference each. */
static void view_append(history_keep *k, const ladder_edits *edits, json_t *const *recs, size_t n)
{
    json_t **v = NULL, *copies = NULL;
    size_t nv = 0;
    ladder_view(edits, recs, n, &v, &nv, &copies);
    if (k->n_view + nv > k->cap_view) {
        k->cap_view = (k->n_view + nv) * 2 + 16;
        k->view = xrealloc(k->view, k->cap_view * sizeof *k->view);
    }
    for (size_t i = 0; i < nv; i++)
        k->view[k->n_view++] = json_incref(v[i]);
    free(v);
    json_decref(copies); /* the view holds its own references to the edited copies */
}

/* The whole view again, from the transcript's active chain. */
static bool view_rebuild(history_keep *k, transcript *t, const ladder_edits *edits)
{
    history_keep_reset(k);
    json_t **chain = NULL;
    size_t n = 0;
    if (transcript_active(t, &chain, &n) != 0)
        return false;
    view_append(k, edits, chain, n);
    free(chain);
    k->rebuilds++;
    return true;
}

/* The parent the active chain walks to from rec (parentId, else the
 * logicalParentId a summary carries), or NULL. */
static json_t *parent_of(transcript *t, const json_t *rec)
{
    const char *p = record_parent_id(rec);
    if (!p)
        p = record_logical_parent_id(rec);
    return p ? transcript_find(t, p) : NULL;
}

/* Extends the view by the records appended since it was taken, when they
 * continue its leaf: the walk from the new leaf must reach the kept one
 * through new records only, and pass no summary (which would end the
 * chain the model sees). false: it has to be rebuilt. */
static bool view_extend(history_keep *k, transcript *t, const ladder_edits *edits)
{
    if (k->t != t || k->edits_changes != edits->stamp)
        return false;
    size_t count = transcript_count(t);
    const char *leaf_id = transcript_leaf(t);
    json_t *leaf = leaf_id ? transcript_find(t, leaf_id) : NULL;
    if (count < k->count || !leaf)
        return false;
    if (leaf == k->leaf)
        return true; /* what was appended is off the chain (meta, snapshots) */
    if (!k->leaf)
        return false;
    size_t room = count - k->count, n = 0;
    json_t **fresh = xmalloc((room ? room : 1) * sizeof *fresh);
    json_t *r = leaf;
    bool ok = false;
    while (r && n < room) {
        const char *type = record_type(r);
        if (type && strcmp(type, RECORD_SUMMARY) == 0)
            break;
        fresh[n++] = r;
        r = parent_of(t, r);
        if (r == k->leaf) {
            ok = true;
            break;
        }
    }
    if (ok) {
        /* fresh is leaf first; the view wants root first. */
        for (size_t i = 0; i < n / 2; i++) {
            json_t *tmp = fresh[i];
            fresh[i] = fresh[n - 1 - i];
            fresh[n - 1 - i] = tmp;
        }
        view_append(k, edits, fresh, n);
    }
    free(fresh);
    return ok;
}

/* Where the view's last assistant run starts, or k->settled when no user
 * record comes between it and the settled part: the records before it
 * made their messages for good (the last user run has answered every call
 * made before it). */
static size_t last_assistant_run(const history_keep *k)
{
    size_t i = k->n_view;
    while (i > k->settled && history_record_side(k->view[i - 1]) != HISTORY_SIDE_ASSISTANT)
        i--;
    while (i > k->settled && history_record_side(k->view[i - 1]) != HISTORY_SIDE_USER)
        i--;
    return i;
}

/* history_from_records over view[from, to) into a request of its own. */
static void build_piece(const history_keep *k, size_t from, size_t to, msg_request *piece)
{
    memset(piece, 0, sizeof *piece);
    history_from_records(k->view + from, to - from, piece, NULL);
}

/* Whether piece can follow the kept messages as it is: had it been built
 * with them, its first message would have merged into the kept last one
 * when both are of one role. */
static bool joins(const history_keep *k, const msg_request *piece)
{
    return k->n_msgs == 0 || piece->n_messages == 0 ||
           piece->messages[0].role != k->msgs[k->n_msgs - 1].role;
}

/* Moves piece's messages to the kept ones (piece is left empty). */
static void keep_piece(history_keep *k, msg_request *piece)
{
    if (k->n_msgs + piece->n_messages > k->cap_msgs) {
        k->cap_msgs = (k->n_msgs + piece->n_messages) * 2 + 16;
        k->msgs = xrealloc(k->msgs, k->cap_msgs * sizeof *k->msgs);
    }
    for (size_t i = 0; i < piece->n_messages; i++) {
        msg_message *m = &k->msgs[k->n_msgs++];
        *m = piece->messages[i];
        m->wire = xcalloc(1, sizeof *m->wire);
        k->msgs_tokens += tokens_estimate_message(m);
    }
    piece->n_messages = 0;
    msg_request_free(piece);
}

/* Settles the records before the last assistant run. */
static void settle(history_keep *k)
{
    size_t to = last_assistant_run(k);
    if (to <= k->settled)
        return;
    msg_request piece;
    build_piece(k, k->settled, to, &piece);
    if (!joins(k, &piece)) {
        /* Rare (a run that made no message between two of one role): the
         * settled part is made again in one piece. */
        msg_request_free(&piece);
        drop_msgs(k);
        build_piece(k, 0, to, &piece);
    }
    keep_piece(k, &piece);
    k->settled = to;
}

bool history_keep_request(history_keep *k, transcript *t, const ladder_edits *edits,
                          msg_request *req, int64_t *borrowed_tokens)
{
    *borrowed_tokens = 0;
    if (!view_extend(k, t, edits)) {
        if (!view_rebuild(k, t, edits))
            return false;
        k->t = t;
        k->edits_changes = edits->stamp;
    }
    const char *leaf_id = transcript_leaf(t);
    json_t *leaf = leaf_id ? transcript_find(t, leaf_id) : NULL;
    if (leaf != k->leaf) {
        json_decref(k->leaf);
        k->leaf = json_incref(leaf);
    }
    k->count = transcript_count(t);
    settle(k);

    msg_request rest;
    build_piece(k, k->settled, k->n_view, &rest);
    if (!joins(k, &rest) || (k->n_msgs && rest.n_messages == 0)) {
        /* The last message would be a kept one, which the breakpoint and
         * the tail must not touch: this request is made whole. */
        msg_request_free(&rest);
        history_from_records(k->view, k->n_view, req, NULL);
        return true;
    }
    size_t n = k->n_msgs + rest.n_messages;
    req->messages = xmalloc((n ? n : 1) * sizeof *req->messages);
    req->cap_messages = n ? n : 1;
    if (k->n_msgs)
        memcpy(req->messages, k->msgs, k->n_msgs * sizeof *k->msgs);
    if (rest.n_messages)
        memcpy(req->messages + k->n_msgs, rest.messages, rest.n_messages * sizeof *rest.messages);
    req->n_messages = n;
    req->n_borrowed = k->n_msgs;
    *borrowed_tokens = k->msgs_tokens;
    rest.n_messages = 0;
    msg_request_free(&rest);
    return true;
}
