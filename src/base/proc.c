/* proc.c — runs one child process to completion under Loom's rules: its own
 * process group, captured and capped output, optional stdin, timeout and
 * cancellation that reach every descendant (proc.h). The registry of
 * running commands with which Loom, a child subreaper, ends whatever a
 * command leaves behind is proc_reap.c's.
 *
 * The parent never blocks on one thing: a single poll loop reads both output
 * pipes, feeds stdin, notices the child's exit and checks the clock and the
 * cancel flag, so no slow or silent child can wedge the caller.
 * Threading: proc_run may be called from several threads at once; each call
 * owns its descriptors, and the spawn itself is serialised by proc_reap.c. */
#include "base/proc.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
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
 * for it here; when the drain is over the call ends, and proc_call_end kills
 * it with the rest of what the call left behind. */
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

/* The child's end of the descriptor channel to the parent's supervisor
 * (proc_spec.supervise); set in the child only, after fork, so no other
 * thread ever sees it. */
static int g_child_pass_sock = -1;

bool proc_child_can_pass_fd(void)
{
    return g_child_pass_sock >= 0;
}

int proc_child_pass_sock(void)
{
    return g_child_pass_sock;
}

int proc_child_pass_fd(int fd)
{
    return g_child_pass_sock < 0 ? -1 : proc_send_fd(g_child_pass_sock, fd);
}

int proc_send_fd(int sock, int fd)
{
    char byte = 'F';
    struct iovec iov = {.iov_base = &byte, .iov_len = 1};
    union {
        char buf[CMSG_SPACE(sizeof(int))];
        struct cmsghdr align;
    } u;
    memset(&u, 0, sizeof u);
    struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf,
                        .msg_controllen = sizeof u.buf};
    struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int));
    memcpy(CMSG_DATA(c), &fd, sizeof fd);
    ssize_t w;
    do
        w = sendmsg(sock, &mh, MSG_NOSIGNAL);
    while (w < 0 && errno == EINTR);
    return w == 1 ? 0 : -1;
}

int proc_recv_fd(int sock, bool wait)
{
    char byte;
    struct iovec iov = {.iov_base = &byte, .iov_len = 1};
    union {
        char buf[CMSG_SPACE(sizeof(int))];
        struct cmsghdr align;
    } u;
    memset(&u, 0, sizeof u);
    struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf,
                        .msg_controllen = sizeof u.buf};
    ssize_t n;
    do
        n = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC | (wait ? 0 : MSG_DONTWAIT));
    while (n < 0 && errno == EINTR);
    if (n != 1)
        return -1;
    struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
    if (!c || c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS ||
        c->cmsg_len != CMSG_LEN(sizeof(int)))
        return -1;
    int fd;
    memcpy(&fd, CMSG_DATA(c), sizeof fd);
    return fd;
}

static _Noreturn void child_exec(const proc_spec *spec, int in_rd, int out_wr, int err_wr,
                                 int report_fd, int pass_fd)
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
    if (pass_fd >= 0 && pass_fd < 3 && (pass_fd = fcntl(pass_fd, F_DUPFD_CLOEXEC, 3)) < 0)
        child_fail(report_fd, STAGE_SETUP);
    g_child_pass_sock = pass_fd;
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
int proc_spawnattr_init(posix_spawnattr_t *attr)
{
    if (posix_spawnattr_init(attr) != 0)
        return -1;
    sigset_t all, none;
    sigfillset(&all);
    sigdelset(&all, SIGKILL);
    sigdelset(&all, SIGSTOP);
    sigemptyset(&none);
    int rc = posix_spawnattr_setflags(attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF |
                                                POSIX_SPAWN_SETSIGMASK);
    rc |= posix_spawnattr_setpgroup(attr, 0);
    rc |= posix_spawnattr_setsigdefault(attr, &all);
    rc |= posix_spawnattr_setsigmask(attr, &none);
    if (rc != 0)
        posix_spawnattr_destroy(attr);
    return rc;
}

