/* proc.c — runs one child process to completion under Loom's rules: its own
 * process group, captured and capped output, optional stdin, timeout and
 * cancellation that reach every descendant; and the registry of running
 * commands with which Loom, a child subreaper, ends whatever a command
 * leaves behind (proc.h).
 *
 * The parent never blocks on one thing: a single poll loop reads both output
 * pipes, feeds stdin, notices the child's exit and checks the clock and the
 * cancel flag, so no slow or silent child can wedge the caller. */
#include "base/proc.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
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

/* ---- what commands leave behind ------------------------------------------------
 * Loom is a child subreaper: an orphan of a command is re-parented to Loom.
 * The registry holds the children Loom started and is still waiting for
 * (each its own group leader), so a sweep tells them from orphans; spawners
 * hold g_track_mu from before the fork until the child is registered, so a
 * sweep never mistakes a child that is just being started for an orphan.
 *
 * While other commands run (a background shell), an orphan in a new session
 * or group of its own (setsid, setpgid) cannot be told by its group. Its
 * start time can: an orphan that started after a call began may be that
 * call's, and is ended with it (a background shell's orphan started in the
 * same window goes too: fail closed); one that started before it belongs to
 * an earlier command still running, and is left to that command's end. */

static pthread_mutex_t g_track_mu = PTHREAD_MUTEX_INITIALIZER;
static pid_t *g_running;
static int64_t *g_started; /* per entry: clock ticks since boot, before the fork */
static size_t g_nrunning, g_running_cap;
static int64_t g_spawn_started; /* set by proc_spawn_lock, under g_track_mu */

/* Now in the unit of /proc/PID/stat's starttime (clock ticks since boot),
 * rounded down, so a process forked after this reads at least as much. */
static int64_t boot_ticks(void)
{
    struct timespec ts;
    if (clock_gettime(CLOCK_BOOTTIME, &ts) != 0)
        return 0; /* every orphan then counts as the call's: fail closed */
    long hz = sysconf(_SC_CLK_TCK);
    if (hz <= 0)
        hz = 100;
    return ((int64_t)ts.tv_sec * hz) + ((int64_t)ts.tv_nsec * hz / 1000000000);
}
static pthread_once_t g_reaper_once = PTHREAD_ONCE_INIT;

static void sweep(pid_t pgid, int64_t since, bool all);

/* How many rounds a sweep makes at most: each round kills the orphans it
 * sees; their own children are re-parented to Loom and met in the next. */
#define PROC_SWEEP_ROUNDS 64
/* How long a sweep waits for one killed orphan to become reapable. */
#define PROC_SWEEP_REAP_MS 500

/* Loom is exiting: nothing it started may stay, commands still running
 * (a background shell of a session never freed) included. */
static pid_t g_reaper_pid;

static void end_orphans_at_exit(void)
{
    /* A forked child that calls exit() inherited the registry, not the
     * commands: they are its parent's. */
    if (getpid() != g_reaper_pid)
        return;
    pthread_mutex_lock(&g_track_mu);
    for (size_t i = 0; i < g_nrunning; i++)
        (void)kill(-g_running[i], SIGKILL);
    pthread_mutex_unlock(&g_track_mu);
    sweep(0, INT64_MAX, true);
}

/* Kills every child of Loom's (orphans, running commands' leaders) from a
 * signal handler: only system calls, no locks, no allocation. Each round
 * reads /proc/self/task/TID/children and kills what it lists; a killed
 * orphan's own children are re-parented to Loom, and met in the next round. */
static void kill_children_raw(void)
{
    for (int round = 0; round < 16; round++) {
        int hits = 0;
        int dir = open("/proc/self/task", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dir < 0)
            return;
        char ents[4096];
        long n;
        while ((n = syscall(SYS_getdents64, dir, ents, sizeof ents)) > 0) {
            for (long off = 0; off < n;) {
                struct {
                    unsigned long long ino;
                    long long off;
                    unsigned short reclen;
                    unsigned char type;
                    char name[];
                } *e = (void *)(ents + off);
                off += e->reclen;
                if (e->name[0] < '0' || e->name[0] > '9')
                    continue;
                char path[96] = "/proc/self/task/";
                size_t k = strlen(path), j = 0;
                while (e->name[j] && k < sizeof path - 16)
                    path[k++] = e->name[j++];
                memcpy(path + k, "/children", sizeof "/children");
                int fd = open(path, O_RDONLY | O_CLOEXEC);
                if (fd < 0)
                    continue;
                char buf[4096];
                ssize_t got = read(fd, buf, sizeof buf - 1);
                close(fd);
                long pid = 0;
                for (ssize_t i = 0; i <= got; i++) {
                    if (i < got && buf[i] >= '0' && buf[i] <= '9') {
                        pid = pid * 10 + (buf[i] - '0');
                    } else if (pid > 0) {
                        (void)kill((pid_t)pid, SIGKILL);
                        hits++;
                        pid = 0;
                    }
                }
            }
        }
        close(dir);
        if (hits == 0)
            return;
        struct timespec ts = {0, 5 * 1000000L};
        nanosleep(&ts, NULL);
    }
}

