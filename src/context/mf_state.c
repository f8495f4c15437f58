/* mf_state.c — C_working's M_f snapshots: renew (steps 1–4) writes the
 * four parts to files in the session directory and reads them back (the
 * files are described in mf_state.h).
 *
 * Snapshots are built under the working memory's lock and written after it
 * is released; a load is parsed and checked completely before anything is
 * replaced, so a damaged file changes nothing. Any thread may call it.
 */
#include "context/mf_state.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/fileio.h"
#include "base/json.h"
#include "base/path.h"
#include "base/str.h"
#include "context/plan.h"
#include "context/working_impl.h"

#define WORKING_FILE "working_state.json"
#define PLAN_FILE "plan_state.json"
#define EVENT_FILE "event_state.json"
#define KNOWLEDGE_FILE "knowledge_state.json"

static json_t *event_json(const surface_event *e)
{
    return json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:s?, s:s?, s:I}", "id", e->id,
                     "fingerprint", e->fingerprint, "source", e->source, "summary",
                     e->summary, "urgency", event_urgency_name(e->urgency), "state",
                     event_state_name(e->state), "disposition", e->disposition, "note",
                     e->note, "detected_ms", (json_int_t)e->detected_ms);
}

static json_t *decision_json(const decision *d)
{
    return json_pack("{s:s, s:s, s:s, s:s?}", "id", d->id, "disposition", d->disposition,
                     "summary", d->summary, "note", d->note);
}

static json_t *copy_or_empty(const json_t *a)
{
    return a ? json_deep_copy(a) : json_array();
}

static int write_json(const char *dir, const char *name, json_t *v, loom_error *err)
{
    char *text = json_dumps(v, JSON_INDENT(2));
    char *path = path_join(dir, name);
    loom_str body = LOOM_STR_INIT;
    str_puts(&body, text ? text : "null");
    str_putc(&body, '\n');
    free(text);
    int rc = file_write_atomic(path, body.ptr, body.len, 0600, err);
    if (rc != 0)
        loom_error_prefix(err, "saving working memory to %s", path);
    free(path);
    str_free(&body);
    return rc;
}

int working_save(working *w, const char *dir, loom_error *err)
{
    json_t *todos = w->plan ? todo_list_json(w->plan) : json_array();
    json_t *files[4];

    working_lock(w);
    json_t *steps = json_array();
    for (size_t i = 0; i < w->nsteps; i++)
        json_array_append_new(steps, json_boolean(working_step_at(w, i)));
    const dashboard *d = &w->dash;
    json_t *dash = json_pack(
        "{s:I, s:I, s:I, s:I, s:i, s:o, s:i, s:I, s:b, s:i}", "tokens", (json_int_t)d->tokens,
        "window", (json_int_t)d->window, "budget_total", (json_int_t)d->budget_total,
        "budget_used", (json_int_t)d->budget_used, "errors_recent", working_errors_locked(w),
        "recent_steps", steps, "depth", d->depth, "last_hb_ms", (json_int_t)d->last_hb_ms,
        "interrupt_requested", d->interrupt_requested, "turn", d->turn);
    files[0] = json_pack("{s:s, s:s?, s:o}", "goal", w->goal ? w->goal : "", "progress",
                         w->progress, "dashboard", dash);
    json_t *evs = json_array(), *recent = json_array();
    for (size_t i = 0; i < w->nevents; i++)
        json_array_append_new(evs, event_json(&w->events[i]));
    for (size_t i = 0; i < w->nrecent; i++)
        json_array_append_new(recent, decision_json(&w->recent[i]));
    files[2] = json_pack("{s:o, s:o}", "events", evs, "recent_decisions", recent);
    files[3] = json_pack("{s:o, s:o, s:o}", "active_questions", copy_or_empty(w->questions),
                         "evidence_packs", copy_or_empty(w->evidence), "citations",
                         copy_or_empty(w->citations));
    working_unlock(w);
    files[1] = json_pack("{s:o}", "todos", todos);

    static const char *const names[4] = {WORKING_FILE, PLAN_FILE, EVENT_FILE, KNOWLEDGE_FILE};
    int rc = file_mkdirs(dir, 0700, err);
    if (rc != 0)
        loom_error_prefix(err, "saving working memory");
    for (int i = 0; i < 4; i++) {
        if (rc == 0)
            rc = write_json(dir, names[i], files[i], err);
        json_decref(files[i]);
    }
    return rc;
}

/* What a load read, before it replaces anything. */
typedef struct staged {
    bool have_working, have_plan, have_events, have_knowledge;
    char *goal, *progress;
    dashboard dash;
    bool steps[WORKING_ERROR_WINDOW];
    size_t nsteps;
    json_t *todos;
    surface_event *events;
    size_t nevents;
    decision recent[WORKING_RECENT_DECISIONS];
    size_t nrecent;
    json_t *questions, *evidence, *citations;
} staged;