static pid_t spawn_fast(const proc_spec *spec, int in_rd, int out_wr, int err_wr)
{
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t at;
    if (posix_spawn_file_actions_init(&fa) != 0)
        return -1;
    if (proc_spawnattr_init(&at) != 0) {
        posix_spawn_file_actions_destroy(&fa);
        return -1;
    }
    int rc = 0;
    rc |= in_rd >= 0 ? posix_spawn_file_actions_adddup2(&fa, in_rd, 0)
                     : posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    rc |= posix_spawn_file_actions_adddup2(&fa, out_wr, 1);
    rc |= posix_spawn_file_actions_adddup2(&fa, err_wr, 2);
    rc |= posix_spawn_file_actions_addclosefrom_np(&fa, 3);
    if (spec->cwd)
        rc |= posix_spawn_file_actions_addchdir_np(&fa, spec->cwd);
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

/* SIGPIPE from a pipe write goes to the writing thread: blocking it there
 * and eating the pending one leaves the process-wide disposition (not ours
 * to change) untouched. */
ssize_t proc_write_nosigpipe(int fd, const void *buf, size_t n)
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
static void capture_read(capture *c, size_t cap, const proc_spec *spec, int stream)
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
    if (spec->on_output)
        spec->on_output(spec->output_ctx, stream, chunk, got);
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

/* ---- proc_run, step by step ---------------------------------------------- */

/* One proc_run call in flight: the descriptors it holds, what it has
 * captured, and how far the ending of the child's group has got. */
typedef struct {
    const proc_spec *spec;
    proc_result *res;
    const char *name;   /* argv[0], for messages */
    size_t cap;
    long grace;
    int64_t start_ms;
    pid_t pid;
    /* The pipes as created; the parent keeps [0] of out/err/rep/pass and
     * [1] of in, the rest go to the child. */
    int in_p[2], out_p[2], err_p[2], rep_p[2], pass_p[2];
    capture out, errc;
    int in_fd;          /* the child's stdin, while input is left to feed */
    size_t in_off;
    int rep_fd;         /* the exec-status pipe */
    child_failure failure;
    size_t failure_got;
    int pass_fd;        /* the channel the supervised descriptor comes by */
    int sup_fd;         /* that descriptor, once received */
    bool reaped, terminating, killed;
    int status;
    int64_t kill_at, reaped_at, killed_at;
} run_state;

static void run_close_all(run_state *r)
{
    int *fds[] = {&r->in_p[0],  &r->in_p[1],  &r->out_p[0], &r->out_p[1],  &r->err_p[0],
                  &r->err_p[1], &r->rep_p[0], &r->rep_p[1], &r->pass_p[0], &r->pass_p[1]};
    for (size_t i = 0; i < sizeof fds / sizeof fds[0]; i++)
        close_fd(fds[i]);
}

/* stdin (with input), stdout, stderr, the exec-status pipe and, with a
 * supervisor, the socket the child passes its descriptor by. */
static int run_open_pipes(run_state *r, loom_error *err)
{
    const proc_spec *spec = r->spec;
    if ((spec->input && pipe2(r->in_p, O_CLOEXEC) < 0) || pipe2(r->out_p, O_CLOEXEC) < 0 ||
        pipe2(r->err_p, O_CLOEXEC) < 0 || pipe2(r->rep_p, O_CLOEXEC) < 0 ||
        (spec->supervise &&
         socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, r->pass_p) < 0)) {
        int e = errno;
        run_close_all(r);
        return loom_error_set(err, LOOM_ERR_TOOL_EXECUTION_FAILED,
                              "could not start %s: creating pipes: %s", r->name, strerror(e));
    }
    return 0;
}

/* Starts the child (posix_spawn when nothing runs before exec, else fork
 * and the pre-exec hook in child_exec), registered while the spawn lock is
 * held. */
