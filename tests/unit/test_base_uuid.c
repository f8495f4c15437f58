/* test_base_uuid.c — UUIDv7 layout, ordering (also across threads) and the
 * syntax check. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "base/uuid.h"

static int hexval(char c)
{
    return c <= '9' ? c - '0' : c - 'a' + 10;
}

static void test_format_and_bits(void **state)
{
    char id[UUID_STR_LEN];
    int64_t before = clock_wall_ms();
    uuid_v7(id);
    int64_t after = clock_wall_ms();
    assert_int_equal(strlen(id), 36);
    assert_true(uuid_valid(id));
    for (int i = 0; i < 36; i++) {
        if (i == 8 || i == 13 || i == 18 || i == 23)
            assert_int_equal(id[i], '-');
        else
            assert_true((id[i] >= '0' && id[i] <= '9') || (id[i] >= 'a' && id[i] <= 'f'));
    }
    assert_int_equal(id[14], '7');                  /* version */
    assert_non_null(strchr("89ab", id[19]));        /* variant 10xx */
    /* The first 48 bits are the Unix time in ms. */
    int64_t ms = 0;
    for (int i = 0; i < 13; i++) {
        if (i == 8)
            continue;
        ms = ms * 16 + hexval(id[i]);
    }
    assert_true(ms >= before);
    assert_true(ms <= after + 1); /* +1: a counter overflow may borrow a ms */
}

static void test_strictly_increasing(void **state)
{
    enum { N = 10000 };
    char (*ids)[UUID_STR_LEN] = malloc(sizeof(*ids) * N);
    for (int i = 0; i < N; i++)
        uuid_v7(ids[i]);
    for (int i = 1; i < N; i++) {
        if (strcmp(ids[i - 1], ids[i]) >= 0)
            fail_msg("id %d not after id %d: %s vs %s", i, i - 1, ids[i], ids[i - 1]);
        assert_int_equal(ids[i][14], '7');
        assert_non_null(strchr("89ab", ids[i][19]));
    }
    free(ids);
}

enum { THREADS = 4, PER_THREAD = 2000 };
static char thread_ids[THREADS][PER_THREAD][UUID_STR_LEN];

static void *gen_thread(void *arg)
{
    char(*mine)[UUID_STR_LEN] = arg;
    for (int i = 0; i < PER_THREAD; i++)
        uuid_v7(mine[i]);
    return NULL;
}

static int cmp_id(const void *a, const void *b)
{
    return strcmp(a, b);
}

static void test_threads_unique_and_ordered(void **state)
{
    pthread_t t[THREADS];
    for (int i = 0; i < THREADS; i++)
        assert_int_equal(pthread_create(&t[i], NULL, gen_thread, thread_ids[i]), 0);
    for (int i = 0; i < THREADS; i++)
        pthread_join(t[i], NULL);
    /* Each thread sees its own ids increasing... */
    for (int i = 0; i < THREADS; i++)
        for (int j = 1; j < PER_THREAD; j++)
            assert_true(strcmp(thread_ids[i][j - 1], thread_ids[i][j]) < 0);
    /* ...and no id is handed out twice across threads. */
    static char all[THREADS * PER_THREAD][UUID_STR_LEN];
    memcpy(all, thread_ids, sizeof all);
    qsort(all, THREADS * PER_THREAD, UUID_STR_LEN, cmp_id);
    for (int i = 1; i < THREADS * PER_THREAD; i++)
        assert_true(strcmp(all[i - 1], all[i]) < 0);
}

static void test_valid(void **state)
{
    assert_true(uuid_valid("0190a5b2-3c4d-7e8f-9a0b-1c2d3e4f5a6b"));
    assert_true(uuid_valid("0190A5B2-3C4D-7E8F-9A0B-1C2D3E4F5A6B"));
    assert_true(uuid_valid("00000000-0000-0000-0000-000000000000"));
    assert_false(uuid_valid(NULL));
    assert_false(uuid_valid(""));
    assert_false(uuid_valid("0190a5b2-3c4d-7e8f-9a0b-1c2d3e4f5a6"));   /* short */
    assert_false(uuid_valid("0190a5b2-3c4d-7e8f-9a0b-1c2d3e4f5a6bc")); /* long */
    assert_false(uuid_valid("0190a5b2a3c4d-7e8f-9a0b-1c2d3e4f5a6b"));  /* dash missing */
    assert_false(uuid_valid("0190a5b2-3c4d-7e8f-9a0b-1c2d3e4f5a6g"));  /* not hex */
    assert_false(uuid_valid("{0190a5b2-3c4d-7e8f-9a0b-1c2d3e4f5a6}"));
    assert_false(uuid_valid("0190a5b23c4d7e8f9a0b1c2d3e4f5a6b"));      /* no dashes */
    assert_false(uuid_valid("0190a5b2-3c4d-7e8f-9a0b-1c2d3e4f5a6b\n"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_format_and_bits),
        cmocka_unit_test(test_strictly_increasing),
        cmocka_unit_test(test_threads_unique_and_ordered),
        cmocka_unit_test(test_valid),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