/* A signal whose default ends Loom without atexit (SIGALRM, SIGXCPU, a
 * crash…) would leave every command and orphan running, re-parented to
 * init. The handler ends them first, then lets the signal do what it
 * would have (SA_RESETHAND: the default is back; raise it again). */
static void on_fatal_signal(int sig)
{
    int saved = errno;
    if (getpid() == g_reaper_pid) {
        /* Unlocked: the process is ending. A group id that is not one
         * (a torn read, a crash's corruption) is skipped: kill(-1) would
         * reach every process of the user. */
        for (size_t i = 0; g_running && i < g_nrunning; i++)
            if (g_running[i] > 1)
                (void)kill(-g_running[i], SIGKILL);
        kill_children_raw();
    }
    errno = saved;
    raise(sig);
}

/* Installed where nobody handles the signal yet: a handler of Loom's own
 * (print mode's SIGTERM, the sanitizers' SIGSEGV) or of an embedding
 * program stays, and runs its own cleanup. */
static void guard_fatal_signals(void)
{
    /* SIGPIPE too: `loom -p … | head` dies of it when head is gone, and
     * still does, after the cleanup. Caught signals are reset at exec, so
     * commands start with the defaults either way. */
    static const int FATAL[] = {SIGHUP,  SIGINT,    SIGQUIT, SIGTERM, SIGUSR1, SIGUSR2,
                                SIGPIPE, SIGALRM,   SIGVTALRM, SIGPROF, SIGXCPU, SIGXFSZ,
                                SIGIO,   SIGPWR,    SIGSTKFLT, SIGSYS,  SIGTRAP, SIGABRT,
                                SIGBUS,  SIGFPE,    SIGILL,    SIGSEGV};
    for (size_t i = 0; i < sizeof FATAL / sizeof *FATAL; i++) {
        struct sigaction old;
        if (sigaction(FATAL[i], NULL, &old) != 0 || old.sa_handler != SIG_DFL ||
            (old.sa_flags & SA_SIGINFO))
            continue;
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_fatal_signal;
        sigemptyset(&sa.sa_mask);
        sa.sa_flags = SA_RESETHAND | SA_NODEFER;
        (void)sigaction(FATAL[i], &sa, NULL);
    }
}

static void become_reaper(void)
{
    /* Best effort: without it orphans go to init and cannot be found. */
    (void)prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
    g_reaper_pid = getpid();
    atexit(end_orphans_at_exit);
    guard_fatal_signals();
}

static bool running_locked(pid_t pid)
{
    for (size_t i = 0; i < g_nrunning; i++) {
        if (g_running[i] == pid)
            return true;
    }
    return false;
}

void proc_spawn_lock(void)
{
    pthread_once(&g_reaper_once, become_reaper);
    pthread_mutex_lock(&g_track_mu);
    g_spawn_started = boot_ticks();
}

void proc_spawn_unlock(pid_t pid)
{
    if (pid > 0) {
        if (g_nrunning == g_running_cap) {
            g_running_cap = g_running_cap ? 2 * g_running_cap : 16;
            g_running = xrealloc(g_running, g_running_cap * sizeof *g_running);
            g_started = xrealloc(g_started, g_running_cap * sizeof *g_started);
        }
        g_started[g_nrunning] = g_spawn_started;
        g_running[g_nrunning++] = pid;
    }
    pthread_mutex_unlock(&g_track_mu);
}

bool proc_read_stat(pid_t pid, char *state, pid_t *ppid, pid_t *pgrp, int64_t *started)
{
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return false;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0)
        return false;
    buf[n] = '\0';
    /* The command name is in parentheses and may hold anything, ")" too. */
    char *rp = strrchr(buf, ')');
    int pp = 0, pg = 0;
    long long st = 0;
    /* state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt
     * utime stime cutime cstime priority nice threads itrealvalue starttime */
    if (!rp || sscanf(rp + 1,
                      " %c %d %d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d %*d %*d %*d"
                      " %lld",
                      state, &pp, &pg, &st) != 4)
        return false;
    *ppid = pp;
    *pgrp = pg;
    *started = st;
    return true;
}

