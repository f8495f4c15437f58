/* test_base_fileio.c — atomic replacement leaves no temp files and no mixed
 * content, reads report the path on failure, mkdirs builds whole trees,
 * file_read_text refuses FIFOs, big files, NUL bytes and (asked) links. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/fileio.h"
#include "base/hash.h"
#include "base/str.h"

static char tmpdir[256];

static int rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    return remove(path);
}

static int setup(void **state)
{
    const char *base = getenv("TMPDIR");
    snprintf(tmpdir, sizeof tmpdir, "%s/loom-fileio-XXXXXX", base && *base ? base : "/tmp");
    return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state)
{
    return nftw(tmpdir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

static char *in_tmp(const char *name)
{
    loom_str s = LOOM_STR_INIT;
    str_printf(&s, "%s/%s", tmpdir, name);
    return str_steal(&s);
}

/* Number of entries in dir besides . and .. */
static int count_entries(const char *dir)
{
    DIR *d = opendir(dir);
    assert_non_null(d);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
            n++;
    closedir(d);
    return n;
}

static void test_atomic_write_replaces(void **state)
{
    char *path = in_tmp("state.json");
    loom_error err;
    loom_error_clear(&err);
    assert_false(file_exists(path));
    assert_int_equal(file_write_atomic(path, "first version, long", 19, 0600, &err), 0);
    assert_true(file_exists(path));

    char *data;
    size_t len;
    assert_int_equal(file_read_all(path, &data, &len, &err), 0);
    assert_int_equal(len, 19);
    assert_string_equal(data, "first version, long");
    free(data);

    /* Shorter content replaces, not overlays. */
    assert_int_equal(file_write_atomic(path, "v2", 2, 0600, &err), 0);
    assert_int_equal(file_read_all(path, &data, &len, &err), 0);
    assert_int_equal(len, 2);
    assert_string_equal(data, "v2");
    free(data);

    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0600);

    /* Only the target is left behind: no .state.json.tmp.* files. */
    assert_int_equal(count_entries(tmpdir), 1);

    /* Empty content is a valid file. */
    assert_int_equal(file_write_atomic(path, "", 0, 0600, &err), 0);
    assert_int_equal(file_read_all(path, &data, &len, &err), 0);
    assert_int_equal(len, 0);
    assert_string_equal(data, "");
    free(data);
    unlink(path);
    free(path);
}

static void test_atomic_write_failure_is_clean(void **state)
{
    char *path = in_tmp("no-such-dir/file.txt");
    loom_error err;
    loom_error_clear(&err);
    int rc = file_write_atomic(path, "x", 1, 0644, &err);
    assert_true(rc < 0);
    assert_int_equal(rc, -(int)err.code);
    assert_non_null(strstr(err.message, path));
    assert_non_null(strstr(err.message, "No such file or directory"));
    assert_int_equal(count_entries(tmpdir), 0);
    free(path);

    /* A path ending in '/' names a directory, not a file to write. */
    char *dir = in_tmp("");
    assert_true(file_write_atomic(dir, "x", 1, 0644, &err) < 0);
    free(dir);
}

static void test_read_binary_and_large(void **state)
{
    char *path = in_tmp("blob");
    loom_error err;
    size_t big = 3 * 1024 * 1024 + 17;
    unsigned char *buf = malloc(big);
    for (size_t i = 0; i < big; i++)
        buf[i] = (unsigned char)(i * 7);
    assert_int_equal(file_write_atomic(path, buf, big, 0644, &err), 0);
    char *data;
    size_t len;
    assert_int_equal(file_read_all(path, &data, &len, &err), 0);
    assert_int_equal(len, big);
    assert_memory_equal(data, buf, big);
    assert_int_equal(data[len], '\0');
    free(data);
    free(buf);
    unlink(path);
    free(path);

    /* A file whose size stat cannot tell (procfs) is read to EOF; len may
     * be NULL. */
    assert_int_equal(file_read_all("/proc/self/status", &data, NULL, &err), 0);
    assert_non_null(strstr(data, "Pid:"));
    free(data);
}

