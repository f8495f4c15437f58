/* test_context_budget.c — token budgets written as "+500k": where in a
 * prompt they count, the units, and what is not one. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "context/budget.h"

static void test_parse_prompt(void **state)
{
    (void)state;
    assert_int_equal(budget_parse_prompt("+500k fix the flaky tests"), 500000);
    assert_int_equal(budget_parse_prompt("  +500K\tfix the flaky tests"), 500000);
    assert_int_equal(budget_parse_prompt("fix the flaky tests +500k"), 500000);
    assert_int_equal(budget_parse_prompt("fix the flaky tests +500k  \n"), 500000);
    assert_int_equal(budget_parse_prompt("refactor everything, +1.5m."), 1500000);
    assert_int_equal(budget_parse_prompt("+2M"), 2000000);
    assert_int_equal(budget_parse_prompt("go +20000"), 20000);
    assert_int_equal(budget_parse_prompt("+1.5k go"), 1500);
    /* Sentence punctuation after the word. */
    assert_int_equal(budget_parse_prompt("+500k, fix the flaky tests"), 500000);
    assert_int_equal(budget_parse_prompt("+500k: fix the flaky tests"), 500000);
    assert_int_equal(budget_parse_prompt("fix the flaky tests +500k!"), 500000);
    /* None. */
    assert_int_equal(budget_parse_prompt("fix the flaky tests"), 0);
    assert_int_equal(budget_parse_prompt(""), 0);
    assert_int_equal(budget_parse_prompt("   "), 0);
    assert_int_equal(budget_parse_prompt(NULL), 0);
    /* Not standing alone, or not at the start or the end. */
    assert_int_equal(budget_parse_prompt("a+500k"), 0);
    assert_int_equal(budget_parse_prompt("fix a+500k"), 0);
    assert_int_equal(budget_parse_prompt("+500kb of logs"), 0);
    assert_int_equal(budget_parse_prompt("spend +500k on the tests please"), 0);
    assert_int_equal(budget_parse_prompt("500k"), 0);
    assert_int_equal(budget_parse_prompt("+"), 0);
    /* Zero or garbage. */
    assert_int_equal(budget_parse_prompt("+0k go"), 0);
    assert_int_equal(budget_parse_prompt("go +0"), 0);
    assert_int_equal(budget_parse_prompt("+k go"), 0);
    assert_int_equal(budget_parse_prompt("+abc go"), 0);
    assert_int_equal(budget_parse_prompt("go +1.2.3k"), 0);
    assert_int_equal(budget_parse_prompt("go +5kk"), 0);
    assert_int_equal(budget_parse_prompt("go +-5k"), 0);
    assert_int_equal(budget_parse_prompt("go +.5k"), 0);
    assert_int_equal(budget_parse_prompt("go +1e6"), 0);
    assert_int_equal(budget_parse_prompt("go +0x10"), 0);
    assert_int_equal(budget_parse_prompt("go +99999999999m"), 0);
    assert_int_equal(budget_parse_prompt("go +123456789012345678901234567890"), 0);
    /* The first word wins when both ends carry one. */
    assert_int_equal(budget_parse_prompt("+100k go +200k"), 100000);
    /* A bad first word does not hide a good last one. */
    assert_int_equal(budget_parse_prompt("+abc go +200k"), 200000);
}

static void test_parse_amount(void **state)
{
    (void)state;
    assert_int_equal(budget_parse_amount("500k"), 500000);
    assert_int_equal(budget_parse_amount("500K"), 500000);
    assert_int_equal(budget_parse_amount("1.5m"), 1500000);
    assert_int_equal(budget_parse_amount("20000"), 20000);
    assert_int_equal(budget_parse_amount("0.5k"), 500);
    assert_int_equal(budget_parse_amount("1"), 1);
    assert_int_equal(budget_parse_amount(""), -1);
    assert_int_equal(budget_parse_amount(NULL), -1);
    assert_int_equal(budget_parse_amount("0"), -1);
    assert_int_equal(budget_parse_amount("0k"), -1);
    assert_int_equal(budget_parse_amount("+500k"), -1);
    assert_int_equal(budget_parse_amount("-5"), -1);
    assert_int_equal(budget_parse_amount("k"), -1);
    assert_int_equal(budget_parse_amount("5g"), -1);
    assert_int_equal(budget_parse_amount("5 k"), -1);
    assert_int_equal(budget_parse_amount("1e3"), -1);
    assert_int_equal(budget_parse_amount("nan"), -1);
    assert_int_equal(budget_parse_amount("500k "), -1);
    assert_int_equal(budget_parse_amount("10000000m"), 10000000000000LL);
    assert_int_equal(budget_parse_amount("10000001m"), -1); /* over 1e13 */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_prompt),
        cmocka_unit_test(test_parse_amount),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
