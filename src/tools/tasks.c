/* tasks.c — the background-shell registry (see tasks.h): starting shells in
 * their own process groups, one reader thread per task that drains its
 * output into a 1 MiB window and reaps it, and stopping groups with
 * SIGTERM, a grace period, then SIGKILL. A shell is registered with
 * base/proc.h as a running command: when it exits, whatever it left behind
 * is ended, and at the registry's end every orphan is.
 *
 * One mutex guards the registry and every task in it; it is never held
 * across a read, a wait or a signal. A condition variable is broadcast
 * whenever output arrives or a task ends, which is what TaskOutput's
 * blocking read and the stop paths wait on. */
#include "tools/tasks.h"

#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/proc.h"

extern char **environ;

/* How often the reader looks at the shell when no output arrives: bounds
 * how late a finished task is noticed. */
#define TASK_TICK_MS 20
/* After the shell exits, output still in flight is read for this long; a
 * background grandchild holding the pipe does not keep the task alive. */
#define TASK_DRAIN_MS 250
/* After SIGKILL, how long a stop waits for the reader to see the end. */
#define TASK_KILL_WAIT_MS 5000
/* The longest single wait on the condition variable, so that a cancel flag
 * (which nobody signals us about) is seen in time. */
#define TASK_WAIT_SLICE_MS 50

typedef struct task {
    struct task *next;
    task_registry *reg;
    char *id, *command, *description, *cwd;
    pid_t pid;
    pthread_t thread;
    task_status status;
    bool leader_reaped;    /* the shell is gone: its pid may be reused soon */
    bool stop_requested;   /* ended by us: status becomes killed */
    bool stopping_at_end;  /* signalled by task_registry_free */
    int exit_code, term_signal;
    int64_t started_ms, ended_ms;
    /* The output window: ring[(head + i) % cap] for i < len holds the bytes
     * at absolute offsets total - len + i. */
    char *ring;
    size_t head, len;
    uint64_t total;
    uint64_t read_mark;    /* absolute offset up to which output was read */
} task;

/* A task run elsewhere (task_external_ops): only listed and forwarded to. */
typedef struct ext_task {
    struct ext_task *next;
    char *id;
    const task_external_ops *ops;
    void *ctx;
} ext_task;

struct task_registry {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    task *first, *last;
    unsigned next_id;
    /* External tasks, in the order added; entries live until the registry's
     * end, so a pointer found under mu stays valid after it is released. */
    ext_task *ext_first, *ext_last;
    bool closing;          /* task_registry_free has begun */
};

/* ---- environment and names ------------------------------------------------ */

/* Words that mark a variable as a credential (matched case-insensitively
 * anywhere in its name, as Codex CLI's default shell environment policy
 * does): ANTHROPIC_API_KEY, GITHUB_TOKEN, AWS_SECRET_ACCESS_KEY, … A command
 * the model runs has no need of Loom's own API key, and what it prints goes
 * to the model — and from there, in bypass mode, anywhere. */
static const char *const SECRET_WORDS[] = {"KEY", "SECRET", "TOKEN", "PASSWORD", "PASSWD",
                                           "CREDENTIAL", NULL};

static bool name_has(const char *name, size_t n, const char *word)
{
    size_t w = strlen(word);
    for (size_t i = 0; i + w <= n; i++)
        if (!strncasecmp(name + i, word, w))
            return true;
    return false;
}

/* LOOM_SHELL_ENV_KEEP=NAME,NAME keeps named variables a user's commands
 * need (a registry token for npm publish, say). */
static bool kept(const char *name, size_t n)
{
    const char *keep = getenv("LOOM_SHELL_ENV_KEEP");
    for (const char *p = keep; p && *p;) {
        size_t len = strcspn(p, ",");
        if (len == n && !strncmp(p, name, n))
            return true;
        p += len + (p[len] == ',');
    }
    return false;
}

bool shell_env_is_secret(const char *name, size_t n)
{
    for (size_t i = 0; SECRET_WORDS[i]; i++)
        if (name_has(name, n, SECRET_WORDS[i]))
            return !kept(name, n);
    return false;
}

