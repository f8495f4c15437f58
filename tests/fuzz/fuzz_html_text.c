/* fuzz_html_text.c — libFuzzer target for the HTML-to-text converter
 * WebFetch runs on pages from anywhere: any bytes in, no crash, no leak, and
 * the output keeps the promises of html_text.h (valid UTF-8, no NUL, the
 * reported length, no leading or trailing whitespace). The same bytes also
 * go through text_to_utf8 both ways. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tools/builtin/html_text.h"

/* Strict UTF-8 check, written independently of html_text.c's decoder so a
 * shared mistake cannot hide. */
static int valid_utf8(const unsigned char *s, size_t n)
{
    size_t i = 0;
    while (i < n) {
        unsigned char c = s[i];
        if (c == 0)
            return 0;
        if (c < 0x80) {
            i++;
            continue;
        }
        size_t len;
        uint32_t min, cp;
        if ((c & 0xE0) == 0xC0) {
            len = 2, min = 0x80, cp = c & 0x1F;
        } else if ((c & 0xF0) == 0xE0) {
            len = 3, min = 0x800, cp = c & 0x0F;
        } else if ((c & 0xF8) == 0xF0) {
            len = 4, min = 0x10000, cp = c & 0x07;
        } else {
            return 0;
        }
        if (i + len > n)
            return 0;
        for (size_t k = 1; k < len; k++) {
            if ((s[i + k] & 0xC0) != 0x80)
                return 0;
            cp = (cp << 6) | (s[i + k] & 0x3F);
        }
        if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
            return 0;
        i += len;
    }
    return 1;
}

static int is_ws(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f';
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    size_t n = 0;
    char *text = html_to_text((const char *)data, size, &n);
    if (!text || strlen(text) != n || !valid_utf8((const unsigned char *)text, n))
        abort();
    /* No blank lines before the text and no whitespace after it; leading
     * spaces are legitimate (a nested list's indent, <pre>). */
    if (n && (text[0] == '\n' || is_ws(text[n - 1])))
        abort();
    free(text);

    for (int latin1 = 0; latin1 < 2; latin1++) {
        char *u = text_to_utf8((const char *)data, size, latin1, &n);
        if (!u || strlen(u) != n || !valid_utf8((const unsigned char *)u, n))
            abort();
        free(u);
    }
    return 0;
}
