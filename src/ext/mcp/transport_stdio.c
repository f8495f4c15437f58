/* transport_stdio.c — the stdio transport of transport.h: an MCP server as a
 * child process speaking newline-delimited JSON-RPC on its stdin/stdout.
 *
 * Owns the child (its own process group, registered with base/proc as a
 * running command so the orphan sweeps leave it and its group alone, and
 * reaped here exactly once), its three pipes, the server's log file, and
 * two threads: the stdout reader (splits lines into messages, notices the
 * child's end) and the stderr reader (appends to the log, splits lines for
 * on_stderr). Ending it: close stdin, wait, SIGTERM the group, wait,
 * SIGKILL; then proc_call_end ends whatever the group left behind.
 *
 * Threading: send from any thread (one writer at a time, send_mu); the
 * reap state is under mu, taken by the stdout reader and by close. Once
 * close starts no callback is made, and close joins both threads before it
 * returns.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/log.h"
#include "base/proc.h"
#include "base/str.h"
#include "ext/mcp/jsonrpc.h"
#include "ext/mcp/transport.h"

extern char **environ;

/* How long close waits after closing stdin, and after SIGTERM. Short:
 * common servers (the reference ones among them) ignore EOF on stdin, and
 * every `loom -p` would wait this long at its exit. */
#define STDIO_EXIT_GRACE_MS 300
#define STDIO_TERM_GRACE_MS 1000
/* The reader threads wake this often to notice the child's end or close. */
#define STDIO_TICK_MS 50
/* After stdout's EOF, how long the child has to exit before the reason is
 * "closed its output" rather than its exit status. */
#define STDIO_EOF_WAIT_MS 1000
/* A send that can write nothing for this long fails: the server is not
 * reading its input. */
#define STDIO_SEND_STALL_MS 30000
/* The most a server's log file takes: a server that floods its stderr
 * must not fill the disk (the rest is still read, and dropped). */
#define STDIO_LOG_MAX (16u * 1024u * 1024u)
/* A stderr line longer than this reaches on_stderr in pieces. */
#define STDIO_STDERR_LINE_MAX 8192

typedef struct stdio_transport {
    mcp_transport base;
    char *server;
    pid_t pid;
    int in_fd, out_fd, err_fd, log_fd;
    atomic_size_t log_bytes; /* written to log_fd so far */
    pthread_mutex_t send_mu; /* one writer at a time; guards in_fd */
    pthread_mutex_t mu;      /* reaped, status, dead, why */
    bool reaped;
    int status;              /* waitpid's, once reaped (-1: unknown) */
    bool dead;               /* on_closed was (or would have been) called */
    char why[256];
    atomic_bool attached;    /* the first send happened: callbacks may run */
    atomic_bool closing;     /* close started: no more callbacks */
    atomic_bool stop;        /* the reader threads are to end */
    pthread_t out_thread, err_thread;
    bool out_started, err_started;
} stdio_transport;

/* ---- the child's end ---------------------------------------------------------- */

/* Reaps the child if it has ended; true once it is reaped. Under mu, so the
 * reader and close never both reap it. */
static bool try_reap_locked(stdio_transport *t)
{
    if (t->reaped)
        return true;
    int st = 0;
    pid_t w = waitpid(t->pid, &st, WNOHANG);
    if (w == t->pid) {
        t->reaped = true;
        t->status = st;
    } else if (w < 0 && errno == ECHILD) {
        /* Not ours any more: nothing to wait for (should not happen: the
         * child is registered with base/proc, whose sweeps skip it). */
        t->reaped = true;
        t->status = -1;
    }
    return t->reaped;
}

static bool try_reap(stdio_transport *t)
{
    pthread_mutex_lock(&t->mu);
    bool r = try_reap_locked(t);
    pthread_mutex_unlock(&t->mu);
    return r;
}

static void describe_status(int st, char *out, size_t cap)
{
    if (st == -1)
        snprintf(out, cap, "the process ended");
    else if (WIFEXITED(st))
        snprintf(out, cap, "the process exited with status %d", WEXITSTATUS(st));
    else if (WIFSIGNALED(st))
        snprintf(out, cap, "the process was killed by signal %d", WTERMSIG(st));
    else
        snprintf(out, cap, "the process ended (status %d)", st);
}

