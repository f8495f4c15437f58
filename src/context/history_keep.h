/* history_keep.h — the request's history kept from turn to turn, so a turn
 * does work for its new records only (issue 22; docs/context.md "The
 * request kept").
 *
 * What is kept: the view (the active chain through the ladder's edits, one
 * reference per record) and the messages built from its settled part — the
 * records before the last assistant run, whose messages no later record
 * can change — with their token estimate and, filled in by the codec that
 * first writes them, their wire bytes (msg_wire). A request borrows the
 * settled messages (msg_request.n_borrowed) and owns only the messages of
 * the last runs, which are built again every turn: a tool result still to
 * come, the cache breakpoint and the tail all land there.
 *
 * A turn extends the view by walking from the transcript's leaf back to the
 * leaf it kept, through the records appended since. Anything else starts
 * the keep over from the records (history_keep_reset, or found on the
 * way): a compaction summary on the walk, a leaf moved (rewind, resend), a
 * different transcript, the ladder's edits changed, a piece whose first
 * message would have merged into the kept last one. The result is the same
 * messages history_from_records would make from the whole view; the test
 * build checks the bytes every turn (LOOM_CHECK_REQUEST_ENCODING,
 * runtime/loop_context.c).
 *
 * Threading: the session's context state's; one caller at a time. */
#ifndef LOOM_CONTEXT_HISTORY_KEEP_H
#define LOOM_CONTEXT_HISTORY_KEEP_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "context/ladder.h"
#include "message/message.h"
#include "session/transcript.h"

typedef struct history_keep {
    const transcript *t;        /* whose records; NULL: nothing kept */
    json_t *leaf;               /* the leaf record the view ends at (a reference); NULL: none */
    size_t count;               /* transcript_count when the view was taken */
    unsigned long edits_changes; /* the edits' change count the view was made with */
    json_t **view;              /* references */
    size_t n_view, cap_view;
    size_t settled;             /* view[0, settled) are in msgs */
    msg_message *msgs;          /* kept messages, each with a msg_wire */
    size_t n_msgs, cap_msgs;
    int64_t msgs_tokens;        /* tokens_estimate_message over msgs */
    unsigned long rebuilds;     /* how often it started over (tests, the log) */
} history_keep;

void history_keep_init(history_keep *k);
void history_keep_free(history_keep *k);
/* Drops what is kept: the next request starts from the records. */
void history_keep_reset(history_keep *k);

/* Appends the history's messages for t's active chain seen through edits
 * to req (which must have none yet): the kept ones borrowed
 * (req->n_borrowed), the rest owned. *borrowed_tokens gets the token
 * estimate of the borrowed ones. false when the chain could not be read
 * (nothing appended). */
bool history_keep_request(history_keep *k, transcript *t, const ladder_edits *edits,
                          msg_request *req, int64_t *borrowed_tokens);

#endif