char **shell_env_new(void)
{
    size_t n = 0;
    for (char **e = environ; e && *e; e++)
        n++;
    char **env = xcalloc(n + 2, sizeof *env);
    size_t k = 0;
    for (char **e = environ; e && *e; e++) {
        size_t name_len = strcspn(*e, "=");
        if (strncmp(*e, "LOOM=", 5) != 0 && !shell_env_is_secret(*e, name_len))
            env[k++] = xstrdup(*e);
    }
    env[k++] = xstrdup("LOOM=1");
    env[k] = NULL;
    return env;
}

void shell_env_free(char **env)
{
    if (!env)
        return;
    for (char **e = env; *e; e++)
        free(*e);
    free(env);
}

const char *shell_signal_name(int sig, char *buf, size_t size)
{
    const char *abbrev = sigabbrev_np(sig);
    if (abbrev)
        snprintf(buf, size, "SIG%s", abbrev);
    else
        snprintf(buf, size, "signal %d", sig);
    return buf;
}

const char *task_status_text(const task_info *info, char *buf, size_t size)
{
    char sig[32];
    switch (info->status) {
    case TASK_RUNNING:
        snprintf(buf, size, "running");
        break;
    case TASK_COMPLETED:
        snprintf(buf, size, "completed (exit 0)");
        break;
    case TASK_FAILED:
        if (info->term_signal)
            snprintf(buf, size, "failed (%s)",
                     shell_signal_name(info->term_signal, sig, sizeof sig));
        else if (info->exit_code >= 0)
            snprintf(buf, size, "failed (exit %d)", info->exit_code);
        else
            snprintf(buf, size, "failed (exit status unknown)");
        break;
    case TASK_KILLED:
        snprintf(buf, size, "killed");
        break;
    }
    return buf;
}

#define SHELL_OUTPUT_CAP_DEFAULT 30000 /* Claude Code's BASH_MAX_OUTPUT_LENGTH default */
/* How far a cut point may move to land on a line end. */
#define SHELL_CUT_SLACK 256

size_t shell_output_cap(void)
{
    const char *v = getenv("BASH_MAX_OUTPUT_LENGTH");
    long n = v && *v ? strtol(v, NULL, 10) : SHELL_OUTPUT_CAP_DEFAULT;
    if (n < 1000)
        n = 1000;
    if (n > 1000000)
        n = 1000000;
    return (size_t)n;
}

static bool utf8_cont(char c)
{
    return ((unsigned char)c & 0xC0) == 0x80;
}

size_t shell_append_capped(loom_str *out, const char *data, size_t len, size_t cap,
                           size_t lost)
{
    while (len > 0 && data[len - 1] == '\n')
        len--;
    size_t cut = 0;
    if (len <= cap) {
        str_append(out, data, len);
    } else {
        /* The tail gets the larger share: errors and summaries come last. */
        size_t head = cap * 2 / 5;
        size_t tail_start = len - (cap - head);
        for (size_t i = head; i > 0 && head - i < SHELL_CUT_SLACK; i--) {
            if (data[i - 1] == '\n') {
                head = i;
                break;
            }
        }
        for (size_t i = tail_start; i < len && i - tail_start < SHELL_CUT_SLACK; i++) {
            if (data[i] == '\n') {
                tail_start = i + 1;
                break;
            }
        }
        while (head > 0 && utf8_cont(data[head]))
            head--;
        while (tail_start < len && utf8_cont(data[tail_start]))
            tail_start++;
        cut = tail_start - head;
        str_append(out, data, head);
        if (head > 0 && data[head - 1] != '\n')
            str_putc(out, '\n');
        str_printf(out, "\n... [%zu bytes truncated] ...\n\n", cut);
        str_append(out, data + tail_start, len - tail_start);
    }
    if (lost)
        str_printf(out, "\n... [%zu more bytes were not captured]", lost);
    return cut + lost;
}

/* ---- the output window ------------------------------------------------------ */

