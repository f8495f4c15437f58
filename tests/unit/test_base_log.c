/* test_base_log.c — the JSONL log: line schema, merged fields, level
 * filtering, whole lines under concurrent writers, and being off when
 * LOOM_LOG is unset. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/fileio.h"
#include "base/json.h"
#include "base/log.h"
#include "base/str.h"
#include "base/uuid.h"

static char logpath[512];

static int setup(void **state)
{
    const char *base = getenv("TMPDIR");
    char id[UUID_STR_LEN];
    uuid_v7(id);
    snprintf(logpath, sizeof logpath, "%s/loom-log-test-%s.jsonl", base && *base ? base : "/tmp",
             id);
    setenv("LOOM_LOG", logpath, 1);
    unsetenv("LOOM_LOG_LEVEL");
    return 0;
}

static int teardown(void **state)
{
    log_close();
    unlink(logpath);
    unsetenv("LOOM_LOG");
    unsetenv("LOOM_LOG_LEVEL");
    return 0;
}

/* Parses every line of the log, failing on any that is not a JSON object. */
static json_t *read_lines(void)
{
    char *data;
    size_t len;
    loom_error err;
    json_t *lines = json_array();
    if (file_read_all(logpath, &data, &len, &err) < 0)
        return lines; /* nothing written at all */
    char *p = data, *end = data + len;
    while (p < end) {
        char *nl = memchr(p, '\n', (size_t)(end - p));
        assert_non_null(nl); /* every line is complete */
        json_t *v = json_parse(p, (size_t)(nl - p), "log line", &err);
        if (!v)
            fail_msg("%s", err.message);
        assert_true(json_is_object(v));
        json_array_append_new(lines, v);
        p = nl + 1;
    }
    free(data);
    return lines;
}

static void test_line_schema_and_fields(void **state)
{
    log_init();
    log_init(); /* idempotent */
    LOG_I("wire", "connected to %s:%d", "localhost", 8080);
    json_t *f = json_pack("{s:i, s:s, s:s}", "status", 429, "msg", "must not win", "req",
                          "abc");
    log_event(LOG_WARN, "retry", f, "retrying in %.1fs", 1.5);
    log_close();

    json_t *lines = read_lines();
    assert_int_equal(json_array_size(lines), 2);
    json_t *a = json_array_get(lines, 0);
    assert_string_equal(json_get_str(a, "level", ""), "info");
    assert_string_equal(json_get_str(a, "module", ""), "wire");
    assert_string_equal(json_get_str(a, "msg", ""), "connected to localhost:8080");
    const char *ts = json_get_str(a, "ts", "");
    /* e.g. 2026-11-30T08:28:04.123Z */
    assert_int_equal(strlen(ts), 24);
    assert_int_equal(ts[10], 'T');
    assert_int_equal(ts[19], '.');
    assert_int_equal(ts[23], 'Z');

    json_t *b = json_array_get(lines, 1);
    assert_string_equal(json_get_str(b, "level", ""), "warn");
    assert_string_equal(json_get_str(b, "msg", ""), "retrying in 1.5s");
    assert_int_equal(json_get_int(b, "status", 0), 429);
    assert_string_equal(json_get_str(b, "req", ""), "abc");
    json_decref(lines);

    struct stat st;
    assert_int_equal(stat(logpath, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0600);
}

static void test_level_default_is_info(void **state)
{
    log_init();
    LOG_D("m", "hidden");
    LOG_I("m", "shown 1");
    LOG_E("m", "shown 2");
    log_close();
    json_t *lines = read_lines();
    assert_int_equal(json_array_size(lines), 2);
    assert_string_equal(json_get_str(json_array_get(lines, 1), "level", ""), "error");
    json_decref(lines);
}

static void test_level_filtering(void **state)
{
    setenv("LOOM_LOG_LEVEL", "warn", 1);
    log_init();
    /* Filtered events still take ownership of their fields. */
    log_event(LOG_DEBUG, "m", json_pack("{s:i}", "x", 1), "d");
    LOG_I("m", "i");
    LOG_W("m", "w");
    LOG_E("m", "e");
    log_close();
    json_t *lines = read_lines();
    assert_int_equal(json_array_size(lines), 2);
    assert_string_equal(json_get_str(json_array_get(lines, 0), "msg", ""), "w");
    assert_string_equal(json_get_str(json_array_get(lines, 1), "msg", ""), "e");
    json_decref(lines);

    unlink(logpath);
    setenv("LOOM_LOG_LEVEL", "debug", 1);
    log_init();
    LOG_D("m", "d");
    LOG_I("m", "i");
    log_close();
    lines = read_lines();
    assert_int_equal(json_array_size(lines), 2);
    assert_string_equal(json_get_str(json_array_get(lines, 0), "level", ""), "debug");
    json_decref(lines);
}

enum { THREADS = 4, PER_THREAD = 250 };

static void *log_thread(void *arg)
{
    long t = (long)(intptr_t)arg;
    for (int i = 0; i < PER_THREAD; i++)
        log_event(LOG_INFO, "thr", json_pack("{s:i, s:i}", "t", (int)t, "i", i),
                  "thread %ld line %d %s", t, i, "padding padding padding padding");
    return NULL;
}

static void test_threads_whole_lines(void **state)
{
    log_init();
    pthread_t th[THREADS];
    for (long t = 0; t < THREADS; t++)
        assert_int_equal(pthread_create(&th[t], NULL, log_thread, (void *)(intptr_t)t), 0);
    for (int t = 0; t < THREADS; t++)
        pthread_join(th[t], NULL);
    log_close();
    json_t *lines = read_lines();
    assert_int_equal(json_array_size(lines), THREADS * PER_THREAD);
    /* Per thread, lines stay in the order they were logged. */
    int next[THREADS] = {0};
    size_t i;
    json_t *v;
    json_array_foreach(lines, i, v) {
        int t = (int)json_get_int(v, "t", -1);
        assert_true(t >= 0 && t < THREADS);
        assert_int_equal(json_get_int(v, "i", -1), next[t]);
        next[t]++;
    }
    json_decref(lines);
}

static void test_off_when_unset(void **state)
{
    unsetenv("LOOM_LOG");
    log_init();
    errno = EACCES;
    log_event(LOG_ERROR, "m", json_pack("{s:s}", "k", "v"), "nowhere");
    assert_int_equal(errno, EACCES); /* logging never clobbers errno */
    log_close();
    assert_false(file_exists(logpath));

    /* Messages that are not valid UTF-8 still produce a valid line. */
    setenv("LOOM_LOG", logpath, 1);
    log_init();
    errno = ENOENT;
    LOG_I("m", "bytes \xff\xfe end");
    assert_int_equal(errno, ENOENT);
    log_close();
    json_t *lines = read_lines();
    assert_int_equal(json_array_size(lines), 1);
    json_decref(lines);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_line_schema_and_fields, setup, teardown),
        cmocka_unit_test_setup_teardown(test_level_default_is_info, setup, teardown),
        cmocka_unit_test_setup_teardown(test_level_filtering, setup, teardown),
        cmocka_unit_test_setup_teardown(test_threads_whole_lines, setup, teardown),
        cmocka_unit_test_setup_teardown(test_off_when_unset, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
