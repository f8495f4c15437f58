/* memory.c — the session's memory (docs/memory.md): recall at run start,
 * extraction at run end, and what /memory shows (ext/memory/ does the
 * work; this file wires it to the session and the run).
 *
 * The recall block reaches the model through the run's tool-set port: its
 * take_notes is wrapped so the first call of the run hands over the block
 * (a complete <system-reminder data-role="memory"> element, which the loop
 * queues as it is) before what the inner port has to say. Threading: the
 * run's thread for begin/end; loom_session_memory_json may run on another
 * (the REPL's), so the session's record is under a mutex. */
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "api/internal.h"
#include "base/clock.h"
#include "base/event.h"
#include "base/fileio.h"
#include "base/json.h"
#include "base/path.h"
#include "base/str.h"
#include "ext/memory/extract.h"
#include "ext/memory/memory_config.h"
#include "ext/memory/recall.h"
#include "ext/memory/selector.h"

struct api_memory {
    pthread_mutex_t mu;   /* guards surfaced, recalls, last_extraction */
    json_t *surfaced;     /* paths recalled in this session: never twice (§11.1-A) */
    json_t *recalls;      /* [{run, ts, items}] */
    json_t *last_extraction;
    atomic_bool in_progress;
    /* The run in progress (its thread only). */
    char *block;
    loop_toolset_port inner;
    msg_usage usage;      /* the model selector's, counted into the run at its end */
};

static struct api_memory *memory_of(loom_session *s)
{
    if (!s->memory) {
        struct api_memory *m = xcalloc(1, sizeof *m);
        pthread_mutex_init(&m->mu, NULL);
        m->surfaced = json_array();
        m->recalls = json_array();
        atomic_init(&m->in_progress, false);
        s->memory = m;
    }
    return s->memory;
}

void api_memory_close(loom_session *s)
{
    struct api_memory *m = s->memory;
    if (!m)
        return;
    json_decref(m->surfaced);
    json_decref(m->recalls);
    json_decref(m->last_extraction);
    free(m->block);
    pthread_mutex_destroy(&m->mu);
    free(m);
    s->memory = NULL;
}

static char *project_root(const loom_agent *a)
{
    char *root = path_repo_root(a->cwd);
    return root ? root : xstrdup(a->cwd);
}

static void read_config(const loom_agent *a, loop_io *io, memory_config *c)
{
    loom_str warn = LOOM_STR_INIT;
    memory_config_read(a->files, 3, c, &warn);
    if (warn.len && io->emit)
        io->emit(io->emit_ctx, LOOM_EV_WARNING_EMITTED, LOOM_VIS_USER, NULL,
                 event_warning("settings", warn.ptr));
    str_free(&warn);
}

/* The wrapped take_notes: the recall block once, then the inner port's. */
static char *memory_take_notes(void *ctx)
{
    struct api_memory *m = ctx;
    char *inner = m->inner.take_notes ? m->inner.take_notes(m->inner.ctx) : NULL;
    if (!m->block)
        return inner;
    loom_str out = LOOM_STR_INIT;
    str_puts(&out, m->block);
    if (inner) /* the loop wraps only text that is not an element already */
        str_printf(&out, "<system-reminder>\n%s\n</system-reminder>\n", inner);
    free(inner);
    free(m->block);
    m->block = NULL;
    return str_steal(&out);
}

static bool memory_refresh(void *ctx, const tool_registry **tools, const char **ext)
{
    struct api_memory *m = ctx;
    return m->inner.refresh ? m->inner.refresh(m->inner.ctx, tools, ext) : false;
}

/* memory.selector.model: the model picks (seed 001 §11.7). False when
 * none is set, or when its call failed (a warning says why): the lexical
 * selector picks then. */
static bool select_by_model(loom_session *s, struct api_memory *m, loop_io *io,
                            const memory_config *c, const memory_entry *v, size_t n,
                            const char *goal, const json_t *skip, int64_t now,
                            memory_recall *out)
{
    if (!c->selector_model || !c->recall || n == 0)
        return false;
    size_t max = (size_t)c->recall_max_entries;
    memory_helper_req call = {.port = &io->model, .agent = s->agent->params.provider,
                              .model = c->selector_model, .max_tokens = 512,
                              .cache_key = loom_session_id(s), .purpose = "memory_selection"};
    memory_pick picks[MEMORY_RECALL_MAX_ENTRIES];
    size_t got = 0;
    loom_str why = LOOM_STR_INIT;
    if (memory_select_by_model(v, n, goal, skip, now, call, io->cancel, max, picks, &got,
                               &m->usage, &why) != 0) {
        if (io->emit)
            io->emit(io->emit_ctx, LOOM_EV_WARNING_EMITTED, LOOM_VIS_USER, NULL,
                     event_warning("memory", str_cstr(&why)));
        str_free(&why);
        return false;
    }
    str_free(&why);
    memory_recall_render(v, picks, got, c, c->selector_model, out);
    memory_picks_free(picks, got);
    return true;
}

