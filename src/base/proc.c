/* proc.c — runs one child process to completion under Loom's rules: its own
 * process group, captured and capped output, optional stdin, timeout and
 * cancellation that reach every descendant.
 *
 * The parent never blocks on one thing: a single poll loop reads both output
 * pipes, feeds stdin, notices the child's exit and checks the clock and the
 * cancel flag, so no slow or silent child can wedge the caller. */
#include "base/proc.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/str.h"

extern char **environ;

#define PROC_DEFAULT_CAP ((size_t)1 << 20)
#define PROC_DEFAULT_GRACE_MS 2000
/* How long the loop sleeps at most before looking at the clock, the cancel
 * flag and the child again: bounds how late a timeout or cancel can act. */
#define PROC_TICK_MS 20
/* After the child exits, output still in flight is drained for this long.
 * A background grandchild may hold the pipes open for ever; we do not wait
 * for it (nor kill it: starting a server with `&` can be the point). */
#define PROC_DRAIN_MS 250
/* After SIGKILL, how long to wait for pipes held by the dying group. */
#define PROC_KILL_DRAIN_MS 500

/* What the child reports through the exec-status pipe when it cannot get to
 * exec: which step failed and errno. EOF without a report means exec ran. */
enum { STAGE_SETUP = 1, STAGE_CHDIR = 2, STAGE_EXEC = 3 };
typedef struct {
    int stage;
    int err;
} child_failure;

static void close_fd(int *fd)
{
    if (*fd >= 0) {
        close(*fd);
        *fd = -1;
    }
}

/* In the child, after fork: only async-signal-safe calls from here on. */
static _Noreturn void child_fail(int report_fd, int stage)
{
    child_failure f = {stage, errno};
    ssize_t w;
    do
        w = write(report_fd, &f, sizeof f);
    while (w < 0 && errno == EINTR);
    _exit(127);
}

static _Noreturn void child_exec(const proc_spec *spec, int in_rd, int out_wr, int err_wr,
                                 int report_fd)
{
    /* Own group first, so the parent's kill(-pgid) reaches us and everything
     * we start, whichever of setpgid (ours or the parent's) wins the race. */
    setpgid(0, 0);

    /* Loom may ignore or handle signals (SIGPIPE for sockets, SIGINT for the
     * CLI); ignored dispositions and the mask survive exec, and a tool must
     * start with the defaults every program assumes. */
    struct sigaction dfl;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    for (int sig = 1; sig < NSIG; sig++) {
        if (sig != SIGKILL && sig != SIGSTOP)
            sigaction(sig, &dfl, NULL);
    }
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);

    if (in_rd < 0) {
        in_rd = open("/dev/null", O_RDONLY | O_CLOEXEC);
        if (in_rd < 0)
            child_fail(report_fd, STAGE_SETUP);
    }
    /* If Loom itself runs with stdio closed, a pipe may sit on fd 0-2 and
     * be clobbered by the dup2 meant for another stream. Lift all three
     * above 2 first; the dup2s below then never copy a fd onto itself. */
    int src[3] = {in_rd, out_wr, err_wr};
    for (int i = 0; i < 3; i++) {
        if (src[i] < 3 && (src[i] = fcntl(src[i], F_DUPFD_CLOEXEC, 3)) < 0)
            child_fail(report_fd, STAGE_SETUP);
    }
    for (int i = 0; i < 3; i++) {
        if (dup2(src[i], i) < 0)
            child_fail(report_fd, STAGE_SETUP);
    }

#ifdef CLOSE_RANGE_CLOEXEC
    /* Descriptors other parts of Loom opened without O_CLOEXEC (sockets, the
     * log) must not leak into tools. Best effort: older kernels lack it. */
    close_range(3, ~0U, CLOSE_RANGE_CLOEXEC);
