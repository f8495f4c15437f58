/* utf8.h — UTF-8 validity, as jansson judges it: text from models, tools
 * and files is not always valid, and JSON must be. */
#ifndef LOOM_BASE_UTF8_H
#define LOOM_BASE_UTF8_H

#include <stddef.h>

/* Length (1-4) of the valid UTF-8 sequence at s, with at most n bytes
 * available; 0 when the bytes there are not one (overlongs, surrogates and
 * values past U+10FFFF are invalid). n must be at least 1. */
size_t utf8_seq_len(const unsigned char *s, size_t n);
/* A copy of the n bytes with every invalid sequence replaced by U+FFFD;
 * NUL-terminated, *out_len (may be NULL) gets its length. Caller frees. */
char *utf8_sanitize(const char *s, size_t n, size_t *out_len);

#endif
