/* fs_index.c — the FTS5 index of filesystem sources (fs_index.h).
 *
 * Schema: files(path PRIMARY KEY, mtime, size) says what was indexed;
 * chunks is the FTS5 table (the text only), chunk_at where each chunk is
 * (file and lines, indexed by file), sharing the chunk's rowid. A refresh
 * runs in one transaction, so a reader sees the old index or the new one.
 *
 * Owns nothing past a call. Any thread. */
#include "ext/knowledge/fs_index.h"

#include <ctype.h>
#include <dirent.h>
#include <fcntl.h>
#include <sqlite3.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/fileio.h"
#include "base/glob.h"
#include "base/path.h"
#include "base/str.h"

#define FS_DEPTH_MAX 32
#define FS_SNIFF 4096
#define FS_TERMS_MAX 32
/* The tables' layout (PRAGMA user_version); a change bumps it. */
#define FS_INDEX_LAYOUT 2
#define FS_INDEX_LAYOUT_TEXT "2"

static const char SCHEMA[] =
    "PRAGMA journal_mode=WAL;"
    "CREATE TABLE IF NOT EXISTS files(path TEXT PRIMARY KEY, mtime INTEGER, size INTEGER);"
    /* Where each chunk is; its rowid is the chunk's in the FTS5 table, so
     * a file's chunks are found by an index, not a scan of the text. */
    "CREATE TABLE IF NOT EXISTS chunk_at(id INTEGER PRIMARY KEY, path TEXT NOT NULL, "
    "line_start INTEGER, line_end INTEGER);"
    "CREATE INDEX IF NOT EXISTS chunk_at_path ON chunk_at(path);"
    "CREATE VIRTUAL TABLE IF NOT EXISTS chunks USING fts5(body, tokenize='unicode61');";

static int db_fail(loom_error *err, sqlite3 *db, const char *path, const char *what)
{
    return loom_error_set(err, LOOM_ERR_INTERNAL, "knowledge index %s: %s: %s", path, what,
                          db ? sqlite3_errmsg(db) : "out of memory");
}

static sqlite3 *db_open(const char *path, loom_error *err)
{
    char *dir = xstrdup(path);
    char *slash = strrchr(dir, '/');
    if (slash && slash != dir) {
        *slash = 0;
        if (file_mkdirs(dir, 0700, err) != 0) {
            free(dir);
            return NULL;
        }
    }
    free(dir);
    sqlite3 *db = NULL;
    if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
                        NULL) != SQLITE_OK) {
        db_fail(err, db, path, "cannot open");
        sqlite3_close(db);
        return NULL;
    }
    sqlite3_busy_timeout(db, 10000);
    /* The index is a cache: one of another layout is rebuilt, not read. */
    sqlite3_stmt *v = NULL;
    int version = -1;
    if (sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &v, NULL) == SQLITE_OK &&
        sqlite3_step(v) == SQLITE_ROW)
        version = sqlite3_column_int(v, 0);
    sqlite3_finalize(v);
    if (version != FS_INDEX_LAYOUT &&
        sqlite3_exec(db, "DROP TABLE IF EXISTS chunks; DROP TABLE IF EXISTS chunk_at;"
                         "DROP TABLE IF EXISTS files;", NULL, NULL, NULL) != SQLITE_OK) {
        db_fail(err, db, path, "cannot reset an index of another layout");
        sqlite3_close(db);
        return NULL;
    }
    if (sqlite3_exec(db, SCHEMA, NULL, NULL, NULL) != SQLITE_OK ||
        sqlite3_exec(db, "PRAGMA user_version=" FS_INDEX_LAYOUT_TEXT, NULL, NULL, NULL) != SQLITE_OK) {
        db_fail(err, db, path, "cannot create the tables (is FTS5 built in?)");
        sqlite3_close(db);
        return NULL;
    }
    return db;
}

/* --- the walk ---------------------------------------------------------- */

typedef struct walk_file {
    char *path;
    int64_t mtime, size;
} walk_file;

