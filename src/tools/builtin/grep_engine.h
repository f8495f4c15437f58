/* grep_engine.h — what the Grep tool (grep.c) shares with its two search
 * engines, ripgrep (grep_rg.c) and PCRE2 (grep_pcre.c): the query, and the
 * per-file records both engines fill so that one formatter turns them
 * into the same text. Private to tools/builtin/grep*.c. A query and its
 * results belong to the one tool call that made them.
 */
#ifndef LOOM_TOOLS_BUILTIN_GREP_ENGINE_H
#define LOOM_TOOLS_BUILTIN_GREP_ENGINE_H

#include <stdbool.h>
#include <stddef.h>
#include <time.h>

#include "base/cancel.h"
#include "base/str.h"
#include "policy/secrets.h"

typedef enum { MODE_FILES, MODE_CONTENT, MODE_COUNT } grep_mode;

typedef struct {
    long no;        /* 1-based */
    bool match;
    char *text;     /* without the line's '\n' */
    size_t len;
} gline;

typedef struct {
    char *rel;      /* relative to the search root */
    struct timespec mtime;
    gline *lines;
    size_t n, cap;
    size_t nmatch;  /* matching lines */
} gfile;

typedef struct {
    gfile *files;
    size_t n, cap;
    bool input_truncated; /* the engine's output was cut: results incomplete */
} gresults;

typedef struct {
    const char *pattern;
    char *root;          /* absolute directory the search runs in */
    char *single;        /* the file's name in root when path named a file */
    char **globs;        /* NULL-terminated, or NULL */
    const char *type;
    grep_mode mode;
    bool icase, line_numbers, multiline;
    long before, after;
    long head_limit;     /* 0 = none */
    long offset;
    const loom_cancel *cancel;
    long timeout_ms;
    size_t file_cap;     /* bytes read of one file at most (GREP_*FILE_CAP) */
    secrets_fence fence; /* credential stores beneath root: never searched */
} grep_query;

/* A new record for the file rel (rel_len bytes), appended to res. */
gfile *grep_results_add(gresults *res, const char *rel, size_t rel_len);
/* One line of f: a match, or context around one. text is copied. */
void grep_file_add_line(gfile *f, long no, bool match, const char *text, size_t len);
void grep_results_free(gresults *res);

/* Reads at most cap bytes of path into *buf (caller frees), giving up when
 * cancel fires. 0, or -1 when the file cannot be read. */
int grep_slurp(const char *path, size_t cap, const loom_cancel *cancel, char **buf,
               size_t *len);

/* The engines: each fills res for q; 0, or -1 with errmsg saying why (a
 * bad pattern, rg failing). rg is the program's absolute path. */
int grep_run_pcre2(const grep_query *q, gresults *res, loom_str *errmsg);
int grep_run_rg(const char *rg, const grep_query *q, gresults *res, loom_str *errmsg);
/* name's absolute path on $PATH, NULL when not there; caller frees. */
char *grep_find_in_path(const char *name);

#endif
