/* file_state.h — the session's read cache: which files the model has seen,
 * and in what state, so that Write and Edit only ever change a file the
 * model has read and that nobody changed since.
 *
 * One cache per session, shared by every tool call of that session; tools
 * run concurrently (Read is concurrency-safe), so every entry point takes an
 * internal mutex. Nothing here holds the lock across file I/O.
 *
 * An entry is keyed by the file's canonical path (realpath when the file
 * exists, so a symlink and its target are one entry) and holds the mtime
 * (ns), size and a content hash seen at the last Read or write. The rule
 * file_state_check applies, in order:
 *   1. no entry                         -> "not read yet"
 *   2. mtime and size as recorded       -> may write
 *   3. size differs                     -> "modified since read"
 *   4. mtime differs, size equal: hash the file now; equal hash -> may write
 *      (a `touch` or a formatter that changed nothing), else "modified".
 * A partial Read (offset/limit) counts as a read. Entries are never evicted:
 * one is a path and three integers, and a session touches few files.
 *
 * The hash is FNV-1a 64 (our own few lines). It guards against accidents,
 * not adversaries: the question is "did this file change under us", and a
 * user who wants to fool their own agent has easier ways.
 */
#ifndef LOOM_TOOLS_FILE_STATE_H
#define LOOM_TOOLS_FILE_STATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#include "base/error.h"
#include "base/hash.h"
#include "base/str.h"

typedef struct file_state file_state;

/* Passed as the hash when the reader did not see the whole file (e.g. a Read
 * that stopped scanning a huge file): then only an exact mtime+size match
 * lets a write through. A real content hash of 0 merely costs a re-Read. */
#define FILE_STATE_NO_HASH UINT64_C(0)

/* The exact messages the model sees (Claude Code's wording, which models
 * already know how to act on). */
#define FILE_STATE_NOT_READ "File has not been read yet. Read it first before writing to it."
#define FILE_STATE_MODIFIED                                                              \
    "File has been modified since read, either by the user or by a linter. Read it again " \
    "before attempting to write it."

/* A new empty cache; free with file_state_free. Never NULL. */
file_state *file_state_new(void);
void file_state_free(file_state *fs);   /* NULL is fine */
/* A copy of what fs knows (seed 000 row 3.11: a sub-agent starts with the
 * parent's read cache, and its reads and writes do not reach the parent's). */
file_state *file_state_clone(const file_state *fs);

/* Content hashes are FNV-1a 64 (base/hash.h), in pieces from this seed. */
#define FILE_STATE_HASH_SEED HASH_FNV1A64_SEED

/* Records that abs_path was read (or written) and was then as st says with
 * content hash `hash` (FILE_STATE_NO_HASH when unknown). Replaces any
 * earlier entry for the same file. */
void file_state_note(file_state *fs, const char *abs_path, const struct stat *st, uint64_t hash);

/* Whether abs_path may be overwritten now. 0 = yes. Otherwise 1, and why
 * (when non-NULL) receives FILE_STATE_NOT_READ or FILE_STATE_MODIFIED, or
 * a message naming an I/O failure. fs NULL means nothing was ever read:
 * every existing file is "not read yet" (fail closed). A path that does not
 * exist is the caller's business (creating a file needs no read); here it
 * is reported as modified when an entry exists (it was deleted since). */
int file_state_check(file_state *fs, const char *abs_path, loom_str *why);

/* ---- texts from the driver (tools/tool_io.h) ----
 * A text the driver handed over (an editor's buffer) has no stat. Its entry
 * keeps the text's length and hash and no mtime, so the same rule holds:
 * file_state_check_text passes only when the text now hashes as the one
 * seen; file_state_check on the disk file passes only when the disk holds
 * that very text. */

/* Records that abs_path was read (or written) through the driver as text. */
void file_state_note_text(file_state *fs, const char *abs_path, const void *text, size_t len);
/* Whether abs_path has an entry (was read or written in this session). */
bool file_state_known(file_state *fs, const char *abs_path);
/* Whether a file whose text is now text/len may be overwritten: 0 = yes;
 * else 1 with why set to FILE_STATE_NOT_READ or FILE_STATE_MODIFIED (a
 * partial local read, with no hash, is "modified": read it again). */
int file_state_check_text(file_state *fs, const char *abs_path, const void *text, size_t len,
                          loom_str *why);

/* Writes data atomically to abs_path (file_write_atomic) and notes the new
 * stat and hash, so a following Edit needs no new Read. mode >= 0 is given
 * to the file exactly, umask notwithstanding (an overwrite keeps the file's
 * mode); mode < 0 creates it as 0666 through the umask, like any new file.
 * fs may be NULL (nothing noted). 0 or -code with err set. */
int file_state_write(file_state *fs, const char *abs_path, const void *data, size_t len,
                     int mode, loom_error *err);

#endif
