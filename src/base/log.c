/* log.c — the process-wide JSONL log behind LOOM_LOG.
 *
 * Owns the log descriptor and the level threshold. A mutex guards both, so
 * log_close cannot pull the descriptor from under a writer; each line still
 * goes out in one write() on an O_APPEND descriptor so lines from several
 * processes sharing the file do not interleave. */
#include "base/log.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/fileio.h"
#include "base/json.h"
#include "base/jsonl.h"
#include "base/str.h"

static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;
static bool log_inited;
static int log_fd = -1;
static log_level log_min = LOG_INFO;

static const char *const level_names[] = {"debug", "info", "warn", "error"};

static log_level parse_level(const char *s)
{
    if (!s || !*s)
        return LOG_INFO;
    if (!strcasecmp(s, "debug"))
        return LOG_DEBUG;
    if (!strcasecmp(s, "warn") || !strcasecmp(s, "warning"))
        return LOG_WARN;
    if (!strcasecmp(s, "error"))
        return LOG_ERROR;
    return LOG_INFO; /* unknown values fall back to the default, not to silence */
}

static void init_locked(void)
{
    if (log_inited)
        return;
    log_inited = true;
    log_min = parse_level(getenv("LOOM_LOG_LEVEL"));
    const char *path = getenv("LOOM_LOG");
    if (path && *path) {
        /* 0600: lines carry prompts and tool output. */
        log_fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
    }
}

void log_init(void)
{
    pthread_mutex_lock(&log_lock);
    init_locked();
    pthread_mutex_unlock(&log_lock);
}

void log_close(void)
{
    pthread_mutex_lock(&log_lock);
    if (log_fd >= 0)
        close(log_fd);
    log_fd = -1;
    log_inited = false;
    pthread_mutex_unlock(&log_lock);
}

static _Thread_local char trace_id[33], span_id[17];

void log_set_trace(const char *trace, const char *span)
{
    snprintf(trace_id, sizeof trace_id, "%s", trace ? trace : "");
    snprintf(span_id, sizeof span_id, "%s", span ? span : "");
}

static pthread_mutex_t sink_lock = PTHREAD_MUTEX_INITIALIZER;
static log_sink_fn sink_fn;
static void *sink_ctx;
static _Atomic bool sink_set;
static _Thread_local bool sink_muted;

bool log_set_sink(log_sink_fn fn, void *ctx)
{
    pthread_mutex_lock(&sink_lock);
    bool free_slot = !sink_fn;
    if (free_slot) {
        sink_fn = fn;
        sink_ctx = ctx;
        atomic_store(&sink_set, true);
    }
    pthread_mutex_unlock(&sink_lock);
    return free_slot;
}

void log_clear_sink(void *ctx)
{
    /* Taking the lock waits out a call in flight: the ctx may be freed
     * right after this returns. */
    pthread_mutex_lock(&sink_lock);
    if (sink_fn && sink_ctx == ctx) {
        sink_fn = NULL;
        sink_ctx = NULL;
        atomic_store(&sink_set, false);
    }
    pthread_mutex_unlock(&sink_lock);
}

void log_mute_sink_on_this_thread(void)
{
    sink_muted = true;
}

static void to_sink(log_level level, const json_t *line)
{
    pthread_mutex_lock(&sink_lock);
    if (sink_fn)
        sink_fn(sink_ctx, level, line);
    pthread_mutex_unlock(&sink_lock);
}

void log_event(log_level level, const char *module, json_t *fields, const char *fmt, ...)
{
    /* Callers log between a failing call and reading errno; leave it as
     * found. */
    int saved_errno = errno;
    pthread_mutex_lock(&log_lock);
    /* Code that logs before main() called log_init still gets its lines. */
    init_locked();
    bool sink = atomic_load(&sink_set) && !sink_muted;
    bool on = (log_fd >= 0 || sink) && level >= log_min;
    pthread_mutex_unlock(&log_lock);
    if (!on) {
        json_decref(fields);
        errno = saved_errno;
        return;
    }
    if ((unsigned)level > LOG_ERROR)
        level = LOG_ERROR;

    loom_str msg = LOOM_STR_INIT;
    va_list ap;
    va_start(ap, fmt);
    str_vprintf(&msg, fmt, ap);
    va_end(ap);

    char ts[32];
    clock_iso8601(clock_wall_ms(), ts);
    json_t *line = json_object();
    json_set_str(line, "ts", ts);
    json_set_str(line, "level", level_names[level]);
    json_set_str(line, "module", module ? module : "loom");
    json_set_str(line, "msg", str_cstr(&msg));
    str_free(&msg);
    if (trace_id[0]) {
        json_set_str(line, "trace_id", trace_id);
        json_set_str(line, "span_id", span_id);
    }
    if (json_is_object(fields)) {
        /* The fixed keys win: a field named "msg" must not make a line
         * unreadable by tools that rely on the schema. */
        json_object_update_missing(line, fields);
    } else if (fields) {
        json_object_set(line, "fields", fields);
    }
    json_decref(fields);
    if (sink)
        to_sink(level, line);

    pthread_mutex_lock(&log_lock);
    if (log_fd >= 0) {
        /* One write per line; a failed log write has nowhere to be reported
         * and must not disturb the run, so its result is dropped. */
        (void)jsonl_append(log_fd, line, NULL);
    }
    pthread_mutex_unlock(&log_lock);
    json_decref(line);
    errno = saved_errno;
}
