/* test_base_warn_list.c — a warn_list keeps copies in order, formats,
 * takes the string items of a notices array, works as a parser's warn
 * callback and is empty again after warn_list_free. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "base/warn_list.h"

static void parser_like(void (*warn)(void *ctx, const char *msg), void *ctx)
{
    warn(ctx, "x.md: model: expected text; dropped");
}

static void test_warn_list(void **state)
{
    (void)state;
    warn_list w = {0};
    assert_int_equal(warn_list_count(&w), 0);
    assert_null(warn_list_at(&w, 0));
    assert_int_equal(warn_list_count(NULL), 0);
    assert_null(warn_list_at(NULL, 0));

    char msg[] = "a.md: not a regular file; skipped";
    warn_list_add(&w, msg);
    msg[0] = 'b'; /* the list holds a copy */
    warn_list_addf(&w, "%s: more than %d files", "dir", 3);
    parser_like(warn_list_sink, &w);
    json_t *notices = json_pack("[s, i, s]", "skipped .loom/commands (not trusted)", 7, "second");
    warn_list_add_strings(&w, notices);
    warn_list_add_strings(&w, NULL);
    json_decref(notices);

    assert_int_equal(warn_list_count(&w), 5);
    assert_string_equal(warn_list_at(&w, 0), "a.md: not a regular file; skipped");
    assert_string_equal(warn_list_at(&w, 1), "dir: more than 3 files");
    assert_string_equal(warn_list_at(&w, 2), "x.md: model: expected text; dropped");
    assert_string_equal(warn_list_at(&w, 3), "skipped .loom/commands (not trusted)");
    assert_string_equal(warn_list_at(&w, 4), "second");
    assert_null(warn_list_at(&w, 5));

    warn_list_free(&w);
    assert_int_equal(warn_list_count(&w), 0);
    warn_list_add(&w, "again");
    assert_string_equal(warn_list_at(&w, 0), "again");
    warn_list_free(&w);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_warn_list),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
