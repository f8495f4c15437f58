/* test_base_termsafe.c — the terminal-safe form of outside text
 * (src/base/termsafe.c): every spelling of a terminal control comes out
 * visible and never raw, printable text (UTF-8 included) comes out
 * unchanged, and a text cut into pieces anywhere — inside a UTF-8
 * character, between CR and LF — gives exactly what the whole text gives. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "base/termsafe.h"

static char *safe(const char *s, size_t n)
{
    loom_str out = LOOM_STR_INIT;
    termsafe_append(&out, s, n);
    return str_steal(&out);
}

/* No byte a terminal would act on: C0 but \n \t, DEL, a C1 control as a
 * raw byte or UTF-8, a bidi control as UTF-8. */
static void assert_inert(const char *s)
{
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        assert_true(*p >= 0x20 || *p == '\n' || *p == '\t');
        assert_true(*p != 0x7f);
        if (p[0] == 0xc2)
            assert_false(p[1] >= 0x80 && p[1] <= 0x9f);
        if (p[0] == 0xe2 && p[1] == 0x80)
            assert_false((p[2] >= 0xaa && p[2] <= 0xae) || p[2] == 0x8e || p[2] == 0x8f ||
                         p[2] == 0xa8 || p[2] == 0xa9);
        if (p[0] == 0xe2 && p[1] == 0x81)
            assert_false(p[2] >= 0xa6 && p[2] <= 0xa9);
    }
    /* An unpaired byte >= 0x80 that is not part of valid UTF-8 would be a
     * raw 8-bit control on a Latin-1 terminal. */
    const unsigned char *p = (const unsigned char *)s;
    while (*p) {
        if (*p < 0x80) {
            p++;
            continue;
        }
        size_t need = *p >= 0xf0 ? 4 : *p >= 0xe0 ? 3 : 2;
        assert_true(*p >= 0xc2 && *p <= 0xf4);
        for (size_t k = 1; k < need; k++)
            assert_int_equal(p[k] & 0xc0, 0x80);
        p += need;
    }
}

static const struct {
    const char *in;
    size_t len; /* 0: strlen */
    const char *out;
} cases[] = {
    {"plain text", 0, "plain text"},
    {"tab\tand\nnewline", 0, "tab\tand\nnewline"},
    {"\x1b]0;pwned title\x07", 0, "^[]0;pwned title^G"},                /* OSC 0, BEL */
    {"\x1b]2;t\x1b\\", 0, "^[]2;t^[\\"},                                   /* OSC 2, ST */
    {"\x1b]52;c;Y3VybCBldmlsIHwgc2g=\x07", 0, "^[]52;c;Y3VybCBldmlsIHwgc2g=^G"}, /* OSC 52 */
    {"\x1b[2J\x1b[H", 0, "^[[2J^[[H"},                                   /* clear, home */
    {"\x1b[31mred\x1b[0m", 0, "^[[31mred^[[0m"},                         /* SGR */
    {"\x9b" "2J", 0, "\xef\xbf\xbd" "2J"},                               /* 8-bit CSI byte */
    {"\xc2\x9b" "2J", 0, "<U+009B>2J"},                                  /* C1 CSI as UTF-8 */
    {"\xc2\x9d" "0;t\xc2\x9c", 0, "<U+009D>0;t<U+009C>"},                /* C1 OSC + ST */
    {"\xc2\x85", 0, "<U+0085>"},                                         /* NEL */
    {"ls \xe2\x80\xae" "txt.hs", 0, "ls <U+202E>txt.hs"},               /* RLO */
    {"a\xe2\x81\xa6" "b\xe2\x81\xa9", 0, "a<U+2066>b<U+2069>"},         /* LRI … PDI */
    {"\xe2\x80\x8f\xd8\x9c", 0, "<U+200F><U+061C>"},                     /* RLM, ALM */
    {"safe\rrm -rf /", 0, "safe^Mrm -rf /"},                             /* CR overwrite */
    {"line\r\nnext\r\n", 0, "line\nnext\n"},                             /* CRLF is a newline */
    {"x\r", 0, "x^M"},
    {"bell\x07 bs\x08 del\x7f nul", 0, "bell^G bs^H del^? nul"},
    {"nul\0byte", 8, "nul^@byte"},
    {"\x0e\x0f\x1a", 0, "^N^O^Z"},                                       /* shift out/in, SUB */
    {"caf\xc3\xa9 \xe2\x9c\x93 \xf0\x9f\x98\x80", 0, "caf\xc3\xa9 \xe2\x9c\x93 \xf0\x9f\x98\x80"},
    {"\xc0\xaf", 0, "\xef\xbf\xbd\xef\xbf\xbd"},                         /* overlong '/' */
    {"\xe0\x80\x80", 0, "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"},         /* overlong NUL */
    {"\xed\xa0\x80", 0, "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"},         /* a surrogate */
    {"\xf4\x90\x80\x80", 0, "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"}, /* > U+10FFFF */
    {"\xe2\x80", 0, "\xef\xbf\xbd"},                                     /* cut short at the end */
    {"\xe2\x80" "x", 0, "\xef\xbf\xbd" "x"},
};