void api_memory_run_begin(loom_session *s, loop_io *io, const char *goal, const char *run_id)
{
    struct api_memory *m = memory_of(s);
    free(m->block);
    m->block = NULL;
    m->inner = io->toolset;
    io->toolset = (loop_toolset_port){.ctx = m,
                                      .refresh = m->inner.refresh ? memory_refresh : NULL,
                                      .take_notes = memory_take_notes};
    memory_config c;
    read_config(s->agent, io, &c);
    if (!goal || !c.recall) {
        memory_config_free(&c);
        return;
    }
    char *root = project_root(s->agent);
    memory_entry *v = NULL;
    size_t n = 0;
    memory_recall_candidates(root, s->agent->trusted, &v, &n);
    int64_t now = clock_wall_ms();
    memory_recall rc;
    pthread_mutex_lock(&m->mu);
    json_t *skip = json_deep_copy(m->surfaced);
    pthread_mutex_unlock(&m->mu);
    if (!select_by_model(s, m, io, &c, v, n, goal, skip, now, &rc))
        memory_recall_pick(v, n, goal, &c, skip, now, &rc);
    json_decref(skip);
    memory_entries_free(v, n);
    if (json_array_size(rc.items) > 0) {
        loom_error err;
        if (memory_recall_log(root, loom_session_id(s), run_id, rc.items, now, &err) != 0 &&
            io->emit)
            io->emit(io->emit_ctx, LOOM_EV_WARNING_EMITTED, LOOM_VIS_USER, NULL,
                     event_warning("memory", err.message));
        char ts[32];
        clock_iso8601(now, ts);
        pthread_mutex_lock(&m->mu);
        size_t i;
        json_t *it;
        json_array_foreach(rc.items, i, it)
            json_array_append(m->surfaced, json_object_get(it, "path"));
        json_array_append_new(m->recalls, json_pack("{s:s,s:s,s:O}", "run", run_id, "ts", ts,
                                                    "items", rc.items));
        pthread_mutex_unlock(&m->mu);
        m->block = rc.block;
        rc.block = NULL;
    }
    memory_recall_free(&rc);
    free(root);
    memory_config_free(&c);
}

static void warn(loop_io *io, const char *fmt, const char *a, const char *b)
{
    if (!io->emit)
        return;
    loom_str s = LOOM_STR_INIT;
    str_printf(&s, fmt, a, b ? b : "");
    io->emit(io->emit_ctx, LOOM_EV_WARNING_EMITTED, LOOM_VIS_USER, NULL,
             event_warning("memory", s.ptr));
    str_free(&s);
}

json_t *api_memory_run_end(loom_session *s, loop_io *io, loop_result *res)
{
    struct api_memory *m = memory_of(s);
    free(m->block); /* a run that ended before its first request */
    m->block = NULL;
    io->toolset = m->inner;
    msg_usage_add(&res->usage, &m->usage); /* the model selector's call, if any */
    memset(&m->usage, 0, sizeof m->usage);
    memory_config c;
    memory_config_read(s->agent->files, 3, &c, NULL);
    char *root = project_root(s->agent);
    int64_t cap = s->agent->params.max_tokens_total;
    memory_extract_env env = {
        .root = root, .t = s->t, .cfg = &c, .run_completed = res->state == LOOM_RUN_COMPLETED,
        .in_progress = &m->in_progress, .model = &io->model, .provider = s->agent->params.provider,
        .cancel = io->cancel, .now_ms = clock_wall_ms(),
        .tokens_left = cap > 0 ? cap - msg_usage_total(&res->usage) : -1,
    };
    json_t *report = memory_extract_run(&env, &res->usage);
    free(root);
    memory_config_free(&c);
    if (!report)
        return NULL;
    const char *status = json_get_str(report, "status", "");
    if (!strcmp(status, "failed"))
        warn(io, "memory extraction failed: %s%s", json_get_str(report, "reason", "?"), NULL);
    size_t i;
    json_t *d;
    json_array_foreach(json_get_arr(report, "dropped"), i, d)
        warn(io, "memory candidate \"%s\" dropped: %s", json_get_str(d, "name", "?"),
             json_get_str(d, "why", ""));
    pthread_mutex_lock(&m->mu);
    json_decref(m->last_extraction);
    m->last_extraction = json_deep_copy(report);
    pthread_mutex_unlock(&m->mu);
    return report;
}

