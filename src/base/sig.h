/* sig.h — setting signal dispositions, the one way Loom does it: the CLI's
 * handlers for the REPL and print mode, and the defaults a shell command
 * started from the REPL gets back; and signal masks around the threads
 * Loom starts.
 *
 * Only sigaction(2) is called, which is async-signal-safe, so a child
 * between fork and exec may use it. Dispositions are process-wide: the
 * caller decides when (at start-up, before other threads run). */
#ifndef LOOM_BASE_SIG_H
#define LOOM_BASE_SIG_H

#include <pthread.h>
#include <signal.h>
#include <stddef.h>

/* Sets handler (a function, SIG_DFL or SIG_IGN) for each of the n signals,
 * with an empty mask and flags (SA_RESTART or 0, …). 0, or -1 when a
 * sigaction failed (the others are still set). */
int sig_set(const int *sigs, size_t n, void (*handler)(int), int flags);

/* Blocks the n signals in the calling thread; *old gets the mask to put
 * back with pthread_sigmask(SIG_SETMASK, old, NULL). Threads started
 * meanwhile inherit the blocked set. */
void sig_block(const int *sigs, size_t n, sigset_t *old);

/* pthread_create for a thread that takes no asynchronous signal (the
 * process's handlers run on the threads that expect EINTR); the faults a
 * thread raises itself (SIGSEGV, SIGBUS, SIGFPE, SIGILL) stay deliverable.
 * The caller's mask is unchanged. pthread_create's result. */
int sig_thread_create(pthread_t *thread, void *(*fn)(void *), void *arg);

#endif
