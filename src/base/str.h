/* str.h — loom_str, a growable NUL-terminated byte string.
 *
 * The buffer is always NUL-terminated once anything has been appended, so
 * `s.ptr` can be passed to C string functions; `len` excludes the NUL and the
 * string may hold NUL bytes. Allocation failure aborts: Loom cannot continue
 * meaningfully without memory, and checking every append hides real errors.
 */
#ifndef LOOM_BASE_STR_H
#define LOOM_BASE_STR_H

#include <stdarg.h>
#include <stddef.h>

typedef struct loom_str {
    char *ptr;   /* NULL until the first append */
    size_t len;
    size_t cap;
} loom_str;

#define LOOM_STR_INIT {NULL, 0, 0}

void str_reserve(loom_str *s, size_t extra);
void str_append(loom_str *s, const void *data, size_t n);
void str_puts(loom_str *s, const char *cstr);
void str_putc(loom_str *s, char c);
void str_printf(loom_str *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void str_vprintf(loom_str *s, const char *fmt, va_list ap);
void str_clear(loom_str *s);              /* len = 0, keeps the buffer */
void str_consume(loom_str *s, size_t n);  /* drops the first n bytes */
void str_truncate(loom_str *s, size_t len); /* keeps the first len bytes (none cut when len >= s->len) */
const char *str_cstr(const loom_str *s);  /* "" when empty, never NULL */
/* Hands the buffer to the caller (free() it); s is reset to empty. */
char *str_steal(loom_str *s);
/* Keeps the first and last cap/2 bytes of s (cut at UTF-8 character
 * boundaries) with a note "[… N characters cut from the middle <what> …]"
 * between them; nothing happens when s->len <= cap. */
void str_cut_middle(loom_str *s, size_t cap, const char *what);
void str_free(loom_str *s);

/* Appends data[0..len) in base64 (RFC 4648, with '=' padding): the one
 * encoder behind image blocks and HTTP Basic credentials. */
void str_put_base64(loom_str *out, const void *data, size_t len);

/* The value of the hex digit c (0-9, a-f, A-F), -1 for anything else: the
 * one hex decoder behind chunk sizes, %XX escapes, &#x…; references, \u
 * and \x escapes. */
int str_hex_digit(int c);

/* Loom's one out-of-memory policy (loom.h says it to callers): every
 * allocation in src/ goes through these (jansson's too: base/json.c), and a
 * failure writes "loom: out of memory (allocating N bytes)" to stderr and
 * aborts. No caller checks for NULL from them; none calls malloc, calloc,
 * realloc, strdup or strndup directly. */
void *xmalloc(size_t n);
void *xcalloc(size_t n, size_t size);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);   /* NULL in, NULL out */
char *xstrndup(const char *s, size_t n);

/* Frees a NULL-terminated vector of strings and the strings (NULL is fine). */
void strv_free(char **v);

#endif