char *loom_session_memory_json(loom_session *session)
{
    if (!session)
        return NULL;
    struct api_memory *m = session->memory;
    json_t *doc;
    if (!m) {
        doc = json_pack("{s:[],s:n}", "recalled", "extraction");
    } else {
        pthread_mutex_lock(&m->mu);
        /* Copies: the run's thread changes these after the lock is let go. */
        doc = json_pack("{s:o,s:o}", "recalled", json_deep_copy(m->recalls), "extraction",
                        m->last_extraction ? json_deep_copy(m->last_extraction) : json_null());
        pthread_mutex_unlock(&m->mu);
    }
    char *out = json_dump_compact(doc);
    json_decref(doc);
    return out;
}

/* The last n lines of a JSONL file, as parsed values (torn ones dropped). */
static json_t *last_lines(const char *path, int n)
{
    json_t *out = json_array();
    char *text = NULL;
    size_t len = 0;
    if (n <= 0 || file_read_all(path, &text, &len, NULL) != 0)
        return out;
    size_t end = len, count = 0, start = len;
    while (start > 0 && count < (size_t)n) {
        size_t i = end;
        while (i > 0 && text[i - 1] != '\n')
            i--;
        if (end > i) {
            json_t *v = json_loadb(text + i, end - i, 0, NULL);
            if (v) {
                json_array_insert_new(out, 0, v);
                count++;
            }
        }
        start = i;
        end = i > 0 ? i - 1 : 0;
        if (i == 0)
            break;
    }
    free(text);
    return out;
}

static int newest_first(const void *a, const void *b)
{
    const memory_entry *x = a, *y = b;
    return x->mtime_ms < y->mtime_ms ? 1 : x->mtime_ms > y->mtime_ms ? -1 : 0;
}

char *loom_memory_json(const char *cwd, int recalls, loom_status *st)
{
    char here[4096];
    if (!cwd && !getcwd(here, sizeof here)) {
        api_status_set(st, LOOM_ERR_IO, "loom_memory_json: the working directory is unknown");
        return NULL;
    }
    char *dir = realpath(cwd ? cwd : here, NULL);
    if (!dir) {
        api_status_set(st, LOOM_ERR_RESOURCE_NOT_FOUND, "loom_memory_json: %s: no such folder",
                       cwd ? cwd : here);
        return NULL;
    }
    char *root = path_repo_root(dir);
    if (!root)
        root = xstrdup(dir);
    static const struct {
        const char *sub;
        memory_entry_kind kind;
    } dirs[] = {{".loom/memory", MEMORY_ENTRY_MEMORY},
                {".loom/mf/patterns", MEMORY_ENTRY_PATTERN},
                {".loom/mf/failures", MEMORY_ENTRY_FAILURE}};
    memory_entry *v = NULL;
    size_t n = 0;
    loom_str skipped = LOOM_STR_INIT;
    for (size_t i = 0; i < sizeof dirs / sizeof *dirs; i++) {
        char *d = path_join(root, dirs[i].sub);
        memory_entries_load(d, dirs[i].kind, &v, &n, &skipped);
        free(d);
    }
    if (n > 1)
        qsort(v, n, sizeof *v, newest_first);
    int64_t now = clock_wall_ms();
    json_t *entries = json_array();
    for (size_t i = 0; i < n; i++) {
        json_t *e = json_pack("{s:s,s:s,s:s,s:s,s:s?,s:s?,s:s?,s:s?,s:I}", "path", v[i].path,
                              "kind", memory_entry_kind_name(v[i].kind), "name", v[i].name,
                              "description", v[i].description, "type", v[i].type, "created",
                              v[i].created, "updated", v[i].updated, "source_session",
                              v[i].source_session, "age_days",
                              (json_int_t)((now - v[i].mtime_ms) / (24LL * 3600 * 1000)));
        if (e)
            json_array_append_new(entries, e);
    }
    memory_entries_free(v, n);
    json_t *skip = json_array();
    for (const char *p = str_cstr(&skipped); *p;) {
        const char *nl = strchr(p, '\n');
        size_t l = nl ? (size_t)(nl - p) : strlen(p);
        json_array_append_new(skip, json_stringn(p, l));
        p += l + (nl ? 1 : 0);
    }
    str_free(&skipped);
    char *memdir = path_join(root, ".loom/memory");
    char *log = path_join(root, ".loom/mf/recall.jsonl");
    struct stat sb;
    json_t *doc = json_pack("{s:s,s:s,s:b,s:o,s:o,s:o}", "root", root, "memory_dir", memdir,
                            "exists", stat(memdir, &sb) == 0 && S_ISDIR(sb.st_mode), "entries",
                            entries, "skipped", skip, "recalls", last_lines(log, recalls));
    char *out = json_dump_compact(doc);
    json_decref(doc);
    free(log);
    free(memdir);
    free(root);
    free(dir);
    api_status_ok(st);
    return out;
}