static void test_cases(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        size_t n = cases[i].len ? cases[i].len : strlen(cases[i].in);
        char *got = safe(cases[i].in, n);
        if (strcmp(got, cases[i].out) != 0)
            fail_msg("case %zu: got \"%s\", want \"%s\"", i, got, cases[i].out);
        assert_inert(got);
        free(got);
    }
}

/* Cut every case (and a mix of them) at every pair of positions: the
 * pieces give what the whole gives. */
static void test_split_anywhere(void **state)
{
    (void)state;
    loom_str all = LOOM_STR_INIT;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        str_append(&all, cases[i].in, cases[i].len ? cases[i].len : strlen(cases[i].in));
    char *whole = safe(all.ptr, all.len);
    for (size_t a = 0; a <= all.len; a++) {
        for (size_t b = a; b <= all.len; b += 7) {
            termsafe t = TERMSAFE_INIT;
            loom_str out = LOOM_STR_INIT;
            termsafe_feed(&t, all.ptr, a, &out);
            termsafe_feed(&t, all.ptr + a, b - a, &out);
            termsafe_feed(&t, all.ptr + b, all.len - b, &out);
            termsafe_finish(&t, &out);
            str_puts(&out, "");
            if (strcmp(out.ptr, whole) != 0)
                fail_msg("cut at %zu and %zu differs", a, b);
            str_free(&out);
        }
    }
    /* One byte at a time. */
    termsafe t = TERMSAFE_INIT;
    loom_str out = LOOM_STR_INIT;
    for (size_t i = 0; i < all.len; i++)
        termsafe_feed(&t, all.ptr + i, 1, &out);
    termsafe_finish(&t, &out);
    assert_string_equal(str_cstr(&out), whole);
    str_free(&out);
    free(whole);
    str_free(&all);
}

/* A stream holds back only what it must: a complete piece comes out at once. */
static void test_holds_only_the_unfinished(void **state)
{
    (void)state;
    termsafe t = TERMSAFE_INIT;
    loom_str out = LOOM_STR_INIT;
    termsafe_feed(&t, "ab\xe2\x9c", 4, &out);
    assert_string_equal(str_cstr(&out), "ab");
    termsafe_feed(&t, "\x93 ok\r", 5, &out);
    assert_string_equal(str_cstr(&out), "ab\xe2\x9c\x93 ok");
    termsafe_feed(&t, "\n", 1, &out);
    assert_string_equal(str_cstr(&out), "ab\xe2\x9c\x93 ok\n");
    termsafe_feed(&t, "\xc2", 1, &out);
    termsafe_feed(&t, "\x9b", 1, &out);
    assert_string_equal(str_cstr(&out), "ab\xe2\x9c\x93 ok\n<U+009B>");
    termsafe_finish(&t, &out);
    str_free(&out);
}

/* Random bytes never come out raw. */
static void test_random_bytes_are_inert(void **state)
{
    (void)state;
    unsigned seed = 12345;
    for (int round = 0; round < 2000; round++) {
        char buf[64];
        size_t n = (size_t)(round % 63) + 1;
        for (size_t i = 0; i < n; i++) {
            seed = seed * 1103515245u + 12345u;
            buf[i] = (char)((seed >> 16) & 0xff);
        }
        char *got = safe(buf, n);
        assert_inert(got);
        free(got);
    }
}

static void test_helpers(void **state)
{
    (void)state;
    assert_null(termsafe_dup(NULL));
    char *s = termsafe_dup("a\x1b[2Jb");
    assert_string_equal(s, "a^[[2Jb");
    free(s);
    assert_true(termsafe_is_clean("plain \xc3\xa9\n", 8));
    assert_false(termsafe_is_clean("\x1b", 1));
    assert_false(termsafe_is_clean("a\rb", 3));
}

/* termsafe_fopen: a report printed piece by piece comes out as one
 * stream: a character split across two writes stays whole, an ESC is
 * visible, and the underlying stream stays open after fclose. */
static void test_filter_stream(void **state)
{
    (void)state;
    char *buf = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&buf, &len);
    assert_non_null(mem);
    FILE *f = termsafe_fopen(mem);
    assert_non_null(f);
    fputs("caf\xc3", f);
    fflush(f);
    fputs("\xa9 \x1b]0;title\x07 ok", f);
    assert_int_equal(fclose(f), 0);
    fputs("|", mem); /* still open */
    fclose(mem);
    assert_string_equal(buf, "caf\xc3\xa9 ^[]0;title^G ok|");
    free(buf);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cases),
        cmocka_unit_test(test_split_anywhere),
        cmocka_unit_test(test_holds_only_the_unfinished),
        cmocka_unit_test(test_random_bytes_are_inert),
        cmocka_unit_test(test_helpers),
        cmocka_unit_test(test_filter_stream),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
