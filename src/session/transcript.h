/* transcript.h — one session: an append-only JSONL file holding a tree of
 * records, and the in-memory view of it.
 *
 * The file is the source of truth (seed 001 §3.1). Records are only ever
 * appended; an edit adds a sibling, compaction adds a summary, a fork copies
 * into a new file. The active conversation is the walk back from the leaf
 * (the last conversation record, unless set explicitly) along parentId, or
 * logicalParentId across a compaction summary.
 *
 * Durability: each record is one line, '\n' last, written by a single
 * write() on an O_APPEND descriptor. Lines never interleave or glue, and
 * the only damage a crash can do is a torn final line (power loss; or a
 * kill -9 landing inside a write the kernel splits into pages), which the
 * loader recognises by its missing '\n' and drops. transcript_sync (once
 * per turn) makes the lines durable against power loss. Loading tolerates
 * damage: a torn final line is dropped, a bad line elsewhere is skipped,
 * both with a warning, never an error. A skipped or missing line in the
 * middle leaves an orphan (a record whose parent is not in the file); the
 * loader reconnects it to the record before it where that is unambiguous
 * (in memory, with a warning naming the lines; the file keeps its bytes),
 * and transcript_check tells a caller about to continue the session when
 * the active chain is still broken (docs/session-format.md).
 *
 * A transcript is used by one thread at a time.
 */
#ifndef LOOM_SESSION_TRANSCRIPT_H
#define LOOM_SESSION_TRANSCRIPT_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "base/error.h"

typedef struct transcript transcript;

/* Creates dir (mkdir -p, 0700) and a new session file dir/<id>.jsonl with
 * a fresh UUIDv7 session id, and writes the session-meta record (cwd,
 * provider, model; NULLs omitted) durably. NULL with err set on failure.
 * Free with transcript_free. */
transcript *transcript_create(const char *dir, const char *cwd, const char *provider,
                              const char *model, loom_error *err);

/* Opens an existing session file. The session id is the file name without
 * ".jsonl". Damage produces warnings, not failure; NULL only when the file
 * cannot be read. A file without damage is opened through its index
 * (<id>.idx beside it, session_index.h; built or caught up here when it is
 * missing or stale): only the tree is in memory, and a record's line is
 * read and parsed the first time it is asked for. A damaged file is read
 * whole. Free with transcript_free. */
transcript *transcript_open(const char *path, loom_error *err);

/* Builds a transcript from len bytes of JSONL. name is used in warnings
 * (a path, or NULL for "<buffer>"). Never fails. The result has no file:
 * transcript_append on it returns an error. Free with transcript_free. */
transcript *transcript_parse(const char *buf, size_t len, const char *name);

/* Closes the file (without fsync: call transcript_sync first when the
 * appends must survive power loss) and frees everything. NULL is a no-op. */
void transcript_free(transcript *t);

const char *transcript_session_id(const transcript *t);
const char *transcript_path(const transcript *t);  /* NULL for a parsed buffer */

/* Appends rec (a JSON object; borrowed — the transcript takes its own
 * reference, so the caller still owns and must decref its own). Fills in
 * place whatever is absent: id (UUIDv7), timestamp, sessionId, and
 * parentId — the current leaf for a conversation record, null for the
 * others; a summary without logicalParentId gets the leaf there. A
 * parentId the caller set (even null) is kept. Conversation records become
 * the new leaf. Writes the line in one write(); when the file ended in a
 * torn line, the file is first truncated back to its last whole line.
 * 0, or -code with err set (the record is then not in memory either). */
int transcript_append(transcript *t, json_t *rec, loom_error *err);
/* The same, stealing the caller's reference to rec (even on failure). */
int transcript_append_new(transcript *t, json_t *rec, loom_error *err);
/* fsync of the file when something was appended since the last sync. */
int transcript_sync(transcript *t, loom_error *err);

/* Where a session's records are kept besides the file (a database: the
 * server's PostgreSQL store, docs/server-store.md). A port, handed down by
 * the layer that owns the storage: append stores n records' lines (each
 * exactly its JSONL line, without the '\n') as records first_seq … of
 * session_id, all or none (one transaction); 0, or -code with err set —
 * then the transcript writes nothing and the record is not appended. */
