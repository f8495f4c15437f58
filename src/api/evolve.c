/* evolve.c — self-evolution (ext/evolve/, docs/evolve.md) wired into a
 * run, and `loom evolve` for the surfaces.
 *
 * At a run's start, when the "evolve" settings enable it, the session
 * file's length is noted, so that at the run's end the records the run
 * wrote are read back from there and distilled (ext/evolve/distill.c).
 * What E1 wrote reaches later runs through the memory recall
 * (api/memory.c, ext/memory/recall.c), which reads the pattern and
 * failure files beside the memory entries. Both calls run on the run's
 * thread; the state is the run's. */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "api/internal.h"
#include "base/fileio.h"
#include "base/json.h"
#include "base/settings.h"
#include "base/str.h"
#include "ext/evolve/evolve.h"

/* A run's records past this are not distilled (a run that wrote more is
 * one no signature would summarize). */
#define RUN_RECORDS_MAX (64u * 1024 * 1024)

struct api_evolve {
    evolve_config cfg;
    char *root;
    char *session_id;
    char *run_id;
    char *goal;
    char *session_path;
    off_t offset;          /* the session file's length at the run's start */
};

api_evolve *api_evolve_run_begin(loom_session *s, const char *run_id, const char *goal)
{
    loom_agent *a = s->agent;
    evolve_config cfg;
    evolve_config_read((const json_t *const *)a->files, 3, &cfg, NULL);
    if (!cfg.enabled)
        return NULL;
    api_evolve *ev = xcalloc(1, sizeof *ev);
    ev->cfg = cfg;
    ev->root = evolve_root(a->cwd);
    ev->session_id = xstrdup(loom_session_id(s));
    ev->run_id = xstrdup(run_id);
    ev->goal = xstrdup(goal);
    ev->session_path = xstrdup(loom_session_path(s));
    struct stat st;
    ev->offset = ev->session_path && stat(ev->session_path, &st) == 0 ? st.st_size : 0;
    return ev;
}

void api_evolve_run_end(api_evolve *ev, const loop_result *res, json_t *result)
{
    if (!ev)
        return;
    /* Only what the run wrote: from the length noted at its start. */
    json_t *records = NULL;
    loom_str tail = LOOM_STR_INIT;
    int fd = ev->session_path ? open(ev->session_path, O_RDONLY | O_CLOEXEC) : -1;
    if (fd >= 0 && lseek(fd, ev->offset, SEEK_SET) == ev->offset &&
        file_read_fd(fd, RUN_RECORDS_MAX, &tail) == 0)
        records = evolve_jsonl_parse(str_cstr(&tail), tail.len, NULL);
    if (fd >= 0)
        close(fd);
    str_free(&tail);
    if (!records)
        records = json_array();
    loom_error err;
    loom_error_clear(&err);
    evolve_run run = {
        .root = ev->root,
        .session_id = ev->session_id,
        .run_id = ev->run_id,
        .goal = ev->goal,
        .records = records,
        .state = loom_run_state_name(res->state),
        .stop_reason = loom_stop_reason_name(res->stop_reason),
        .turns = res->turns,
    };
    json_t *summary = evolve_after_run(&ev->cfg, &run, &err);
    if (!summary)
        summary = json_pack("{s:s,s:s}", "kind", "none", "error", err.message);
    json_decref(records);
    free(ev->root);
    free(ev->session_id);
    free(ev->run_id);
    free(ev->goal);
    free(ev->session_path);
    free(ev);
    json_object_set_new(result, "evolve", summary);
}

char *loom_evolve_json(const char *cwd, const char *verb, const char *id, loom_status *st)
{
    if (!verb) {
        api_status_set(st, LOOM_ERR_INVALID_REQUEST, "loom evolve needs a command");
        return NULL;
    }
    char *here = cwd ? xstrdup(cwd) : getcwd(NULL, 0);
    if (!here) {
        api_status_set(st, LOOM_ERR_IO, "cannot tell the working directory");
        return NULL;
    }
    char *root = evolve_root(here);
    free(here);
    evolve_config cfg;
    settings_files sf;
    loom_error err;
    loom_error_clear(&err);
    if (settings_load(root, &sf, &err) == 0) {
        evolve_config_read((const json_t *const *)sf.doc, SETTINGS_LAYERS, &cfg, NULL);
        settings_files_free(&sf);
    } else {
        evolve_config_read(NULL, 0, &cfg, NULL);
    }
    bool needs_id = !strcmp(verb, "show") || !strcmp(verb, "accept") ||
                    !strcmp(verb, "reject") || !strcmp(verb, "edited");
    json_t *out = NULL;
    if (needs_id && (!id || !*id))
        loom_error_set(&err, LOOM_ERR_INVALID_REQUEST, "loom evolve review %s needs a proposal id",
                       verb);
    else if (!strcmp(verb, "review"))
        out = evolve_review_list(root, &err);
    else if (!strcmp(verb, "show"))
        out = evolve_review_show(root, id, &err);
    else if (!strcmp(verb, "accept") || !strcmp(verb, "reject"))
        out = evolve_review_decide(root, id, !strcmp(verb, "accept"), &err);
    else if (!strcmp(verb, "edited"))
        out = evolve_review_edited(root, id, &err);
    else if (!strcmp(verb, "audit"))
        out = evolve_audit(&cfg, root, &err);
    else if (!strcmp(verb, "stats"))
        out = evolve_stats(root, &err);
    else
        loom_error_set(&err, LOOM_ERR_INVALID_REQUEST,
                       "unknown evolve command %s (review, show, accept, reject, edited, audit, "
                       "stats)",
                       verb);
    free(root);
    if (!out) {
        api_status_from(st, &err);
        return NULL;
    }
    char *text = json_dumps(out, JSON_INDENT(2));
    json_decref(out);
    api_status_ok(st);
    return text;
}