static void reap_killed(pid_t pid)
{
    for (int waited = 0; waited < PROC_SWEEP_REAP_MS; waited += 2) {
        pid_t w = waitpid(pid, NULL, WNOHANG);
        if (w == pid || (w < 0 && errno != EINTR))
            return; /* reaped, or not ours to reap (ECHILD) */
        struct timespec ts = {0, 2 * 1000000L};
        nanosleep(&ts, NULL);
    }
}

typedef struct {
    pid_t *v;
    size_t n, cap;
} pid_list;

static void pid_list_add(pid_list *l, pid_t pid)
{
    if (l->n == l->cap) {
        l->cap = l->cap ? 2 * l->cap : 32;
        l->v = xrealloc(l->v, l->cap * sizeof *l->v);
    }
    l->v[l->n++] = pid;
}

/* Loom's children, from /proc/self/task/TID/children (one file per thread:
 * an orphan goes to one of the reaper's threads). False when the kernel
 * has no such files; the caller then scans all of /proc. */
static bool list_children(pid_list *out)
{
    DIR *d = opendir("/proc/self/task");
    if (!d)
        return false;
    bool any = false;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        char *end;
        long tid = strtol(e->d_name, &end, 10);
        if (*end || tid <= 0)
            continue;
        char path[96];
        snprintf(path, sizeof path, "/proc/self/task/%ld/children", tid);
        FILE *f = fopen(path, "re");
        if (!f)
            continue;
        any = true;
        long v;
        while (fscanf(f, "%ld", &v) == 1)
            pid_list_add(out, (pid_t)v);
        fclose(f);
    }
    closedir(d);
    return any;
}

static void list_all(pid_list *out)
{
    DIR *d = opendir("/proc");
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        char *end;
        long v = strtol(e->d_name, &end, 10);
        if (!*end && v > 0)
            pid_list_add(out, (pid_t)v);
    }
    closedir(d);
}

/* Kills and reaps what pgid (0: none) left and the orphans that are its:
 * those still in its group, those started since `since` (the call's start,
 * in boot ticks; INT64_MAX: none), and, when no other command is running,
 * every orphan. all: every orphan, whatever group it is in. */
static void sweep(pid_t pgid, int64_t since, bool all)
{
    pid_t self = getpid();
    pid_list l = {0};
    for (int round = 0; round < PROC_SWEEP_ROUNDS; round++) {
        int hits = 0;
        if (pgid > 0) {
            /* Under the lock: once its leader was reaped the id could be
             * reused by a command just started, which would be registered. */
            pthread_mutex_lock(&g_track_mu);
            if (!running_locked(pgid) && kill(-pgid, SIGKILL) == 0)
                hits++;
            pthread_mutex_unlock(&g_track_mu);
        }
        l.n = 0;
        if (!list_children(&l))
            list_all(&l);
        for (size_t i = 0; i < l.n; i++) {
            pid_t pid = l.v[i], ppid, pgrp;
            int64_t started;
            char state;
            if (pid == self || !proc_read_stat(pid, &state, &ppid, &pgrp, &started) || ppid != self)
                continue;
            /* Started while this call ran: may be its, whatever group it
             * put itself in (another running command's included). */
            bool since_call = started >= since;
            pthread_mutex_lock(&g_track_mu);
            bool child = running_locked(pid);
            bool other_group = !all && !since_call && pgrp != pgid && running_locked(pgrp);
            bool others = g_nrunning > 0;
            pthread_mutex_unlock(&g_track_mu);
            if (child || other_group)
                continue;
            if (!(all || pgrp == pgid || since_call || !others))
                continue; /* a running command's, from before; its end ends it */
            if (state != 'Z')
                (void)kill(pid, SIGKILL);
            reap_killed(pid);
            hits++;
        }
        if (hits == 0)
            break;
    }
    free(l.v);
}

