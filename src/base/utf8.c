/* utf8.c — UTF-8 sequence checks and repair. */
#include "base/utf8.h"

#include "base/str.h"

size_t utf8_seq_len(const unsigned char *s, size_t n)
{
    unsigned char c = s[0];
    if (c < 0x80)
        return 1;
    size_t len;
    unsigned lo = 0x80, hi = 0xBF;
    if (c >= 0xC2 && c <= 0xDF) {
        len = 2;
    } else if (c >= 0xE0 && c <= 0xEF) {
        len = 3;
        if (c == 0xE0)
            lo = 0xA0;
        else if (c == 0xED)
            hi = 0x9F; /* surrogates */
    } else if (c >= 0xF0 && c <= 0xF4) {
        len = 4;
        if (c == 0xF0)
            lo = 0x90;
        else if (c == 0xF4)
            hi = 0x8F; /* past U+10FFFF */
    } else {
        return 0;
    }
    if (n < len || s[1] < lo || s[1] > hi)
        return 0;
    for (size_t i = 2; i < len; i++)
        if (s[i] < 0x80 || s[i] > 0xBF)
            return 0;
    return len;
}

char *utf8_sanitize(const char *s, size_t n, size_t *out_len)
{
    loom_str clean = LOOM_STR_INIT;
    str_reserve(&clean, n + 1);
    const unsigned char *p = (const unsigned char *)s;
    while (n) {
        size_t k = utf8_seq_len(p, n);
        if (k) {
            str_append(&clean, p, k);
        } else {
            str_append(&clean, "\xEF\xBF\xBD", 3);
            k = 1;
        }
        p += k;
        n -= k;
    }
    if (out_len)
        *out_len = clean.len;
    str_puts(&clean, "");
    return str_steal(&clean);
}
