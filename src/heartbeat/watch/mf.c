/* watch_mf.c — the mf_events watch source: the shared M_f event bus.
 *
 * The bus is a directory with one subdirectory per topic; a publisher (a
 * sub-agent, a build script, another Loom) drops one JSON file per event
 * into its topic, written atomically (temp name starting with '.', then
 * rename):
 *
 *   <dir>/<topic>/<anything>.json
 *   {"summary": "build failed on main", "urgency": "high",
 *    "delta_h": 0.7, "id": "evt_build_12", "sender": "ci"}
 *
 * summary is required; urgency (low|high|critical) overrides the source's
 * default; delta_h in [0,1] is the publisher's own information gain (seed
 * 000 L764–779, the publish gate) and becomes the magnitude; id (default the
 * file name) makes the fingerprint. Each file is reported once: the source
 * remembers the names it has seen, files present at start are seen unless
 * "backlog" is set, and a name is forgotten once its file is removed.
 */
#include "heartbeat/watch/watch.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/path.h"
#include "base/str.h"
#include "heartbeat/map.h"

#define MF_MAX_FILE (64 << 10)
/* A file that does not parse may still be being written by a publisher that
 * does not rename: retry it until it is this old. */
#define MF_SETTLE_MS 2000

typedef struct mf_watch {
    char *dir;
    char **topics;         /* NULL: every subdirectory */
    size_t n_topics;
    event_urgency urgency;
    double weight;
    hb_map seen;           /* "topic/name" → NULL */
    int problems;
} mf_watch;

static bool is_event_name(const char *name)
{
    size_t n = strlen(name);
    return name[0] != '.' && n > 5 && !strcmp(name + n - 5, ".json");
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Sorted names in dir that pass keep(); caller frees each and the array. */
static char **list_dir(const char *dir, bool want_dirs, size_t *n)
{
    *n = 0;
    DIR *d = opendir(dir);
    if (!d)
        return NULL;
    char **v = NULL;
    size_t cap = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        if (want_dirs) {
            bool is_dir = e->d_type == DT_DIR;
            if (e->d_type == DT_UNKNOWN) {
                char *p = path_join(dir, e->d_name);
                struct stat st;
                is_dir = stat(p, &st) == 0 && S_ISDIR(st.st_mode);
                free(p);
            }
            if (!is_dir)
                continue;
        } else if (!is_event_name(e->d_name)) {
            continue;
        }
        if (*n == cap) {
            cap = cap ? cap * 2 : 16;
            v = xrealloc(v, cap * sizeof *v);
        }
        v[(*n)++] = xstrdup(e->d_name);
    }
    closedir(d);
    if (*n)
        qsort(v, *n, sizeof *v, cmp_str);
    return v;
}

static void free_names(char **v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(v[i]);
    free(v);
}

/* 1 reported (or unreportable for good), 0 retry later. */
static int report_file(mf_watch *mw, const char *topic, const char *name, const char *path,
                       const watch_tick *t, watch_emit_fn emit, void *ctx)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    if (fd < 0)
        return errno == ENOENT ? 1 : 0;
    struct stat st;
    if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size > MF_MAX_FILE) {
        close(fd);
        mw->problems++;
        return 1;
    }
    char *buf = xmalloc((size_t)st.st_size + 1);
    size_t got = 0;
    while (got < (size_t)st.st_size) {
        ssize_t r = read(fd, buf + got, (size_t)st.st_size - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        got += (size_t)r;
    }
    close(fd);
    json_t *doc = json_loadb(buf, got, 0, NULL);
    free(buf);
    const char *summary = doc ? json_string_value(json_object_get(doc, "summary")) : NULL;
    if (!summary || !*summary) {
        json_decref(doc);
        int64_t mtime_ms = (int64_t)st.st_mtim.tv_sec * 1000 + st.st_mtim.tv_nsec / 1000000;
        if (t->now_ms - mtime_ms < MF_SETTLE_MS)
            return 0;
        mw->problems++;   /* not an event: never will be */
        return 1;
    }
    event_urgency u = mw->urgency;
    json_t *uv = json_object_get(doc, "urgency");
    if (uv && hb_urgency_parse(json_string_value(uv), &u) < 0)
        mw->problems++;
    double magnitude = 1.0;
    json_t *dh = json_object_get(doc, "delta_h");
    if (!dh)
        dh = json_object_get(doc, "ΔH");
    if (json_is_number(dh)) {
        magnitude = json_number_value(dh);
        magnitude = magnitude < 0 ? 0 : magnitude > 1 ? 1 : magnitude;
    }
    const char *id = json_string_value(json_object_get(doc, "id"));
    const char *sender = json_string_value(json_object_get(doc, "sender"));
    loom_str fp = LOOM_STR_INIT, sum = LOOM_STR_INIT, subject = LOOM_STR_INIT;
    str_printf(&fp, "mf:%s:%s", topic, id && *id ? id : name);
    str_printf(&subject, "mf:%s", topic);
    str_printf(&sum, "[%s] %s", topic, summary);
    if (sender && *sender)
        str_printf(&sum, " (from %s)", sender);
    hb_candidate c = {
        .source = "mf_events",
        .subject = subject.ptr,
        .fingerprint = fp.ptr,
        .summary = sum.ptr,
        .urgency = u,
        .magnitude = magnitude,
        .weight = mw->weight,
    };
    emit(ctx, &c);
    str_free(&fp);
    str_free(&sum);
    str_free(&subject);
    json_decref(doc);
    return 1;
}