static bool wait_attached(stdio_transport *t);

/* Marks the transport dead and tells the owner, once, unless it is closing. */
static void report_closed(stdio_transport *t, const char *why)
{
    pthread_mutex_lock(&t->mu);
    bool first = !t->dead;
    if (first) {
        t->dead = true;
        snprintf(t->why, sizeof t->why, "%s", why);
    }
    pthread_mutex_unlock(&t->mu);
    LOG_I("mcp", "MCP server \"%s\": %s", t->server, why);
    if (first && wait_attached(t) && t->base.ev.on_closed)
        t->base.ev.on_closed(t->base.ev.ctx, why);
}

/* Waits up to ms for the child to be reaped; true when it was. */
static bool wait_reaped(stdio_transport *t, long ms)
{
    int64_t end = clock_mono_ms() + ms;
    for (;;) {
        if (try_reap(t))
            return true;
        if (clock_mono_ms() >= end)
            return false;
        struct timespec ts = {0, 10 * 1000000L};
        nanosleep(&ts, NULL);
    }
}

/* ---- stdout: messages ------------------------------------------------------- */

/* No callback runs before the first send (transport.h): the owner installs
 * its callbacks between open and then. False when closing came first. */
static bool wait_attached(stdio_transport *t)
{
    while (!atomic_load(&t->attached)) {
        if (atomic_load(&t->stop) || atomic_load(&t->closing))
            return false;
        struct timespec ts = {0, 10 * 1000000L};
        nanosleep(&ts, NULL);
    }
    return !atomic_load(&t->closing);
}

/* Appends to the server's log, up to STDIO_LOG_MAX (then one note). */
static void log_write(stdio_transport *t, const char *buf, size_t n)
{
    if (t->log_fd < 0 || n == 0)
        return;
    size_t before = atomic_fetch_add(&t->log_bytes, n);
    if (before >= STDIO_LOG_MAX)
        return;
    if (before + n >= STDIO_LOG_MAX) {
        static const char note[] = "\n[loom: the log is cut here: the server wrote more than "
                                   "16 MiB to its stderr]\n";
        (void)!write(t->log_fd, buf, STDIO_LOG_MAX - before);
        (void)!write(t->log_fd, note, sizeof note - 1);
        return;
    }
    (void)!write(t->log_fd, buf, n);
}

static void say_stderr(stdio_transport *t, const char *line)
{
    if (t->log_fd >= 0) {
        loom_str s = {0};
        str_printf(&s, "%s\n", line);
        log_write(t, s.ptr, s.len);
        str_free(&s);
    }
    if (atomic_load(&t->attached) && !atomic_load(&t->closing) && t->base.ev.on_stderr)
        t->base.ev.on_stderr(t->base.ev.ctx, line);
}

/* How much of an oversized line is kept to find the id of the answer it
 * held: its start (Python servers write the id first) and its end (Node
 * servers write it last). */
#define STDIO_DROP_HEAD 4096
#define STDIO_DROP_TAIL 256

typedef struct line_buf {
    loom_str buf;
    size_t scanned;  /* bytes of buf known to hold no '\n' */
    bool dropping;   /* inside an oversized line: skip to its end */
    char head[STDIO_DROP_HEAD];
    size_t head_len;
    char tail[STDIO_DROP_TAIL];
    size_t tail_len;
    size_t dropped;  /* bytes of the oversized line so far */
} line_buf;

/* What the start of a dropped line says about it: its top-level keys. */
typedef struct line_head {
    bool response, request, has_id;
    long long id;
} line_head;

