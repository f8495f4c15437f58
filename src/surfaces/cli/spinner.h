/* spinner.h — the "⠋ Thinking… 3s · 1.2k tokens" line the REPL shows while
 * the model works or a tool runs.
 *
 * A thread redraws it about ten times a second on one terminal line. Every
 * writer to that terminal shares one mutex with the spinner: before writing,
 * take the lock and call spinner_erase_locked, so text never lands in the
 * middle of a spinner frame; the next tick draws the spinner again below
 * it. Everything is a no-op on a NULL spinner (the terminal is not a tty). */
#ifndef LOOM_CLI_SPINNER_H
#define LOOM_CLI_SPINNER_H

#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>

typedef struct spinner spinner;

/* NULL when out is not a terminal. color: the frame in color, the rest dim.
 * lock is borrowed and must outlive the spinner. */
spinner *spinner_new(FILE *out, pthread_mutex_t *lock, bool color);
void spinner_free(spinner *sp);
/* Starts showing label (copied); the clock starts now, tokens at 0. */
void spinner_begin(spinner *sp, const char *label);
/* A new label; the clock and the count go on. */
void spinner_label(spinner *sp, const char *label);
/* Lines shown under the spinner's own (the sub-agent tree): '\n'-joined,
 * each already terminal-safe and cut to the width; NULL or "" for none.
 * Copied; erased and drawn with the frame. */
void spinner_below(spinner *sp, const char *lines);
/* The output tokens so far. */
void spinner_tokens(spinner *sp, long long tokens);
/* Stops showing (erases the line). Takes the lock: do not hold it. */
void spinner_end(spinner *sp);
/* Erases the frame if one is on screen; call with the lock held. */
void spinner_erase_locked(spinner *sp);
/* Draws the frame now if the spinner is showing (after a write, so it does
 * not vanish until the next tick); call with the lock held. */
void spinner_draw_locked(spinner *sp);

/* "1.2k" / "950": tokens as the spinner and /cost show them. */
void spinner_format_count(long long n, char *buf, size_t size);

#endif
