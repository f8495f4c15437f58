/* test_base_sig.c — sig_set installs one disposition on every signal it is
 * given, with the flags asked for and an empty mask, and says when one
 * cannot be set. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <signal.h>
#include <string.h>

#include "base/sig.h"

static volatile sig_atomic_t caught;

static void on_sig(int sig)
{
    caught = sig;
}

static void test_every_signal_gets_the_handler_and_flags(void **state)
{
    static const int sigs[] = {SIGUSR1, SIGUSR2};
    assert_int_equal(sig_set(sigs, 2, on_sig, SA_RESTART), 0);
    for (int i = 0; i < 2; i++) {
        struct sigaction sa;
        assert_int_equal(sigaction(sigs[i], NULL, &sa), 0);
        assert_ptr_equal(sa.sa_handler, on_sig);
        assert_true(sa.sa_flags & SA_RESTART);
        assert_int_equal(sigismember(&sa.sa_mask, SIGINT), 0);
    }
    caught = 0;
    raise(SIGUSR2);
    assert_int_equal(caught, SIGUSR2);
    assert_int_equal(sig_set(sigs, 2, SIG_DFL, 0), 0);
}

static void test_default_and_ignore_are_dispositions_too(void **state)
{
    static const int sigs[] = {SIGHUP};
    struct sigaction sa;
    assert_int_equal(sig_set(sigs, 1, SIG_IGN, 0), 0);
    assert_int_equal(sigaction(SIGHUP, NULL, &sa), 0);
    assert_ptr_equal(sa.sa_handler, SIG_IGN);
    assert_int_equal(sig_set(sigs, 1, SIG_DFL, 0), 0);
    assert_int_equal(sigaction(SIGHUP, NULL, &sa), 0);
    assert_ptr_equal(sa.sa_handler, SIG_DFL);
}

static void test_a_signal_that_cannot_be_caught_is_an_error_the_rest_still_set(void **state)
{
    static const int sigs[] = {SIGKILL, SIGUSR1};
    assert_int_equal(sig_set(sigs, 2, on_sig, 0), -1);
    struct sigaction sa;
    assert_int_equal(sigaction(SIGUSR1, NULL, &sa), 0);
    assert_ptr_equal(sa.sa_handler, on_sig);
    assert_int_equal(sig_set(sigs + 1, 1, SIG_DFL, 0), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_signal_gets_the_handler_and_flags),
        cmocka_unit_test(test_default_and_ignore_are_dispositions_too),
        cmocka_unit_test(test_a_signal_that_cannot_be_caught_is_an_error_the_rest_still_set),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