static void staged_free(staged *s)
{
    free(s->goal);
    free(s->progress);
    json_decref(s->todos);
    working_events_clear(s->events, s->nevents);
    for (size_t i = 0; i < s->nrecent; i++)
        working_decision_clear(&s->recent[i]);
    json_decref(s->questions);
    json_decref(s->evidence);
    json_decref(s->citations);
}

static int corrupt(loom_error *err, const char *path, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int corrupt(loom_error *err, const char *path, const char *fmt, ...)
{
    char msg[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return loom_error_set(err, LOOM_ERR_SESSION_CORRUPT, "damaged working-memory file %s: %s",
                         path, msg);
}

/* *out: the file's top-level object, or NULL when the file does not exist. */
static int read_object(const char *dir, const char *name, char **path_out, json_t **out,
                       loom_error *err)
{
    *out = NULL;
    char *path = path_join(dir, name);
    *path_out = path;
    if (!file_exists(path))
        return 0;
    char *data;
    size_t len;
    int rc = file_read_all(path, &data, &len, err);
    if (rc != 0)
        return rc;
    loom_error perr;
    loom_error_clear(&perr);
    json_t *v = json_parse(data, len, path, &perr);
    free(data);
    if (!v)
        return loom_error_set(err, LOOM_ERR_SESSION_CORRUPT, "damaged working-memory file: %s",
                              perr.message);
    if (!json_is_object(v)) {
        json_decref(v);
        return corrupt(err, path, "the top level is not a JSON object");
    }
    *out = v;
    return 0;
}

/* Optional string member: 0 with *out a copy (NULL when absent or null). */
static int opt_str(const json_t *obj, const char *key, char **out, const char *path,
                   const char *where, loom_error *err)
{
    json_t *v = json_object_get(obj, key);
    *out = NULL;
    if (!v || json_is_null(v))
        return 0;
    if (!json_is_string(v))
        return corrupt(err, path, "%s%s is not a string", where, key);
    *out = xstrdup(json_string_value(v));
    return 0;
}

static int opt_int(const json_t *obj, const char *key, int64_t *out, const char *path,
                   const char *where, loom_error *err)
{
    json_t *v = json_object_get(obj, key);
    if (!v)
        return 0;
    if (!json_is_integer(v))
        return corrupt(err, path, "%s%s is not an integer", where, key);
    *out = (int64_t)json_integer_value(v);
    return 0;
}

static int load_working_state(const json_t *o, const char *path, staged *s, loom_error *err)
{
    int rc;
    if ((rc = opt_str(o, "goal", &s->goal, path, "", err)) != 0 ||
        (rc = opt_str(o, "progress", &s->progress, path, "", err)) != 0)
        return rc;
    json_t *d = json_object_get(o, "dashboard");
    if (!d)
        return 0;
    if (!json_is_object(d))
        return corrupt(err, path, "dashboard is not an object");
    int64_t errors = 0, depth = 0, turn = 0;
    const char *w = "dashboard.";
    if ((rc = opt_int(d, "tokens", &s->dash.tokens, path, w, err)) != 0 ||
        (rc = opt_int(d, "window", &s->dash.window, path, w, err)) != 0 ||
        (rc = opt_int(d, "budget_total", &s->dash.budget_total, path, w, err)) != 0 ||
        (rc = opt_int(d, "budget_used", &s->dash.budget_used, path, w, err)) != 0 ||
        (rc = opt_int(d, "errors_recent", &errors, path, w, err)) != 0 ||
        (rc = opt_int(d, "depth", &depth, path, w, err)) != 0 ||
        (rc = opt_int(d, "last_hb_ms", &s->dash.last_hb_ms, path, w, err)) != 0 ||
        (rc = opt_int(d, "turn", &turn, path, w, err)) != 0)
        return rc;
    s->dash.depth = (int)depth;
    s->dash.turn = (int)turn;
    json_t *ir = json_object_get(d, "interrupt_requested");
    if (ir && !json_is_boolean(ir))
        return corrupt(err, path, "dashboard.interrupt_requested is not true or false");
    s->dash.interrupt_requested = json_is_true(ir);
    json_t *steps = json_object_get(d, "recent_steps");
    if (steps) {
        if (!json_is_array(steps))
            return corrupt(err, path, "dashboard.recent_steps is not an array");
        size_t n = json_array_size(steps);
        /* Only the newest WORKING_ERROR_WINDOW count. */
        for (size_t i = n > WORKING_ERROR_WINDOW ? n - WORKING_ERROR_WINDOW : 0; i < n; i++) {
            json_t *b = json_array_get(steps, i);
            if (!json_is_boolean(b))
                return corrupt(err, path, "dashboard.recent_steps[%zu] is not true or false",
                               i);
            s->steps[s->nsteps++] = json_is_true(b);
        }
    } else {
        /* A snapshot without the outcomes still keeps its error count. */
        for (int64_t i = 0; i < errors && s->nsteps < WORKING_ERROR_WINDOW; i++)
            s->steps[s->nsteps++] = true;
    }
    return 0;
}

static int load_event(const json_t *o, size_t i, const char *path, surface_event *e,
                      loom_error *err)
{
    char where[48];
    snprintf(where, sizeof where, "events[%zu].", i);
    if (!json_is_object(o))
        return corrupt(err, path, "events[%zu] is not an object", i);
    int rc;
    char *urgency = NULL, *state = NULL;
    if ((rc = opt_str(o, "id", &e->id, path, where, err)) != 0 ||
        (rc = opt_str(o, "fingerprint", &e->fingerprint, path, where, err)) != 0 ||
        (rc = opt_str(o, "source", &e->source, path, where, err)) != 0 ||
        (rc = opt_str(o, "summary", &e->summary, path, where, err)) != 0 ||
        (rc = opt_str(o, "disposition", &e->disposition, path, where, err)) != 0 ||
        (rc = opt_str(o, "note", &e->note, path, where, err)) != 0 ||
        (rc = opt_int(o, "detected_ms", &e->detected_ms, path, where, err)) != 0 ||
        (rc = opt_str(o, "urgency", &urgency, path, where, err)) != 0 ||
        (rc = opt_str(o, "state", &state, path, where, err)) != 0)
        goto out;
    int u = working_urgency_index(urgency);
    int st = working_state_index(state);
    if (!e->id || !*e->id)
        rc = corrupt(err, path, "%sid is missing or empty", where);
    else if (u < 0)
        rc = corrupt(err, path, "%surgency \"%s\" is not one of: low, high, critical", where,
                     urgency ? urgency : "");
    else if (st < 0)
        rc = corrupt(err, path,
                     "%sstate \"%s\" is not one of: detected, projected, acknowledged, "
                     "resolved, archived",
                     where, state ? state : "");
    else if (e->disposition && !working_valid_disposition(e->disposition))
        rc = corrupt(err, path, "%sdisposition \"%s\" is not one of: %s", where, e->disposition,
                     EVENT_DISPOSITIONS);
    else if (st >= EVENT_ACKNOWLEDGED && st != EVENT_ARCHIVED && !e->disposition)
        rc = corrupt(err, path, "%sis %s but has no disposition", where, state);
    if (rc != 0)
        goto out;
    e->urgency = (event_urgency)u;
    /* An event in the surface has been projected: a saved "detected" is
     * moved forward, never back. */
    e->state = st == EVENT_DETECTED ? EVENT_PROJECTED : (event_state)st;
    if (!e->fingerprint || !*e->fingerprint)
        working_set_text(&e->fingerprint, e->id);
    if (!e->source)
        e->source = xstrdup("unknown");
    if (!e->summary)
        e->summary = xstrdup("");
out:
    free(urgency);
    free(state);
    return rc;
}

static int load_event_state(const json_t *o, const char *path, staged *s, loom_error *err)
{
    json_t *evs = json_object_get(o, "events");
    json_t *recent = json_object_get(o, "recent_decisions");
    if (evs && !json_is_array(evs))
        return corrupt(err, path, "events is not an array");
    if (recent && !json_is_array(recent))
        return corrupt(err, path, "recent_decisions is not an array");
    size_t n = json_array_size(evs);
    s->events = xcalloc(n ? n : 1, sizeof *s->events);
    for (size_t i = 0; i < n; i++) {
        surface_event *e = &s->events[s->nevents];
        int rc = load_event(json_array_get(evs, i), i, path, e, err);
        if (rc != 0) {
            working_event_clear(e);
            return rc;
        }
        for (size_t k = 0; k < s->nevents; k++) {
            if (strcmp(s->events[k].id, e->id) == 0) {
                rc = corrupt(err, path, "events[%zu] repeats the id %s", i, e->id);
                working_event_clear(e);
                return rc;
            }
        }
        if (e->state == EVENT_ARCHIVED)
            working_event_clear(e);
        else
            s->nevents++;
    }
    size_t nr = json_array_size(recent);
    for (size_t i = nr > WORKING_RECENT_DECISIONS ? nr - WORKING_RECENT_DECISIONS : 0; i < nr;
         i++) {
        const json_t *r = json_array_get(recent, i);
        char where[48];
        snprintf(where, sizeof where, "recent_decisions[%zu].", i);
        if (!json_is_object(r))
            return corrupt(err, path, "recent_decisions[%zu] is not an object", i);
        decision *d = &s->recent[s->nrecent];
        int rc;
        if ((rc = opt_str(r, "id", &d->id, path, where, err)) != 0 ||
            (rc = opt_str(r, "disposition", &d->disposition, path, where, err)) != 0 ||
            (rc = opt_str(r, "summary", &d->summary, path, where, err)) != 0 ||
            (rc = opt_str(r, "note", &d->note, path, where, err)) != 0) {
            working_decision_clear(d);
            return rc;
        }
        if (!d->id || !*d->id)
            rc = corrupt(err, path, "%sid is missing or empty", where);
        else if (!working_valid_disposition(d->disposition))
            rc = corrupt(err, path, "%sdisposition \"%s\" is not one of: %s", where,
                         d->disposition ? d->disposition : "", EVENT_DISPOSITIONS);
        if (rc != 0) {
            working_decision_clear(d);
            return rc;
        }
        if (!d->summary)
            d->summary = xstrdup("");
        s->nrecent++;
    }
    return 0;
}

static int opt_array(const json_t *o, const char *key, json_t **out, const char *path,
                     loom_error *err)
{
    json_t *v = json_object_get(o, key);
    *out = NULL;
    if (!v || json_is_null(v))
        return 0;
    if (!json_is_array(v))
        return corrupt(err, path, "%s is not an array", key);
    *out = json_deep_copy(v);
    return 0;
}

static int load_plan_state(const json_t *o, const char *path, staged *s, loom_error *err)
{
    json_t *todos = json_object_get(o, "todos");
    if (!todos)
        todos = json_array();
    else
        json_incref(todos);
    /* Checked on a scratch list, so the real plan changes only when every
     * file has been read. */
    todo_list *scratch = todo_list_new();
    loom_str why = LOOM_STR_INIT;
    int rc = 0;
    if (todo_list_set(scratch, todos, &why) != 0) {
        rc = corrupt(err, path, "%s", str_cstr(&why));
        json_decref(todos);
    } else {
        s->todos = todos;
    }
    str_free(&why);
    todo_list_free(scratch);
    return rc;
}

static void apply_locked(working *w, staged *s)
{
    if (s->have_working) {
        free(w->goal);
        free(w->progress);
        w->goal = s->goal;
        w->progress = s->progress;
        s->goal = s->progress = NULL;
        w->dash = s->dash;
        memcpy(w->steps, s->steps, sizeof w->steps);
        w->nsteps = s->nsteps;
        w->next_step = s->nsteps % WORKING_ERROR_WINDOW;
    }
    if (s->have_events) {
        working_events_clear(w->events, w->nevents);
        for (size_t i = 0; i < w->nrecent; i++)
            working_decision_clear(&w->recent[i]);
        w->events = s->events;
        w->nevents = w->cap = s->nevents;
        memcpy(w->recent, s->recent, sizeof w->recent);
        w->nrecent = s->nrecent;
        s->events = NULL;
        s->nevents = s->nrecent = 0;
        working_prune_locked(w);
    }
    if (s->have_knowledge) {
        working_knowledge_clear(w);
        w->questions = s->questions;
        w->evidence = s->evidence;
        w->citations = s->citations;
        s->questions = s->evidence = s->citations = NULL;
    }
}

int working_load(working *w, const char *dir, loom_error *err)
{
    staged s;
    memset(&s, 0, sizeof s);
    static const char *const names[4] = {WORKING_FILE, PLAN_FILE, EVENT_FILE, KNOWLEDGE_FILE};
    int rc = 0;
    for (int i = 0; i < 4 && rc == 0; i++) {
        char *path = NULL;
        json_t *o = NULL;
        rc = read_object(dir, names[i], &path, &o, err);
        if (rc == 0 && o) {
            switch (i) {
            case 0:
                s.have_working = true;
                rc = load_working_state(o, path, &s, err);
                break;
            case 1:
                s.have_plan = true;
                rc = load_plan_state(o, path, &s, err);
                break;
            case 2:
                s.have_events = true;
                rc = load_event_state(o, path, &s, err);
                break;
            default:
                s.have_knowledge = true;
                if ((rc = opt_array(o, "active_questions", &s.questions, path, err)) == 0 &&
                    (rc = opt_array(o, "evidence_packs", &s.evidence, path, err)) == 0)
                    rc = opt_array(o, "citations", &s.citations, path, err);
                break;
            }
        }
        json_decref(o);
        free(path);
    }
    if (rc == 0) {
        if (s.have_plan && w->plan)
            todo_list_set(w->plan, s.todos, NULL); /* checked above: cannot fail */
        working_lock(w);
        apply_locked(w, &s);
        working_unlock(w);
    }
    staged_free(&s);
    return rc;
}