static void ring_append(task *t, const char *data, size_t n)
{
    const size_t cap = TASK_OUTPUT_WINDOW;
    t->total += n;
    if (!t->ring)
        t->ring = xmalloc(cap);
    if (n > cap) {
        data += n - cap;
        n = cap;
    }
    if (t->len + n > cap) {
        size_t overflow = t->len + n - cap;
        t->head = (t->head + overflow) % cap;
        t->len -= overflow;
    }
    size_t pos = (t->head + t->len) % cap;
    size_t first = n < cap - pos ? n : cap - pos;
    memcpy(t->ring + pos, data, first);
    memcpy(t->ring, data + first, n - first);
    t->len += n;
}

/* Appends the kept bytes from absolute offset `from` to the end. */
static void ring_copy_from(const task *t, uint64_t from, loom_str *out)
{
    const size_t cap = TASK_OUTPUT_WINDOW;
    uint64_t kept_start = t->total - t->len;
    if (from < kept_start)
        from = kept_start;
    size_t skip = (size_t)(from - kept_start);
    size_t n = t->len - skip;
    size_t pos = (t->head + skip) % cap;
    size_t first = n < cap - pos ? n : cap - pos;
    str_append(out, t->ring + pos, first);
    str_append(out, t->ring, n - first);
}

/* ---- registry internals -------------------------------------------------------- */

static task *find_locked(task_registry *reg, const char *id)
{
    for (task *t = reg->first; t; t = t->next) {
        if (id && strcmp(t->id, id) == 0)
            return t;
    }
    return NULL;
}

static ext_task *find_ext(task_registry *reg, const char *id)
{
    pthread_mutex_lock(&reg->mu);
    ext_task *e = reg->ext_first;
    while (e && !(id && strcmp(e->id, id) == 0))
        e = e->next;
    pthread_mutex_unlock(&reg->mu);
    return e;
}

static void ext_info(const ext_task *e, task_info *info)
{
    memset(info, 0, sizeof *info);
    e->ops->info(e->ctx, info);
    free(info->id);
    info->id = xstrdup(e->id);
}

int task_registry_add_external(task_registry *reg, const char *id,
                               const task_external_ops *ops, void *ctx)
{
    assert(ops && ops->info && ops->read && ops->tail && ops->wait && ops->stop && ops->release);
    assert(id && *id);
    pthread_mutex_lock(&reg->mu);
    bool taken = reg->closing || find_locked(reg, id);
    for (ext_task *e = reg->ext_first; e && !taken; e = e->next)
        taken = strcmp(e->id, id) == 0;
    if (taken) {
        pthread_mutex_unlock(&reg->mu);
        ops->release(ctx);
        return -1;
    }
    ext_task *e = xcalloc(1, sizeof *e);
    e->id = xstrdup(id);
    e->ops = ops;
    e->ctx = ctx;
    if (reg->ext_last)
        reg->ext_last->next = e;
    else
        reg->ext_first = e;
    reg->ext_last = e;
    pthread_mutex_unlock(&reg->mu);
    return 0;
}

/* Stops and releases every external task (the registry's end). */
static void free_externals(task_registry *reg)
{
    pthread_mutex_lock(&reg->mu);
    reg->closing = true;
    ext_task *e = reg->ext_first;
    reg->ext_first = reg->ext_last = NULL;
    pthread_mutex_unlock(&reg->mu);
    while (e) {
        ext_task *next = e->next;
        e->ops->stop(e->ctx, 0);
        e->ops->release(e->ctx);
        free(e->id);
        free(e);
        e = next;
    }
}

static void info_fill(const task *t, task_info *info)
{
    info->id = xstrdup(t->id);
    info->command = xstrdup(t->command);
    info->description = xstrdup(t->description);
    info->cwd = xstrdup(t->cwd);
    info->status = t->status;
    info->exit_code = t->exit_code;
    info->term_signal = t->term_signal;
    info->pid = (long)t->pid;
    info->started_ms = t->started_ms;
    info->ended_ms = t->ended_ms;
    info->output_total = t->total;
    info->output_dropped = t->total - t->len;
}

void task_info_free(task_info *info)
{
    if (!info)
        return;
    free(info->id);
    free(info->command);
    free(info->description);
    free(info->cwd);
    memset(info, 0, sizeof *info);
}

