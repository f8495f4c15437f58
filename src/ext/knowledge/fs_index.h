/* fs_index.h — the local index of filesystem knowledge sources: SQLite
 * FTS5 (BM25) over chunks of text files, each chunk a paragraph (a run of
 * non-blank lines, at most FS_CHUNK_LINES) with its file and line range.
 *
 * Refreshed incrementally on each search: a file whose mtime and size are
 * what the index holds is not read again; a changed one has its chunks
 * replaced; a vanished one is dropped. The walk never follows a symbolic
 * link, skips dot entries, binary files (a NUL in the first 4 KB) and
 * files over FS_FILE_MAX, stops at a depth of 32 and FS_FILES_MAX files.
 *
 * The database is one file (the caller picks it: loom_home()/knowledge/
 * index.db); paths in it are absolute, so sources of several projects
 * share it. Each call opens and closes it (WAL, a busy timeout): any
 * thread, and two processes may search at once. */
#ifndef LOOM_EXT_KNOWLEDGE_FS_INDEX_H
#define LOOM_EXT_KNOWLEDGE_FS_INDEX_H

#include <stddef.h>
#include <stdint.h>

#include "base/error.h"
#include "ext/knowledge/registry.h"

#define FS_CHUNK_LINES 12
#define FS_FILE_MAX (1024 * 1024)
#define FS_FILES_MAX 100000

typedef struct fs_hit {
    char *path;          /* absolute */
    long line_start, line_end; /* 1-based, inclusive */
    char *text;          /* the chunk as it is in the file */
    int64_t mtime_s;     /* the file's modification time */
    double bm25;         /* FTS5's rank (lower is better) */
    double score;        /* after the reranker (higher is better) */
} fs_hit;

typedef struct fs_refresh_stats {
    size_t files_seen, files_indexed, files_dropped, chunks_added;
} fs_refresh_stats;

/* Brings the index up to date for src's paths. 0, or -1 with err
 * (LOOM_ERR_INTERNAL naming the database). stats may be NULL. */
int fs_index_refresh(const char *db_path, const knowledge_src *src, fs_refresh_stats *stats,
                     loom_error *err);

/* The chunks of src matching any of the query's words, best BM25 first, at
 * most limit. *out is a new array (free with fs_hits_free). 0 or -1. */
int fs_index_query(const char *db_path, const knowledge_src *src, const char *query, size_t limit,
                   fs_hit **out, size_t *n, loom_error *err);
void fs_hits_free(fs_hit *h, size_t n);

/* The query's words, lowercased, without stop words and duplicates, at
 * most 32; a NULL-terminated vector (strv_free). Used by the reranker and
 * the evidence builder as well. */
char **fs_query_terms(const char *query);

#endif
