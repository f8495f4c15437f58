/* proc.h — running a child process under Loom's rules, and keeping track of
 * every process a command leaves behind.
 *
 * The child gets its own process group so a timeout or cancel reaches every
 * descendant: SIGTERM to the group, a grace period, then SIGKILL. stdout and
 * stderr are captured up to a cap each; what is cut is counted, not lost
 * silently. stdin is /dev/null unless input is given.
 *
 * Nothing a command starts outlives it: Loom makes itself a child subreaper
 * at its first spawn, so a process a command leaves behind (`cmd &`, nohup,
 * setsid, a double fork) is re-parented to Loom instead of to init, and when
 * the call ends its group and every such orphan are killed and reaped. An
 * orphan that left the call's process group cannot be told apart from one of
 * another command still running; it is ended when the call ends if no other
 * command is running, else when the last running one ends, and at the latest
 * when Loom exits (an atexit handler). Thread-safe.
 */
#ifndef LOOM_BASE_PROC_H
#define LOOM_BASE_PROC_H

#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>
#include <spawn.h>
#include <sys/types.h>

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
     * before exec: the place to confine the command (sandbox/sandbox.h) so
     * that it and every descendant start confined. Loom has threads, so only
     * async-signal-safe calls belong here. Nonzero means the command must
     * not run: the child writes "loom: MSG" to its stderr and exits 126.
     * NULL = nothing to do. */
    int (*child_setup)(void *ctx, char *msg, size_t msg_cap);
    void *child_ctx;
    /* A supervisor in the parent for the child's life. When set, child_setup
     * may hand one descriptor to the parent with proc_child_pass_fd (the
     * sandbox's seccomp listener); the poll loop calls supervise(ctx, fd)
     * each time it is readable, and proc_run closes it at the end. Without
     * supervise, proc_child_pass_fd fails. */
    void (*supervise)(void *ctx, int fd);
    void *supervise_ctx;
    /* Live output, on proc_run's thread: each piece as it is read (stream 1
     * stdout, 2 stderr; beyond the capture cap too), and (stream 0, n 0)
     * once a tick of the wait loop, so a caller that batches what it got
     * can pass it on while the child is quiet. NULL = none. */
    void (*on_output)(void *ctx, int stream, const char *data, size_t n);
    void *output_ctx;
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

/* In child_setup only (after fork, async-signal-safe): hands fd to the
 * parent's supervise callback. 0, or -1 when the spec has no supervise. */
int proc_child_pass_fd(int fd);
/* Whether proc_child_pass_fd can succeed in this child. */
bool proc_child_can_pass_fd(void);
/* The socket proc_child_pass_fd sends on (-1 without a supervisor). */
int proc_child_pass_sock(void);
/* The hand-over itself, over a Unix socket (SCM_RIGHTS): send is
 * async-signal-safe; recv gives a close-on-exec descriptor or -1, waiting
 * for it when wait. */
int proc_send_fd(int sock, int fd);
int proc_recv_fd(int sock, bool wait);

/* For spawners outside proc_run (the background shells): hold the lock
 * across the fork/spawn and register the new child (its pid is also its
 * group) as running; pid <= 0 registers nothing. proc_spawn_lock also makes
 * Loom a subreaper the first time. */
/* A spawned child's attributes as every command of Loom's needs them: its
 * own process group (an end reaches every descendant), the default signal
 * dispositions and an empty mask whatever Loom ignores or blocks. 0, or
 * nonzero when a posix_spawnattr call failed (attr is then destroyed). */
int proc_spawnattr_init(posix_spawnattr_t *attr);
/* write() that cannot kill Loom with SIGPIPE when the reader (a child's
 * stdin) is gone: the signal is blocked in the writing thread and a pending
 * one eaten, so the process-wide disposition is left alone. */
ssize_t proc_write_nosigpipe(int fd, const void *buf, size_t n);

void proc_spawn_lock(void);
void proc_spawn_unlock(pid_t pid);
/* The command started as pid (its group leader, already reaped) has ended:
 * forgets it, then kills and reaps what is left of its group and the orphans
 * that belong to it (see the top of this file). */
void proc_call_end(pid_t pid);
/* Kills and reaps every orphan re-parented to Loom that no running command
 * can claim (all of them when none is running): for the end of a session.
 * Registered children are left to their owners. At exit Loom kills every
 * process it started that is left, running commands' groups included. */
void proc_end_orphans(void);

/* One /proc/PID/stat: state ('R', 'S', 'Z', …), parent, process group and
 * start time (clock ticks since boot). False when the process is gone or
 * the file cannot be read. Any thread. */
bool proc_read_stat(pid_t pid, char *state, pid_t *ppid, pid_t *pgrp, int64_t *started);

#endif