void task_info_free_array(task_info *arr, size_t n)
{
    for (size_t i = 0; i < n; i++)
        task_info_free(&arr[i]);
    free(arr);
}

/* Waits (lock held) until t ends or ms pass; true when it has ended. */
static bool wait_end_locked(task_registry *reg, task *t, long ms)
{
    int64_t until = clock_mono_ms() + ms;
    while (t->status == TASK_RUNNING) {
        int64_t left = until - clock_mono_ms();
        if (left <= 0)
            return false;
        struct timespec ts;
        clock_deadline(&ts, CLOCK_MONOTONIC, left);
        pthread_cond_timedwait(&reg->cv, &reg->mu, &ts);
    }
    return true;
}

/* After a SIGTERM: whatever of the group is still there gets SIGKILL. The
 * group outlives a leader that died of the SIGTERM if a member ignores it;
 * kill(-pgid, 0) tells whether any member remains (and while one does, the
 * id cannot have been reused). */
static void kill_rest_of_group(pid_t pgid, bool leader_alive)
{
    if (leader_alive || kill(-pgid, 0) == 0)
        (void)kill(-pgid, SIGKILL);
}

/* ---- the reader thread ---------------------------------------------------------- */

typedef struct {
    task *t;
    int fd;
} reader_arg;

static void *reader_main(void *arg)
{
    reader_arg *ra = arg;
    task *t = ra->t;
    int fd = ra->fd;
    free(ra);
    task_registry *reg = t->reg;

    char buf[65536];
    bool reaped = false;
    int status = 0;
    int64_t reaped_at = 0;
    for (;;) {
        int64_t now = clock_mono_ms();
        if (!reaped) {
            /* Reaping under the lock (WNOHANG: it never blocks) is what lets
             * a stopper that sees leader_reaped false under the same lock
             * trust that the pid, and so the group id, is still ours. */
            pthread_mutex_lock(&reg->mu);
            pid_t w = waitpid(t->pid, &status, WNOHANG);
            if (w == t->pid || (w < 0 && errno == ECHILD)) {
                /* ECHILD: reaped elsewhere (SIGCHLD ignored); status lost. */
                if (w < 0)
                    status = -1;
                reaped = true;
                reaped_at = now;
                t->leader_reaped = true;
            }
            pthread_mutex_unlock(&reg->mu);
        }
        if (reaped && (fd < 0 || now - reaped_at >= TASK_DRAIN_MS))
            break;
        if (fd < 0) {
            /* The shell closed its output but runs on: only its exit is
             * awaited now. */
            poll(NULL, 0, TASK_TICK_MS);
            continue;
        }
        struct pollfd pfd = {.fd = fd, .events = POLLIN};
        int pr = poll(&pfd, 1, TASK_TICK_MS);
        if (pr <= 0)
            continue;
        ssize_t n = read(fd, buf, sizeof buf);
        if (n > 0) {
            pthread_mutex_lock(&reg->mu);
            ring_append(t, buf, (size_t)n);
            pthread_cond_broadcast(&reg->cv);
            pthread_mutex_unlock(&reg->mu);
        } else if (n == 0 || (errno != EINTR && errno != EAGAIN)) {
            close(fd);
            fd = -1;
        }
    }
    /* Closing our end makes a grandchild still writing get EPIPE rather than
     * block on a pipe nobody drains. */
    if (fd >= 0)
        close(fd);
    /* The shell is gone: so is everything it left running, in its group or
     * orphaned (nohup, setsid, a double fork). */
    proc_call_end(t->pid);

    pthread_mutex_lock(&reg->mu);
    t->ended_ms = clock_wall_ms();
    if (status != -1 && WIFEXITED(status)) {
        t->exit_code = WEXITSTATUS(status);
    } else if (status != -1 && WIFSIGNALED(status)) {
        t->exit_code = -1;
        t->term_signal = WTERMSIG(status);
    }
    if (t->stop_requested)
        t->status = TASK_KILLED;
    else if (t->exit_code == 0 && t->term_signal == 0)
        t->status = TASK_COMPLETED;
    else
        t->status = TASK_FAILED;
    pthread_cond_broadcast(&reg->cv);
    pthread_mutex_unlock(&reg->mu);
    return NULL;
}

