/* fold.h — results shown folded ("… +42 lines (Ctrl-O to expand)") and
 * kept whole, so the person can see them: Ctrl-O at the prompt prints the
 * last one whole (pressed again, the one before it), /expand N the Nth-last.
 *
 * What is kept is terminal text already made safe (term_put_clipped, the
 * diff and tool views): it is printed as is. The last FOLD_KEEP results
 * are kept, FOLD_MAX_BYTES each. Main thread only (the run view and the
 * line editor both run there). */
#ifndef LOOM_CLI_FOLD_H
#define LOOM_CLI_FOLD_H

#include <histedit.h>
#include <stdbool.h>
#include <stddef.h>

#include "base/str.h"
#include "surfaces/cli/slash_host.h"
#include "surfaces/cli/term_out.h"

#define FOLD_KEEP 50
#define FOLD_MAX_BYTES ((size_t)1 << 20)

/* Keeps a folded result: title (one line, e.g. "Bash(make test)") and body
 * (safe terminal text, '\n'-ended lines; copied, cut at FOLD_MAX_BYTES).
 * Returns its number, 1 for the newest. */
size_t fold_push(const char *title, const char *body, size_t n);
/* How many are kept. */
size_t fold_count(void);
/* The Nth-last (1 = the newest) or NULL; *title gets its title. */
const char *fold_get(size_t nth_last, const char **title);
/* Appends the fold line "     … +N lines (Ctrl-O to expand)" in dim. */
void fold_line(const term_out *t, loom_str *out, size_t hidden_lines, const char *more);
/* Prints the Nth-last whole; false (and a message) when there is none. */
bool fold_print(term_out *t, size_t nth_last);
/* /expand [N] (a row of slash.c's table). */
void fold_expand_cmd(slash_host *h, const char *args);
/* The line editor's Ctrl-O ("loom-expand"): prints the last folded result
 * whole, the one before it on the next press, and so on round; a new
 * folded result starts again from the newest. */
unsigned char fold_key(EditLine *el, int ch);
/* Drops every kept result (end of the REPL, tests). */
void fold_clear(void);

#endif