static bool is_ws(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

/* An integer id at s (n bytes), complete (followed by something else). */
static bool read_int_id(const char *s, size_t n, long long *out)
{
    size_t i = s[0] == '-' ? 1 : 0, start = i;
    while (i < n && s[i] >= '0' && s[i] <= '9' && i - start < 18)
        i++;
    if (i == start || i >= n || (s[i] >= '0' && s[i] <= '9'))
        return false;
    *out = strtoll(s, NULL, 10);
    return true;
}

/* The top-level keys of the JSON object the n bytes begin. */
static void scan_head(const char *s, size_t n, line_head *h)
{
    size_t i = 0;
    while (i < n && is_ws(s[i]))
        i++;
    if (i >= n || s[i] != '{')
        return;
    i++;
    int depth = 1;
    bool want_key = true;
    while (i < n && depth > 0) {
        char c = s[i];
        if (c != '"') {
            if (c == '{' || c == '[')
                depth++;
            else if (c == '}' || c == ']')
                depth--;
            else if (c == ',' && depth == 1)
                want_key = true;
            i++;
            continue;
        }
        size_t start = ++i;
        while (i < n && s[i] != '"')
            i += s[i] == '\\' ? 2 : 1;
        if (i >= n)
            return;
        size_t len = i++ - start;
        if (depth != 1 || !want_key)
            continue;
        want_key = false;
        while (i < n && is_ws(s[i]))
            i++;
        if (i >= n || s[i] != ':')
            return;
        i++;
        while (i < n && is_ws(s[i]))
            i++;
        const char *key = s + start;
        if ((len == 6 && !memcmp(key, "result", 6)) || (len == 5 && !memcmp(key, "error", 5)))
            h->response = true;
        else if (len == 6 && !memcmp(key, "method", 6))
            h->request = true;
        else if (len == 2 && !memcmp(key, "id", 2) && i < n)
            h->has_id = read_int_id(s + i, n - i, &h->id);
    }
}

/* An integer id at the very end of a line: `"id": 5}` (the last '}' closes
 * the outermost object, so that id is the message's). */
static bool scan_tail(const char *s, size_t n, long long *out)
{
    while (n > 0 && is_ws(s[n - 1]))
        n--;
    if (n == 0 || s[n - 1] != '}')
        return false;
    n--;
    while (n > 0 && is_ws(s[n - 1]))
        n--;
    size_t end = n;
    while (n > 0 && s[n - 1] >= '0' && s[n - 1] <= '9')
        n--;
    if (n == end || end - n > 18)
        return false;
    size_t num = n;
    if (n > 0 && s[n - 1] == '-')
        num = --n;
    while (n > 0 && is_ws(s[n - 1]))
        n--;
    if (n == 0 || s[--n] != ':')
        return false;
    while (n > 0 && is_ws(s[n - 1]))
        n--;
    if (n < 5 || memcmp(s + n - 4, "\"id\"", 4) != 0 || s[n - 5] == '\\')
        return false;
    *out = strtoll(s + num, NULL, 10);
    return true;
}

/* Keeps the last bytes of what was dropped. */
static void keep_tail(line_buf *lb, const char *s, size_t n)
{
    if (n >= STDIO_DROP_TAIL) {
        memcpy(lb->tail, s + n - STDIO_DROP_TAIL, STDIO_DROP_TAIL);
        lb->tail_len = STDIO_DROP_TAIL;
        return;
    }
    size_t keep = lb->tail_len + n > STDIO_DROP_TAIL ? STDIO_DROP_TAIL - n : lb->tail_len;
    memmove(lb->tail, lb->tail + lb->tail_len - keep, keep);
    memcpy(lb->tail + keep, s, n);
    lb->tail_len = keep + n;
}

static void deliver_one(stdio_transport *t, char *line, size_t len);

/* An oversized line ended. When it was the answer to a request (its id
 * found at its start or its end), that request fails now, saying why,
 * instead of waiting for its timeout. */
static void dropped_line_end(stdio_transport *t, line_buf *lb)
{
    line_head h = {0};
    scan_head(lb->head, lb->head_len, &h);
    long long id = h.id;
    bool found = h.has_id || scan_tail(lb->tail, lb->tail_len, &id);
    if (found && h.response && !h.request) {
        char msg[200];
        snprintf(msg, sizeof msg,
                 "the server's answer was %zu bytes on one line, over Loom's %u-byte cap",
                 lb->dropped, JSONRPC_MAX_MESSAGE);
        json_t *jid = json_integer((json_int_t)id);
        char *text = jsonrpc_error(jid, JSONRPC_INTERNAL_ERROR, msg, NULL);
        json_decref(jid);
        if (text)
            deliver_one(t, text, strlen(text));
        free(text);
    }
    lb->head_len = lb->tail_len = lb->dropped = 0;
}

/* One line to on_message (a trailing CR cut; blank lines skipped). line
 * must have a byte to spare at line[len]. */
static void deliver_one(stdio_transport *t, char *line, size_t len)
{
    if (len && line[len - 1] == '\r')
        len--;
    size_t k = 0;
    while (k < len && (line[k] == ' ' || line[k] == '\t'))
        k++;
    if (k < len && wait_attached(t) && t->base.ev.on_message) {
        line[len] = '\0';
        t->base.ev.on_message(t->base.ev.ctx, line, len);
    }
}

/* Hands every complete line in lb to on_message (blank lines skipped, a
 * trailing CR cut); an oversized line is dropped and said so. */
static void deliver_lines(stdio_transport *t, line_buf *lb)
{
    size_t start = 0;
    for (;;) {
        char *p = lb->buf.len > lb->scanned
                      ? memchr(lb->buf.ptr + lb->scanned, '\n', lb->buf.len - lb->scanned)
                      : NULL;
        if (!p) {
            lb->scanned = lb->buf.len;
            break;
        }
        size_t end = (size_t)(p - lb->buf.ptr);
        lb->scanned = end + 1;
        if (lb->dropping) {
            lb->dropping = false;
            keep_tail(lb, lb->buf.ptr, end);
            lb->dropped += end;
            dropped_line_end(t, lb);
            start = end + 1;
            continue;
        }
        deliver_one(t, lb->buf.ptr + start, end - start);
        start = end + 1;
    }
    if (start) {
        str_consume(&lb->buf, start);
        lb->scanned -= start;
    }
    if (!lb->dropping && lb->buf.len > JSONRPC_MAX_MESSAGE) {
        char msg[160];
        snprintf(msg, sizeof msg,
                 "loom: dropped a message from the server: more than %u bytes on one line",
                 JSONRPC_MAX_MESSAGE);
        LOG_W("mcp", "MCP server \"%s\": %s", t->server, msg);
        say_stderr(t, msg);
        lb->dropping = true;
        lb->head_len = lb->buf.len < STDIO_DROP_HEAD ? lb->buf.len : STDIO_DROP_HEAD;
        memcpy(lb->head, lb->buf.ptr, lb->head_len);
        lb->tail_len = lb->dropped = 0;
    }
    if (lb->dropping) {
        keep_tail(lb, lb->buf.ptr, lb->buf.len);
        lb->dropped += lb->buf.len;
        str_clear(&lb->buf);
        lb->scanned = 0;
    }
}

/* Reads what is there; 1 for data, 0 for EOF (or a hard error), -1 for
 * nothing yet. */
static int read_some(int fd, loom_str *into)
{
    str_reserve(into, 65536);
    ssize_t n = read(fd, into->ptr + into->len, 65536);
    if (n > 0) {
        into->len += (size_t)n;
        into->ptr[into->len] = '\0';
        return 1;
    }
    if (n < 0 && (errno == EAGAIN || errno == EINTR))
        return -1;
    return 0;
}

static void *out_main(void *arg)
{
    stdio_transport *t = arg;
    line_buf lb = {0};
    bool eof = false;
    while (!atomic_load(&t->stop)) {
        struct pollfd pf = {.fd = t->out_fd, .events = POLLIN};
        int pr = poll(&pf, 1, STDIO_TICK_MS);
        if (pr > 0) {
            int r = read_some(t->out_fd, &lb.buf);
            if (r > 0) {
                deliver_lines(t, &lb);
                continue;
            }
            if (r == 0) {
                eof = true;
                break;
            }
        }
        /* Nothing to read: has the child ended? (Data first, so every
         * message it wrote is delivered before on_closed.) */
        if (pr == 0 && try_reap(t)) {
            /* What it wrote just before it went. */
            while (read_some(t->out_fd, &lb.buf) > 0)
                deliver_lines(t, &lb);
            break;
        }
    }
    if (!atomic_load(&t->stop)) {
        char why[256];
        if (eof && !wait_reaped(t, STDIO_EOF_WAIT_MS)) {
            snprintf(why, sizeof why, "the server closed its output");
        } else {
            pthread_mutex_lock(&t->mu);
            describe_status(t->status, why, sizeof why);
            pthread_mutex_unlock(&t->mu);
        }
        report_closed(t, why);
    }
    str_free(&lb.buf);
    return NULL;
}

/* ---- stderr: the log --------------------------------------------------------- */

static void *err_main(void *arg)
{
    stdio_transport *t = arg;
    loom_str buf = {0};
    while (!atomic_load(&t->stop)) {
        struct pollfd pf = {.fd = t->err_fd, .events = POLLIN};
        if (poll(&pf, 1, STDIO_TICK_MS) <= 0)
            continue;
        size_t before = buf.len;
        int r = read_some(t->err_fd, &buf);
        if (r < 0)
            continue;
        if (r == 0)
            break;
        log_write(t, buf.ptr + before, buf.len - before);
        size_t start = 0;
        for (;;) {
            char *nl = memchr(buf.ptr + start, '\n', buf.len - start);
            size_t end = nl ? (size_t)(nl - buf.ptr) : buf.len;
            if (!nl && end - start < STDIO_STDERR_LINE_MAX)
                break;
            if (!nl)
                end = start + STDIO_STDERR_LINE_MAX;
            char keep = buf.ptr[end];
            buf.ptr[end] = '\0';
            size_t len = end - start;
            if (len && buf.ptr[end - 1] == '\r')
                buf.ptr[end - 1] = '\0';
            /* Before the first send the log file alone has it. */
            if (atomic_load(&t->attached) && !atomic_load(&t->closing) && t->base.ev.on_stderr)
                t->base.ev.on_stderr(t->base.ev.ctx, buf.ptr + start);
            buf.ptr[end] = keep;
            start = nl ? end + 1 : end;
        }
        str_consume(&buf, start);
    }
    if (buf.len && atomic_load(&t->attached) && !atomic_load(&t->closing) && t->base.ev.on_stderr)
        t->base.ev.on_stderr(t->base.ev.ctx, str_cstr(&buf));
    str_free(&buf);
    return NULL;
}

/* ---- send ------------------------------------------------------------------ */

/* Writes all of buf to the non-blocking in_fd; send_mu held. */
static int write_all(stdio_transport *t, const char *buf, size_t n, loom_error *err)
{
    int64_t stalled_since = clock_mono_ms();
    while (n > 0) {
        if (atomic_load(&t->closing) || t->in_fd < 0)
            return loom_error_set(err, LOOM_ERR_TOOL_EXECUTION_FAILED,
                                  "MCP server \"%s\": the connection is closing", t->server);
        ssize_t w = proc_write_nosigpipe(t->in_fd, buf, n);
        if (w > 0) {
            buf += w;
            n -= (size_t)w;
            stalled_since = clock_mono_ms();
            continue;
        }
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0 && errno == EAGAIN) {
            if (clock_mono_ms() - stalled_since > STDIO_SEND_STALL_MS)
                return loom_error_set(err, LOOM_ERR_TOOL_EXECUTION_FAILED,
                                      "MCP server \"%s\": the server has not read its input "
                                      "for %d s",
                                      t->server, STDIO_SEND_STALL_MS / 1000);
            struct pollfd pf = {.fd = t->in_fd, .events = POLLOUT};
            (void)poll(&pf, 1, STDIO_TICK_MS);
            continue;
        }
        return loom_error_set(err, LOOM_ERR_TOOL_EXECUTION_FAILED,
                              "MCP server \"%s\": writing to the server: %s", t->server,
                              errno == EPIPE ? "it closed its input" : strerror(errno));
    }
    return 0;
}