typedef struct walker {
    const knowledge_src *src;
    const char *root;       /* the path being walked */
    walk_file *v;
    size_t n, cap;
} walker;

static bool wanted(const walker *w, const char *rel, const char *name)
{
    if (!w->src->globs)
        return true;
    for (size_t i = 0; w->src->globs[i]; i++) {
        const char *g = w->src->globs[i];
        /* A pattern without '/' is about the name, wherever the file is. */
        if (strchr(g, '/') ? glob_path_match(g, rel) : glob_path_match(g, name))
            return true;
    }
    return false;
}

static void add_file(walker *w, const char *path, const struct stat *st)
{
    if (w->n == w->cap) {
        w->cap = w->cap ? w->cap * 2 : 64;
        w->v = xrealloc(w->v, w->cap * sizeof *w->v);
    }
    w->v[w->n++] = (walk_file){xstrdup(path), (int64_t)st->st_mtime, (int64_t)st->st_size};
}

static void walk_dir(walker *w, const char *dir, const char *rel, int depth)
{
    if (depth > FS_DEPTH_MAX || w->n >= FS_FILES_MAX)
        return;
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d)) && w->n < FS_FILES_MAX) {
        if (e->d_name[0] == '.')
            continue;
        char *path = path_join(dir, e->d_name);
        char *sub = *rel ? path_join(rel, e->d_name) : xstrdup(e->d_name);
        struct stat st;
        if (lstat(path, &st) == 0) {
            if (S_ISDIR(st.st_mode))
                walk_dir(w, path, sub, depth + 1);
            else if (S_ISREG(st.st_mode) && st.st_size <= FS_FILE_MAX && wanted(w, sub, e->d_name))
                add_file(w, path, &st);
        }
        free(path), free(sub);
    }
    closedir(d);
}

static int walk_cmp(const void *a, const void *b)
{
    return strcmp(((const walk_file *)a)->path, ((const walk_file *)b)->path);
}

static void walk_source(walker *w)
{
    for (size_t i = 0; w->src->paths && w->src->paths[i]; i++) {
        struct stat st;
        const char *p = w->src->paths[i];
        if (lstat(p, &st) != 0)
            continue;
        if (S_ISDIR(st.st_mode))
            walk_dir(w, p, "", 0);
        else if (S_ISREG(st.st_mode) && st.st_size <= FS_FILE_MAX)
            add_file(w, p, &st);
    }
    if (w->n > 1)
        qsort(w->v, w->n, sizeof *w->v, walk_cmp);
}

/* --- chunks ------------------------------------------------------------ */

static bool is_binary(const char *data, size_t len)
{
    return memchr(data, 0, len < FS_SNIFF ? len : FS_SNIFF) != NULL;
}

/* Paragraphs of at most FS_CHUNK_LINES lines into the chunks table. */
static int insert_chunks(sqlite3_stmt *ins, sqlite3_stmt *at, const char *path, const char *data,
                         size_t len, size_t *added)
{
    long line = 1, start = 0;
    size_t from = 0, count = 0;
    for (size_t i = 0; i <= len; i++) {
        if (i < len && data[i] != '\n')
            continue;
        /* the line is data[lstart..i) */
        size_t lstart = i;
        while (lstart > 0 && data[lstart - 1] != '\n')
            lstart--;
        bool blank = true;
        for (size_t j = lstart; j < i; j++)
            blank = blank && isspace((unsigned char)data[j]);
        if (!blank && !start)
            start = line, from = lstart, count = 0;
        if (!blank)
            count++;
        bool flush = start && (blank || count == FS_CHUNK_LINES || i == len);
        if (flush) {
            /* A blank line ends the chunk before its own line break. */
            size_t to = blank && lstart > from ? lstart - 1 : i;
            long end = blank ? line - 1 : line;
            sqlite3_reset(at);
            sqlite3_bind_text(at, 1, path, -1, SQLITE_STATIC);
            sqlite3_bind_int64(at, 2, start);
            sqlite3_bind_int64(at, 3, end);
            if (sqlite3_step(at) != SQLITE_DONE)
                return -1;
            sqlite3_reset(ins);
            sqlite3_bind_int64(ins, 1, sqlite3_last_insert_rowid(sqlite3_db_handle(at)));
            sqlite3_bind_text(ins, 2, data + from, (int)(to - from), SQLITE_TRANSIENT);
            if (sqlite3_step(ins) != SQLITE_DONE)
                return -1;
            (*added)++;
            start = 0;
        }
        line++;
    }
    return 0;
}