static int run_spawn(run_state *r, loom_error *err)
{
    const proc_spec *spec = r->spec;
    r->start_ms = clock_mono_ms();
    /* The fork path reports a missing directory or program precisely; the
     * fast path is for commands that will start. */
    pid_t pid = -1;
    proc_spawn_lock();
    if (!spec->child_setup && (!spec->cwd || access(spec->cwd, X_OK) == 0))
        pid = spawn_fast(spec, r->in_p[0], r->out_p[1], r->err_p[1]);
    if (pid < 0)
        pid = fork();
    if (pid == 0)
        child_exec(spec, r->in_p[0], r->out_p[1], r->err_p[1], r->rep_p[1], r->pass_p[1]);
    int fork_errno = errno;
    proc_spawn_unlock(pid);
    if (pid < 0) {
        run_close_all(r);
        return loom_error_set(err, LOOM_ERR_TOOL_EXECUTION_FAILED, "could not start %s: fork: %s",
                              r->name, strerror(fork_errno));
    }
    r->pid = pid;
    return 0;
}

/* The parent's side once the child runs: the child's ends closed, ours
 * non-blocking. */
static void run_adopt_pipes(run_state *r)
{
    /* Also from this side: a kill(-pid) issued before the child ran its own
     * setpgid would otherwise miss. EACCES (child already exec'd, so it did
     * it itself) is harmless. */
    setpgid(r->pid, r->pid);
    close_fd(&r->in_p[0]);
    close_fd(&r->out_p[1]);
    close_fd(&r->err_p[1]);
    close_fd(&r->rep_p[1]);
    close_fd(&r->pass_p[1]);
    r->pass_fd = r->pass_p[0];
    r->sup_fd = -1;
    r->out = (capture){r->out_p[0], LOOM_STR_INIT, 0};
    r->errc = (capture){r->err_p[0], LOOM_STR_INIT, 0};
    set_nonblock(r->out.fd);
    set_nonblock(r->errc.fd);
    r->in_fd = r->in_p[1];
    if (r->in_fd >= 0) {
        set_nonblock(r->in_fd);
        if (r->spec->input_len == 0)
            close_fd(&r->in_fd);
    }
    r->rep_fd = r->rep_p[0];
}

/* Cancel or timeout: SIGTERM to the group, SIGKILL when the grace is up. */
static void run_signal_due(run_state *r, int64_t now)
{
    const proc_spec *spec = r->spec;
    if (!r->reaped && !r->terminating) {
        bool cancel = cancel_requested(spec->cancel);
        bool timeout = spec->timeout_ms > 0 && now - r->start_ms >= spec->timeout_ms;
        if (cancel || timeout) {
            r->res->cancelled = cancel;
            r->res->timed_out = !cancel && timeout;
            r->terminating = true;
            /* The harness's veto (CANCEL_ACT_NOW) gives no grace. */
            r->kill_at = cancel && cancel_level(spec->cancel) == CANCEL_ACT_NOW ? now
                                                                                 : now + r->grace;
            signal_group(r->pid, SIGTERM);
        }
    }
    /* The group can outlive its leader (a grandchild ignoring SIGTERM),
     * so the SIGKILL is due even after the leader was reaped. */
    if (r->terminating && !r->killed && now >= r->kill_at) {
        signal_group(r->pid, SIGKILL);
        r->killed = true;
        r->killed_at = now;
    }
}

static void run_reap(run_state *r, int64_t now)
{
    if (r->reaped)
        return;
    pid_t w = waitpid(r->pid, &r->status, WNOHANG);
    if (w == r->pid || (w < 0 && errno == ECHILD)) {
        /* ECHILD: someone else reaped it (SIGCHLD ignored, or a
         * waitpid(-1) elsewhere); its status is lost. */
        if (w < 0)
            r->status = -1;
        r->reaped = true;
        r->reaped_at = now;
    }
}

/* True when the call is over: the child is reaped and its output drained
 * (or the drain has waited long enough). */