static int stdio_send(mcp_transport *base, const char *text, size_t len, loom_error *err)
{
    stdio_transport *t = (stdio_transport *)base;
    if (memchr(text, '\n', len))
        return loom_error_set(err, LOOM_ERR_INTERNAL,
                              "MCP server \"%s\": a message with a line break cannot be sent "
                              "over stdio",
                              t->server);
    atomic_store(&t->attached, true);
    pthread_mutex_lock(&t->mu);
    bool dead = t->dead;
    char why[256];
    snprintf(why, sizeof why, "%s", t->why);
    pthread_mutex_unlock(&t->mu);
    if (dead)
        return loom_error_set(err, LOOM_ERR_TOOL_EXECUTION_FAILED,
                              "MCP server \"%s\": the connection is closed: %s", t->server, why);
    pthread_mutex_lock(&t->send_mu);
    int rc = write_all(t, text, len, err);
    if (rc == 0)
        rc = write_all(t, "\n", 1, err);
    pthread_mutex_unlock(&t->send_mu);
    return rc;
}

/* ---- close ----------------------------------------------------------------- */

/* Signals the child's group while the leader is not reaped (its pid, the
 * group id, cannot be reused until then). */
static void signal_group(stdio_transport *t, int sig)
{
    pthread_mutex_lock(&t->mu);
    if (!try_reap_locked(t))
        (void)kill(-t->pid, sig);
    pthread_mutex_unlock(&t->mu);
}