#endif

    if (spec->cwd && chdir(spec->cwd) < 0)
        child_fail(report_fd, STAGE_CHDIR);

    /* Last before exec: a setup that confines the child (the sandbox) must
     * not stop the steps above from working. Its message goes straight to
     * the captured stderr, since only the setup knows what went wrong. */
    if (spec->child_setup) {
        char msg[512];
        msg[0] = '\0';
        if (spec->child_setup(spec->child_ctx, msg, sizeof msg) != 0) {
            static const char pre[] = "loom: ";
            size_t n = strnlen(msg, sizeof msg);
            ssize_t w = write(2, pre, sizeof pre - 1);
            w = write(2, msg, n);
            w = write(2, "\n", 1);
            (void)w;
            _exit(126);
        }
    }

    char *const *argv = (char *const *)spec->argv;
    if (spec->envp)
        execvpe(argv[0], argv, (char *const *)spec->envp);
    else
        execvp(argv[0], argv);
    child_fail(report_fd, STAGE_EXEC);
}

/* The fast start: posix_spawn (vfork underneath, so no copy of Loom's page
 * tables — a fork of the multi-threaded harness cost ~0.8 ms per command in
 * the agent benchmark) with the same child setup as child_exec: own process
 * group, default signals, empty mask, the three pipes, no other
 * descriptors, the working directory. Returns the pid, or -1 when it could
 * not (the caller then forks, which also reports exec failures the usual
 * way). Not used when a child_setup must run in the child (the sandbox). */
static pid_t spawn_fast(const proc_spec *spec, int in_rd, int out_wr, int err_wr)
{
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t at;
    if (posix_spawn_file_actions_init(&fa) != 0)
        return -1;
    if (posix_spawnattr_init(&at) != 0) {
        posix_spawn_file_actions_destroy(&fa);
        return -1;
    }
    sigset_t all, none;
    sigfillset(&all);
    sigdelset(&all, SIGKILL);
    sigdelset(&all, SIGSTOP);
    sigemptyset(&none);
    int rc = 0;
    rc |= in_rd >= 0 ? posix_spawn_file_actions_adddup2(&fa, in_rd, 0)
                     : posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    rc |= posix_spawn_file_actions_adddup2(&fa, out_wr, 1);
    rc |= posix_spawn_file_actions_adddup2(&fa, err_wr, 2);
    rc |= posix_spawn_file_actions_addclosefrom_np(&fa, 3);
    if (spec->cwd)
        rc |= posix_spawn_file_actions_addchdir_np(&fa, spec->cwd);
    rc |= posix_spawnattr_setflags(&at, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF |
                                            POSIX_SPAWN_SETSIGMASK);
    rc |= posix_spawnattr_setpgroup(&at, 0);
    rc |= posix_spawnattr_setsigdefault(&at, &all);
    rc |= posix_spawnattr_setsigmask(&at, &none);
    pid_t pid = -1;
    if (rc == 0) {
        char *const *envp = spec->envp ? (char *const *)spec->envp : environ;
        if (posix_spawnp(&pid, spec->argv[0], &fa, &at, (char *const *)spec->argv, envp) != 0)
            pid = -1;
    }
    posix_spawnattr_destroy(&at);
    posix_spawn_file_actions_destroy(&fa);
    return pid;
}

/* write() that cannot kill us with SIGPIPE when the child closed its stdin.
 * SIGPIPE from a pipe write goes to the writing thread, so blocking it in
 * this thread and eating the pending signal keeps the process-wide
 * disposition (which is not ours to change) untouched. */