/* One pass over the bus. With emit NULL every file is marked seen (the
 * start-up baseline). The seen set is rebuilt from what is there, so names
 * of removed files do not pile up. */
static void scan(mf_watch *mw, const watch_tick *t, watch_emit_fn emit, void *ctx)
{
    char **topics = mw->topics;
    size_t n_topics = mw->n_topics;
    char **listed = NULL;
    if (!mw->topics)
        topics = listed = list_dir(mw->dir, true, &n_topics);
    hb_map next = HB_MAP_INIT;
    loom_str key = LOOM_STR_INIT;
    for (size_t i = 0; i < n_topics; i++) {
        char *path = path_join(mw->dir, topics[i]);
        size_t n;
        char **names = list_dir(path, false, &n);
        for (size_t k = 0; k < n; k++) {
            str_clear(&key);
            str_printf(&key, "%s/%s", topics[i], names[k]);
            if (hb_map_has(&mw->seen, key.ptr) || !emit) {
                hb_map_put(&next, key.ptr, NULL);
                continue;
            }
            char *file = path_join(path, names[k]);
            if (report_file(mw, topics[i], names[k], file, t, emit, ctx))
                hb_map_put(&next, key.ptr, NULL);
            free(file);
        }
        free_names(names, n);
        free(path);
    }
    str_free(&key);
    free_names(listed, listed ? n_topics : 0);
    hb_map_free(&mw->seen, NULL);
    mw->seen = next;
}

static int mf_poll(void *ctx, const watch_tick *t, watch_emit_fn emit, void *emit_ctx)
{
    mf_watch *mw = ctx;
    mw->problems = 0;
    scan(mw, t, emit, emit_ctx);
    return mw->problems;
}

static void mf_free(void *ctx)
{
    mf_watch *mw = ctx;
    if (!mw)
        return;
    free(mw->dir);
    free_names(mw->topics, mw->n_topics);
    hb_map_free(&mw->seen, NULL);
    free(mw);
}

/* ---- its settings block (watch_ops.parse / to_json) ---- */

static const char *const mf_keys[] = {"type", "weight", "urgency", "dir", "topics", "backlog",
                                      NULL};

static int mf_parse(const json_t *src, const char *where, const char *cwd, watch_config *w,
                    loom_error *err)
{
    int rc;
    w->urgency = w->idle_urgency = EVENT_LOW;
    if ((rc = hb_cfg_level(src, where, w, err)) < 0)
        return rc;
    const char *dir = NULL;
    if ((rc = hb_cfg_string(src, "dir", where, &dir, err)) < 0)
        return rc;
    if (dir)
        w->dir = path_make_absolute(dir, cwd);
    if ((rc = hb_cfg_strv(src, "topics", where, false, &w->topics, &w->n_topics, err)) < 0)
        return rc;
    for (size_t i = 0; i < w->n_topics; i++)
        if (strchr(w->topics[i], '/') || !strcmp(w->topics[i], ".") ||
            !strcmp(w->topics[i], ".."))
            return loom_error_set(err, LOOM_ERR_CONFIG,
                                  "%s.topics[%zu]: \"%s\" is not a topic name (no '/', "
                                  "'.', '..')", where, i, w->topics[i]);
    return hb_cfg_bool(src, "backlog", where, &w->backlog, err);
}

static void mf_to_json(const watch_config *w, json_t *s)
{
    json_object_set_new(s, "urgency", json_string(event_urgency_name(w->urgency)));
    json_object_set_new(s, "dir", w->dir ? json_string(w->dir) : json_null());
    json_object_set_new(s, "topics", hb_cfg_strv_json(w->topics, w->n_topics));
    json_object_set_new(s, "backlog", json_boolean(w->backlog));
}

const watch_ops watch_mf_ops = {
    .poll = mf_poll,
    .free = mf_free,
    .name = "mf_events",
    .type = WATCH_MF_EVENTS,
    .keys = mf_keys,
    .default_weight = 0.8,
    .parse = mf_parse,
    .to_json = mf_to_json,
};

int watch_mf_new(const watch_config *c, const char *dir, watch_source *out, loom_error *err)
{
    if (c->type != WATCH_MF_EVENTS)
        return loom_error_set(err, LOOM_ERR_INVALID_REQUEST, "heartbeat: not an mf_events source");
    const char *d = c->dir ? c->dir : dir;
    if (!d || d[0] != '/')
        return loom_error_set(err, LOOM_ERR_CONFIG,
                              "heartbeat: the mf_events source has no absolute bus directory");
    mf_watch *mw = xcalloc(1, sizeof *mw);
    mw->dir = xstrdup(d);
    if (c->n_topics) {
        mw->topics = xcalloc(c->n_topics, sizeof *mw->topics);
        for (size_t i = 0; i < c->n_topics; i++)
            mw->topics[i] = xstrdup(c->topics[i]);
        mw->n_topics = c->n_topics;
    }
    mw->urgency = c->urgency;
    mw->weight = c->weight;
    if (!c->backlog)
        scan(mw, NULL, NULL, NULL);
    out->ops = &watch_mf_ops;
    out->ctx = mw;
    out->type = WATCH_MF_EVENTS;
    return 0;
}
