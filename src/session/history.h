/* history.h — the active chain of a session as the messages of a model
 * request.
 *
 * Records are the unit on disk; messages are the unit on the wire. Runs of
 * assistant-side records (reasoning, assistant message, function_call)
 * become one assistant message; runs of user-side records (user message,
 * function_call_result, summary) one user message, tool results first in
 * the order of their calls. The result always satisfies the providers'
 * pairing rule: every tool use is answered by a tool result in the next
 * message, and no tool result answers nothing.
 */
#ifndef LOOM_SESSION_HISTORY_H
#define LOOM_SESSION_HISTORY_H

#include <jansson.h>
#include <stddef.h>

#include "session/transcript.h"
#include "message/message.h"

/* The user text a compaction summary becomes. */
#define HISTORY_SUMMARY_PREFIX \
    "This session is being continued from a previous conversation. Summary:\n"
/* The error result given to a call whose result never reached the file
 * (the process died while the tool ran). */
#define HISTORY_INTERRUPTED_RESULT "Tool call was interrupted before it produced a result"

typedef struct history_stats {
    size_t n_used;         /* conversation records that produced blocks */
    size_t n_skipped;      /* conversation records too malformed to send */
    size_t n_synthesized;  /* results made up for calls without one */
    size_t n_orphans;      /* results without their call, sent as text */
} history_stats;

/* Appends the messages for recs (root first, e.g. from transcript_active)
 * to req->messages. Non-conversation records are skipped. A tool-use input
 * that is not a JSON object (a model's broken arguments) is sent as {}.
 * stats may be NULL. Returns 0. */
int history_from_records(json_t *const *recs, size_t n, msg_request *req,
                         history_stats *stats);

/* The side of the conversation a record's blocks go to; NONE for a record
 * that is not a conversation record or has a role no request takes. A run
 * of records of one side (NONE ones not splitting it) becomes one message,
 * so a caller that builds a history piece by piece (context/history_keep.c)
 * can cut it where one side's run starts. */
typedef enum { HISTORY_SIDE_NONE, HISTORY_SIDE_ASSISTANT, HISTORY_SIDE_USER } history_side;
history_side history_record_side(const json_t *rec);

/* history_from_records over transcript_active(t). Returns 0. */
int history_from_transcript(transcript *t, msg_request *req, history_stats *stats);

#endif
