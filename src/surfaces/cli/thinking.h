/* thinking.h — the model's thinking (token.delta on the "reasoning"
 * channel), shown dimmed once it is complete: collapsed to its first line
 * and "(thinking, N lines; Ctrl-O)" — the whole kept for Ctrl-O and
 * /expand (fold.h) — or, with --verbose, whole. Main thread only. */
#ifndef LOOM_CLI_THINKING_H
#define LOOM_CLI_THINKING_H

#include <stdbool.h>
#include <stddef.h>

#include "base/str.h"
#include "surfaces/cli/term_out.h"

/* Thinking kept per model call; more is dropped (the session has it). */
#define THINKING_KEEP ((size_t)256 << 10)

typedef struct thinking_view {
    loom_str text;
    size_t dropped;
} thinking_view;

void thinking_feed(thinking_view *tv, const char *s, size_t n);
/* Appends what was gathered, if anything, to out and starts again. width:
 * the terminal's columns. */
void thinking_flush(thinking_view *tv, const term_out *t, bool verbose, int width, loom_str *out);
void thinking_free(thinking_view *tv);

#endif
