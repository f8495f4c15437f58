/* file_history.h — pre-write backups of the files Write and Edit change, the
 * file-history-snapshot records that name them, and rewind (seed 001 §3.7).
 *
 * Before the first write of a file within one assistant message, the file's
 * current content is copied to $LOOM_HOME/file-history/<session_id>/
 * <16 hex of FNV-1a 64 of the path>@v<N> (or, for a file that does not exist
 * yet, nothing is copied and existedAtTrack is false). The caller then
 * appends the returned record to the session:
 *
 *   {"type":"file-history-snapshot","id","timestamp","messageId":M,
 *    "isSnapshotUpdate":false|true,
 *    "snapshot":{"messageId":M,"trackedFileBackups":{
 *       "<absolute path>":{"backupFileName":"<name>"|null,"version":N,
 *                          "backupTime":"<ISO 8601>","existedAtTrack":bool}}}}
 *
 * Snapshots are cumulative: each lists every tracked file with its newest
 * backup. The first snapshot of a message has isSnapshotUpdate false; one
 * for a further file in the same message repeats the messageId with true.
 * Keys are absolute paths (the seed's are relative to the project) because
 * a session may write outside its cwd and sub-agents may work elsewhere.
 *
 * A backup of version N taken at message M holds the file as it was just
 * before M's writes. Rewinding to M therefore restores each file to its
 * earliest backup taken at M or later, and deletes files whose earliest
 * such backup says they did not exist. Messages are ordered as they were
 * first tracked (or met by the loader); a message id that took no backup is
 * placed by UUIDv7 order, so "rewind to this user message" works with the
 * id of the user message itself.
 *
 * LOOM_DISABLE_FILE_CHECKPOINTING=1 (read at file_history_new) turns
 * tracking off: no backups, no records; rewind then has nothing to restore.
 * Thread-safe: one mutex guards the lists and is never held across file
 * I/O (backups are copied, and files restored, outside it).
 */
#ifndef LOOM_SESSION_FILE_HISTORY_H
#define LOOM_SESSION_FILE_HISTORY_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "base/error.h"
#include "base/str.h"

typedef struct file_history file_history;

/* The history of one session; backups go under
 * loom_home()/file-history/<session_id>/ (created on the first backup).
 * session_id NULL or empty is named "unknown-session". Never NULL; free
 * with file_history_free. */
file_history *file_history_new(const char *session_id);
void file_history_free(file_history *fh);   /* NULL is fine */
/* False when LOOM_DISABLE_FILE_CHECKPOINTING was set at creation. */
bool file_history_enabled(const file_history *fh);
/* The backup directory (borrowed). */
const char *file_history_dir(const file_history *fh);

/* Call before writing abs_path on behalf of message_id. On the first write
 * of that file within that message, backs it up and sets *snapshot to a new
 * file-history-snapshot record (the caller owns it: append it to the
 * session, e.g. through tool_ctx.record). Otherwise *snapshot is NULL:
 * already backed up in this message, tracking disabled, fh NULL, or
 * message_id NULL (then there is nothing to attach a snapshot to). 0, or
 * -code with err set when the backup could not be taken — the write must
 * not go ahead then, or it could not be undone. */
int file_history_track(file_history *fh, const char *abs_path, const char *message_id,
                       json_t **snapshot, loom_error *err);

/* Rebuilds the tracking from a session's records (for /rewind after
 * --resume). Records of other types are skipped, as are malformed
 * entries; records are taken in the order given, so pass them in file
 * order, ideally only the snapshots whose messageId is on the active chain.
 * Replaces whatever fh tracked before. Returns the number of snapshot
 * records used. */
size_t file_history_load(file_history *fh, json_t *const *records, size_t n);

/* Restores every tracked file to its state before the writes made at or
 * after message_id, deleting files that did not exist then; report (when
 * non-NULL) receives one line per file ("restored", "deleted",
 * "unchanged", or what failed) or a sentence saying there was nothing to
 * do. On success the backups taken at or after message_id are forgotten
 * (that part of the conversation is being abandoned; their files stay on
 * disk). 0; -code with err set when message_id cannot be placed
 * (invalid_request) or a file could not be restored (io; the others are
 * still restored and nothing is forgotten, so the rewind can be retried). */
int file_history_rewind(file_history *fh, const char *message_id, loom_str *report,
                        loom_error *err);

/* The files written at or after message_id, each with its state before
 * then: a JSON array (new reference) of {"path" (absolute), "existed"
 * (bool), "backup" (the backup file's absolute path, absent when it did
 * not exist)}, in the order first tracked; [] when none or the id cannot
 * be placed. For loom_run_patch. */
json_t *file_history_changed_since(file_history *fh, const char *message_id);

/* Whether a rewind to message_id would touch any file (for a /rewind menu). */
bool file_history_has_changes(file_history *fh, const char *message_id);

#endif
