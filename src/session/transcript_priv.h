/* transcript_priv.h — the inside of a transcript, shared by transcript.c
 * (the tree, appends, walks, fork) and transcript_open.c (opening a file
 * through its index). Not for other modules.
 *
 * Each record has a slot: what the tree needs of it (type, id, parent
 * links) and where its line is in the file. The record itself (rec) is
 * parsed on first use — a transcript opened through its index reads only
 * the lines a caller asks for; one loaded whole (a buffer, a damaged file)
 * has every rec set from the start.
 */
#ifndef LOOM_SESSION_TRANSCRIPT_PRIV_H
#define LOOM_SESSION_TRANSCRIPT_PRIV_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "session/transcript.h"

typedef struct bad_line {
    size_t line;
    const char *why; /* static text */
} bad_line;

typedef struct rec_slot {
    json_t *rec; /* owned; NULL until first use (lazy) */
    /* NUL-terminated, owned by the transcript (its arena or index buffer);
     * parent and lparent NULL when absent. */
    const char *type, *id, *parent, *lparent;
    uint64_t off;  /* the line's offset in the file, its length without '\n', */
    uint32_t len;  /* and its hash (session_index.h): set for a record that has */
    uint64_t hash; /* a line in an indexed file */
    size_t line;   /* the line as loaded; 0 if appended since */
} rec_slot;

/* Strings copied once and freed with the transcript. */
typedef struct str_arena {
    char **chunks;
    size_t n_chunks;
    size_t used, cap; /* in the last chunk */
} str_arena;

struct transcript {
    char *path;        /* NULL for a parsed buffer */
    char *name;        /* what warnings call the file */
    char *session_id;  /* may be NULL for a parsed buffer without records */
    rec_slot *slots;   /* file order */
    size_t n, cap;
    uint32_t *table;   /* open addressing: id -> slot position + 1, 0 empty */
    size_t table_cap;  /* a power of two, at least twice n */
    str_arena arena;
    char *idx_buf;     /* the index file's bytes the slots' strings point into */
    int src_fd;        /* read-only, for lazy loads; -1 when every rec is loaded */
    int idx_fd;        /* the index, appended with each record; -1 without one */
    char *idx_path;
    size_t cur_line;   /* the line being loaded, 0 outside the load */
    bad_line *bad;     /* lines skipped as damaged, ascending */
    size_t n_bad;
    json_t *relink;    /* orphan id -> the parent it was reconnected to */
    json_t *unrepaired; /* orphan id -> why it could not be reconnected */
    json_t *conflicts; /* id -> line of a later record with that id and other content */
    char *leaf;
    char **warnings;
    size_t n_warnings;
    size_t suppressed;
    transcript_rows rows; /* rows.append NULL: the file only */
    int fd;            /* -1 until the first append needs it */
    bool dirty;        /* appended since the last fsync */
    bool misread;      /* a lazy read found a line other than its slot says */
    /* The state of the file's tail as loaded, for the next append. */
    bool torn;          /* ends in a partial line that must be cut off */
    bool need_newline;  /* ends in a whole line that lacks its '\n' */
    size_t good_len;    /* length up to and including the last '\n' */
    size_t loaded_len;  /* file size when it was read */
};

transcript *tr_alloc(const char *name);
void tr_warn(transcript *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The position of the record with that id, -1 when none. */
ssize_t tr_lookup(const transcript *t, const char *id);
/* Adds a slot for a record known by its fields only (rec NULL: loaded on
 * first use). The strings are copied. Becomes the leaf when it is a
 * conversation record. Returns the position. */
size_t tr_push_slot(transcript *t, const char *type, const char *id, const char *parent,
                    const char *lparent);
/* The same, pointing at strings that live as long as t (the index buffer). */
size_t tr_push_slot_borrowed(transcript *t, const char *type, const char *id,
                             const char *parent, const char *lparent);
void tr_set_leaf(transcript *t, const char *id);
/* The record at position i, read from the file when not loaded yet. */
json_t *tr_rec(const transcript *t, size_t i);
/* Post-load bookkeeping: repair holes, fold suppressed warnings. */
void tr_finish_load(transcript *t);
/* Reads and parses the whole file (no index): every record loaded. */
transcript *tr_open_whole(const char *path, loom_error *err);
/* "dir/<id>.jsonl" -> "<id>". Caller frees. */
char *tr_id_from_path(const char *path);

/* transcript_open.c: the index beside the file. */
/* Starts a fresh index (header, then an entry per slot in [0, n)) written
 * atomically beside t->path, and keeps it open for appends. On failure
 * the transcript goes on without one (a log line says why). */
void tr_index_start(transcript *t);
/* Appends the entries of slots [from, to) to the open index; on a failed
 * write the index is removed (the next open rebuilds it). */
void tr_index_append(transcript *t, size_t from, size_t to);

#endif
