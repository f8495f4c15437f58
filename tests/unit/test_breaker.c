/* test_breaker.c — base/breaker.h: opens after the threshold of failures in
 * a row (a success in between resets the count), refuses calls while open,
 * lets one trial through per cooldown, closes on the trial's success and
 * waits a whole cooldown again after its failure. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "base/breaker.h"

static void test_breaker(void **state)
{
    (void)state;
    breaker b;
    breaker_init(&b, 3, 2);
    assert_true(breaker_allow(&b));
    assert_false(breaker_failure(&b));
    assert_false(breaker_failure(&b));
    breaker_success(&b); /* the count is of failures in a row */
    assert_false(breaker_failure(&b));
    assert_false(breaker_failure(&b));
    assert_true(breaker_failure(&b)); /* the third in a row opens it */
    assert_true(breaker_is_open(&b));
    assert_false(breaker_allow(&b));
    assert_false(breaker_allow(&b));
    assert_true(breaker_allow(&b));   /* after the cooldown: one trial */
    assert_false(breaker_allow(&b));  /* and only one while it is out */
    assert_false(breaker_failure(&b)); /* the trial failed: still open */
    assert_true(breaker_is_open(&b));
    assert_false(breaker_allow(&b));
    assert_false(breaker_allow(&b));
    assert_true(breaker_allow(&b));
    breaker_success(&b);               /* the trial succeeded: closed */
    assert_false(breaker_is_open(&b));
    assert_true(breaker_allow(&b));
    assert_int_equal(breaker_failures(&b), 0);
    assert_int_equal(b.trips, 1);
    breaker_destroy(&b);
    breaker_init(&b, 0, 0); /* zeros mean one */
    assert_true(breaker_failure(&b));
    assert_true(breaker_allow(&b) == false);
    assert_true(breaker_allow(&b));
    breaker_destroy(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_breaker)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
