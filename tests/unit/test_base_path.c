/* test_base_path.c — path joining, making absolute and folding: the one
 * way a path argument becomes the absolute path Loom touches. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/path.h"

static void expect_join(const char *dir, const char *name, const char *want)
{
    char *got = path_join(dir, name);
    assert_string_equal(got, want);
    free(got);
}

static void expect_abs(const char *path, const char *base, const char *want)
{
    char *got = path_make_absolute(path, base);
    assert_string_equal(got, want);
    free(got);
}

static void test_join_puts_one_slash_at_the_seam(void **state)
{
    expect_join("/a/b", "c", "/a/b/c");
    expect_join("/a/b/", "c", "/a/b/c");
    expect_join("/", "c", "/c");
    expect_join("/a", "c/d", "/a/c/d");
}

static void test_join_keeps_an_absolute_name_and_roots_a_missing_dir(void **state)
{
    expect_join("/a", "/etc/passwd", "/etc/passwd");
    expect_join("", "c", "/c");
    expect_join(NULL, "c", "/c");
}

static void test_join_does_not_fold(void **state)
{
    expect_join("/a", "../b", "/a/../b");
    expect_join("/a", "./b", "/a/./b");
}

static void test_fold_removes_dots_and_doubled_slashes(void **state)
{
    char *f = path_fold("/a//b/./c/../d");
    assert_string_equal(f, "/a/b/d");
    free(f);
    f = path_fold("/../..");
    assert_string_equal(f, "/");
    free(f);
}

static void test_absolute_resolves_against_the_base_and_folds(void **state)
{
    expect_abs("x/../y", "/base", "/base/y");
    expect_abs("/abs/./p", "/base", "/abs/p");
    expect_abs("..", "/base/dir", "/base");
}

static void test_absolute_expands_home_only_when_home_is_absolute(void **state)
{
    char *saved = getenv("HOME") ? strdup(getenv("HOME")) : NULL;
    setenv("HOME", "/home/u", 1);
    expect_abs("~/notes", "/base", "/home/u/notes");
    expect_abs("~", "/base", "/home/u");
    expect_abs("~other", "/base", "/base/~other"); /* not a ~user form Loom knows */
    setenv("HOME", "relative", 1);
    expect_abs("~/notes", "/base", "/base/~/notes");
    if (saved)
        setenv("HOME", saved, 1);
    else
        unsetenv("HOME");
    free(saved);
}

static void test_absolute_without_base_uses_the_working_directory(void **state)
{
    char cwd[PATH_MAX];
    assert_non_null(getcwd(cwd, sizeof cwd));
    char *want = path_join(cwd, "f");
    char *folded = path_fold(want);
    expect_abs("f", NULL, folded);
    free(want);
    free(folded);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_join_puts_one_slash_at_the_seam),
        cmocka_unit_test(test_join_keeps_an_absolute_name_and_roots_a_missing_dir),
        cmocka_unit_test(test_join_does_not_fold),
        cmocka_unit_test(test_fold_removes_dots_and_doubled_slashes),
        cmocka_unit_test(test_absolute_resolves_against_the_base_and_folds),
        cmocka_unit_test(test_absolute_expands_home_only_when_home_is_absolute),
        cmocka_unit_test(test_absolute_without_base_uses_the_working_directory),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
