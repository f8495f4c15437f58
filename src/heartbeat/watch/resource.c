/* watch_resource.c — the resource watch source: memory and disk use
 * against thresholds (seed 000 L279: memory_pct 90, disk_pct 95).
 *
 * Memory in use is 100 × (1 − MemAvailable / MemTotal) from /proc/meminfo
 * (what free(1) calls "available", so page cache is not counted as used).
 * Disk in use is what df(1) prints for the filesystem holding `path`:
 * used / (used + available to unprivileged users), via statvfs.
 *
 * A threshold fires once when the value reaches it and is re-armed only
 * after the value falls below threshold − hysteresis, so a value hovering
 * at the line does not fire every tick. Each firing is a new change with
 * its own fingerprint (the crossing's time and number).
 */
#include "heartbeat/watch/watch.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "base/path.h"
#include "base/str.h"

typedef struct res_gauge {
    const char *name;      /* "memory" | "disk" */
    double threshold;      /* < 0: off */
    bool armed;
    unsigned crossings;    /* makes each firing's fingerprint its own */
} res_gauge;

typedef struct res_watch {
    res_gauge mem, disk;
    char *disk_path;
    char *meminfo_path;
    double hysteresis;
    event_urgency urgency;
    double weight;
} res_watch;

/* Percent of memory in use, or < 0 when it cannot be read. */
static double memory_used_pct(const char *meminfo)
{
    int fd = open(meminfo ? meminfo : "/proc/meminfo", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    char buf[4096];
    ssize_t n;
    do
        n = read(fd, buf, sizeof buf - 1);
    while (n < 0 && errno == EINTR);
    close(fd);
    if (n <= 0)
        return -1;
    buf[n] = '\0';
    long long total = -1, avail = -1;
    for (char *line = buf; line && *line;) {
        char *nl = strchr(line, '\n');
        if (!strncmp(line, "MemTotal:", 9))
            total = strtoll(line + 9, NULL, 10);
        else if (!strncmp(line, "MemAvailable:", 13))
            avail = strtoll(line + 13, NULL, 10);
        line = nl ? nl + 1 : NULL;
    }
    if (total <= 0 || avail < 0)
        return -1;
    if (avail > total)
        avail = total;
    return 100.0 * (1.0 - (double)avail / (double)total);
}

static double disk_used_pct(const char *path)
{
    struct statvfs vs;
    if (statvfs(path, &vs) < 0)
        return -1;
    double used = (double)(vs.f_blocks - vs.f_bfree);
    double denom = used + (double)vs.f_bavail;
    if (denom <= 0)
        return -1;
    return 100.0 * used / denom;
}

static void check(res_watch *rw, res_gauge *g, double value, const watch_tick *t,
                  watch_emit_fn emit, void *ctx)
{
    if (g->threshold < 0 || value < 0)
        return;
    if (!g->armed) {
        if (value < g->threshold - rw->hysteresis)
            g->armed = true;
        return;
    }
    if (value < g->threshold)
        return;
    g->armed = false;
    loom_str fp = LOOM_STR_INIT, sum = LOOM_STR_INIT, subject = LOOM_STR_INIT;
    str_printf(&fp, "resource:%s:%" PRId64 ":%u", g->name, t->now_ms, ++g->crossings);
    if (g == &rw->disk) {
        str_printf(&subject, "resource:disk:%s", rw->disk_path);
        str_printf(&sum, "disk %.0f%% used on the filesystem of %s (threshold %.0f%%)", value,
                   rw->disk_path, g->threshold);
    } else {
        str_printf(&subject, "resource:memory");
        str_printf(&sum, "memory %.0f%% used (threshold %.0f%%)", value, g->threshold);
    }
    /* gate.h: magnitude = 0.5 + 0.5 × overshoot / headroom. */
    double headroom = 100.0 - g->threshold;
    double over = headroom > 0 ? (value - g->threshold) / headroom : 1.0;
    over = over < 0 ? 0 : over > 1 ? 1 : over;
    hb_candidate c = {
        .source = "resource",
        .subject = subject.ptr,
        .fingerprint = fp.ptr,
        .summary = sum.ptr,
        .urgency = rw->urgency,
        .magnitude = 0.5 + 0.5 * over,
        .weight = rw->weight,
    };
    emit(ctx, &c);
    str_free(&fp);
    str_free(&sum);
    str_free(&subject);
}

static int res_poll(void *ctx, const watch_tick *t, watch_emit_fn emit, void *emit_ctx)
{
    res_watch *rw = ctx;
    int problems = 0;
    if (rw->mem.threshold >= 0) {
        double v = memory_used_pct(rw->meminfo_path);
        if (v < 0)
            problems++;
        check(rw, &rw->mem, v, t, emit, emit_ctx);
    }
    if (rw->disk.threshold >= 0) {
        double v = disk_used_pct(rw->disk_path);
        if (v < 0)
            problems++;
        check(rw, &rw->disk, v, t, emit, emit_ctx);
    }
    return problems;
}

static void res_free(void *ctx)
{
    res_watch *rw = ctx;
    if (!rw)
        return;
    free(rw->disk_path);
    free(rw->meminfo_path);
    free(rw);
}

/* ---- its settings block (watch_ops.parse / to_json) ---- */

static const char *const res_keys[] = {"type", "weight", "urgency", "memory_pct", "disk_pct",
                                       "thresholds", "path", "hysteresis", NULL};

static int res_parse(const json_t *src, const char *where, const char *cwd, watch_config *w,
                     loom_error *err)
{
    int rc;
    w->urgency = w->idle_urgency = EVENT_CRITICAL;
    if ((rc = hb_cfg_level(src, where, w, err)) < 0)
        return rc;
    w->memory_pct = w->disk_pct = -1;
    w->hysteresis = HB_DEFAULT_HYSTERESIS;
    json_t *th = json_object_get(src, "thresholds");
    if (th) {
        /* The seed's form: {"thresholds": {"memory_pct": 90, "disk_pct": 95}}. */
        static const char *const tkeys[] = {"memory_pct", "disk_pct", NULL};
        char sub[512];
        snprintf(sub, sizeof sub, "%s.thresholds", where);
        if (!json_is_object(th))
            return loom_error_set(err, LOOM_ERR_CONFIG, "%s: must be an object", sub);
        if ((rc = hb_cfg_check_keys(th, tkeys, sub, err)) < 0 ||
            (rc = hb_cfg_number(th, "memory_pct", sub, 0, 100, false, &w->memory_pct, err)) < 0 ||
            (rc = hb_cfg_number(th, "disk_pct", sub, 0, 100, false, &w->disk_pct, err)) < 0)
            return rc;
    }
    if ((rc = hb_cfg_number(src, "memory_pct", where, 0, 100, false, &w->memory_pct, err)) < 0 ||
        (rc = hb_cfg_number(src, "disk_pct", where, 0, 100, false, &w->disk_pct, err)) < 0 ||
        (rc = hb_cfg_number(src, "hysteresis", where, 0, 100, false, &w->hysteresis, err)) < 0)
        return rc;
    if (w->memory_pct < 0 && w->disk_pct < 0)
        return loom_error_set(err, LOOM_ERR_CONFIG,
                              "%s: a resource source needs \"memory_pct\" or \"disk_pct\"",
                              where);
    const char *p = NULL;
    if ((rc = hb_cfg_string(src, "path", where, &p, err)) < 0)
        return rc;
    w->disk_path = p ? path_make_absolute(p, cwd) : xstrdup(cwd);
    return 0;
}

static void res_to_json(const watch_config *w, json_t *s)
{
    json_object_set_new(s, "urgency", json_string(event_urgency_name(w->urgency)));
    json_object_set_new(s, "memory_pct", w->memory_pct < 0 ? json_null() : json_real(w->memory_pct));
    json_object_set_new(s, "disk_pct", w->disk_pct < 0 ? json_null() : json_real(w->disk_pct));
    json_object_set_new(s, "path", json_string(w->disk_path));
    json_object_set_new(s, "hysteresis", json_real(w->hysteresis));
}

const watch_ops watch_resource_ops = {
    .poll = res_poll,
    .free = res_free,
    .name = "resource",
    .type = WATCH_RESOURCE,
    .keys = res_keys,
    .default_weight = 1.0,
    .parse = res_parse,
    .to_json = res_to_json,
};

int watch_resource_new(const watch_config *c, watch_source *out, loom_error *err)
{
    if (c->type != WATCH_RESOURCE || !c->disk_path)
        return loom_error_set(err, LOOM_ERR_INVALID_REQUEST, "heartbeat: not a resource source");
    res_watch *rw = xcalloc(1, sizeof *rw);
    rw->mem = (res_gauge){"memory", c->memory_pct, true, 0};
    rw->disk = (res_gauge){"disk", c->disk_pct, true, 0};
    rw->disk_path = xstrdup(c->disk_path);
    rw->meminfo_path = xstrdup(c->meminfo_path);
    rw->hysteresis = c->hysteresis;
    rw->urgency = c->urgency;
    rw->weight = c->weight;
    out->ops = &watch_resource_ops;
    out->ctx = rw;
    out->type = WATCH_RESOURCE;
    return 0;
}