static void test_read_missing_names_path(void **state)
{
    char *path = in_tmp("missing.txt");
    loom_error err;
    loom_error_clear(&err);
    char *data = (char *)"sentinel";
    size_t len = 99;
    int rc = file_read_all(path, &data, &len, &err);
    assert_true(rc < 0);
    assert_null(data);
    assert_int_equal(len, 0);
    assert_int_equal(err.code, LOOM_ERR_RESOURCE_NOT_FOUND);
    assert_non_null(strstr(err.message, path));
    assert_non_null(strstr(err.message, "No such file or directory"));

    /* A directory is readable by open() but not by read(): still an error
     * naming the path. */
    loom_error_clear(&err);
    assert_true(file_read_all(tmpdir, &data, &len, &err) < 0);
    assert_int_equal(err.code, LOOM_ERR_IO);
    assert_non_null(strstr(err.message, tmpdir));
    free(path);
}

static void test_mkdirs(void **state)
{
    loom_error err;
    loom_error_clear(&err);
    char *deep = in_tmp("a/b//c/d/");
    assert_int_equal(file_mkdirs(deep, 0755, &err), 0);
    struct stat st;
    assert_int_equal(stat(deep, &st), 0);
    assert_true(S_ISDIR(st.st_mode));
    /* Again: existing directories are fine. */
    assert_int_equal(file_mkdirs(deep, 0755, &err), 0);
    free(deep);

    /* A file in the way is an error naming the component. */
    char *file = in_tmp("a/plain");
    assert_int_equal(file_write_atomic(file, "x", 1, 0644, &err), 0);
    char *under = in_tmp("a/plain/sub");
    loom_error_clear(&err);
    assert_true(file_mkdirs(under, 0755, &err) < 0);
    assert_non_null(strstr(err.message, file));
    assert_true(file_mkdirs(file, 0755, &err) < 0);
    assert_true(file_mkdirs("", 0755, &err) < 0);
    free(under);
    free(file);

    /* Relative paths work from the current directory. */
    char cwd[4096];
    assert_non_null(getcwd(cwd, sizeof cwd));
    assert_int_equal(chdir(tmpdir), 0);
    assert_int_equal(file_mkdirs("rel/x", 0700, &err), 0);
    assert_true(file_exists("rel/x"));
    assert_int_equal(file_write_atomic("rel/x/f", "ok", 2, 0600, &err), 0);
    assert_int_equal(file_write_atomic("top", "ok", 2, 0600, &err), 0);
    assert_true(file_exists("top"));
    assert_int_equal(chdir(cwd), 0);
}

/* An overwrite keeps the file's mode bit for bit whatever the umask; a new
 * file (mode < 0) goes through the umask like any other. */
static void test_replace_keeps_mode_exactly(void **state)
{
    char *p = in_tmp("tool.sh");
    mode_t old = umask(077);
    loom_error err = {0};
    struct stat st;
    assert_int_equal(file_replace(p, "#!/bin/sh\n", 10, 0755, &st, &err), 0);
    assert_int_equal(st.st_mode & 07777, 0755);
    char *q = in_tmp("new.txt");
    assert_int_equal(file_replace(q, "x", 1, -1, NULL, &err), 0);
    struct stat st2;
    assert_int_equal(stat(q, &st2), 0);
    assert_int_equal(st2.st_mode & 07777, 0600);
    umask(old);
    assert_true(file_replace(tmpdir, "x", 1, -1, NULL, &err) < 0);   /* a directory */
    free(p);
    free(q);
}

/* FNV-1a 64's published test vectors, and hashing in pieces. */
static void test_fnv1a64_vectors(void **state)
{
    assert_true(hash_fnv1a64(HASH_FNV1A64_SEED, "", 0) == UINT64_C(0xcbf29ce484222325));
    assert_true(hash_fnv1a64(HASH_FNV1A64_SEED, "a", 1) == UINT64_C(0xaf63dc4c8601ec8c));
    assert_true(hash_fnv1a64(HASH_FNV1A64_SEED, "foobar", 6) == UINT64_C(0x85944171f73967e8));
    uint64_t h = hash_fnv1a64(HASH_FNV1A64_SEED, "foo", 3);
    assert_true(hash_fnv1a64(h, "bar", 3) == UINT64_C(0x85944171f73967e8));
}

