/* test_base_arena.c — arena alignment, zeroing, oversized requests, reset
 * and accounting. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "base/arena.h"

static void test_alignment_and_zero(void **state)
{
    arena a;
    arena_init(&a, 1024);
    for (size_t n = 0; n < 200; n++) {
        unsigned char *p = arena_alloc(&a, n % 37);
        assert_non_null(p);
        assert_int_equal((uintptr_t)p % 16, 0);
        for (size_t i = 0; i < n % 37; i++)
            assert_int_equal(p[i], 0);
        memset(p, 0xAB, n % 37); /* dirty it: the next one must still be zeroed */
    }
    arena_free(&a);
}

static void test_distinct_nonoverlapping(void **state)
{
    arena a;
    arena_init(&a, 0); /* default chunk size */
    char *p[100];
    for (int i = 0; i < 100; i++) {
        p[i] = arena_alloc(&a, 100);
        memset(p[i], i, 100);
    }
    for (int i = 0; i < 100; i++)
        for (int j = 0; j < 100; j++)
            assert_int_equal((unsigned char)p[i][j], i);
    /* Zero-byte requests still get distinct pointers. */
    void *z1 = arena_alloc(&a, 0), *z2 = arena_alloc(&a, 0);
    assert_non_null(z1);
    assert_ptr_not_equal(z1, z2);
    arena_free(&a);
}

static void test_large_allocs(void **state)
{
    arena a;
    arena_init(&a, 256);
    char *small1 = arena_alloc(&a, 16);
    strcpy(small1, "before");
    /* Far bigger than a chunk: must still be served, aligned and zeroed. */
    size_t big = 1 << 20;
    unsigned char *b = arena_alloc(&a, big);
    assert_int_equal((uintptr_t)b % 16, 0);
    for (size_t i = 0; i < big; i += 4096)
        assert_int_equal(b[i], 0);
    memset(b, 0xFF, big);
    char *small2 = arena_alloc(&a, 16);
    strcpy(small2, "after");
    assert_string_equal(small1, "before");
    assert_string_equal(small2, "after");
    /* Exactly a chunk's worth and just over. */
    assert_non_null(arena_alloc(&a, 256));
    assert_non_null(arena_alloc(&a, 257));
    assert_true(a.used_total >= big + 16 + 16 + 256 + 257);
    arena_free(&a);
}

static void test_strdup(void **state)
{
    arena a;
    arena_init(&a, 64);
    char *s = arena_strdup(&a, "hello arena");
    assert_string_equal(s, "hello arena");
    char *t = arena_strndup(&a, "truncate me", 8);
    assert_string_equal(t, "truncate");
    char *u = arena_strndup(&a, "ab", 100);
    assert_string_equal(u, "ab");
    assert_null(arena_strdup(&a, NULL));
    arena_free(&a);
}

static void test_reset(void **state)
{
    arena a;
    arena_init(&a, 4096);
    for (int i = 0; i < 100; i++)
        arena_alloc(&a, 1000); /* spans many chunks */
    arena_alloc(&a, 100000);
    assert_true(a.used_total >= 200000);
    arena_reset(&a);
    assert_int_equal(a.used_total, 0);
    /* The head is back to one chunk; memory handed out again is zeroed. */
    assert_non_null(a.head);
    unsigned char *p = arena_alloc(&a, 3000);
    for (int i = 0; i < 3000; i++)
        assert_int_equal(p[i], 0);
    assert_int_equal(a.used_total, 3000);
    arena_reset(&a);
    arena_reset(&a); /* twice is harmless */
    arena_free(&a);
    assert_null(a.head);
    arena_free(&a); /* and so is a double free of the arena */
    /* A freed arena can be used again. */
    assert_non_null(arena_alloc(&a, 10));
    arena_free(&a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_alignment_and_zero), cmocka_unit_test(test_distinct_nonoverlapping),
        cmocka_unit_test(test_large_allocs),       cmocka_unit_test(test_strdup),
        cmocka_unit_test(test_reset),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
