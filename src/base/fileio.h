/* fileio.h — reading files whole, atomic replacement, durable appends. */
#ifndef LOOM_BASE_FILEIO_H
#define LOOM_BASE_FILEIO_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>

#include "base/error.h"
#include "base/str.h"

/* Reads the whole file; *out is NUL-terminated, caller frees. 0 or -code. */
int file_read_all(const char *path, char **out, size_t *len, loom_error *err);
/* Writes data to a temp file beside path, fsyncs it, renames it over path,
 * fsyncs the directory: readers see the old or the new file, never a mix. */
int file_write_atomic(const char *path, const void *data, size_t len, int mode,
                      loom_error *err);
/* file_write_atomic, then the mode made exact: mode < 0 creates a new
 * file through the umask (0666); mode >= 0 is what an overwrite must keep,
 * bit for bit, so the umask applied to the temp file is undone. *st (may be
 * NULL) receives the new file's stat. 0 or -code naming path. */
int file_replace(const char *path, const void *data, size_t len, int mode, struct stat *st,
                 loom_error *err);
/* mkdir -p with the given mode for every created component. */
int file_mkdirs(const char *path, int mode, loom_error *err);
/* Reads fd from its current offset to its end, appending to out. 0; 1
 * when more than max bytes came (out then holds at least max + 1, the
 * rest unread); -1 with errno on a read error. */
int file_read_fd(int fd, size_t max, loom_str *out);
/* Writes all of buf to fd, retrying on EINTR and short writes. */
int file_write_full(int fd, const void *buf, size_t len);
bool file_exists(const char *path);

/* file_read_text flags. */
#define FILE_TEXT_NOFOLLOW 1u  /* refuse a symlink (one swapped in since it was looked at) */
#define FILE_TEXT_NO_NUL   2u  /* refuse a file holding a NUL byte: not text */
/* Reads a small untrusted text file: a regular file of at most cap bytes,
 * opened without blocking so a FIFO or a device someone named x.md costs a
 * refusal, not a hang. NUL-terminated, caller frees. NULL with why (may be
 * NULL) given the problem, for the caller to prefix with the path: "cannot
 * be read: <reason>", "not a regular file", "larger than <cap/1024> KiB" or
 * "holds a NUL byte (not a text file)". */
char *file_read_text(const char *path, size_t cap, unsigned flags, loom_str *why);

/* An exclusive flock on path (created 0644 when missing; a symlink is not
 * followed), held until file_unlock: for a read-modify-write that two
 * processes may do at once. The fd, or -1 when it cannot be had. */
int file_lock(const char *path);
void file_unlock(int fd); /* -1: nothing */

#endif