static void stdio_close(mcp_transport *base)
{
    stdio_transport *t = (stdio_transport *)base;
    if (!t)
        return;
    atomic_store(&t->closing, true);
    pthread_mutex_lock(&t->send_mu);
    if (t->in_fd >= 0)
        close(t->in_fd);
    t->in_fd = -1;
    pthread_mutex_unlock(&t->send_mu);
    if (t->pid > 0) {
        /* A polite server exits when its input ends. */
        if (!wait_reaped(t, STDIO_EXIT_GRACE_MS)) {
            signal_group(t, SIGTERM);
            if (!wait_reaped(t, STDIO_TERM_GRACE_MS)) {
                signal_group(t, SIGKILL);
                while (!wait_reaped(t, 1000)) {
                }
            }
        }
        /* The leader is reaped: end what is left of its group and its
         * orphans, and forget it (base/proc.h). */
        proc_call_end(t->pid);
    }
    atomic_store(&t->stop, true);
    if (t->out_started)
        pthread_join(t->out_thread, NULL);
    if (t->err_started)
        pthread_join(t->err_thread, NULL);
    if (t->out_fd >= 0)
        close(t->out_fd);
    if (t->err_fd >= 0)
        close(t->err_fd);
    if (t->log_fd >= 0)
        close(t->log_fd);
    pthread_mutex_destroy(&t->mu);
    pthread_mutex_destroy(&t->send_mu);
    free(t->server);
    free(t);
}

