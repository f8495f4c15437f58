/* test_base_sig.c — sig_set installs one disposition on every signal it is
 * given, with the flags asked for and an empty mask, and says when one
 * cannot be set; sig_block and sig_thread_create set the masks threads
 * start with. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
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

static void *report_mask(void *arg)
{
    sigset_t *mask = arg;
    pthread_sigmask(SIG_SETMASK, NULL, mask);
    return NULL;
}

/* A thread started by sig_thread_create takes no asynchronous signal but
 * can still die of its own faults; the caller's mask is left as it was. */
static void test_thread_blocks_async_signals_only(void **state)
{
    sigset_t before, after, in_thread;
    pthread_sigmask(SIG_SETMASK, NULL, &before);
    pthread_t t;
    assert_int_equal(sig_thread_create(&t, report_mask, &in_thread), 0);
    pthread_join(t, NULL);
    pthread_sigmask(SIG_SETMASK, NULL, &after);
    static const int async[] = {SIGINT, SIGTERM, SIGHUP, SIGUSR1, SIGUSR2, SIGPIPE, SIGCHLD};
    for (size_t i = 0; i < sizeof async / sizeof *async; i++)
        assert_int_equal(sigismember(&in_thread, async[i]), 1);
    static const int faults[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL};
    for (size_t i = 0; i < 4; i++)
        assert_int_equal(sigismember(&in_thread, faults[i]), 0);
    for (int sig = 1; sig < 32; sig++)
        assert_int_equal(sigismember(&after, sig), sigismember(&before, sig));
}

/* sig_block adds exactly the signals named, and the old mask restores. */
static void test_block_adds_the_named_signals(void **state)
{
    static const int sigs[] = {SIGUSR1, SIGHUP};
    sigset_t old, now;
    sig_block(sigs, 2, &old);
    pthread_sigmask(SIG_SETMASK, NULL, &now);
    assert_int_equal(sigismember(&now, SIGUSR1), 1);
    assert_int_equal(sigismember(&now, SIGHUP), 1);
    assert_int_equal(sigismember(&now, SIGTERM), sigismember(&old, SIGTERM));
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    pthread_sigmask(SIG_SETMASK, NULL, &now);
    assert_int_equal(sigismember(&now, SIGUSR1), sigismember(&old, SIGUSR1));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_signal_gets_the_handler_and_flags),
        cmocka_unit_test(test_default_and_ignore_are_dispositions_too),
        cmocka_unit_test(test_a_signal_that_cannot_be_caught_is_an_error_the_rest_still_set),
        cmocka_unit_test(test_thread_blocks_async_signals_only),
        cmocka_unit_test(test_block_adds_the_named_signals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