static bool run_finished(run_state *r, int64_t now)
{
    if (!r->reaped)
        return false;
    bool pipes_open = r->out.fd >= 0 || r->errc.fd >= 0 || r->rep_fd >= 0;
    if (!r->terminating)
        return !pipes_open || now - r->reaped_at >= PROC_DRAIN_MS;
    /* Terminating and the command itself is gone. Members still holding
     * its output get the rest of the grace period. Once the pipes are
     * closed too, whatever is left of the group detached from the command
     * (or is a zombie, which no signal test can tell from a live process):
     * it already had its SIGTERM, so it gets the SIGKILL now rather than
     * surviving the timeout. */
    if (!pipes_open) {
        if (!r->killed)
            signal_group(r->pid, SIGKILL);
        return true;
    }
    return r->killed && now - r->killed_at >= PROC_KILL_DRAIN_MS;
}

static void run_read_report(run_state *r)
{
    ssize_t n = read(r->rep_fd, (char *)&r->failure + r->failure_got,
                     sizeof r->failure - r->failure_got);
    if (n > 0)
        r->failure_got += (size_t)n;
    else if (n == 0 || (errno != EINTR && errno != EAGAIN))
        close_fd(&r->rep_fd);
    if (r->failure_got == sizeof r->failure)
        close_fd(&r->rep_fd);
}

static void run_feed_input(run_state *r, short revents)
{
    const proc_spec *spec = r->spec;
    if (revents & (POLLERR | POLLHUP | POLLNVAL)) {
        close_fd(&r->in_fd); /* the child closed its stdin; stop feeding */
        return;
    }
    ssize_t w = proc_write_nosigpipe(r->in_fd, spec->input + r->in_off, spec->input_len - r->in_off);
    if (w > 0)
        r->in_off += (size_t)w;
    else if (w < 0 && errno != EINTR && errno != EAGAIN)
        close_fd(&r->in_fd);
    if (r->in_off >= spec->input_len)
        close_fd(&r->in_fd); /* EOF tells the child input is complete */
}

/* One wait on everything open (at most a tick), then one step on each
 * descriptor that is ready: output captured up to the cap, stdin fed, the
 * exec status and the supervised descriptor taken in. */
static void run_pump(run_state *r)
{
    struct pollfd pfd[6];
    int nfd = 0, i_out = -1, i_err = -1, i_in = -1, i_rep = -1, i_pass = -1, i_sup = -1;
    if (r->pass_fd >= 0) {
        i_pass = nfd;
        pfd[nfd++] = (struct pollfd){.fd = r->pass_fd, .events = POLLIN};
    }
    if (r->sup_fd >= 0) {
        i_sup = nfd;
        pfd[nfd++] = (struct pollfd){.fd = r->sup_fd, .events = POLLIN};
    }
    if (r->out.fd >= 0) {
        i_out = nfd;
        pfd[nfd++] = (struct pollfd){.fd = r->out.fd, .events = POLLIN};
    }
    if (r->errc.fd >= 0) {
        i_err = nfd;
        pfd[nfd++] = (struct pollfd){.fd = r->errc.fd, .events = POLLIN};
    }
    if (r->rep_fd >= 0) {
        i_rep = nfd;
        pfd[nfd++] = (struct pollfd){.fd = r->rep_fd, .events = POLLIN};
    }
    if (r->in_fd >= 0) {
        i_in = nfd;
        pfd[nfd++] = (struct pollfd){.fd = r->in_fd, .events = POLLOUT};
    }
    /* With nothing left to read, only the exit is awaited: tick faster so
     * a finished command is not held up by the tick. */
    int tick = nfd > 0 ? PROC_TICK_MS : 2;
    int pr = poll(pfd, (nfds_t)nfd, tick);
    if (pr < 0) {
        if (errno == EINTR)
            return;
        /* poll itself failing is not expected; avoid a hot loop. */
        struct timespec ts = {0, PROC_TICK_MS * 1000000L};
        nanosleep(&ts, NULL);
        return;
    }
    if (pr == 0)
        return;
    if (i_pass >= 0 && pfd[i_pass].revents) {
        /* One descriptor, then the channel has done its job; EOF (the
         * child exec'd without passing one) closes it too. */
        if (pfd[i_pass].revents & POLLIN)
            r->sup_fd = proc_recv_fd(r->pass_fd, false);
        close_fd(&r->pass_fd);
    }
    if (i_sup >= 0 && pfd[i_sup].revents) {
        if (pfd[i_sup].revents & POLLIN)
            r->spec->supervise(r->spec->supervise_ctx, r->sup_fd);
        else
            close_fd(&r->sup_fd); /* nobody left to supervise */
    }
    if (i_out >= 0 && pfd[i_out].revents)
        capture_read(&r->out, r->cap, r->spec, 1);
    if (i_err >= 0 && pfd[i_err].revents)
        capture_read(&r->errc, r->cap, r->spec, 2);
    if (i_rep >= 0 && pfd[i_rep].revents)
        run_read_report(r);
    if (i_in >= 0 && pfd[i_in].revents)
        run_feed_input(r, pfd[i_in].revents);
}