static void stdio_abort_sends(mcp_transport *base)
{
    atomic_store(&((stdio_transport *)base)->closing, true);
}

static pid_t stdio_pid(const mcp_transport *base)
{
    return ((const stdio_transport *)base)->pid;
}

static const mcp_transport_ops STDIO_OPS = {
    .kind = "stdio",
    .send = stdio_send,
    .close = stdio_close,
    .pid = stdio_pid,
    .set_protocol_version = NULL,
    .session_expired = NULL,
    .abort_sends = stdio_abort_sends,
};

/* ---- start ------------------------------------------------------------------ */

/* Loom's environment with the spec's {name: value} on top (a name given
 * there replaces Loom's). NULL-terminated; free with env_free. */
static char **env_build(const json_t *extra)
{
    size_t n = 0;
    while (environ && environ[n])
        n++;
    size_t cap = n + (json_is_object(extra) ? json_object_size(extra) : 0) + 1;
    char **env = xcalloc(cap, sizeof *env);
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        const char *eq = strchr(environ[i], '=');
        size_t nl = eq ? (size_t)(eq - environ[i]) : strlen(environ[i]);
        bool replaced = false;
        const char *key;
        json_t *v;
        if (json_is_object(extra)) {
            json_object_foreach((json_t *)extra, key, v)
            {
                if (strlen(key) == nl && strncmp(key, environ[i], nl) == 0)
                    replaced = true;
            }
        }
        if (!replaced)
            env[k++] = xstrdup(environ[i]);
    }
    if (json_is_object(extra)) {
        const char *key;
        json_t *v;
        json_object_foreach((json_t *)extra, key, v)
        {
            if (!*key || strchr(key, '='))
                continue;
            loom_str s = {0};
            if (json_is_string(v))
                str_printf(&s, "%s=%s", key, json_string_value(v));
            else if (json_is_integer(v))
                str_printf(&s, "%s=%lld", key, (long long)json_integer_value(v));
            else if (json_is_boolean(v))
                str_printf(&s, "%s=%s", key, json_is_true(v) ? "true" : "false");
            else
                continue;
            env[k++] = str_steal(&s);
        }
    }
    env[k] = NULL;
    return env;
}

