/* test_base_str.c — loom_str growth, formatting, consume/steal and the
 * NUL-byte promise of str.h, truncation, the base64 encoder and the hex-digit decoder. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "base/str.h"

static void test_empty_is_safe(void **state)
{
    loom_str s = LOOM_STR_INIT;
    assert_string_equal(str_cstr(&s), "");
    str_clear(&s);
    str_consume(&s, 10);
    assert_int_equal(s.len, 0);
    char *p = str_steal(&s);
    assert_non_null(p);
    assert_string_equal(p, "");
    free(p);
    str_free(&s);
    assert_null(s.ptr);
}

static void test_appends(void **state)
{
    loom_str s = LOOM_STR_INIT;
    str_puts(&s, "hello");
    str_putc(&s, ',');
    str_append(&s, " world!!", 6);
    assert_int_equal(s.len, 12);
    assert_string_equal(str_cstr(&s), "hello, world");
    /* Many small appends cross several growth steps. */
    for (int i = 0; i < 10000; i++)
        str_putc(&s, (char)('a' + i % 26));
    assert_int_equal(s.len, 12 + 10000);
    assert_true(s.cap > s.len);
    assert_int_equal(s.ptr[s.len], '\0');
    assert_int_equal(s.ptr[12], 'a');
    assert_int_equal(s.ptr[12 + 25], 'z');
    str_append(&s, "", 0);
    assert_int_equal(s.len, 12 + 10000);
    str_free(&s);
}

static void test_reserve(void **state)
{
    loom_str s = LOOM_STR_INIT;
    str_reserve(&s, 1000);
    assert_true(s.cap >= 1001);
    size_t cap = s.cap;
    char *before = s.ptr;
    for (int i = 0; i < 1000; i++)
        str_putc(&s, 'x');
    /* Reserved room means no reallocation. */
    assert_ptr_equal(s.ptr, before);
    assert_int_equal(s.cap, cap);
    str_free(&s);
}