/* The call is over: everything it started is ended, and the result filled
 * from the status and what was captured. */
static void run_collect(run_state *r)
{
    proc_result *res = r->res;
    /* Close the pipes before anything else: a grandchild still writing then
     * gets EPIPE instead of blocking on a pipe nobody drains. */
    close_fd(&r->out.fd);
    close_fd(&r->errc.fd);
    close_fd(&r->in_fd);
    close_fd(&r->rep_fd);
    /* The call is over: nothing it started may outlive it. The supervisor
     * stays open until then, so a leftover confined process blocked on it
     * is killed, not let through (closing it would fail its call anyway). */
    proc_call_end(r->pid);
    close_fd(&r->pass_fd);
    close_fd(&r->sup_fd);
    res->duration_ms = (long)(clock_mono_ms() - r->start_ms);

    if (r->status != -1 && WIFEXITED(r->status)) {
        res->exit_code = WEXITSTATUS(r->status);
    } else if (r->status != -1 && WIFSIGNALED(r->status)) {
        res->exit_code = -1;
        res->term_signal = WTERMSIG(r->status);
    }

    if (r->failure_got == sizeof r->failure && r->failure.stage) {
        /* The command never ran. Say why where a shell would: in stderr, with
         * 127, so callers treat it like any failed command. Our message goes
         * in even past the cap, it is the only thing in the stream. */
        int stage = r->failure.stage;
        const char *what = stage == STAGE_CHDIR ? "cannot change directory to"
                           : stage == STAGE_EXEC ? "cannot execute"
                                                 : "cannot set up";
        const char *arg = stage == STAGE_CHDIR ? r->spec->cwd : r->name;
        str_printf(&r->errc.buf, "loom: %s '%s': %s\n", what, arg, strerror(r->failure.err));
    }

    res->out_len = r->out.buf.len;
    res->out = str_steal(&r->out.buf);
    res->out_dropped = r->out.dropped;
    res->err_len = r->errc.buf.len;
    res->err = str_steal(&r->errc.buf);
    res->err_dropped = r->errc.dropped;
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

    run_state r = {
        .spec = spec,
        .res = res,
        .name = name,
        .cap = spec->capture_cap ? spec->capture_cap : PROC_DEFAULT_CAP,
        .grace = spec->grace_ms > 0 ? spec->grace_ms : PROC_DEFAULT_GRACE_MS,
        .in_p = {-1, -1},
        .out_p = {-1, -1},
        .err_p = {-1, -1},
        .rep_p = {-1, -1},
        .pass_p = {-1, -1},
    };
    int rc = run_open_pipes(&r, err);
    if (rc == 0)
        rc = run_spawn(&r, err);
    if (rc != 0)
        return rc;
    run_adopt_pipes(&r);
    for (;;) {
        int64_t now = clock_mono_ms();
        run_signal_due(&r, now);
        run_reap(&r, now);
        if (run_finished(&r, now))
            break;
        run_pump(&r);
        if (spec->on_output)
            spec->on_output(spec->output_ctx, 0, NULL, 0);
    }
    run_collect(&r);
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