static ssize_t write_nosigpipe(int fd, const void *buf, size_t n)
{
    sigset_t pipe_set, old, pending;
    sigemptyset(&pipe_set);
    sigaddset(&pipe_set, SIGPIPE);
    sigemptyset(&pending);
    sigpending(&pending);
    bool was_pending = sigismember(&pending, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe_set, &old);
    ssize_t w = write(fd, buf, n);
    int e = errno;
    if (w < 0 && e == EPIPE && !was_pending) {
        struct timespec zero = {0, 0};
        while (sigtimedwait(&pipe_set, NULL, &zero) < 0 && errno == EINTR) {
        }
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    errno = e;
    return w;
}

typedef struct {
    int fd;
    loom_str buf;
    size_t dropped;
} capture;

/* Reads what is available; closes the fd at EOF or on a hard error. */
static void capture_read(capture *c, size_t cap)
{
    char chunk[65536];
    ssize_t n = read(c->fd, chunk, sizeof chunk);
    if (n < 0) {
        if (errno == EINTR || errno == EAGAIN)
            return;
        close_fd(&c->fd);
        return;
    }
    if (n == 0) {
        close_fd(&c->fd);
        return;
    }
    size_t got = (size_t)n;
    size_t room = c->buf.len < cap ? cap - c->buf.len : 0;
    size_t keep = got < room ? got : room;
    str_append(&c->buf, chunk, keep);
    c->dropped += got - keep;
}

static int set_nonblock(int fd)
{
    int fl = fcntl(fd, F_GETFL);
    return fl < 0 ? -1 : fcntl(fd, F_SETFL, fl | O_NONBLOCK);
}

static void signal_group(pid_t pgid, int sig)
{
    /* ESRCH (the whole group is already gone) is the outcome we wanted. */
    (void)kill(-pgid, sig);
}

int proc_run(const proc_spec *spec, proc_result *res, loom_error *err)
{
    memset(res, 0, sizeof *res);
    res->exit_code = -1;
    if (!spec || !spec->argv || !spec->argv[0] || !spec->argv[0][0])
        return loom_error_set(err, LOOM_ERR_INVALID_REQUEST, "could not start process: empty argv");
    const char *name = spec->argv[0];
    /* A run cancelled before the command started must not start it at all:
     * the command may have side effects the user just said no to. */
    if (cancel_requested(spec->cancel)) {
        res->cancelled = true;
        return loom_error_set(err, LOOM_ERR_RUN_CANCELLED, "could not start %s: cancelled", name);
    }

    size_t cap = spec->capture_cap ? spec->capture_cap : PROC_DEFAULT_CAP;
    long grace = spec->grace_ms > 0 ? spec->grace_ms : PROC_DEFAULT_GRACE_MS;
    bool has_input = spec->input != NULL;

    int in_p[2] = {-1, -1}, out_p[2] = {-1, -1}, err_p[2] = {-1, -1}, rep_p[2] = {-1, -1};
    if ((has_input && pipe2(in_p, O_CLOEXEC) < 0) || pipe2(out_p, O_CLOEXEC) < 0 ||
        pipe2(err_p, O_CLOEXEC) < 0 || pipe2(rep_p, O_CLOEXEC) < 0) {
        int e = errno;
        int fds[] = {in_p[0], in_p[1], out_p[0], out_p[1], err_p[0], err_p[1], rep_p[0], rep_p[1]};
        for (size_t i = 0; i < sizeof fds / sizeof fds[0]; i++)
            close_fd(&fds[i]);
        return loom_error_set(err, LOOM_ERR_TOOL_EXECUTION_FAILED,
                              "could not start %s: creating pipes: %s", name, strerror(e));
    }

    int64_t start_ms = clock_mono_ms();
    /* The fork path reports a missing directory or program precisely; the
     * fast path is for commands that will start. */
    pid_t pid = -1;
    if (!spec->child_setup && (!spec->cwd || access(spec->cwd, X_OK) == 0))
        pid = spawn_fast(spec, in_p[0], out_p[1], err_p[1]);
    if (pid < 0)
        pid = fork();
    if (pid < 0) {
        int e = errno;
        int fds[] = {in_p[0], in_p[1], out_p[0], out_p[1], err_p[0], err_p[1], rep_p[0], rep_p[1]};
        for (size_t i = 0; i < sizeof fds / sizeof fds[0]; i++)
            close_fd(&fds[i]);
        return loom_error_set(err, LOOM_ERR_TOOL_EXECUTION_FAILED, "could not start %s: fork: %s",
                              name, strerror(e));
    }
    if (pid == 0)
        child_exec(spec, in_p[0], out_p[1], err_p[1], rep_p[1]);

    /* Also from this side: a kill(-pid) issued before the child ran its own
     * setpgid would otherwise miss. EACCES (child already exec'd, so it did
     * it itself) is harmless. */
    setpgid(pid, pid);
    close_fd(&in_p[0]);
    close_fd(&out_p[1]);
    close_fd(&err_p[1]);
    close_fd(&rep_p[1]);

    capture out = {out_p[0], LOOM_STR_INIT, 0}, errc = {err_p[0], LOOM_STR_INIT, 0};
    set_nonblock(out.fd);
    set_nonblock(errc.fd);
    int in_fd = in_p[1];
    size_t in_off = 0;
    if (in_fd >= 0) {
        set_nonblock(in_fd);
        if (spec->input_len == 0)
            close_fd(&in_fd);
    }
    int rep_fd = rep_p[0];
    child_failure failure = {0, 0};
    size_t failure_got = 0;

    bool reaped = false, terminating = false, killed = false;
    int status = 0;
    int64_t kill_at = 0, reaped_at = 0, killed_at = 0;

    for (;;) {
        int64_t now = clock_mono_ms();

        if (!reaped && !terminating) {
            bool cancel = cancel_requested(spec->cancel);
            bool timeout = spec->timeout_ms > 0 && now - start_ms >= spec->timeout_ms;
            if (cancel || timeout) {
                res->cancelled = cancel;
                res->timed_out = !cancel && timeout;
                terminating = true;
                /* The harness's veto (CANCEL_ACT_NOW) gives no grace. */
                kill_at = cancel && cancel_level(spec->cancel) == CANCEL_ACT_NOW ? now : now + grace;
                signal_group(pid, SIGTERM);
            }
        }
        /* The group can outlive its leader (a grandchild ignoring SIGTERM),
         * so the SIGKILL is due even after the leader was reaped. */
        if (terminating && !killed && now >= kill_at) {
            signal_group(pid, SIGKILL);
            killed = true;
            killed_at = now;
        }

        if (!reaped) {
            pid_t w = waitpid(pid, &status, WNOHANG);
            if (w == pid || (w < 0 && errno == ECHILD)) {
                /* ECHILD: someone else reaped it (SIGCHLD ignored, or a
                 * waitpid(-1) elsewhere); its status is lost. */
                if (w < 0)
                    status = -1;
                reaped = true;
                reaped_at = now;
            }
        }

        bool pipes_open = out.fd >= 0 || errc.fd >= 0 || rep_fd >= 0;
        if (reaped && !terminating) {
            if (!pipes_open || now - reaped_at >= PROC_DRAIN_MS)
                break;
        } else if (reaped) {
            /* Terminating and the command itself is gone. Members still
             * holding its output get the rest of the grace period. Once the
             * pipes are closed too, whatever is left of the group detached
             * from the command (or is a zombie, which no signal test can tell
             * from a live process): it already had its SIGTERM, so it gets
             * the SIGKILL now rather than surviving the timeout. */
            if (!pipes_open) {
                if (!killed)
                    signal_group(pid, SIGKILL);
                break;
            }
            if (killed && now - killed_at >= PROC_KILL_DRAIN_MS)
                break;
        }

        struct pollfd pfd[4];
        int nfd = 0, i_out = -1, i_err = -1, i_in = -1, i_rep = -1;
        if (out.fd >= 0) {
            i_out = nfd;
            pfd[nfd++] = (struct pollfd){.fd = out.fd, .events = POLLIN};
        }
        if (errc.fd >= 0) {
            i_err = nfd;
            pfd[nfd++] = (struct pollfd){.fd = errc.fd, .events = POLLIN};
        }
        if (rep_fd >= 0) {
            i_rep = nfd;
            pfd[nfd++] = (struct pollfd){.fd = rep_fd, .events = POLLIN};
        }
        if (in_fd >= 0) {
            i_in = nfd;
            pfd[nfd++] = (struct pollfd){.fd = in_fd, .events = POLLOUT};
        }
        /* With nothing left to read, only the exit is awaited: tick faster so
         * a finished command is not held up by the tick. */
        int tick = nfd > 0 ? PROC_TICK_MS : 2;
        int pr = poll(pfd, (nfds_t)nfd, tick);
        if (pr < 0) {
            if (errno == EINTR)
                continue;
            /* poll itself failing is not expected; avoid a hot loop. */
            struct timespec ts = {0, PROC_TICK_MS * 1000000L};
            nanosleep(&ts, NULL);
            continue;
        }
        if (pr == 0)
            continue;
        if (i_out >= 0 && pfd[i_out].revents)
            capture_read(&out, cap);
        if (i_err >= 0 && pfd[i_err].revents)
            capture_read(&errc, cap);
        if (i_rep >= 0 && pfd[i_rep].revents) {
            ssize_t n = read(rep_fd, (char *)&failure + failure_got, sizeof failure - failure_got);
            if (n > 0)
                failure_got += (size_t)n;
            else if (n == 0 || (errno != EINTR && errno != EAGAIN))
                close_fd(&rep_fd);
            if (failure_got == sizeof failure)
                close_fd(&rep_fd);
        }
        if (i_in >= 0 && pfd[i_in].revents) {
            if (pfd[i_in].revents & (POLLERR | POLLHUP | POLLNVAL)) {
                close_fd(&in_fd); /* the child closed its stdin; stop feeding */
            } else {
                ssize_t w = write_nosigpipe(in_fd, spec->input + in_off,
                                            spec->input_len - in_off);
                if (w > 0)
                    in_off += (size_t)w;
                else if (w < 0 && errno != EINTR && errno != EAGAIN)
                    close_fd(&in_fd);
                if (in_off >= spec->input_len)
                    close_fd(&in_fd); /* EOF tells the child input is complete */
            }
        }
    }

    /* Close the pipes before anything else: a grandchild still writing then
     * gets EPIPE instead of blocking on a pipe nobody drains. */
    close_fd(&out.fd);
    close_fd(&errc.fd);
    close_fd(&in_fd);
    close_fd(&rep_fd);
    res->duration_ms = (long)(clock_mono_ms() - start_ms);

    if (status != -1 && WIFEXITED(status)) {
        res->exit_code = WEXITSTATUS(status);
    } else if (status != -1 && WIFSIGNALED(status)) {
        res->exit_code = -1;
        res->term_signal = WTERMSIG(status);
    }

    if (failure_got == sizeof failure && failure.stage) {
        /* The command never ran. Say why where a shell would: in stderr, with
         * 127, so callers treat it like any failed command. Our message goes
         * in even past the cap, it is the only thing in the stream. */
        const char *what = failure.stage == STAGE_CHDIR ? "cannot change directory to"
                           : failure.stage == STAGE_EXEC ? "cannot execute"
                                                          : "cannot set up";
        const char *arg = failure.stage == STAGE_CHDIR ? spec->cwd : name;
        str_printf(&errc.buf, "loom: %s '%s': %s\n", what, arg, strerror(failure.err));
    }

    res->out_len = out.buf.len;
    res->out = str_steal(&out.buf);
    res->out_dropped = out.dropped;
    res->err_len = errc.buf.len;
    res->err = str_steal(&errc.buf);
    res->err_dropped = errc.dropped;
    return 0;
}

void proc_result_free(proc_result *res)
{
    if (!res)
        return;
    free(res->out);
    free(res->err);
    res->out = res->err = NULL;
    res->out_len = res->err_len = 0;
}
