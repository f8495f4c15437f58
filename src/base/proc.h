/* proc.h — running a child process under Loom's rules.
 *
 * The child gets its own process group so a timeout or cancel reaches every
 * descendant: SIGTERM to the group, a grace period, then SIGKILL. stdout and
 * stderr are captured up to a cap each; what is cut is counted, not lost
 * silently. stdin is /dev/null unless input is given.
 */
#ifndef LOOM_BASE_PROC_H
#define LOOM_BASE_PROC_H

#include <stdbool.h>
#include <stddef.h>

#include "base/cancel.h"
#include "base/error.h"

typedef struct proc_spec {
    const char *const *argv;    /* argv[0] is looked up in PATH */
    const char *const *envp;    /* NULL = inherit */
    const char *cwd;            /* NULL = inherit */
    const char *input;          /* written to stdin, then closed; NULL = /dev/null */
    size_t input_len;
    long timeout_ms;            /* <= 0: none */
    long grace_ms;              /* SIGTERM→SIGKILL delay; <= 0 → 2000 */
    size_t capture_cap;         /* per stream; 0 → 1 MiB */
    const loom_cancel *cancel;  /* nonzero → terminate like a timeout */
    /* Runs in the child after fork, once its stdio and cwd are in place, just
     * before exec: the place to confine the command (policy/sandbox.h) so
     * that it and every descendant start confined. Loom has threads, so only
     * async-signal-safe calls belong here. Nonzero means the command must
     * not run: the child writes "loom: MSG" to its stderr and exits 126.
     * NULL = nothing to do. */
    int (*child_setup)(void *ctx, char *msg, size_t msg_cap);
    void *child_ctx;
} proc_spec;

typedef struct proc_result {
    int exit_code;          /* -1 when killed by a signal */
    int term_signal;        /* 0 unless killed by a signal */
    bool timed_out;
    bool cancelled;
    char *out;              /* captured stdout, NUL-terminated, caller frees */
    size_t out_len;
    size_t out_dropped;     /* bytes beyond the cap */
    char *err;
    size_t err_len;
    size_t err_dropped;
    long duration_ms;
} proc_result;

/* Runs to completion. 0 when the child ran (whatever its exit status);
 * -code when it could not be started. */
int proc_run(const proc_spec *spec, proc_result *res, loom_error *err);
void proc_result_free(proc_result *res);

#endif