/* A file's chunks out of both tables. */
static void drop_chunks(sqlite3_stmt *del, sqlite3_stmt *del_at, const char *path)
{
    sqlite3_reset(del);
    sqlite3_bind_text(del, 1, path, -1, SQLITE_STATIC);
    sqlite3_step(del);
    sqlite3_reset(del_at);
    sqlite3_bind_text(del_at, 1, path, -1, SQLITE_STATIC);
    sqlite3_step(del_at);
}

int fs_index_refresh(const char *db_path, const knowledge_src *src, fs_refresh_stats *stats,
                     loom_error *err)
{
    fs_refresh_stats dummy;
    stats = stats ? stats : &dummy;
    memset(stats, 0, sizeof *stats);
    sqlite3 *db = db_open(db_path, err);
    if (!db)
        return -1;
    walker w = {.src = src};
    walk_source(&w);
    stats->files_seen = w.n;
    sqlite3_stmt *get = NULL, *put = NULL, *del = NULL, *ins = NULL, *del_file = NULL, *list = NULL;
    sqlite3_stmt *at = NULL, *del_at = NULL;
    int rc = -1;
    if (sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(db, "SELECT mtime, size FROM files WHERE path=?", -1, &get, NULL) ||
        sqlite3_prepare_v2(db, "INSERT OR REPLACE INTO files(path, mtime, size) VALUES(?,?,?)", -1,
                           &put, NULL) ||
        sqlite3_prepare_v2(db, "DELETE FROM chunks WHERE rowid IN "
                               "(SELECT id FROM chunk_at WHERE path=?)", -1, &del, NULL) ||
        sqlite3_prepare_v2(db, "DELETE FROM chunk_at WHERE path=?", -1, &del_at, NULL) ||
        sqlite3_prepare_v2(db, "INSERT INTO chunk_at(path, line_start, line_end) VALUES(?,?,?)",
                           -1, &at, NULL) ||
        sqlite3_prepare_v2(db, "DELETE FROM files WHERE path=?", -1, &del_file, NULL) ||
        sqlite3_prepare_v2(db, "SELECT path FROM files WHERE path >= ? AND path < ?", -1, &list, NULL) ||
        sqlite3_prepare_v2(db, "INSERT INTO chunks(rowid, body) VALUES(?,?)", -1, &ins, NULL)) {
        db_fail(err, db, db_path, "cannot prepare the refresh");
        goto done;
    }
    for (size_t i = 0; i < w.n; i++) {
        walk_file *f = &w.v[i];
        sqlite3_reset(get);
        sqlite3_bind_text(get, 1, f->path, -1, SQLITE_STATIC);
        int known = sqlite3_step(get) == SQLITE_ROW;
        if (known && sqlite3_column_int64(get, 0) == f->mtime && sqlite3_column_int64(get, 1) == f->size)
            continue;
        char *data = NULL;
        size_t len = 0;
        loom_error rerr = {0};
        if (known)
            drop_chunks(del, del_at, f->path);
        if (file_read_all(f->path, &data, &len, &rerr) == 0 && !is_binary(data, len) &&
            insert_chunks(ins, at, f->path, data, len, &stats->chunks_added) != 0) {
            free(data);
            db_fail(err, db, db_path, "cannot add a chunk");
            goto done;
        }
        free(data);
        sqlite3_reset(put);
        sqlite3_bind_text(put, 1, f->path, -1, SQLITE_STATIC);
        sqlite3_bind_int64(put, 2, f->mtime);
        sqlite3_bind_int64(put, 3, f->size);
        sqlite3_step(put);
        stats->files_indexed++;
    }
    /* Files under the source's folders the walk no longer found. */
    for (size_t p = 0; src->paths && src->paths[p]; p++) {
        char lo[4200], hi[4200];
        snprintf(lo, sizeof lo, "%s/", src->paths[p]);
        snprintf(hi, sizeof hi, "%s0", src->paths[p]); /* '0' is the byte after '/' */
        sqlite3_reset(list);
        sqlite3_bind_text(list, 1, lo, -1, SQLITE_STATIC);
        sqlite3_bind_text(list, 2, hi, -1, SQLITE_STATIC);
        char **gone = NULL;
        size_t ngone = 0;
        while (sqlite3_step(list) == SQLITE_ROW) {
            walk_file key = {.path = (char *)sqlite3_column_text(list, 0)};
            if (!w.n || !bsearch(&key, w.v, w.n, sizeof *w.v, walk_cmp)) {
                gone = xrealloc(gone, (ngone + 1) * sizeof *gone);
                gone[ngone++] = xstrdup(key.path);
            }
        }
        for (size_t g = 0; g < ngone; g++) {
            drop_chunks(del, del_at, gone[g]);
            sqlite3_reset(del_file);
            sqlite3_bind_text(del_file, 1, gone[g], -1, SQLITE_STATIC);
            sqlite3_step(del_file);
            free(gone[g]);
            stats->files_dropped++;
        }
        free(gone);
    }
    if (sqlite3_exec(db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK) {
        db_fail(err, db, db_path, "cannot commit the refresh");
        goto done;
    }
    rc = 0;
done:
    if (rc != 0)
        sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
    sqlite3_finalize(get), sqlite3_finalize(put), sqlite3_finalize(del), sqlite3_finalize(ins);
    sqlite3_finalize(del_file), sqlite3_finalize(list), sqlite3_finalize(at);
    sqlite3_finalize(del_at);
    sqlite3_close(db);
    for (size_t i = 0; i < w.n; i++)
        free(w.v[i].path);
    free(w.v);
    return rc;
}

/* --- the query --------------------------------------------------------- */

static const char *const STOP[] = {"a",   "an",  "the",  "is",   "are", "was", "of",  "to",
                                   "in",  "on",  "for",  "and",  "or",  "what", "which", "how",
                                   "does", "do", "it",   "this", "that", "with", "be", "by",
                                   "as",  "at",  "from", "our",  "we",  "when", "where", NULL};

char **fs_query_terms(const char *query)
{
    char **v = xcalloc(FS_TERMS_MAX + 1, sizeof *v);
    size_t n = 0;
    const char *p = query ? query : "";
    while (*p && n < FS_TERMS_MAX) {
        while (*p && !isalnum((unsigned char)*p) && !((unsigned char)*p & 0x80))
            p++;
        const char *s = p;
        while (*p && (isalnum((unsigned char)*p) || ((unsigned char)*p & 0x80) || *p == '_'))
            p++;
        if (p == s)
            continue;
        char *t = xstrndup(s, (size_t)(p - s));
        for (char *c = t; *c; c++)
            *c = (char)tolower((unsigned char)*c);
        bool skip = strlen(t) < 2;
        for (size_t i = 0; STOP[i] && !skip; i++)
            skip = !strcmp(STOP[i], t);
        for (size_t i = 0; i < n && !skip; i++)
            skip = !strcmp(v[i], t);
        if (skip)
            free(t);
        else
            v[n++] = t;
    }
    return v;
}

void fs_hits_free(fs_hit *h, size_t n)
{
    for (size_t i = 0; h && i < n; i++)
        free(h[i].path), free(h[i].text);
    free(h);
}

static int bm25_cmp(const void *a, const void *b)
{
    double x = ((const fs_hit *)a)->bm25, y = ((const fs_hit *)b)->bm25;
    return (x > y) - (x < y);
}

int fs_index_query(const char *db_path, const knowledge_src *src, const char *query, size_t limit,
                   fs_hit **out, size_t *n, loom_error *err)
{
    *out = NULL;
    *n = 0;
    char **terms = fs_query_terms(query);
    if (!terms[0]) {
        strv_free(terms);
        return 0;
    }
    /* Each word quoted (FTS5's string syntax: a '"' doubled), joined by OR. */
    loom_str m = LOOM_STR_INIT;
    for (size_t i = 0; terms[i]; i++) {
        str_puts(&m, i ? " OR \"" : "\"");
        for (const char *c = terms[i]; *c; c++)
            str_puts(&m, *c == '"' ? "\"\"" : (char[2]){*c, 0});
        str_putc(&m, '"');
    }
    strv_free(terms);
    sqlite3 *db = db_open(db_path, err);
    if (!db) {
        str_free(&m);
        return -1;
    }
    sqlite3_stmt *q = NULL, *mt = NULL;
    int rc = -1;
    if (sqlite3_prepare_v2(db,
                           "SELECT a.path, a.line_start, a.line_end, c.body, c.rank FROM chunks c "
                           "JOIN chunk_at a ON a.id = c.rowid WHERE chunks MATCH ? "
                           "AND a.path >= ? AND a.path < ? ORDER BY c.rank LIMIT ?",
                           -1, &q, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(db, "SELECT mtime FROM files WHERE path=?", -1, &mt, NULL) != SQLITE_OK) {
        db_fail(err, db, db_path, "cannot prepare the query");
        goto done;
    }
    size_t cap = 0;
    int step = SQLITE_DONE;
    /* Each of the source's paths is a range of the index's paths ('0' is
     * the byte after '/'); the check below drops neighbours like "docs-old". */
    for (size_t p = 0; src->paths && src->paths[p] && step == SQLITE_DONE; p++) {
        const char *root = src->paths[p];
        size_t l = strlen(root);
        char *hi = xmalloc(l + 2);
        memcpy(hi, root, l);
        hi[l] = '0', hi[l + 1] = 0;
        sqlite3_reset(q);
        sqlite3_bind_text(q, 1, m.ptr, (int)m.len, SQLITE_STATIC);
        sqlite3_bind_text(q, 2, root, -1, SQLITE_STATIC);
        sqlite3_bind_text(q, 3, hi, -1, SQLITE_STATIC);
        sqlite3_bind_int64(q, 4, (sqlite3_int64)limit);
        while ((step = sqlite3_step(q)) == SQLITE_ROW) {
            const char *path = (const char *)sqlite3_column_text(q, 0);
            if (strncmp(path, root, l) || (path[l] != '/' && path[l] != 0))
                continue;
            if (*n == cap) {
                cap = cap ? cap * 2 : 16;
                *out = xrealloc(*out, cap * sizeof **out);
            }
            fs_hit *h = &(*out)[(*n)++];
            memset(h, 0, sizeof *h);
            h->path = xstrdup(path);
            h->line_start = (long)sqlite3_column_int64(q, 1);
            h->line_end = (long)sqlite3_column_int64(q, 2);
            h->text = xstrdup((const char *)sqlite3_column_text(q, 3));
            h->bm25 = sqlite3_column_double(q, 4);
            sqlite3_reset(mt);
            sqlite3_bind_text(mt, 1, path, -1, SQLITE_STATIC);
            if (sqlite3_step(mt) == SQLITE_ROW)
                h->mtime_s = sqlite3_column_int64(mt, 0);
        }
        free(hi);
    }
    if (step != SQLITE_DONE) {
        db_fail(err, db, db_path, "the query failed");
        fs_hits_free(*out, *n);
        *out = NULL, *n = 0;
        goto done;
    }
    /* Several paths: the best `limit` of them all. */
    if (*n > 1)
        qsort(*out, *n, sizeof **out, bm25_cmp);
    while (*n > limit) {
        (*n)--;
        free((*out)[*n].path), free((*out)[*n].text);
    }
    rc = 0;
done:
    sqlite3_finalize(q), sqlite3_finalize(mt);
    sqlite3_close(db);
    str_free(&m);
    return rc;
}
