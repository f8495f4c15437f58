/* test_base_jsonl.c — JSON Lines appends: the file and its directory are
 * made private, every record is one whole line, a record that cannot be
 * serialised writes nothing, and a failed write is an io error. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/fileio.h"
#include "base/jsonl.h"
#include "base/str.h"

static char tmpdir[256];

static int rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    return remove(path);
}

static int setup(void **state)
{
    const char *base = getenv("TMPDIR");
    snprintf(tmpdir, sizeof tmpdir, "%s/loom-jsonl-XXXXXX", base && *base ? base : "/tmp");
    return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state)
{
    return nftw(tmpdir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

static void test_open_creates_private_file_and_directories(void **state)
{
    loom_str p = LOOM_STR_INIT;
    str_printf(&p, "%s/a/b/log.jsonl", tmpdir);
    loom_error err;
    int fd = jsonl_open(p.ptr, "test log", &err);
    assert_true(fd >= 0);
    close(fd);
    struct stat st;
    assert_int_equal(stat(p.ptr, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0600);
    *strrchr(p.ptr, '/') = '\0';
    assert_int_equal(stat(p.ptr, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0700);
    str_free(&p);
}

static void test_open_failure_names_what_and_where(void **state)
{
    loom_error err;
    int rc = jsonl_open("/proc/loom-no-such/dir/x.jsonl", "audit log", &err);
    assert_true(rc < 0);
    assert_non_null(strstr(err.message, "audit log"));
    assert_non_null(strstr(err.message, "/proc/loom-no-such"));
    assert_true(jsonl_open("", "journal", &err) < 0);
    assert_int_equal(err.code, LOOM_ERR_INVALID_REQUEST);
}

static void test_each_record_is_one_whole_line_appended(void **state)
{
    loom_str p = LOOM_STR_INIT;
    str_printf(&p, "%s/r.jsonl", tmpdir);
    loom_error err;
    int fd = jsonl_open(p.ptr, "test", &err);
    assert_true(fd >= 0);
    json_t *a = json_pack("{s:s, s:i}", "msg", "line\nbreak", "n", 1);
    json_t *b = json_pack("{s:b}", "ok", 1);
    assert_int_equal(jsonl_append(fd, a, &err), 0);
    assert_int_equal(jsonl_append(fd, b, &err), 0);
    close(fd);
    fd = jsonl_open(p.ptr, "test", &err); /* reopening appends, never truncates */
    assert_int_equal(jsonl_append(fd, b, &err), 0);
    close(fd);
    char *data;
    size_t len;
    assert_int_equal(file_read_all(p.ptr, &data, &len, &err), 0);
    assert_string_equal(data, "{\"msg\":\"line\\nbreak\",\"n\":1}\n{\"ok\":true}\n{\"ok\":true}\n");
    free(data);
    json_decref(a);
    json_decref(b);
    str_free(&p);
}

static void test_unserialisable_record_writes_nothing(void **state)
{
    loom_str p = LOOM_STR_INIT;
    str_printf(&p, "%s/n.jsonl", tmpdir);
    loom_error err;
    int fd = jsonl_open(p.ptr, "test", &err);
    assert_int_equal(jsonl_append(fd, NULL, &err), -LOOM_ERR_INTERNAL);
    close(fd);
    struct stat st;
    assert_int_equal(stat(p.ptr, &st), 0);
    assert_int_equal(st.st_size, 0);
    str_free(&p);
}

static void test_a_failed_write_is_an_io_error(void **state)
{
    json_t *a = json_pack("{s:i}", "n", 1);
    loom_error err;
    assert_int_equal(jsonl_append(-1, a, &err), -LOOM_ERR_IO);
    assert_int_equal(err.code, LOOM_ERR_IO);
    assert_int_equal(jsonl_append(-1, a, NULL), -LOOM_ERR_IO); /* err may be NULL */
    json_decref(a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_open_creates_private_file_and_directories),
        cmocka_unit_test(test_open_failure_names_what_and_where),
        cmocka_unit_test(test_each_record_is_one_whole_line_appended),
        cmocka_unit_test(test_unserialisable_record_writes_nothing),
        cmocka_unit_test(test_a_failed_write_is_an_io_error),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