static void env_free(char **env)
{
    for (size_t i = 0; env && env[i]; i++)
        free(env[i]);
    free(env);
}

static const char *env_get(char *const *env, const char *name)
{
    size_t nl = strlen(name);
    for (size_t i = 0; env[i]; i++)
        if (strncmp(env[i], name, nl) == 0 && env[i][nl] == '=')
            return env[i] + nl + 1;
    return NULL;
}

/* The program to run: a command with a slash as is (relative to cwd), else
 * the first executable regular file of that name on the child's PATH.
 * NULL when there is none. */
static char *find_program(const char *command, char *const *env)
{
    if (strchr(command, '/'))
        return xstrdup(command);
    const char *path = env_get(env, "PATH");
    if (!path)
        path = "/usr/local/bin:/usr/bin:/bin";
    const char *p = path;
    for (;;) {
        const char *colon = strchr(p, ':');
        size_t dl = colon ? (size_t)(colon - p) : strlen(p);
        loom_str cand = {0};
        if (dl == 0)
            str_puts(&cand, "./");
        else {
            str_append(&cand, p, dl);
            str_putc(&cand, '/');
        }
        str_puts(&cand, command);
        struct stat st;
        if (stat(cand.ptr, &st) == 0 && S_ISREG(st.st_mode) && access(cand.ptr, X_OK) == 0)
            return str_steal(&cand);
        str_free(&cand);
        if (!colon)
            return NULL;
        p = colon + 1;
    }
}

static int spawn_child(stdio_transport *t, const mcp_stdio_spec *spec, const char *prog,
                       char **env, int in_r, int out_w, int err_w, loom_error *err)
{
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, in_r, 0);
    posix_spawn_file_actions_adddup2(&fa, out_w, 1);
    posix_spawn_file_actions_adddup2(&fa, err_w, 2);
    /* Nothing else of Loom's leaks into a long-lived server. */
    posix_spawn_file_actions_addclosefrom_np(&fa, 3);
    if (spec->cwd)
        posix_spawn_file_actions_addchdir_np(&fa, spec->cwd);
    /* Its own group, default signal dispositions, an empty mask (base/proc.h). */
    posix_spawnattr_t attr;
    bool attr_ok = proc_spawnattr_init(&attr) == 0;

    size_t nargs = 0;
    while (spec->args && spec->args[nargs])
        nargs++;
    char **argv = xcalloc(nargs + 2, sizeof *argv);
    argv[0] = (char *)spec->command;
    for (size_t i = 0; i < nargs; i++)
        argv[i + 1] = (char *)spec->args[i];

    pid_t pid = -1;
    /* Registered as a running command (base/proc.h): the sweeps that end
     * what other commands leave behind skip it and its group. */
    proc_spawn_lock();
    int rc = attr_ok ? posix_spawn(&pid, prog, &fa, &attr, argv, env) : ENOMEM;
    proc_spawn_unlock(rc == 0 ? pid : 0);
    free(argv);
    posix_spawn_file_actions_destroy(&fa);
    if (attr_ok)
        posix_spawnattr_destroy(&attr);
    if (rc != 0) {
        if (spec->cwd && access(spec->cwd, X_OK) != 0)
            return loom_error_set(err, LOOM_ERR_TOOL_EXECUTION_FAILED,
                                  "MCP server \"%s\": cannot start in directory %s: %s",
                                  t->server, spec->cwd, strerror(errno));
        return loom_error_set(err, LOOM_ERR_TOOL_EXECUTION_FAILED,
                              "MCP server \"%s\": cannot start \"%s\": %s", t->server,
                              spec->command, strerror(rc));
    }
    /* Also from this side: a kill(-pid) before the child's own setpgid
     * would otherwise miss. */
    (void)setpgid(pid, pid);
    t->pid = pid;
    return 0;
}

