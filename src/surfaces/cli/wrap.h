/* wrap.h — terminal text broken into lines that fit the terminal: at word
 * boundaries (spaces), a word longer than the line broken hard, never
 * inside a UTF-8 character or an escape sequence. A broken line goes on
 * under its text: after its own indentation and its list marker ("• ",
 * "2. ", a quote's "│ "). A style that is on where a line breaks is ended
 * before the break and taken up again after it, so no style crosses a
 * newline. Pure functions, any thread. */
#ifndef LOOM_CLI_WRAP_H
#define LOOM_CLI_WRAP_H

#include <stddef.h>

#include "base/str.h"

/* Appends s[0..n) to out with every line wrapped to width columns (<= 0:
 * as is). The input's own newlines are kept. */
void wrap_text(const char *s, size_t n, int width, loom_str *out);

#endif
