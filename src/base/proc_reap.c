/* proc_reap.c — the other half of proc.h: keeping track of the commands
 * Loom runs and ending whatever they leave behind. Loom makes itself a child
 * subreaper at its first spawn; this file owns the registry of running
 * commands, the sweep that kills and reaps orphans when a call ends
 * (proc_call_end), and the atexit and fatal-signal handlers that end the
 * rest when Loom goes. proc.c runs the commands and calls in here around
 * each spawn and at the end of each call.
 *
 * Threading: the registry is guarded by g_track_mu; the handlers for fatal
 * signals read it without the lock (async-signal-safe, best effort).
 */
#include "base/proc.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/str.h"

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
