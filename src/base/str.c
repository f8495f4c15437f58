/* str.c — loom_str, the growable byte string, and the abort-on-OOM allocators
 * everything else in Loom builds on. */
#include "base/str.h"

#include <assert.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Running out of memory is not an error Loom can report usefully: the report
 * itself would need memory. Say why we stop, then stop. */
static _Noreturn void oom(size_t n)
{
    fprintf(stderr, "loom: out of memory (allocating %zu bytes)\n", n);
    abort();
}

void *xmalloc(size_t n)
{
    /* malloc(0) may return NULL legitimately; never hand that out. */
    void *p = malloc(n ? n : 1);
    if (!p)
        oom(n);
    return p;
}

void *xcalloc(size_t n, size_t size)
{
    if (n == 0 || size == 0)
        n = size = 1;
    void *p = calloc(n, size);
    if (!p)
        oom(size && n > SIZE_MAX / size ? SIZE_MAX : n * size);
    return p;
}

void *xrealloc(void *p, size_t n)
{
    void *q = realloc(p, n ? n : 1);
    if (!q)
        oom(n);
    return q;
}

char *xstrdup(const char *s)
{
    if (!s)
        return NULL;
    return xstrndup(s, strlen(s));
}

char *xstrndup(const char *s, size_t n)
{
    if (!s)
        return NULL;
    size_t len = strnlen(s, n);
    char *p = xmalloc(len + 1);
    memcpy(p, s, len);
    p[len] = '\0';
    return p;
}

void strv_free(char **v)
{
    if (!v)
        return;
    for (char **p = v; *p; p++)
        free(*p);
    free(v);
}

void str_reserve(loom_str *s, size_t extra)
{
    /* +1 keeps room for the terminating NUL the header promises. */
    if (extra > SIZE_MAX - s->len - 1)
        oom(SIZE_MAX);
    size_t need = s->len + extra + 1;
    if (need <= s->cap)
        return;
    size_t cap = s->cap ? s->cap : 64;
    while (cap < need)
        cap = cap > SIZE_MAX / 2 ? need : cap * 2;
    s->ptr = xrealloc(s->ptr, cap);
    s->cap = cap;
    assert(s->len + extra < s->cap); /* room for the bytes and the NUL */
}

void str_append(loom_str *s, const void *data, size_t n)
{
    assert(data || n == 0);
    assert(s->len <= s->cap);
    str_reserve(s, n);
    if (n)
        memcpy(s->ptr + s->len, data, n);
    s->len += n;
    s->ptr[s->len] = '\0';
}

void str_puts(loom_str *s, const char *cstr)
{
    str_append(s, cstr, strlen(cstr));
}

void str_putc(loom_str *s, char c)
{
    str_append(s, &c, 1);
}

void str_printf(loom_str *s, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    str_vprintf(s, fmt, ap);
    va_end(ap);
}

void str_vprintf(loom_str *s, const char *fmt, va_list ap)
{
    /* First try into whatever room is left; most messages fit, saving a
     * second formatting pass. */
    va_list ap2;
    va_copy(ap2, ap);
    str_reserve(s, 0);
    size_t room = s->cap - s->len;
    int n = vsnprintf(s->ptr + s->len, room, fmt, ap);
    if (n < 0) {
        /* An encoding error: keep the string as it was, terminated. */
        s->ptr[s->len] = '\0';
        va_end(ap2);
        return;
    }
    if ((size_t)n >= room) {
        str_reserve(s, (size_t)n);
        vsnprintf(s->ptr + s->len, (size_t)n + 1, fmt, ap2);
    }
    va_end(ap2);
    s->len += (size_t)n;
    assert(s->len < s->cap && s->ptr[s->len] == '\0');
}

void str_clear(loom_str *s)
{
    s->len = 0;
    if (s->ptr)
        s->ptr[0] = '\0';
}

void str_consume(loom_str *s, size_t n)
{
    if (n >= s->len) {
        str_clear(s);
        return;
    }
    memmove(s->ptr, s->ptr + n, s->len - n);
    s->len -= n;
    s->ptr[s->len] = '\0';
}

const char *str_cstr(const loom_str *s)
{
    return s->ptr ? s->ptr : "";
}

char *str_steal(loom_str *s)
{
    /* Callers expect a C string even from an empty loom_str. */
    char *p = s->ptr ? s->ptr : xstrdup("");
    s->ptr = NULL;
    s->len = s->cap = 0;
    return p;
}

void str_free(loom_str *s)
{
    free(s->ptr);
    s->ptr = NULL;
    s->len = s->cap = 0;
}

void str_cut_middle(loom_str *text, size_t cap, const char *what)
{
    if (text->len <= cap)
        return;
    size_t head = cap / 2, tail = cap - head;
    while (head > 0 && ((unsigned char)text->ptr[head] & 0xC0) == 0x80)
        head--;
    size_t tail_start = text->len - tail;
    while (tail_start < text->len && ((unsigned char)text->ptr[tail_start] & 0xC0) == 0x80)
        tail_start++;
    loom_str out = LOOM_STR_INIT;
    str_append(&out, text->ptr, head);
    str_printf(&out, "\n\n[… %zu characters cut from the middle %s …]\n\n",
               tail_start - head, what);
    str_append(&out, text->ptr + tail_start, text->len - tail_start);
    str_free(text);
    *text = out;
}

int str_hex_digit(int c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

void str_truncate(loom_str *s, size_t len)
{
    if (len >= s->len)
        return;
    s->len = len;
    s->ptr[len] = '\0';
}

void str_put_base64(loom_str *out, const void *data, size_t len)
{
    static const char tab[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    const unsigned char *p = data;
    if (!len)
        return;
    str_reserve(out, (len + 2) / 3 * 4 + 1);
    for (size_t i = 0; i < len; i += 3) {
        uint32_t v = (uint32_t)p[i] << 16;
        if (i + 1 < len)
            v |= (uint32_t)p[i + 1] << 8;
        if (i + 2 < len)
            v |= p[i + 2];
        char q[4] = {tab[v >> 18 & 63], tab[v >> 12 & 63], i + 1 < len ? tab[v >> 6 & 63] : '=',
                     i + 2 < len ? tab[v & 63] : '='};
        str_append(out, q, 4);
    }
}
