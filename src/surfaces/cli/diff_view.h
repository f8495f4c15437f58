/* diff_view.h — an Edit's or Write's change as a coloured unified diff:
 * line numbers, removed lines red, added lines green, a few lines of
 * context; without colour the same lines marked by "-" and "+" only.
 *
 * The diff comes as Claude Code's structuredPatch (base/diff.h): from the
 * result's raw metadata, or — for the approval question, before anything
 * is written — worked out here from the call's input and the file as it is
 * now. Main thread (the run view); the file read is bounded. */
#ifndef LOOM_CLI_DIFF_VIEW_H
#define LOOM_CLI_DIFF_VIEW_H

#include <stdbool.h>
#include <stddef.h>

#include "base/json.h"
#include "base/str.h"
#include "surfaces/cli/term_out.h"

/* Files larger than this are not read to show a diff. */
#define DIFF_VIEW_MAX_FILE ((size_t)4 << 20)

/* The patch an Edit, MultiEdit or Write call would make (new reference),
 * or NULL when the tool makes none or it cannot be worked out. cwd
 * resolves a relative path. *in_file (may be NULL) is false when the edit
 * could not be placed in the file as it is now (the text to replace is not
 * there, the file cannot be read): the patch is then old_string against
 * new_string alone, numbered from 1. */
json_t *diff_view_patch_for(const char *tool, const json_t *input, const char *cwd,
                            bool *in_file);
/* Appends the patch's lines to out, each after indent: at most max_lines
 * (0: all); *hidden (may be NULL) gets how many were left out. cols: the
 * terminal's width. */
void diff_view_render(const term_out *t, loom_str *out, const json_t *patch, const char *indent,
                      int cols, size_t max_lines, size_t *hidden);
/* Lines added and removed by the patch. */
void diff_view_counts(const json_t *patch, long *added, long *removed);

#endif