/* ---- public API ------------------------------------------------------------------- */

task_registry *task_registry_new(void)
{
    task_registry *reg = xcalloc(1, sizeof *reg);
    pthread_mutex_init(&reg->mu, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&reg->cv, &ca);
    pthread_condattr_destroy(&ca);
    return reg;
}

static void task_free(task *t)
{
    free(t->id);
    free(t->command);
    free(t->description);
    free(t->cwd);
    free(t->ring);
    free(t);
}

void task_registry_free(task_registry *reg)
{
    if (!reg)
        return;
    /* External tasks first: a background agent may own shells of its own. */
    free_externals(reg);
    /* SIGTERM to every running group at once, then one shared grace period:
     * ten stubborn tasks cost one grace period, not ten. */
    pthread_mutex_lock(&reg->mu);
    for (task *t = reg->first; t; t = t->next) {
        t->stopping_at_end = t->status == TASK_RUNNING && !t->leader_reaped;
        if (t->stopping_at_end) {
            t->stop_requested = true;
            (void)kill(-t->pid, SIGTERM);
        }
    }
    int64_t until = clock_mono_ms() + TASK_GRACE_MS;
    for (task *t = reg->first; t; t = t->next) {
        if (t->stopping_at_end) {
            int64_t left = until - clock_mono_ms();
            wait_end_locked(reg, t, left > 0 ? left : 0);
        }
    }
    for (task *t = reg->first; t; t = t->next) {
        if (t->stopping_at_end)
            kill_rest_of_group(t->pid, !t->leader_reaped);
    }
    pthread_mutex_unlock(&reg->mu);

    /* The readers end on their own once their shells are reaped. */
    for (task *t = reg->first; t; t = t->next)
        pthread_join(t->thread, NULL);
    /* The session is over: orphans no running command can claim go too. */
    proc_end_orphans();
    for (task *t = reg->first, *next; t; t = next) {
        next = t->next;
        task_free(t);
    }
    pthread_cond_destroy(&reg->cv);
    pthread_mutex_destroy(&reg->mu);
    free(reg);
}

