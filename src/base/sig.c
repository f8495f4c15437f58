/* sig.c — signal dispositions (see sig.h). No state; async-signal-safe. */
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
