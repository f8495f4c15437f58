/* diff.h — a line diff (Myers' O(ND) algorithm) of two texts, grouped into
 * unified-diff hunks with a few lines of context, and the hunks as Claude
 * Code's `structuredPatch` JSON ({oldStart, oldLines, newStart, newLines,
 * lines: [" same", "-old", "+new"]}).
 *
 * Lines are split on '\n' (a CR before it stays part of the line); a last
 * line without its newline is a line. The texts are borrowed: the result's
 * lines point into them. Past DIFF_MAX_EDITS differences (after the common
 * head and tail are set aside) the diff stops looking for the shortest
 * script and shows the rest as removed-then-added, so a rewrite of a big
 * file costs linear time and bounded memory. Pure functions, any thread. */
#ifndef LOOM_BASE_DIFF_H
#define LOOM_BASE_DIFF_H

#include <stdbool.h>
#include <stddef.h>

#include "base/json.h"

#define DIFF_MAX_EDITS 1000

typedef struct diff_line {
    char op;            /* ' ' same, '-' removed, '+' added */
    const char *s;      /* the line, without its '\n' */
    size_t n;
    long old_no;        /* 1-based line in the old text; 0 for '+' */
    long new_no;        /* 1-based line in the new text; 0 for '-' */
} diff_line;

typedef struct diff_hunk {
    long old_start, old_lines, new_start, new_lines;
    size_t first, count; /* lines[first .. first+count) */
} diff_hunk;

typedef struct diff_result {
    diff_line *lines;    /* the whole edit script, every line of both texts */
    size_t n_lines;
    diff_hunk *hunks;    /* the changes with `context` lines around them */
    size_t n_hunks;
    long added, removed;
    bool gave_up;        /* more than DIFF_MAX_EDITS: not the shortest script */
} diff_result;

/* Diffs a[0..an) against b[0..bn); context lines (>= 0) around each change.
 * Identical texts give no hunks. */
void diff_texts(const char *a, size_t an, const char *b, size_t bn, int context,
                diff_result *out);
void diff_result_free(diff_result *d);

/* The hunks as a structuredPatch array (new reference). max_lines > 0:
 * NULL when the hunks hold more lines than that (too big to keep). */
json_t *diff_structured_patch(const diff_result *d, size_t max_lines);

/* Appends the hunks as unified-diff text ("@@ -a,b +c,d @@" and the
 * lines, with "\\ No newline at end of file" after a last line that has
 * none): a_lines/b_lines are the texts' line counts and a_nl/b_nl whether
 * they end with a newline. The file headers are the caller's. */
struct loom_str;
void diff_unified_text(const diff_result *d, long a_lines, bool a_nl, long b_lines, bool b_nl,
                       struct loom_str *out);
/* The number of lines of a text as diff_texts counts them. */
long diff_count_lines(const char *s, size_t n);

#endif