int task_registry_start(task_registry *reg, const char *command, const char *cwd,
                        const char *description, char **id_out, loom_error *err)
{
    *id_out = NULL;
    int p[2];
    if (pipe2(p, O_CLOEXEC) < 0)
        return loom_error_set(err, LOOM_ERR_TOOL_EXECUTION_FAILED,
                              "could not start background command: pipe: %s", strerror(errno));
    /* With Loom's own stdio closed the write end could be fd 1 or 2, and a
     * dup2 onto itself would keep its close-on-exec flag. */
    if (p[1] <= 2) {
        int moved = fcntl(p[1], F_DUPFD_CLOEXEC, 3);
        close(p[1]);
        p[1] = moved;
        if (moved < 0) {
            close(p[0]);
            return loom_error_set(err, LOOM_ERR_TOOL_EXECUTION_FAILED,
                                  "could not start background command: %s", strerror(errno));
        }
    }

    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&fa, p[1], 1);
    posix_spawn_file_actions_adddup2(&fa, p[1], 2);
    /* Descriptors opened elsewhere in Loom without O_CLOEXEC must not leak
     * into a long-lived background command. */
    posix_spawn_file_actions_addclosefrom_np(&fa, 3);
    if (cwd)
        posix_spawn_file_actions_addchdir_np(&fa, cwd);

    /* Own group, default signal dispositions, an empty mask (base/proc.h). */
    posix_spawnattr_t attr;
    bool attr_ok = proc_spawnattr_init(&attr) == 0;

    char **env = shell_env_new();
    char *argv[] = {"bash", "-c", (char *)command, NULL};
    pid_t pid = -1;
    /* Registered as a running command (base/proc.h), so what it leaves
     * behind is told from other commands' and ended with it. */
    proc_spawn_lock();
    int rc = attr_ok ? posix_spawnp(&pid, "bash", &fa, &attr, argv, env) : ENOMEM;
    proc_spawn_unlock(rc == 0 ? pid : 0);
    shell_env_free(env);
    posix_spawn_file_actions_destroy(&fa);
    if (attr_ok)
        posix_spawnattr_destroy(&attr);
    close(p[1]);
    if (rc != 0) {
        close(p[0]);
        if (cwd && rc == ENOENT && access(cwd, X_OK) != 0)
            return loom_error_set(err, LOOM_ERR_TOOL_EXECUTION_FAILED,
                                  "could not start background command: cannot change directory "
                                  "to %s: %s", cwd, strerror(errno));
        return loom_error_set(err, LOOM_ERR_TOOL_EXECUTION_FAILED,
                              "could not start background command: %s", strerror(rc));
    }

    task *t = xcalloc(1, sizeof *t);
    t->reg = reg;
    t->command = xstrdup(command);
    t->description = xstrdup(description);
    t->cwd = xstrdup(cwd);
    t->pid = pid;
    t->status = TASK_RUNNING;
    t->exit_code = -1;
    t->started_ms = clock_wall_ms();

    pthread_mutex_lock(&reg->mu);
    char id[32];
    snprintf(id, sizeof id, "bash_%u", ++reg->next_id);
    t->id = xstrdup(id);
    reader_arg *ra = xmalloc(sizeof *ra);
    ra->t = t;
    ra->fd = p[0];
    int trc = pthread_create(&t->thread, NULL, reader_main, ra);
    if (trc != 0) {
        pthread_mutex_unlock(&reg->mu);
        free(ra);
        /* Without a reader nobody would reap it or drain its pipe. */
        (void)kill(-pid, SIGKILL);
        close(p[0]);
        waitpid(pid, NULL, 0);
        proc_call_end(pid);
        task_free(t);
        return loom_error_set(err, LOOM_ERR_TOOL_EXECUTION_FAILED,
                              "could not start background command: thread: %s", strerror(trc));
    }
    if (reg->last)
        reg->last->next = t;
    else
        reg->first = t;
    reg->last = t;
    *id_out = xstrdup(t->id);
    pthread_mutex_unlock(&reg->mu);
    return 0;
}

int task_registry_get(task_registry *reg, const char *id, task_info *info)
{
    memset(info, 0, sizeof *info);
    pthread_mutex_lock(&reg->mu);
    task *t = find_locked(reg, id);
    if (t)
        info_fill(t, info);
    pthread_mutex_unlock(&reg->mu);
    if (t)
        return 0;
    ext_task *e = find_ext(reg, id);
    if (e)
        ext_info(e, info);
    return e ? 0 : -1;
}

int task_registry_read(task_registry *reg, const char *id, loom_str *out, uint64_t *missed,
                       task_info *info)
{
    if (info)
        memset(info, 0, sizeof *info);
    if (missed)
        *missed = 0;
    pthread_mutex_lock(&reg->mu);
    task *t = find_locked(reg, id);
    if (t) {
        uint64_t kept_start = t->total - t->len;
        if (missed && t->read_mark < kept_start)
            *missed = kept_start - t->read_mark;
        if (t->ring)
            ring_copy_from(t, t->read_mark, out);
        t->read_mark = t->total;
        if (info)
            info_fill(t, info);
    }
    pthread_mutex_unlock(&reg->mu);
    if (t)
        return 0;
    ext_task *e = find_ext(reg, id);
    if (!e)
        return -1;
    uint64_t lost = 0;
    e->ops->read(e->ctx, out, &lost);
    if (missed)
        *missed = lost;
    if (info)
        ext_info(e, info);
    return 0;
}

int task_registry_tail(task_registry *reg, const char *id, size_t max, loom_str *out)
{
    pthread_mutex_lock(&reg->mu);
    task *t = find_locked(reg, id);
    if (t && t->ring) {
        uint64_t from = t->total > max ? t->total - max : 0;
        ring_copy_from(t, from, out);
    }
    pthread_mutex_unlock(&reg->mu);
    if (t)
        return 0;
    ext_task *e = find_ext(reg, id);
    if (e)
        e->ops->tail(e->ctx, max, out);
    return e ? 0 : -1;
}

