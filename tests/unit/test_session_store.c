/* test_session_store.c — the project slug, session lookup by id prefix
 * across projects, and --continue's "latest in this directory". */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "base/fileio.h"
#include "base/settings.h"
#include "base/str.h"
#include "session/store.h"
#include "session/transcript.h"

static char tmpdir[] = "/tmp/loom-test-store-XXXXXX";

static int rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb;
    (void)flag;
    (void)ftw;
    return remove(path);
}

static int setup(void **state)
{
    (void)state;
    if (!mkdtemp(tmpdir))
        return -1;
    setenv("LOOM_HOME", tmpdir, 1);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    nftw(tmpdir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
    return 0;
}

static void test_home_and_slug(void **state)
{
    (void)state;
    char *home = loom_home();
    assert_string_equal(home, tmpdir);
    free(home);

    char *slug = store_slug("/home/a/my.proj_x");
    assert_string_equal(slug, "-home-a-my-proj-x");
    free(slug);
    slug = store_slug("/w/\xc3\xa9t\xc3\xa9");  /* bytes of UTF-8, each replaced */
    assert_string_equal(slug, "-w---t--");
    free(slug);

    char *dir = store_project_dir("/srv/app");
    loom_str want = LOOM_STR_INIT;
    str_printf(&want, "%s/projects/-srv-app", tmpdir);
    assert_string_equal(dir, str_cstr(&want));
    str_free(&want);
    free(dir);

    /* Relative paths are made absolute first. */
    slug = store_slug("sub");
    assert_int_equal(slug[0], '-');
    assert_non_null(strstr(slug, "-sub"));
    free(slug);

    /* Long paths keep a bounded, distinct slug. */
    loom_str a = LOOM_STR_INIT, b = LOOM_STR_INIT;
    for (int i = 0; i < 40; i++) {
        str_puts(&a, "/directory");
        str_puts(&b, "/directory");
    }
    str_puts(&a, "/one");
    str_puts(&b, "/two");
    char *sa = store_slug(str_cstr(&a)), *sb = store_slug(str_cstr(&b));
    assert_int_equal(strlen(sa), 200);
    assert_int_equal(strlen(sb), 200);
    assert_string_not_equal(sa, sb);
    free(sa);
    free(sb);
    str_free(&a);
    str_free(&b);
}

static char *new_session(const char *cwd)
{
    char *dir = store_project_dir(cwd);
    loom_error err;
    transcript *t = transcript_create(dir, cwd, NULL, NULL, &err);
    assert_non_null(t);
    char *id = xstrdup(transcript_session_id(t));
    transcript_free(t);
    free(dir);
    return id;
}

static void test_find(void **state)
{
    (void)state;
    char *s1 = new_session("/p/one");
    char *s2 = new_session("/p/two");
    char *path = NULL;
    loom_error err;

    assert_int_equal(session_find(s2, &path, &err), 0);
    assert_non_null(strstr(path, "/projects/-p-two/"));
    assert_non_null(strstr(path, s2));
    free(path);

    /* A prefix long enough to be unique (UUIDv7s share the time prefix). */
    char prefix[37];
    memcpy(prefix, s1, 36);
    prefix[30] = 0;
    assert_int_equal(session_find(prefix, &path, &err), 0);
    assert_non_null(strstr(path, s1));
    free(path);

    /* Both ids begin with the same millisecond-ish time: ambiguous. */
    size_t common = 0;
    while (s1[common] == s2[common])
        common++;
    assert_true(common > 0);
    memcpy(prefix, s1, common);
    prefix[common] = 0;
    assert_true(session_find(prefix, &path, &err) < 0);
    assert_int_equal(err.code, LOOM_ERR_INVALID_REQUEST);
    assert_non_null(strstr(err.message, "ambiguous"));
    assert_non_null(strstr(err.message, s1));
    assert_non_null(strstr(err.message, s2));
    assert_null(path);

    assert_true(session_find("ffffffff-not-there", &path, &err) < 0);
    assert_int_equal(err.code, LOOM_ERR_RESOURCE_NOT_FOUND);
    assert_true(session_find("", &path, &err) < 0);

    /* A path is taken as is. */
    char *dir = store_project_dir("/p/one");
    loom_str p = LOOM_STR_INIT;
    str_printf(&p, "%s/%s.jsonl", dir, s1);
    assert_int_equal(session_find(str_cstr(&p), &path, &err), 0);
    assert_string_equal(path, str_cstr(&p));
    free(path);
    str_free(&p);
    free(dir);
    free(s1);
    free(s2);
}

static void test_latest(void **state)
{
    (void)state;
    char *path = NULL;
    loom_error err;
    assert_true(session_latest("/p/empty", &path, &err) < 0);
    assert_int_equal(err.code, LOOM_ERR_RESOURCE_NOT_FOUND);

    char *old = new_session("/p/latest");
    char *newer = new_session("/p/latest");
    char *dir = store_project_dir("/p/latest");
    /* Make the first-created session the most recently modified. */
    loom_str p = LOOM_STR_INIT;
    str_printf(&p, "%s/%s.jsonl", dir, old);
    struct timespec times[2] = {{0, UTIME_OMIT}, {time(NULL) + 60, 0}};
    assert_int_equal(utimensat(AT_FDCWD, str_cstr(&p), times, 0), 0);
    assert_int_equal(session_latest("/p/latest", &path, &err), 0);
    assert_string_equal(path, str_cstr(&p));
    free(path);
    str_free(&p);
    free(dir);
    free(old);
    free(newer);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_home_and_slug),
        cmocka_unit_test(test_find),
        cmocka_unit_test(test_latest),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
