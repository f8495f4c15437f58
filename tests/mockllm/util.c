/* util.c — small helpers for mockllm: abort-on-OOM allocation, a growable
 * buffer, UTF-8 aware splitting and cleaning, and shutdown-aware sleeping. */
#include "mockllm.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

atomic_bool mock_stopping;

static _Noreturn void oom(size_t n)
{
    fprintf(stderr, "mockllm: out of memory (allocating %zu bytes)\n", n);
    abort();
}

void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p)
        oom(n);
    return p;
}

void *xcalloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size ? size : 1);
    if (!p)
        oom(n * size);
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
    size_t n = strlen(s) + 1;
    char *d = xmalloc(n);
    memcpy(d, s, n);
    return d;
}

char *xprintf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0)
        return xstrdup("");
    char *s = xmalloc((size_t)n + 1);
    va_start(ap, fmt);
    vsnprintf(s, (size_t)n + 1, fmt, ap);
    va_end(ap);
    return s;
}

void mbuf_add(mbuf *b, const char *s, size_t n)
{
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->len + n + 1)
            cap *= 2;
        b->p = xrealloc(b->p, cap);
        b->cap = cap;
    }
    if (n)
        memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = '\0';
}

void mbuf_adds(mbuf *b, const char *s)
{
    mbuf_add(b, s, strlen(s));
}

size_t utf8_piece_len(const char *s, size_t len, size_t want)
{
    size_t n = want < len ? want : len;
    if (n == 0 && len > 0)
        n = 1;
    /* Never end a piece inside a multi-byte character: each delta is a JSON
     * string and must be valid UTF-8 on its own, as real APIs guarantee. */
    while (n < len && ((unsigned char)s[n] & 0xC0) == 0x80)
        n++;
    return n;
}

/* Length of a valid UTF-8 sequence at s (at most len bytes), or 0. */
static size_t utf8_valid_seq(const unsigned char *s, size_t len)
{
    unsigned c = s[0];
    size_t n;
    unsigned min;
    if (c < 0x80)
        return 1;
    if (c >= 0xC2 && c <= 0xDF) {
        n = 2;
        min = 0x80;
    } else if (c >= 0xE0 && c <= 0xEF) {
        n = 3;
        min = 0x800;
    } else if (c >= 0xF0 && c <= 0xF4) {
        n = 4;
        min = 0x10000;
    } else {
        return 0;
    }
    if (len < n)
        return 0;
    unsigned cp = c & (0x3F >> (n - 1));
    for (size_t i = 1; i < n; i++) {
        if ((s[i] & 0xC0) != 0x80)
            return 0;
        cp = (cp << 6) | (s[i] & 0x3F);
    }
    if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
        return 0;
    return n;
}

char *utf8_sanitize(const char *s, size_t len, size_t *out_len)
{
    mbuf b = {0};
    const unsigned char *u = (const unsigned char *)s;
    size_t i = 0;
    while (i < len) {
        size_t n = utf8_valid_seq(u + i, len - i);
        if (n) {
            mbuf_add(&b, s + i, n);
            i += n;
        } else {
            mbuf_adds(&b, "\xEF\xBF\xBD");
            i++;
        }
    }
    if (!b.p)
        b.p = xstrdup("");
    *out_len = b.len;
    return b.p;
}

void mock_sleep_ms(long ms)
{
    /* Sleep in short slices so a shutdown never waits out a long stall. */
    while (ms > 0 && !atomic_load(&mock_stopping)) {
        long slice = ms < 20 ? ms : 20;
        struct timespec ts = {slice / 1000, (slice % 1000) * 1000000L};
        nanosleep(&ts, NULL);
        ms -= slice;
    }
}

double mock_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + (double)(ts.tv_nsec / 1000) / 1e6;
}
