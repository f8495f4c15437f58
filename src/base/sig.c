/* sig.c — signal dispositions and masks (see sig.h). No state; sig_set
 * is async-signal-safe. */
#include "base/sig.h"

#include <signal.h>
#include <string.h>

int sig_set(const int *sigs, size_t n, void (*handler)(int), int flags)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = handler;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = flags;
    int rc = 0;
    for (size_t i = 0; i < n; i++)
        if (sigaction(sigs[i], &sa, NULL) != 0)
            rc = -1;
    return rc;
}

void sig_block(const int *sigs, size_t n, sigset_t *old)
{
    sigset_t set;
    sigemptyset(&set);
    for (size_t i = 0; i < n; i++)
        sigaddset(&set, sigs[i]);
    pthread_sigmask(SIG_BLOCK, &set, old);
}

int sig_thread_create(pthread_t *thread, void *(*fn)(void *), void *arg)
{
    sigset_t all, old;
    sigfillset(&all);
    sigdelset(&all, SIGSEGV);
    sigdelset(&all, SIGBUS);
    sigdelset(&all, SIGFPE);
    sigdelset(&all, SIGILL);
    pthread_sigmask(SIG_BLOCK, &all, &old);
    int rc = pthread_create(thread, NULL, fn, arg);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return rc;
}
