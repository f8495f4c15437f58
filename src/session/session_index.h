/* session_index.h — the index kept beside a session file (<id>.idx next to
 * <id>.jsonl): where each record's line is and what the tree needs of it
 * (type, id, parentId, logicalParentId), so a resume can walk the tree and
 * read only the lines it sends, instead of parsing the whole file.
 *
 * The index is a cache, never the truth: the transcript validates it
 * against the session file on every open and rebuilds it from the file
 * when it is missing, stale or damaged (transcript_open.c). This module is
 * only the file format.
 *
 * Format (all integers little-endian): an 8-byte magic "LOOMIDX1", the
 * session file's device and inode (u64 each: a file replaced by another,
 * as editors save, is not the one indexed), then one entry per record in
 * file order:
 *   u32 body length (the bytes that follow, up to the next entry)
 *   u64 offset of the line in the session file
 *   u32 length of the line, without its '\n'
 *   u64 FNV-1a 64 of the line's bytes
 *   four strings — type, id, parentId, logicalParentId — each a u32 length
 *   (0xFFFFFFFF: absent) and that many bytes followed by a NUL
 * An entry is appended after each record line, so a crash between the two
 * leaves the index one entry short, which the open notices and catches up.
 */
#ifndef LOOM_SESSION_SESSION_INDEX_H
#define LOOM_SESSION_SESSION_INDEX_H

#include <stddef.h>
#include <stdint.h>

#include "base/error.h"
#include "base/str.h"

#define SESSION_INDEX_MAGIC "LOOMIDX1"
#define SESSION_INDEX_MAGIC_LEN 8
#define SESSION_INDEX_HEADER_LEN (SESSION_INDEX_MAGIC_LEN + 16)

typedef struct session_index_entry {
    uint64_t off;
    uint32_t len;
    uint64_t hash;
    /* NUL-terminated; type and id always present and non-empty, parent and
     * lparent NULL when absent. Point into the parsed buffer. */
    const char *type, *id, *parent, *lparent;
} session_index_entry;

/* The line hash the index stores (FNV-1a 64). */
uint64_t session_index_hash(const char *p, size_t n);

/* Parses an index file's bytes. The entries point into buf, which must
 * outlive them. 0 with *dev, *ino, *out (caller frees the array) and *n
 * set; or
 * -LOOM_ERR_SESSION_CORRUPT with err naming what is wrong and at which byte (a
 * truncated last entry included: the caller rebuilds). */
int session_index_parse(const char *buf, size_t len, uint64_t *dev, uint64_t *ino,
                        session_index_entry **out, size_t *n, loom_error *err);

/* Appends the header for the session file (dev, ino) to out. */
void session_index_encode_header(loom_str *out, uint64_t dev, uint64_t ino);
/* Appends the encoding of one entry to out. */
void session_index_encode(loom_str *out, const session_index_entry *e);

/* dir/<id>.jsonl → dir/<id>.idx (any other name gets ".idx" appended).
 * Caller frees. */
char *session_index_path(const char *session_path);

#endif
