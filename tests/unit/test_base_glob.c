/* test_base_glob.c — glob_segment_match, the segment matcher the permission
 * rules and the write-target checks share. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "base/glob.h"

static bool m(const char *p, const char *s)
{
    return glob_segment_match(p, strlen(p), s, strlen(s));
}

static void test_segments(void **state)
{
    (void)state;
    static const struct {
        const char *pat, *s;
        bool want;
    } rows[] = {
        {"abc", "abc", true},      {"abc", "abcd", false},   {"", "", true},
        {"", "a", false},          {"*", "", true},          {"*", "anything", true},
        {"*.o", "main.o", true},   {"*.o", "main.c", false}, {"a*b*c", "aXbYc", true},
        {"a*b*c", "aXbY", false},  {"?", "x", true},         {"?", "", false},
        {"??", "xyz", false},      {"[abc]", "b", true},     {"[abc]", "d", false},
        {"[a-c]x", "bx", true},    {"[a-c]x", "dx", false},  {"[!a-c]", "d", true},
        {"[^a-c]", "a", false},    {"[]]", "]", true},       {"[a-]", "-", true},
        {"\\*", "*", true},        {"\\*", "x", false},      {"[", "[", true},
        {"x[", "x[", true},        {".env*", ".env.local", true},
        {"*", ".env", true}, /* the leading-dot rule is the caller's */
        {"*e*n*v*", ".env", true}, {"k?y", "key", true},     {"k?y", "kyy", true},
    };
    int bad = 0;
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
        if (m(rows[i].pat, rows[i].s) != rows[i].want) {
            print_error("%s vs %s: want %d\n", rows[i].pat, rows[i].s, rows[i].want);
            bad++;
        }
    assert_int_equal(bad, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_segments)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