void proc_call_end(pid_t pid)
{
    /* Never registered: no start to go by; its group and idle Loom only. */
    int64_t since = INT64_MAX;
    pthread_mutex_lock(&g_track_mu);
    for (size_t i = 0; i < g_nrunning; i++) {
        if (g_running[i] == pid) {
            since = g_started[i];
            --g_nrunning;
            g_running[i] = g_running[g_nrunning];
            g_started[i] = g_started[g_nrunning];
            break;
        }
    }
    pthread_mutex_unlock(&g_track_mu);
    sweep(pid, since, false);
}

void proc_end_orphans(void)
{
    sweep(0, INT64_MAX, false);
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
    int pass_p[2] = {-1, -1};
    if ((has_input && pipe2(in_p, O_CLOEXEC) < 0) || pipe2(out_p, O_CLOEXEC) < 0 ||
        pipe2(err_p, O_CLOEXEC) < 0 || pipe2(rep_p, O_CLOEXEC) < 0 ||
        (spec->supervise && socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pass_p) < 0)) {
        int e = errno;
        int fds[] = {in_p[0],  in_p[1],  out_p[0], out_p[1],  err_p[0],
                     err_p[1], rep_p[0], rep_p[1], pass_p[0], pass_p[1]};
        for (size_t i = 0; i < sizeof fds / sizeof fds[0]; i++)
            close_fd(&fds[i]);
        return loom_error_set(err, LOOM_ERR_TOOL_EXECUTION_FAILED,
                              "could not start %s: creating pipes: %s", name, strerror(e));
    }

    int64_t start_ms = clock_mono_ms();
    /* The fork path reports a missing directory or program precisely; the
     * fast path is for commands that will start. */
    pid_t pid = -1;
    proc_spawn_lock();
    if (!spec->child_setup && (!spec->cwd || access(spec->cwd, X_OK) == 0))
        pid = spawn_fast(spec, in_p[0], out_p[1], err_p[1]);
    if (pid < 0)
        pid = fork();
    if (pid == 0)
        child_exec(spec, in_p[0], out_p[1], err_p[1], rep_p[1], pass_p[1]);
    int fork_errno = errno;
    proc_spawn_unlock(pid);
    if (pid < 0) {
        int e = fork_errno;
        int fds[] = {in_p[0],  in_p[1],  out_p[0], out_p[1],  err_p[0],
                     err_p[1], rep_p[0], rep_p[1], pass_p[0], pass_p[1]};
        for (size_t i = 0; i < sizeof fds / sizeof fds[0]; i++)
            close_fd(&fds[i]);
        return loom_error_set(err, LOOM_ERR_TOOL_EXECUTION_FAILED, "could not start %s: fork: %s",
                              name, strerror(e));
    }

    /* Also from this side: a kill(-pid) issued before the child ran its own
     * setpgid would otherwise miss. EACCES (child already exec'd, so it did
     * it itself) is harmless. */
    setpgid(pid, pid);
    close_fd(&in_p[0]);
    close_fd(&out_p[1]);
    close_fd(&err_p[1]);
    close_fd(&rep_p[1]);
    close_fd(&pass_p[1]);
    int pass_fd = pass_p[0]; /* the channel the supervised descriptor comes by */
    int sup_fd = -1;         /* that descriptor, once received */

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

        struct pollfd pfd[6];
        int nfd = 0, i_out = -1, i_err = -1, i_in = -1, i_rep = -1, i_pass = -1, i_sup = -1;
        if (pass_fd >= 0) {
            i_pass = nfd;
            pfd[nfd++] = (struct pollfd){.fd = pass_fd, .events = POLLIN};
        }
        if (sup_fd >= 0) {
            i_sup = nfd;
            pfd[nfd++] = (struct pollfd){.fd = sup_fd, .events = POLLIN};
        }
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
        if (i_pass >= 0 && pfd[i_pass].revents) {
            /* One descriptor, then the channel has done its job; EOF (the
             * child exec'd without passing one) closes it too. */
            if (pfd[i_pass].revents & POLLIN)
                sup_fd = proc_recv_fd(pass_fd, false);
            close_fd(&pass_fd);
        }
        if (i_sup >= 0 && pfd[i_sup].revents) {
            if (pfd[i_sup].revents & POLLIN)
                spec->supervise(spec->supervise_ctx, sup_fd);
            else
                close_fd(&sup_fd); /* nobody left to supervise */
        }
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
    /* The call is over: nothing it started may outlive it. The supervisor
     * stays open until then, so a leftover confined process blocked on it
     * is killed, not let through (closing it would fail its call anyway). */
    proc_call_end(pid);
    close_fd(&pass_fd);
    close_fd(&sup_fd);
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
