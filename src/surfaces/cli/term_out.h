/* term_out.h — Loom's writes to the terminal: text in a tone, made
 * terminal-safe, serialized with the spinner.
 *
 * Output goes to stdout, the spinner to stderr; both are normally the same
 * terminal, so every write holds `lock` and erases the spinner first (see
 * spinner.h). Any thread may write; the struct itself is set up once by
 * the REPL before other threads start. */
#ifndef LOOM_CLI_TERM_OUT_H
#define LOOM_CLI_TERM_OUT_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

#include "base/str.h"
#include "surfaces/cli/spinner.h"

typedef struct term_out {
    pthread_mutex_t lock; /* every write to the terminal holds it */
    bool color;           /* stdout is a terminal and NO_COLOR is unset */
    spinner *spin;        /* NULL when stderr is not a terminal */
} term_out;

typedef enum {
    TONE_PLAIN, TONE_DIM, TONE_BOLD, TONE_RED, TONE_YELLOW, TONE_GREEN,
    TONE_ALERT, /* bold red: a critical heartbeat event */
} term_tone;

/* Writes s[0..n) as is (the caller made it safe), erasing the spinner
 * first and drawing it again below output that ends a line. */
void term_write(term_out *t, const char *s, size_t n);
/* Appends text in a tone to s; the tone never outlives the text. */
void term_put_tone(const term_out *t, loom_str *s, term_tone tone, const char *text, size_t n);
/* The text is made terminal-safe (base/termsafe.h): escapes in it show as
 * "^[…"; only the tone's own codes reach the terminal. */
void term_printf(term_out *t, term_tone tone, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Loom's own control sequence (the screen clear of /clear), written as is. */
void term_write_control(term_out *t, const char *seq);
/* Appends the first line of s[0..n) to out, cut to cols characters with
 * "…" (cols <= 0: not cut); control characters are shown in their visible
 * form (^[, ^M, <U+202E>), so text from outside (a tool's output, a file
 * name) cannot restyle the terminal or hide part of itself. */
void term_put_clipped(loom_str *out, const char *s, size_t n, int cols);
/* Terminal columns of stdout; not a terminal: COLUMNS, else 80. */
int term_columns(void);

#endif
