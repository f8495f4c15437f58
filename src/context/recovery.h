/* recovery.h — the post-compaction recovery chain (seed 001 §8.3).
 *
 * A summary keeps what the task is about, not the files it works on: the
 * model would have to Read them again, and a summary's snippets may be
 * older than the disk. So after every summary that replaces the history
 * (compaction, the 9-dimension recovery, renew) the loop queues, at the
 * tail of the next request, the files the task read or changed most
 * recently, read from disk now — never from the transcript. The plan
 * needs nothing: it is C_working's, in every request's tail. Skills in use
 * come back through the extensions part (skill_session_active_text).
 *
 * Bounded: at most RECOVERY_MAX_FILES files, each cut to
 * RECOVERY_FILE_BYTES (head and tail kept), all of them within a byte cap
 * the caller derives from the window. Only files whose call succeeded are
 * taken, never a secret path (policy/secrets.h), never a non-text file.
 * Pure functions over the records and the filesystem; any thread. */
#ifndef LOOM_CONTEXT_RECOVERY_H
#define LOOM_CONTEXT_RECOVERY_H

#include <jansson.h>
#include <stddef.h>

#define RECOVERY_MAX_FILES 5
#define RECOVERY_FILE_BYTES 8192
#define RECOVERY_TOTAL_BYTES 24576

/* The files chain's tool calls read or changed (Read, Edit, MultiEdit,
 * Write, NotebookEdit; their file_path or notebook_path), newest first,
 * each once, at most max; a call whose result was an error (or never
 * came) does not count. Relative paths are resolved against cwd. A JSON
 * array of absolute paths (new reference). */
json_t *recovery_recent_files(json_t *const *chain, size_t n, const char *cwd, size_t max);

/* The text of the recovery reminder for paths (from
 * recovery_recent_files), each re-read now and cut to fit total_cap
 * bytes; files that cannot be read are named with the reason. NULL when
 * paths is empty. Caller frees. */
char *recovery_files_text(const json_t *paths, size_t total_cap);

#endif