int task_registry_wait(task_registry *reg, const char *id, long timeout_ms,
                       const loom_cancel *cancel)
{
    int64_t until = timeout_ms >= 0 ? clock_mono_ms() + timeout_ms : INT64_MAX;
    pthread_mutex_lock(&reg->mu);
    task *t = find_locked(reg, id);
    int rc = -1;
    while (t) {
        if (t->status != TASK_RUNNING) {
            rc = 0;
            break;
        }
        if (cancel_requested(cancel)) {
            rc = 2;
            break;
        }
        int64_t left = until - clock_mono_ms();
        if (left <= 0) {
            rc = 1;
            break;
        }
        struct timespec ts;
        clock_deadline(&ts, CLOCK_MONOTONIC, left < TASK_WAIT_SLICE_MS ? (long)left : TASK_WAIT_SLICE_MS);
        pthread_cond_timedwait(&reg->cv, &reg->mu, &ts);
    }
    pthread_mutex_unlock(&reg->mu);
    if (t)
        return rc;
    ext_task *e = find_ext(reg, id);
    return e ? e->ops->wait(e->ctx, timeout_ms, cancel) : -1;
}

int task_registry_stop(task_registry *reg, const char *id, long grace_ms)
{
    if (grace_ms <= 0)
        grace_ms = TASK_GRACE_MS;
    pthread_mutex_lock(&reg->mu);
    task *t = find_locked(reg, id);
    if (!t) {
        pthread_mutex_unlock(&reg->mu);
        ext_task *e = find_ext(reg, id);
        return e ? e->ops->stop(e->ctx, grace_ms) : -1;
    }
    if (t->status != TASK_RUNNING || t->leader_reaped) {
        /* Already over (or in its last drain): let the reader finish so the
         * caller sees the final status. */
        wait_end_locked(reg, t, TASK_KILL_WAIT_MS);
        pthread_mutex_unlock(&reg->mu);
        return 1;
    }
    t->stop_requested = true;
    pid_t pgid = t->pid;
    /* The shell is not reaped yet (the reader reaps under this lock), so its
     * pid, the group id, cannot have been reused. */
    (void)kill(-pgid, SIGTERM);
    wait_end_locked(reg, t, grace_ms);
    kill_rest_of_group(pgid, !t->leader_reaped);
    wait_end_locked(reg, t, TASK_KILL_WAIT_MS);
    pthread_mutex_unlock(&reg->mu);
    return 0;
}

size_t task_registry_list(task_registry *reg, task_info **out)
{
    pthread_mutex_lock(&reg->mu);
    size_t n = 0, n_ext = 0;
    for (task *t = reg->first; t; t = t->next)
        n++;
    for (ext_task *e = reg->ext_first; e; e = e->next)
        n_ext++;
    task_info *arr = xcalloc(n + n_ext ? n + n_ext : 1, sizeof *arr);
    size_t i = 0;
    for (task *t = reg->first; t; t = t->next)
        info_fill(t, &arr[i++]);
    ext_task *ext = reg->ext_first;
    pthread_mutex_unlock(&reg->mu);
    /* The ops run unlocked; the first n_ext entries cannot go away. */
    for (size_t k = 0; k < n_ext; k++, ext = ext->next)
        ext_info(ext, &arr[i++]);
    *out = arr;
    return n + n_ext;
}

char *task_registry_ids(task_registry *reg)
{
    loom_str s = LOOM_STR_INIT;
    pthread_mutex_lock(&reg->mu);
    for (task *t = reg->first; t; t = t->next) {
        if (s.len)
            str_puts(&s, ", ");
        str_puts(&s, t->id);
    }
    for (ext_task *e = reg->ext_first; e; e = e->next) {
        if (s.len)
            str_puts(&s, ", ");
        str_puts(&s, e->id);
    }
    pthread_mutex_unlock(&reg->mu);
    if (!s.len)
        str_puts(&s, "(none)");
    return str_steal(&s);
}
