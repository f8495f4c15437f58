/* test_base_glob.c — the one glob: glob_segment_match (the segment matcher
 * the permission rules, the write-target checks and the Glob tool share),
 * whole paths with "**" in the Glob tool's reading and in gitignore's
 * (the rules'), '*'-only patterns, and brace expansion. */
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

static void test_paths_two_readings(void **state)
{
    (void)state;
    /* The Glob tool's reading: the whole path, a trailing globstar needs
     * something inside. */
    assert_true(glob_path_match("src/**", "src/a/b.c"));
    assert_false(glob_path_match("src/**", "src"));
    assert_false(glob_path_match("src", "src/a.c"));
    assert_true(glob_path_match("src/**/x.h", "src/x.h"));
    assert_true(glob_path_match("//a//b/", "a/b"));
    /* gitignore's: a matched directory covers what is inside it. */
    assert_true(glob_path_covers("/p/src", "/p/src/a/b.c"));
    assert_true(glob_path_covers("/p/src/**", "/p/src"));
    assert_false(glob_path_covers("/p/src/*.c", "/p/src/a/x.c"));
    assert_false(glob_path_covers("/p/src", "/p/srcx/a"));
    /* A '\' inside a set escapes its member. */
    assert_true(glob_path_match("[\\]]x", "]x"));
    assert_false(glob_path_match("[\\]]x", "\\x"));
}

static void test_paths_deep_and_many_globstars(void **state)
{
    (void)state;
    /* Past the stack buffers (64 components), and many "**" stay cheap. */
    char deep[4096] = "";
    for (int i = 0; i < 200; i++)
        strcat(deep, "d/");
    strcat(deep, "x.c");
    assert_true(glob_path_match("**/x.c", deep));
    assert_true(glob_path_match("**/d/**/d/**/d/**/d/**/d/**/x.c", deep));
    assert_false(glob_path_match("**/d/**/d/**/d/**/d/**/e/**/x.c", deep));
    assert_true(glob_path_covers("d/**/d", deep));
}

static void test_star_only_and_braces(void **state)
{
    (void)state;
    assert_true(glob_star_match("git * main", "git push origin main", true));
    assert_true(glob_star_match("a?[c]", "a?[c]", true)); /* only '*' is special */
    assert_false(glob_star_match("a?c", "abc", true));
    assert_true(glob_star_prefix("git push *", "git pu"));
    assert_false(glob_star_prefix("git push *", "git pull"));
    char **l = glob_expand_braces("src/*.{c,h}");
    assert_string_equal(l[0], "src/*.c");
    assert_string_equal(l[1], "src/*.h");
    assert_null(l[2]);
    glob_free_list(l);
    assert_true(glob_has_magic("a{b"));
    assert_false(glob_has_magic("plain/path"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_segments),
                                       cmocka_unit_test(test_paths_two_readings),
                                       cmocka_unit_test(test_paths_deep_and_many_globstars),
                                       cmocka_unit_test(test_star_only_and_braces)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