static void test_printf_growth(void **state)
{
    loom_str s = LOOM_STR_INIT;
    str_printf(&s, "%d-%s", 42, "x");
    assert_string_equal(str_cstr(&s), "42-x");
    /* Longer than any initial buffer: forces the second formatting pass. */
    char big[5000];
    memset(big, 'q', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    str_printf(&s, "[%s]%zu", big, sizeof big);
    assert_int_equal(s.len, 4 + 1 + 4999 + 1 + 4);
    assert_int_equal(s.ptr[4], '[');
    assert_int_equal(s.ptr[4 + 1 + 4999], ']');
    assert_string_equal(s.ptr + s.len - 4, "5000");
    str_printf(&s, "%s", "");
    assert_int_equal(s.len, 4 + 1 + 4999 + 1 + 4);
    str_free(&s);
}

static void test_clear_keeps_buffer(void **state)
{
    loom_str s = LOOM_STR_INIT;
    str_puts(&s, "some text");
    char *p = s.ptr;
    size_t cap = s.cap;
    str_clear(&s);
    assert_int_equal(s.len, 0);
    assert_string_equal(str_cstr(&s), "");
    assert_ptr_equal(s.ptr, p);
    assert_int_equal(s.cap, cap);
    str_free(&s);
}

static void test_consume(void **state)
{
    loom_str s = LOOM_STR_INIT;
    str_puts(&s, "line one\nline two\n");
    str_consume(&s, 9);
    assert_string_equal(str_cstr(&s), "line two\n");
    assert_int_equal(s.len, 9);
    str_consume(&s, 0);
    assert_int_equal(s.len, 9);
    str_consume(&s, 100); /* more than there is: empties, no overrun */
    assert_int_equal(s.len, 0);
    assert_string_equal(str_cstr(&s), "");
    str_puts(&s, "again");
    assert_string_equal(str_cstr(&s), "again");
    str_free(&s);
}

static void test_steal(void **state)
{
    loom_str s = LOOM_STR_INIT;
    str_puts(&s, "mine now");
    char *p = str_steal(&s);
    assert_string_equal(p, "mine now");
    assert_null(s.ptr);
    assert_int_equal(s.len, 0);
    assert_int_equal(s.cap, 0);
    /* s is reusable after the steal. */
    str_puts(&s, "fresh");
    assert_string_equal(str_cstr(&s), "fresh");
    assert_true(s.ptr != p);
    free(p);
    str_free(&s);
}

static void test_nul_bytes(void **state)
{
    loom_str s = LOOM_STR_INIT;
    str_append(&s, "a\0b", 3);
    str_putc(&s, '\0');
    str_append(&s, "c", 1);
    assert_int_equal(s.len, 5);
    assert_memory_equal(s.ptr, "a\0b\0c", 5);
    assert_int_equal(s.ptr[5], '\0');
    str_consume(&s, 2);
    assert_int_equal(s.len, 3);
    assert_memory_equal(s.ptr, "b\0c", 3);
    str_free(&s);
}

static void test_x_helpers(void **state)
{
    assert_null(xstrdup(NULL));
    assert_null(xstrndup(NULL, 3));
    char *d = xstrdup("abc");
    assert_string_equal(d, "abc");
    free(d);
    d = xstrndup("abcdef", 3);
    assert_string_equal(d, "abc");
    free(d);
    d = xstrndup("ab", 10); /* n past the end stops at the NUL */
    assert_string_equal(d, "ab");
    free(d);
    int *z = xcalloc(16, sizeof(int));
    for (int i = 0; i < 16; i++)
        assert_int_equal(z[i], 0);
    z = xrealloc(z, 1024 * sizeof(int));
    assert_int_equal(z[15], 0);
    free(z);
    void *m = xmalloc(0);
    assert_non_null(m);
    free(m);
}

/* One hex decoder for chunk sizes, %XX, &#x…; and \\x escapes: every digit
 * in both cases, and nothing else, not even the letters just past 'f'. */
static void test_hex_digit_decodes_both_cases_and_nothing_else(void **state)
{
    const char *digits = "0123456789abcdef", *upper = "ABCDEF";
    for (int i = 0; i < 16; i++)
        assert_int_equal(str_hex_digit(digits[i]), i);
    for (int i = 0; i < 6; i++)
        assert_int_equal(str_hex_digit(upper[i]), 10 + i);
    const char *not_hex = "gG/:@`xX -\n";
    for (const char *p = not_hex; *p; p++)
        assert_int_equal(str_hex_digit(*p), -1);
    assert_int_equal(str_hex_digit(0), -1);
    assert_int_equal(str_hex_digit(0xC3), -1); /* a UTF-8 lead byte */
    assert_int_equal(str_hex_digit(-1), -1);   /* EOF */
}

/* Truncating keeps the first bytes and the NUL promise; a length past the
 * end changes nothing. */
static void test_truncate_keeps_a_prefix(void **state)
{
    loom_str s = LOOM_STR_INIT;
    str_puts(&s, "properties.todos.items");
    str_truncate(&s, 16);
    assert_int_equal(s.len, 16);
    assert_string_equal(str_cstr(&s), "properties.todos");
    str_truncate(&s, 100);
    assert_string_equal(str_cstr(&s), "properties.todos");
    str_truncate(&s, 0);
    assert_string_equal(str_cstr(&s), "");
    str_free(&s);
    loom_str empty = LOOM_STR_INIT;
    str_truncate(&empty, 0); /* no buffer yet: nothing to do */
    assert_string_equal(str_cstr(&empty), "");
}

/* RFC 4648's test vectors, padding included, and bytes past 0x7f. */
static void test_base64_matches_the_rfc_vectors(void **state)
{
    static const char *const in[] = {"", "f", "fo", "foo", "foob", "fooba", "foobar"};
    static const char *const want[] = {"", "Zg==", "Zm8=", "Zm9v", "Zm9vYg==", "Zm9vYmE=",
                                       "Zm9vYmFy"};
    for (size_t i = 0; i < 7; i++) {
        loom_str s = LOOM_STR_INIT;
        str_put_base64(&s, in[i], strlen(in[i]));
        assert_string_equal(str_cstr(&s), want[i]);
        str_free(&s);
    }
    loom_str s = LOOM_STR_INIT;
    str_puts(&s, "Basic ");
    static const unsigned char bytes[] = {0xff, 0xfe, 0x00, 0x80};
    str_put_base64(&s, bytes, sizeof bytes); /* appends; NUL bytes are data */
    assert_string_equal(str_cstr(&s), "Basic //4AgA==");
    str_free(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_empty_is_safe), cmocka_unit_test(test_appends),
        cmocka_unit_test(test_reserve),       cmocka_unit_test(test_printf_growth),
        cmocka_unit_test(test_clear_keeps_buffer), cmocka_unit_test(test_consume),
        cmocka_unit_test(test_steal),         cmocka_unit_test(test_nul_bytes),
        cmocka_unit_test(test_x_helpers),
        cmocka_unit_test(test_hex_digit_decodes_both_cases_and_nothing_else),
        cmocka_unit_test(test_truncate_keeps_a_prefix),
        cmocka_unit_test(test_base64_matches_the_rfc_vectors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