static void close_pair(int p[2])
{
    for (int i = 0; i < 2; i++)
        if (p[i] >= 0)
            close(p[i]);
}

mcp_transport *mcp_stdio_open(const char *server, const mcp_stdio_spec *spec,
                              const mcp_transport_events *ev, loom_error *err)
{
    if (!spec || !spec->command || !*spec->command) {
        loom_error_set(err, LOOM_ERR_CONFIG, "MCP server \"%s\": no command to run", server);
        return NULL;
    }
    char **env = env_build(spec->env);
    char *prog = find_program(spec->command, env);
    if (!prog) {
        env_free(env);
        loom_error_set(err, LOOM_ERR_CONFIG, "MCP server \"%s\": command \"%s\" not found",
                       server, spec->command);
        return NULL;
    }
    stdio_transport *t = xcalloc(1, sizeof *t);
    t->base.ops = &STDIO_OPS;
    if (ev)
        t->base.ev = *ev;
    t->server = xstrdup(server);
    t->in_fd = t->out_fd = t->err_fd = t->log_fd = -1;
    pthread_mutex_init(&t->mu, NULL);
    pthread_mutex_init(&t->send_mu, NULL);

    int in_p[2] = {-1, -1}, out_p[2] = {-1, -1}, err_p[2] = {-1, -1};
    if (pipe2(in_p, O_CLOEXEC) < 0 || pipe2(out_p, O_CLOEXEC) < 0 ||
        pipe2(err_p, O_CLOEXEC) < 0) {
        loom_error_set(err, LOOM_ERR_IO, "MCP server \"%s\": creating pipes: %s", server,
                       strerror(errno));
        goto fail;
    }
    if (spec->log_path) {
        t->log_fd = open(spec->log_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
        if (t->log_fd < 0)
            LOG_W("mcp", "MCP server \"%s\": cannot open its log %s: %s", server, spec->log_path,
                  strerror(errno));
    }
    if (spawn_child(t, spec, prog, env, in_p[0], out_p[1], err_p[1], err) < 0)
        goto fail;
    close(in_p[0]);
    close(out_p[1]);
    close(err_p[1]);
    t->in_fd = in_p[1];
    t->out_fd = out_p[0];
    t->err_fd = err_p[0];
    (void)fcntl(t->in_fd, F_SETFL, O_NONBLOCK);
    (void)fcntl(t->out_fd, F_SETFL, O_NONBLOCK);
    (void)fcntl(t->err_fd, F_SETFL, O_NONBLOCK);
    free(prog);
    env_free(env);
    int trc = pthread_create(&t->out_thread, NULL, out_main, t);
    t->out_started = trc == 0;
    if (trc == 0) {
        trc = pthread_create(&t->err_thread, NULL, err_main, t);
        t->err_started = trc == 0;
    }
    if (trc != 0) {
        loom_error_set(err, LOOM_ERR_INTERNAL, "MCP server \"%s\": starting a thread: %s",
                       server, strerror(trc));
        stdio_close(&t->base);
        return NULL;
    }
    return &t->base;

fail:
    close_pair(in_p);
    close_pair(out_p);
    close_pair(err_p);
    if (t->log_fd >= 0)
        close(t->log_fd);
    free(prog);
    env_free(env);
    pthread_mutex_destroy(&t->mu);
    pthread_mutex_destroy(&t->send_mu);
    free(t->server);
    free(t);
    return NULL;
}