static void test_write_full(void **state)
{
    int p[2];
    assert_int_equal(pipe(p), 0);
    assert_int_equal(file_write_full(p[1], "abc", 3), 0);
    char got[4] = {0};
    assert_int_equal(read(p[0], got, 3), 3);
    assert_string_equal(got, "abc");
    close(p[0]);
    close(p[1]);
    assert_true(file_write_full(-1, "x", 1) < 0);
    assert_false(file_exists(NULL));
}

/* Reads path with file_read_text; returns the text (or NULL) and leaves the
 * problem in *why. */
static char *read_text(const char *name, size_t cap, unsigned flags, loom_str *why)
{
    char *path = in_tmp(name);
    str_clear(why);
    char *text = file_read_text(path, cap, flags, why);
    free(path);
    return text;
}

static void put(const char *name, const void *data, size_t len)
{
    char *path = in_tmp(name);
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(data, 1, len, f), len);
    fclose(f);
    free(path);
}

static void test_read_text_refuses_what_is_not_small_text(void **state)
{
    loom_str why = LOOM_STR_INIT;
    put("ok.md", "---\nname: a\n---\nbody\n", 21);
    char *t = read_text("ok.md", 1024, FILE_TEXT_NO_NUL, &why);
    assert_non_null(t);
    assert_string_equal(t, "---\nname: a\n---\nbody\n");
    assert_int_equal(why.len, 0);
    free(t);

    put("empty.md", "", 0);
    t = read_text("empty.md", 1024, 0, &why);
    assert_non_null(t);
    assert_string_equal(t, "");
    free(t);

    /* Exactly cap bytes is allowed; one more is refused with the cap in KiB. */
    char big[2049];
    memset(big, 'x', sizeof big);
    put("cap.md", big, 2048);
    t = read_text("cap.md", 2048, 0, &why);
    assert_non_null(t);
    assert_int_equal(strlen(t), 2048);
    free(t);
    put("big.md", big, 2049);
    assert_null(read_text("big.md", 2048, 0, &why));
    assert_string_equal(str_cstr(&why), "larger than 2 KiB");

    /* A FIFO is refused at once, not waited on for a writer. */
    char *fifo = in_tmp("fifo.md");
    assert_int_equal(mkfifo(fifo, 0600), 0);
    free(fifo);
    assert_null(read_text("fifo.md", 1024, 0, &why));
    assert_string_equal(str_cstr(&why), "not a regular file");

    /* A NUL byte is refused only when the caller asks. */
    put("nul.md", "a\0b", 3);
    assert_null(read_text("nul.md", 1024, FILE_TEXT_NO_NUL, &why));
    assert_string_equal(str_cstr(&why), "holds a NUL byte (not a text file)");
    t = read_text("nul.md", 1024, 0, &why);
    assert_non_null(t);
    assert_string_equal(t, "a");
    free(t);

    /* A symlink is followed unless the caller says nofollow. */
    char *target = in_tmp("ok.md"), *link = in_tmp("link.md");
    assert_int_equal(symlink(target, link), 0);
    free(target);
    free(link);
    t = read_text("link.md", 1024, 0, &why);
    assert_non_null(t);
    free(t);
    assert_null(read_text("link.md", 1024, FILE_TEXT_NOFOLLOW, &why));
    assert_true(strncmp(str_cstr(&why), "cannot be read: ", 16) == 0);

    assert_null(read_text("missing.md", 1024, 0, &why));
    assert_true(strncmp(str_cstr(&why), "cannot be read: ", 16) == 0);
    /* why may be NULL: the caller only wants the text or nothing. */
    char *missing = in_tmp("missing.md");
    assert_null(file_read_text(missing, 1024, 0, NULL));
    free(missing);
    str_free(&why);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_atomic_write_replaces, setup, teardown),
        cmocka_unit_test_setup_teardown(test_atomic_write_failure_is_clean, setup, teardown),
        cmocka_unit_test_setup_teardown(test_read_binary_and_large, setup, teardown),
        cmocka_unit_test_setup_teardown(test_read_missing_names_path, setup, teardown),
        cmocka_unit_test_setup_teardown(test_mkdirs, setup, teardown),
        cmocka_unit_test(test_write_full),
        cmocka_unit_test_setup_teardown(test_replace_keeps_mode_exactly, setup, teardown),
        cmocka_unit_test(test_fnv1a64_vectors),
        cmocka_unit_test_setup_teardown(test_read_text_refuses_what_is_not_small_text, setup,
                                        teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
