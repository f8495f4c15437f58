/* termsafe.h — text from outside (the model, a tool, a file name, a hook,
 * a server's error message) made safe to print on a terminal.
 *
 * A terminal obeys control characters: ESC and the 8-bit CSI (0x9b) start
 * sequences that set the window title, clear the screen or write the
 * clipboard (OSC 52); a lone CR moves back to overwrite what was shown; a
 * bidirectional override (U+202E) reorders what follows so a command reads
 * as another. Everything printed that did not come from Loom's own
 * renderer goes through here first, and each such character comes out as
 * visible text, so the person sees that something was there:
 *
 *   C0 controls (but \n and \t), DEL   caret form: ESC → "^[", BEL → "^G",
 *                                      DEL → "^?"
 *   CR                                 CR LF → LF; a lone CR → "^M"
 *   C1 controls U+0080–U+009F          "<U+009B>"
 *   bidi controls U+202A–U+202E,       "<U+202E>"
 *   U+2066–U+2069, U+200E, U+200F,
 *   U+061C; U+2028, U+2029
 *   bytes that are not UTF-8           U+FFFD (a raw 0x9b byte is one)
 *
 * Text arrives in pieces (stream deltas), and a piece may end inside a
 * UTF-8 character or right after a CR: a termsafe stream holds those few
 * bytes back until the next piece says what they are.
 *
 * Threading: a stream is owned by one thread; the one-shot helpers are
 * reentrant. */
#ifndef LOOM_BASE_TERMSAFE_H
#define LOOM_BASE_TERMSAFE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "base/str.h"

typedef struct termsafe {
    unsigned char held[4];  /* an unfinished UTF-8 character */
    unsigned n_held, need;  /* bytes held, bytes the character needs in all */
    bool cr;                /* a CR waits to see whether LF follows */
} termsafe;

#define TERMSAFE_INIT {{0}, 0, 0, false}

/* Appends the safe form of s[0..n) to out; bytes whose meaning depends on
 * what follows are held in t. */
void termsafe_feed(termsafe *t, const char *s, size_t n, loom_str *out);
/* The end of the text: what is held is resolved (an unfinished character
 * becomes U+FFFD, a CR "^M") and t is reset. */
void termsafe_finish(termsafe *t, loom_str *out);

/* One whole string: feed and finish. */
void termsafe_append(loom_str *out, const char *s, size_t n);
/* The safe form of s as a new string (NULL in, NULL out). Caller frees. */
char *termsafe_dup(const char *s);
/* A stream whose bytes reach `to` in their safe form, as one termsafe
 * stream (a character split across writes stays whole); fclose finishes it
 * and leaves `to` open. For a command that prints a whole report of
 * outside text with fprintf. NULL when out of memory. */
FILE *termsafe_fopen(FILE *to);
/* True when s[0..n) needs no change. */
bool termsafe_is_clean(const char *s, size_t n);

#endif
