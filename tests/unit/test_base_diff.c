/* test_base_diff.c — the line diff (src/base/diff.c): the shortest edit
 * script, hunks with their context and line numbers as `diff -u` numbers
 * them, and the structuredPatch JSON the Edit and Write results carry. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "base/diff.h"
#include "base/str.h"

static void diff(const char *a, const char *b, int ctx, diff_result *d)
{
    diff_texts(a, a ? strlen(a) : 0, b, strlen(b), ctx, d);
}

static void identical_texts_have_no_hunks(void **state)
{
    (void)state;
    diff_result d;
    diff("a\nb\nc\n", "a\nb\nc\n", 3, &d);
    assert_int_equal(d.n_hunks, 0);
    assert_int_equal(d.added + d.removed, 0);
    diff_result_free(&d);
}

static void one_changed_line_is_one_removal_and_one_addition_with_context(void **state)
{
    (void)state;
    diff_result d;
    diff("1\n2\n3\n4\n5\n6\n7\n8\n9\n", "1\n2\n3\n4\nfive\n6\n7\n8\n9\n", 2, &d);
    assert_int_equal(d.n_hunks, 1);
    assert_int_equal(d.added, 1);
    assert_int_equal(d.removed, 1);
    const diff_hunk *h = &d.hunks[0];
    /* Two lines of context either side: old lines 3..7. */
    assert_int_equal(h->old_start, 3);
    assert_int_equal(h->old_lines, 5);
    assert_int_equal(h->new_start, 3);
    assert_int_equal(h->new_lines, 5);
    assert_int_equal(d.lines[h->first + 2].op, '-');
    assert_int_equal(d.lines[h->first + 2].old_no, 5);
    assert_int_equal(d.lines[h->first + 3].op, '+');
    assert_int_equal(d.lines[h->first + 3].new_no, 5);
    assert_true(d.lines[h->first + 3].n == 4 && !memcmp(d.lines[h->first + 3].s, "five", 4));
    diff_result_free(&d);
}

static void changes_far_apart_make_two_hunks_and_close_ones_share_one(void **state)
{
    (void)state;
    loom_str a = LOOM_STR_INIT, b = LOOM_STR_INIT;
    for (int i = 1; i <= 30; i++) {
        str_printf(&a, "line %d\n", i);
        str_printf(&b, i == 2 || i == 28 ? "changed %d\n" : "line %d\n", i);
    }
    diff_result d;
    diff(a.ptr, b.ptr, 3, &d);
    assert_int_equal(d.n_hunks, 2);
    assert_int_equal(d.hunks[1].old_start, 25);
    diff_result_free(&d);
    str_clear(&b);
    for (int i = 1; i <= 30; i++)
        str_printf(&b, i == 10 || i == 15 ? "changed %d\n" : "line %d\n", i);
    diff(a.ptr, b.ptr, 3, &d);
    assert_int_equal(d.n_hunks, 1); /* four lines apart: fewer than twice the context */
    diff_result_free(&d);
    str_free(&a);
    str_free(&b);
}

static void insertions_and_deletions_find_the_shortest_script(void **state)
{
    (void)state;
    diff_result d;
    diff("a\nb\nc\nd\n", "x\na\nc\nd\ny\n", 0, &d);
    /* x added, b removed, y added: three edits, nothing else touched. */
    assert_int_equal(d.added, 2);
    assert_int_equal(d.removed, 1);
    assert_int_equal(d.n_hunks, 3);
    assert_int_equal(d.hunks[0].old_lines, 0);
    assert_int_equal(d.hunks[0].old_start, 0); /* an empty side names the line before */
    assert_int_equal(d.hunks[0].new_start, 1);
    diff_result_free(&d);
}

static void a_new_file_is_all_additions(void **state)
{
    (void)state;
    diff_result d;
    diff(NULL, "one\ntwo", 3, &d);
    assert_int_equal(d.added, 2);
    assert_int_equal(d.removed, 0);
    assert_int_equal(d.n_hunks, 1);
    assert_int_equal(d.hunks[0].new_start, 1);
    assert_int_equal(d.hunks[0].new_lines, 2);
    diff_result_free(&d);
}

static void structured_patch_has_claude_codes_fields(void **state)
{
    (void)state;
    diff_result d;
    diff("a\nb\nc\n", "a\nB\nc\n", 1, &d);
    json_t *p = diff_structured_patch(&d, 0);
    char *text = json_dump_compact(p);
    assert_string_equal(text, "[{\"oldStart\":1,\"oldLines\":3,\"newStart\":1,\"newLines\":3,"
                              "\"lines\":[\" a\",\"-b\",\"+B\",\" c\"]}]");
    free(text);
    json_decref(p);
    assert_null(diff_structured_patch(&d, 2)); /* four lines are over a limit of two */
    diff_result_free(&d);
}

static void a_rewrite_past_the_limit_gives_up_in_linear_time(void **state)
{
    (void)state;
    loom_str a = LOOM_STR_INIT, b = LOOM_STR_INIT;
    for (int i = 0; i < 3000; i++) {
        str_printf(&a, "old %d\n", i);
        str_printf(&b, "new %d\n", i);
    }
    diff_result d;
    diff(a.ptr, b.ptr, 3, &d);
    assert_true(d.gave_up);
    assert_int_equal(d.removed, 3000);
    assert_int_equal(d.added, 3000);
    diff_result_free(&d);
    str_free(&a);
    str_free(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(identical_texts_have_no_hunks),
        cmocka_unit_test(one_changed_line_is_one_removal_and_one_addition_with_context),
        cmocka_unit_test(changes_far_apart_make_two_hunks_and_close_ones_share_one),
        cmocka_unit_test(insertions_and_deletions_find_the_shortest_script),
        cmocka_unit_test(a_new_file_is_all_additions),
        cmocka_unit_test(structured_patch_has_claude_codes_fields),
        cmocka_unit_test(a_rewrite_past_the_limit_gives_up_in_linear_time),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
