/* fuzz_termsafe.c — libFuzzer target for the terminal sanitizer: whatever
 * the bytes, the output holds no control character but newline and tab, no
 * C1 control or bidi override, and is valid UTF-8; and the output does not
 * depend on where the stream was cut (the first input byte picks the cut,
 * and small inputs are also fed byte by byte). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/str.h"
#include "base/termsafe.h"
#include "base/utf8.h"

static void feed_cut(const char *s, size_t n, size_t cut, loom_str *out)
{
    termsafe t = TERMSAFE_INIT;
    termsafe_feed(&t, s, cut, out);
    termsafe_feed(&t, s + cut, n - cut, out);
    termsafe_finish(&t, out);
}

static void check_safe(const loom_str *o)
{
    const unsigned char *p = (const unsigned char *)str_cstr(o);
    for (size_t i = 0; i < o->len; i++) {
        unsigned char c = p[i];
        if ((c < 0x20 && c != '\n' && c != '\t') || c == 0x7f)
            abort();
        /* C1 as UTF-8 (C2 80–9F), bidi overrides and isolates (E2 80 AA–AE,
         * E2 81 A6–A9), and marks (E2 80 8E/8F). */
        if (c == 0xc2 && i + 1 < o->len && p[i + 1] >= 0x80 && p[i + 1] <= 0x9f)
            abort();
        if (c == 0xe2 && i + 2 < o->len && p[i + 1] == 0x80 &&
            ((p[i + 2] >= 0xaa && p[i + 2] <= 0xae) || p[i + 2] == 0x8e || p[i + 2] == 0x8f))
            abort();
        if (c == 0xe2 && i + 2 < o->len && p[i + 1] == 0x81 && p[i + 2] >= 0xa6 &&
            p[i + 2] <= 0xa9)
            abort();
    }
    for (size_t i = 0; i < o->len;) {
        size_t k = utf8_seq_len(p + i, o->len - i);
        if (k == 0)
            abort();   /* not UTF-8 */
        i += k;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    const char *s = (const char *)data + 1;
    size_t n = size - 1, cut = n ? data[0] % (n + 1) : 0;
    loom_str whole = LOOM_STR_INIT, two = LOOM_STR_INIT;
    termsafe_append(&whole, s, n);
    feed_cut(s, n, cut, &two);
    check_safe(&whole);
    if (whole.len != two.len || memcmp(str_cstr(&whole), str_cstr(&two), whole.len))
        abort();
    if (n <= 512) {
        loom_str bytes = LOOM_STR_INIT;
        termsafe t = TERMSAFE_INIT;
        for (size_t i = 0; i < n; i++)
            termsafe_feed(&t, s + i, 1, &bytes);
        termsafe_finish(&t, &bytes);
        if (whole.len != bytes.len || memcmp(str_cstr(&whole), str_cstr(&bytes), whole.len))
            abort();
        str_free(&bytes);
    }
    str_free(&whole);
    str_free(&two);
    return 0;
}