typedef struct transcript_rows {
    void *ctx;
    int (*append)(void *ctx, const char *session_id, size_t first_seq,
                  const char *const *lines, size_t n, loom_error *err);
} transcript_rows;

/* From now on every append goes to rows first, one batch per append call,
 * the record's seq being its position in the file (0-based); the file is
 * written only after rows took it, so the rows hold everything the file
 * does. with_existing: the records already in t (a new session's meta) are
 * stored first, as one batch. rows is copied; NULL stops. 0, or -code with
 * err (the port is then not set). */
int transcript_set_rows(transcript *t, const transcript_rows *rows, bool with_existing,
                        loom_error *err);

/* Records in file order (only the lines that loaded). Borrowed. */
size_t transcript_count(const transcript *t);
json_t *transcript_record(const transcript *t, size_t i);
/* The type of record i, without reading the record itself (a transcript
 * opened through its index reads a record's line on first use: a caller
 * that wants one kind of record filters by type first). NULL past the end. */
const char *transcript_record_type(const transcript *t, size_t i);
/* The record with that id, or NULL. Borrowed. */
json_t *transcript_find(const transcript *t, const char *id);
/* The first session-meta record, or NULL. Borrowed. */
json_t *transcript_meta(const transcript *t);

/* The id of the leaf, NULL for a session without conversation records. */
const char *transcript_leaf(const transcript *t);
/* Moves the leaf (rewind, "deleting history becomes moving a pointer").
 * The pointer lives in memory only: reopening a file starts from its last
 * conversation record. NULL means before the first record (the next
 * conversation record starts a new root). -code when id names no record. */
int transcript_set_leaf(transcript *t, const char *id, loom_error *err);

/* The chain from a root to leaf_id (NULL: the current leaf), root first.
 * for_context: stop at (and include) the nearest compaction summary, as
 * the model sees it; otherwise follow logicalParentId across summaries to
 * the very first record, as rewind does. A missing parent or a cycle ends
 * the walk with a warning (the part walked so far is returned). *out is a
 * malloc'd array of borrowed records, caller frees the array only (NULL
 * when *n is 0). 0, or -code when leaf_id names no record. */
int transcript_chain(transcript *t, const char *leaf_id, bool for_context, json_t ***out,
                     size_t *n, loom_error *err);
/* transcript_chain(t, NULL, true, ...): what the model sees. */
int transcript_active(transcript *t, json_t ***out, size_t *n);

/* Whether the active chain (the walk from the leaf that builds the next
 * request) reaches the start of the conversation: 0 when it does, or when
 * it only stops at a compaction summary. When it breaks — a parent that is
 * not in the file and could not be reconnected, a cycle, an id two
 * different records share — -LOOM_ERR_SESSION_CORRUPT with err naming the
 * file, the line and how to go on; with accept, a warning instead and 0
 * (the history after the break is what the model will see). */
int transcript_check(transcript *t, bool accept, loom_error *err);

/* Warnings collected while loading and walking, oldest first. Borrowed;
 * valid until the next call that may warn (walks, appends) or the free. */
const char *const *transcript_warnings(const transcript *t, size_t *n);
size_t transcript_n_warnings(const transcript *t);
const char *transcript_warning(const transcript *t, size_t i);

/* /fork (seed 001 §3.3): a new session in new_dir holding a copy of every
 * record with fresh ids (parentId, logicalParentId, editedUserItemId and a
 * snapshot's messageId remapped through an id map, sessionId replaced),
 * preceded by a new session-meta with forkedFrom and forkedAt. The source's
 * own session-meta records are not copied (they describe the source). The
 * new file is written whole or not at all. The new leaf is the copy of t's
 * leaf. NULL with err set on failure. */
transcript *transcript_fork(transcript *t, const char *new_dir, loom_error *err);

/* Edit and resend (seed 001 §3.3): appends a resend-fork-notice
 * {parentId = edited->parentId, editedUserItemId} and a new user message
 * with new_text as a sibling of the edited one (same parentId). Nothing is
 * overwritten; the new message becomes the leaf. Returns the new message
 * (borrowed), or NULL with err set when edited_user_id is not a user
 * message of this session or the append fails. */
json_t *transcript_resend(transcript *t, const char *edited_user_id, const char *new_text,
                          loom_error *err);

#endif
