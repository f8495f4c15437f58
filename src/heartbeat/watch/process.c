/* watch_process.c — the process watch source: is the process a pid file
 * names still running?
 *
 * Each poll reads the pid file (a decimal pid, optionally followed by
 * anything after whitespace) and asks the kernel with kill(pid, 0); EPERM
 * means alive, and a zombie (state Z in /proc/<pid>/stat) counts as gone.
 * A pid is reported once when it is found not running — also at the first
 * poll, since a pid file naming a dead process is news — and again only
 * after the file names another pid. A pid file that disappears together
 * with its running process is reported as an exit; a pid file that never
 * existed is no event (the process may not have started yet).
 */
#include "heartbeat/watch/watch.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

#include "base/proc.h"
#include "base/path.h"
#include "base/str.h"

typedef struct proc_watch {
    char *pid_file;
    char *cwd;
    event_urgency urgency;
    double weight;
    pid_t last_pid;        /* the pid last read; 0: none */
    bool last_alive;
    pid_t reported_pid;    /* the pid whose end was reported; 0: none */
} proc_watch;

/* >0 pid; 0 no file; -1 unreadable or not a pid. */
static pid_t read_pid(const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    if (fd < 0)
        return errno == ENOENT ? 0 : -1;
    char buf[64];
    ssize_t n;
    do
        n = read(fd, buf, sizeof buf - 1);
    while (n < 0 && errno == EINTR);
    close(fd);
    if (n <= 0)
        return n == 0 ? 0 : -1;   /* an empty file: being written, or not started */
    buf[n] = '\0';
    char *p = buf;
    while (*p == ' ' || *p == '\t' || *p == '\n')
        p++;
    char *end;
    errno = 0;
    long v = strtol(p, &end, 10);
    if (errno || end == p || v <= 0 || v > 0x3fffffff || (*end && !strchr(" \t\r\n", *end)))
        return -1;
    return (pid_t)v;
}

static bool is_zombie(pid_t pid)
{
    char state;
    pid_t ppid, pgrp;
    int64_t started;
    return proc_read_stat(pid, &state, &ppid, &pgrp, &started) && (state == 'Z' || state == 'X');
}

static bool alive(pid_t pid)
{
    if (kill(pid, 0) < 0 && errno == ESRCH)
        return false;
    return !is_zombie(pid);
}

static void report(proc_watch *pw, pid_t pid, const watch_tick *t, const char *how,
                   watch_emit_fn emit, void *ctx)
{
    loom_str fp = LOOM_STR_INIT, sum = LOOM_STR_INIT;
    str_printf(&fp, "process:%s:%d", pw->pid_file, (int)pid);
    str_printf(&sum, "process %d (%s) %s", (int)pid, watch_rel_path(pw->pid_file, pw->cwd), how);
    hb_candidate c = {
        .source = "process",
        .subject = pw->pid_file,
        .fingerprint = fp.ptr,
        .summary = sum.ptr,
        .urgency = pw->urgency,
        .magnitude = 1.0,
        .weight = pw->weight,
    };
    emit(ctx, &c);
    pw->reported_pid = pid;
    str_free(&fp);
    str_free(&sum);
}

static int proc_poll(void *ctx, const watch_tick *t, watch_emit_fn emit, void *emit_ctx)
{
    proc_watch *pw = ctx;
    pid_t pid = read_pid(pw->pid_file);
    if (pid < 0)
        return 1;
    if (pid == 0) {
        /* The file is gone: news only if the process it named is gone too. */
        if (pw->last_pid > 0 && pw->last_alive && !alive(pw->last_pid) &&
            pw->reported_pid != pw->last_pid)
            report(pw, pw->last_pid, t, "exited (its pid file was removed)", emit, emit_ctx);
        if (pw->last_pid > 0 && !alive(pw->last_pid))
            pw->last_pid = 0;
        return 0;
    }
    bool up = alive(pid);
    if (!up && pw->reported_pid != pid)
        report(pw, pid, t, "is no longer running", emit, emit_ctx);
    pw->last_pid = pid;
    pw->last_alive = up;
    return 0;
}

static void proc_free(void *ctx)
{
    proc_watch *pw = ctx;
    if (!pw)
        return;
    free(pw->pid_file);
    free(pw->cwd);
    free(pw);
}

/* ---- its settings block (watch_ops.parse / to_json) ---- */

static const char *const proc_keys[] = {"type", "weight", "urgency", "pid_file", NULL};

static int proc_parse(const json_t *src, const char *where, const char *cwd, watch_config *w,
                      loom_error *err)
{
    int rc;
    w->urgency = w->idle_urgency = EVENT_HIGH;
    if ((rc = hb_cfg_level(src, where, w, err)) < 0)
        return rc;
    const char *pf = NULL;
    if ((rc = hb_cfg_string(src, "pid_file", where, &pf, err)) < 0)
        return rc;
    if (!pf)
        return loom_error_set(err, LOOM_ERR_CONFIG, "%s: missing \"pid_file\"", where);
    w->pid_file = path_make_absolute(pf, cwd);
    return 0;
}

static void proc_to_json(const watch_config *w, json_t *s)
{
    json_object_set_new(s, "urgency", json_string(event_urgency_name(w->urgency)));
    json_object_set_new(s, "pid_file", json_string(w->pid_file));
}

const watch_ops watch_process_ops = {
    .poll = proc_poll,
    .free = proc_free,
    .name = "process",
    .type = WATCH_PROCESS,
    .keys = proc_keys,
    .default_weight = 1.0,
    .parse = proc_parse,
    .to_json = proc_to_json,
};

int watch_process_new(const watch_config *c, const char *cwd, watch_source *out, loom_error *err)
{
    if (c->type != WATCH_PROCESS || !c->pid_file)
        return loom_error_set(err, LOOM_ERR_INVALID_REQUEST, "heartbeat: not a process source");
    proc_watch *pw = xcalloc(1, sizeof *pw);
    pw->pid_file = xstrdup(c->pid_file);
    pw->cwd = xstrdup(cwd);
    pw->urgency = c->urgency;
    pw->weight = c->weight;
    out->ops = &watch_process_ops;
    out->ctx = pw;
    out->type = WATCH_PROCESS;
    return 0;
}
