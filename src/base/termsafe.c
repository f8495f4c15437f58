/* termsafe.c — the terminal-safe form of outside text (termsafe.h): a
 * byte-at-a-time UTF-8 decoder that passes printable characters through
 * unchanged and writes every control character as visible text.
 *
 * Runs of plain printable ASCII (the bulk of any text) are copied in one
 * append; only the bytes around them go through the decoder. */
#include "base/termsafe.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/types.h>
#include <string.h>

#define REPLACEMENT "\xef\xbf\xbd" /* U+FFFD */

static bool ascii_plain(unsigned char c)
{
    return (c >= 0x20 && c < 0x7f) || c == '\n' || c == '\t';
}

/* Code points a terminal acts on or that reorder text: shown as <U+XXXX>. */
static bool cp_hidden(unsigned long cp)
{
    return (cp >= 0x80 && cp <= 0x9f) || (cp >= 0x202a && cp <= 0x202e) ||
           (cp >= 0x2066 && cp <= 0x2069) || cp == 0x200e || cp == 0x200f || cp == 0x061c ||
           cp == 0x2028 || cp == 0x2029;
}

static void put_ascii_control(unsigned char c, loom_str *out)
{
    char caret[3] = {'^', c == 0x7f ? '?' : (char)(c + 0x40), '\0'};
    str_puts(out, caret);
}

/* The held character is complete: decode it, print it or its visible name. */
static void emit_held(termsafe *t, loom_str *out)
{
    unsigned long cp;
    const unsigned char *b = t->held;
    if (t->need == 2)
        cp = ((unsigned long)(b[0] & 0x1f) << 6) | (b[1] & 0x3f);
    else if (t->need == 3)
        cp = ((unsigned long)(b[0] & 0x0f) << 12) | ((unsigned long)(b[1] & 0x3f) << 6) |
             (b[2] & 0x3f);
    else
        cp = ((unsigned long)(b[0] & 0x07) << 18) | ((unsigned long)(b[1] & 0x3f) << 12) |
             ((unsigned long)(b[2] & 0x3f) << 6) | (b[3] & 0x3f);
    if (cp_hidden(cp))
        str_printf(out, "<U+%04lX>", cp);
    else
        str_append(out, t->held, t->need);
    t->n_held = t->need = 0;
}

/* Is c a valid continuation at position t->n_held of the held character?
 * The second byte is narrowed so overlong forms, surrogates and code points
 * past U+10FFFF are refused (Unicode table 3-7). */
static bool continues(const termsafe *t, unsigned char c)
{
    if ((c & 0xc0) != 0x80)
        return false;
    if (t->n_held != 1)
        return true;
    switch (t->held[0]) {
    case 0xe0: return c >= 0xa0;
    case 0xed: return c <= 0x9f;
    case 0xf0: return c >= 0x90;
    case 0xf4: return c <= 0x8f;
    default: return true;
    }
}

static void step(termsafe *t, unsigned char c, loom_str *out)
{
    if (t->need) {
        if (continues(t, c)) {
            t->held[t->n_held++] = c;
            if (t->n_held == t->need)
                emit_held(t, out);
            return;
        }
        /* A broken character: one U+FFFD for it, then c on its own. */
        str_puts(out, REPLACEMENT);
        t->n_held = t->need = 0;
    }
    if (t->cr) {
        t->cr = false;
        if (c == '\n') {
            str_putc(out, '\n');
            return;
        }
        str_puts(out, "^M");
    }
    if (c < 0x80) {
        if (ascii_plain(c))
            str_putc(out, (char)c);
        else if (c == '\r')
            t->cr = true;
        else
            put_ascii_control(c, out);
        return;
    }
    unsigned need = c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3
                    : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
    if (!need) {
        str_puts(out, REPLACEMENT); /* a stray continuation byte (0x9b), C0/C1, F5–FF */
        return;
    }
    t->held[0] = c;
    t->n_held = 1;
    t->need = need;
}

void termsafe_feed(termsafe *t, const char *s, size_t n, loom_str *out)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t i = 0;
    str_reserve(out, n);
    while (i < n) {
        if (!t->need && !t->cr) {
            size_t k = i;
            while (k < n && p[k] >= 0x20 && p[k] < 0x7f)
                k++;
            if (k > i) {
                str_append(out, p + i, k - i);
                i = k;
                continue;
            }
        }
        step(t, p[i++], out);
    }
}

void termsafe_finish(termsafe *t, loom_str *out)
{
    if (t->need)
        str_puts(out, REPLACEMENT);
    if (t->cr)
        str_puts(out, "^M");
    *t = (termsafe)TERMSAFE_INIT;
}

void termsafe_append(loom_str *out, const char *s, size_t n)
{
    termsafe t = TERMSAFE_INIT;
    termsafe_feed(&t, s, n, out);
    termsafe_finish(&t, out);
    str_puts(out, ""); /* a string even when s was empty */
}

char *termsafe_dup(const char *s)
{
    if (!s)
        return NULL;
    loom_str out = LOOM_STR_INIT;
    termsafe_append(&out, s, strlen(s));
    return str_steal(&out);
}

typedef struct filter {
    termsafe t;
    FILE *to;
} filter;

static ssize_t filter_write(void *cookie, const char *s, size_t n)
{
    filter *f = cookie;
    loom_str out = LOOM_STR_INIT;
    termsafe_feed(&f->t, s, n, &out);
    fwrite(str_cstr(&out), 1, out.len, f->to);
    str_free(&out);
    return (ssize_t)n;
}

static int filter_close(void *cookie)
{
    filter *f = cookie;
    loom_str out = LOOM_STR_INIT;
    termsafe_finish(&f->t, &out);
    fwrite(str_cstr(&out), 1, out.len, f->to);
    str_free(&out);
    fflush(f->to);
    free(f);
    return 0;
}

FILE *termsafe_fopen(FILE *to)
{
    filter *f = xcalloc(1, sizeof *f);
    f->t = (termsafe)TERMSAFE_INIT;
    f->to = to;
    FILE *s = fopencookie(f, "w", (cookie_io_functions_t){.write = filter_write,
                                                          .close = filter_close});
    if (!s)
        free(f);
    return s;
}

bool termsafe_is_clean(const char *s, size_t n)
{
    loom_str out = LOOM_STR_INIT;
    termsafe_append(&out, s, n);
    bool same = out.len == n && !memcmp(out.ptr, s, n);
    str_free(&out);
    return same;
}
