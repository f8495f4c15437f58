/* working.c — C_working: the goal, dashboard, plan, event surface and
 * knowledge surface the model sees at the tail of every request, their
 * rendering, and their M_f snapshots for renew (see working.h).
 *
 * One mutex guards everything here. The plan is the session's todo list,
 * which has its own lock: it is read before our lock is taken, so the two
 * locks are never held together. Snapshots are built under the lock and
 * written after it is released; a load is parsed and checked completely
 * before anything is replaced, so a damaged file changes nothing.
 *
 * The surface keeps projected events (pending), acknowledged ones (active
 * risks) and resolved ones while a recent decision still names them: those
 * are what a new detection is deduplicated against. A resolved event whose
 * decision has left the recent window is archived, i.e. dropped here; the
 * runtime journal keeps it.
 */
#include "context/working.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/clock.h"
#include "base/fileio.h"
#include "base/json.h"
#include "base/str.h"
#include "base/uuid.h"
#include "context/plan.h"

/* seed 000 L354–390: the legal ack dispositions (EVENT_DISPOSITIONS). */
static const char *const disposition_names[] = {
    "ignore", "defer", "replan", "decompose", "handoff_to_harness", "terminate_current_act",
};
#define N_DISPOSITIONS (sizeof disposition_names / sizeof disposition_names[0])

static const char *const urgency_names[] = {"low", "high", "critical"};
static const char *const state_names[] = {"detected", "projected", "acknowledged", "resolved",
                                          "archived"};

#define WORKING_FILE "working_state.json"
#define PLAN_FILE "plan_state.json"
#define EVENT_FILE "event_state.json"
#define KNOWLEDGE_FILE "knowledge_state.json"

/* U+00B7 MIDDLE DOT and U+2014 EM DASH. */
#define SEP " \u00B7 "
#define DASH " \u2014 "

typedef struct decision {
    char *id;
    char *disposition;
    char *summary;
    char *note;
} decision;

struct working {
    pthread_mutex_t lock;
    todo_list *plan; /* borrowed, immutable pointer: read without our lock */
    char *goal;
    char *progress;
    dashboard dash; /* errors_recent is derived from steps when read */
    bool steps[WORKING_ERROR_WINDOW]; /* ring of outcomes, true = failed */
    size_t nsteps, next_step;
    surface_event *events; /* oldest first */
    size_t nevents, cap;
    decision recent[WORKING_RECENT_DECISIONS]; /* oldest first */
    size_t nrecent;
    json_t *questions, *evidence, *citations; /* arrays or NULL */
    char *renew_reason; /* a proactive renew asked for, not yet taken */
    void (*on_archive)(void *ctx, const surface_event *ev); /* may be NULL */
    void *archive_ctx;
};

void working_set_archive_hook(working *w, void (*fn)(void *ctx, const surface_event *ev),
                              void *ctx)
{
    pthread_mutex_lock(&w->lock);
    w->on_archive = fn;
    w->archive_ctx = ctx;
    pthread_mutex_unlock(&w->lock);
}

const char *event_urgency_name(event_urgency u)
{
    return (unsigned)u < 3 ? urgency_names[u] : "unknown";
}

const char *event_state_name(event_state s)
{
    return (unsigned)s < 5 ? state_names[s] : "unknown";
}

static int name_index(const char *const *names, size_t n, const char *s)
{
    for (size_t i = 0; s && i < n; i++)
        if (strcmp(names[i], s) == 0)
            return (int)i;
    return -1;
}

static bool valid_disposition(const char *s)
{
    return name_index(disposition_names, N_DISPOSITIONS, s) >= 0;
}

/* ---- events and decisions ---- */

static void event_clear(surface_event *e)
{
    free(e->id);
    free(e->fingerprint);
    free(e->source);
    free(e->summary);
    free(e->disposition);
    free(e->note);
    memset(e, 0, sizeof *e);
}

static surface_event event_copy(const surface_event *e)
{
    surface_event c = *e;
    c.id = xstrdup(e->id);
    c.fingerprint = xstrdup(e->fingerprint);
    c.source = xstrdup(e->source);
    c.summary = xstrdup(e->summary);
    c.disposition = xstrdup(e->disposition);
    c.note = xstrdup(e->note);
    return c;
}

static void decision_clear(decision *d)
{
    free(d->id);
    free(d->disposition);
    free(d->summary);
    free(d->note);
    memset(d, 0, sizeof *d);
}

static void events_clear(surface_event *evs, size_t n)
{
    for (size_t i = 0; i < n; i++)
        event_clear(&evs[i]);
    free(evs);
}

static surface_event *find_event(working *w, const char *id)
{
    for (size_t i = 0; id && i < w->nevents; i++)
        if (strcmp(w->events[i].id, id) == 0)
            return &w->events[i];
    return NULL;
}

static void push_event(working *w, surface_event e)
{
    if (w->nevents == w->cap) {
        w->cap = w->cap ? w->cap * 2 : 8;
        w->events = xrealloc(w->events, w->cap * sizeof *w->events);
    }
    w->events[w->nevents++] = e;
}

static void push_decision(working *w, const surface_event *e)
{
    if (w->nrecent == WORKING_RECENT_DECISIONS) {
        decision_clear(&w->recent[0]);
        memmove(&w->recent[0], &w->recent[1], (w->nrecent - 1) * sizeof w->recent[0]);
        w->nrecent--;
    }
    w->recent[w->nrecent++] = (decision){
        xstrdup(e->id), xstrdup(e->disposition), xstrdup(e->summary), xstrdup(e->note),
    };
}

static bool named_by_decision(const working *w, const char *id)
{
    for (size_t i = 0; i < w->nrecent; i++)
        if (strcmp(w->recent[i].id, id) == 0)
            return true;
    return false;
}

/* Archives (drops) resolved events no recent decision still shows. */
static void prune_locked(working *w)
{
    size_t kept = 0;
    for (size_t i = 0; i < w->nevents; i++) {
        surface_event *e = &w->events[i];
        bool gone = e->state == EVENT_ARCHIVED ||
                    (e->state == EVENT_RESOLVED && !named_by_decision(w, e->id));
        if (gone && e->state == EVENT_RESOLVED && w->on_archive) {
            e->state = EVENT_ARCHIVED;
            w->on_archive(w->archive_ctx, e);
        }
        if (gone)
            event_clear(e);
        else
            w->events[kept++] = *e;
    }
    w->nevents = kept;
}

static size_t pending_locked(const working *w)
{
    size_t n = 0;
    for (size_t i = 0; i < w->nevents; i++)
        n += w->events[i].state == EVENT_PROJECTED;
    return n;
}

/* ---- lifetime, goal, dashboard ---- */

working *working_new(todo_list *plan)
{
    working *w = xcalloc(1, sizeof *w);
    pthread_mutex_init(&w->lock, NULL);
    w->plan = plan;
    return w;
}

static void knowledge_clear(working *w)
{
    json_decref(w->questions);
    json_decref(w->evidence);
    json_decref(w->citations);
    w->questions = w->evidence = w->citations = NULL;
}

void working_free(working *w)
{
    if (!w)
        return;
    free(w->goal);
    free(w->progress);
    events_clear(w->events, w->nevents);
    for (size_t i = 0; i < w->nrecent; i++)
        decision_clear(&w->recent[i]);
    knowledge_clear(w);
    free(w->renew_reason);
    pthread_mutex_destroy(&w->lock);
    free(w);
}

static void lock(working *w)
{
    pthread_mutex_lock(&w->lock);
}

static void unlock(working *w)
{
    pthread_mutex_unlock(&w->lock);
}

/* Replaces *slot with a copy of s (NULL or "" clear it). */
static void set_text(char **slot, const char *s)
{
    free(*slot);
    *slot = s && *s ? xstrdup(s) : NULL;
}

void working_set_goal(working *w, const char *goal)
{
    lock(w);
    set_text(&w->goal, goal);
    unlock(w);
}

char *working_goal(working *w)
{
    lock(w);
    char *g = xstrdup(w->goal ? w->goal : "");
    unlock(w);
    return g;
}

void working_set_progress(working *w, const char *goal_progress)
{
    lock(w);
    set_text(&w->progress, goal_progress);
    unlock(w);
}

void working_set_dashboard(working *w, const dashboard *d)
{
    if (!d)
        return;
    lock(w);
    w->dash.tokens = d->tokens;
    w->dash.window = d->window;
    w->dash.budget_total = d->budget_total;
    w->dash.budget_used = d->budget_used;
    w->dash.depth = d->depth;
    w->dash.turn = d->turn;
    unlock(w);
}

static int errors_locked(const working *w)
{
    int n = 0;
    for (size_t i = 0; i < w->nsteps; i++)
        n += w->steps[i];
    return n;
}

dashboard working_get_dashboard(working *w)
{
    lock(w);
    dashboard d = w->dash;
    d.errors_recent = errors_locked(w);
    unlock(w);
    return d;
}

static void note_step_locked(working *w, bool failed)
{
    w->steps[w->next_step] = failed;
    w->next_step = (w->next_step + 1) % WORKING_ERROR_WINDOW;
    if (w->nsteps < WORKING_ERROR_WINDOW)
        w->nsteps++;
}

void working_note_step(working *w, bool failed)
{
    lock(w);
    note_step_locked(w, failed);
    unlock(w);
}

/* The ring's i-th outcome, oldest first. */
static bool step_at(const working *w, size_t i)
{
    size_t start = (w->next_step + WORKING_ERROR_WINDOW - w->nsteps) % WORKING_ERROR_WINDOW;
    return w->steps[(start + i) % WORKING_ERROR_WINDOW];
}

void working_set_interrupt(working *w, bool requested)
{
    lock(w);
    w->dash.interrupt_requested = requested;
    unlock(w);
}

void working_set_heartbeat(working *w, int64_t now_ms)
{
    lock(w);
    w->dash.last_hb_ms = now_ms;
    unlock(w);
}

void working_request_renew(working *w, const char *reason)
{
    lock(w);
    free(w->renew_reason);
    w->renew_reason = xstrdup(reason && *reason ? reason : "requested");
    unlock(w);
}

char *working_take_renew(working *w)
{
    lock(w);
    char *r = w->renew_reason;
    w->renew_reason = NULL;
    unlock(w);
    return r;
}

/* ---- the event surface ---- */

int working_add_event(working *w, const surface_event *ev)
{
    if (!w || !ev)
        return -1;
    char idbuf[3 + UUID_STR_LEN];
    const char *id = ev->id;
    if (!id || !*id) {
        char u[UUID_STR_LEN];
        uuid_v7(u);
        snprintf(idbuf, sizeof idbuf, "ev_%s", u);
        id = idbuf;
    }
    /* Without a fingerprint the id is all that identifies the change. */
    const char *fp = ev->fingerprint && *ev->fingerprint ? ev->fingerprint : id;
    int64_t detected = ev->detected_ms ? ev->detected_ms : clock_wall_ms();

    lock(w);
    for (size_t i = 0; i < w->nevents; i++) {
        if (strcmp(w->events[i].fingerprint, fp) == 0 || strcmp(w->events[i].id, id) == 0) {
            unlock(w);
            return 0;
        }
    }
    surface_event e = {
        .id = xstrdup(id),
        .fingerprint = xstrdup(fp),
        .source = xstrdup(ev->source && *ev->source ? ev->source : "unknown"),
        .summary = xstrdup(ev->summary ? ev->summary : ""),
        .urgency = (unsigned)ev->urgency <= EVENT_CRITICAL ? ev->urgency : EVENT_HIGH,
        .state = EVENT_PROJECTED,
        .detected_ms = detected,
    };
    push_event(w, e);
    unlock(w);
    return 1;
}

int working_ack_event(working *w, const char *id, const char *disposition, const char *note,
                      loom_error *why)
{
    lock(w);
    surface_event *e = find_event(w, id);
    if (!e) {
        unlock(w);
        loom_error_set(why, LOOM_ERR_RESOURCE_NOT_FOUND,
                       "no pending event has id \"%s\" (the pending events are listed under "
                       "events: in working memory)",
                       id ? id : "");
        return -1;
    }
    if (e->state != EVENT_PROJECTED) {
        loom_error_set(why, LOOM_ERR_INVALID_STATE_TRANSITION,
                       "event %s is already %s (disposition %s); an event is acknowledged once",
                       e->id, event_state_name(e->state),
                       e->disposition ? e->disposition : "none");
        unlock(w);
        return -1;
    }
    if (!valid_disposition(disposition)) {
        unlock(w);
        loom_error_set(why, LOOM_ERR_INVALID_REQUEST,
                       "disposition \"%s\" is not one of: %s", disposition ? disposition : "",
                       EVENT_DISPOSITIONS);
        return -1;
    }
    set_text(&e->disposition, disposition);
    set_text(&e->note, note);
    /* "ignore" needs no further action, so it is complete at once. */
    e->state = strcmp(disposition, "ignore") == 0 ? EVENT_RESOLVED : EVENT_ACKNOWLEDGED;
    push_decision(w, e);
    /* seed 000 L380: acknowledging the pending events clears the
     * heartbeat's interrupt request. */
    if (pending_locked(w) == 0)
        w->dash.interrupt_requested = false;
    prune_locked(w);
    unlock(w);
    return 0;
}

int working_resolve_event(working *w, const char *id)
{
    lock(w);
    surface_event *e = find_event(w, id);
    int rc = -1;
    if (e && e->state == EVENT_ACKNOWLEDGED) {
        e->state = EVENT_RESOLVED;
        prune_locked(w);
        rc = 0;
    }
    unlock(w);
    return rc;
}

surface_event *working_events(working *w, size_t *n)
{
    lock(w);
    size_t count = w->nevents;
    surface_event *out = xcalloc(count ? count : 1, sizeof *out);
    for (size_t i = 0; i < count; i++)
        out[i] = event_copy(&w->events[i]);
    unlock(w);
    if (n)
        *n = count;
    return out;
}

void working_events_free(surface_event *evs, size_t n)
{
    if (evs)
        events_clear(evs, n);
}

size_t working_pending_count(working *w)
{
    lock(w);
    size_t n = pending_locked(w);
    unlock(w);
    return n;
}

/* ---- knowledge surface ---- */

static json_t *only_array(json_t *v)
{
    if (v && !json_is_array(v)) {
        json_decref(v);
        return NULL;
    }
    return v;
}

void working_set_knowledge(working *w, json_t *active_questions, json_t *evidence_packs,
                           json_t *citations)
{
    active_questions = only_array(active_questions);
    evidence_packs = only_array(evidence_packs);
    citations = only_array(citations);
    lock(w);
    knowledge_clear(w);
    w->questions = active_questions;
    w->evidence = evidence_packs;
    w->citations = citations;
    unlock(w);
}

/* ---- rendering ---- */

/* s on one line: control characters become spaces, so nothing the heartbeat
 * or the model wrote can start a line of its own in the block. */
static void put_flat(loom_str *out, const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        str_putc(out, c < 0x20 || c == 0x7f ? ' ' : (char)c);
    }
}

static void put_line(loom_str *out, const char *s)
{
    if (s)
        put_flat(out, s, strlen(s));
}

/* 6712 → "6,712". */
static void put_count(loom_str *out, int64_t v)
{
    char digits[24];
    uint64_t u = v < 0 ? -(uint64_t)v : (uint64_t)v;
    snprintf(digits, sizeof digits, "%" PRIu64, u);
    if (v < 0)
        str_putc(out, '-');
    size_t n = strlen(digits);
    for (size_t i = 0; i < n; i++) {
        if (i > 0 && (n - i) % 3 == 0)
            str_putc(out, ',');
        str_putc(out, digits[i]);
    }
}

/* The goal keeps its own lines; continuation lines are indented so none of
 * them can pass for another field of the block. */
static void put_goal(loom_str *out, const char *goal)
{
    str_puts(out, "goal: ");
    size_t len = goal ? strlen(goal) : 0;
    while (len > 0 && strchr(" \t\r\n", goal[len - 1]))
        len--;
    if (len == 0) {
        str_puts(out, "(none)\n");
        return;
    }
    const char *p = goal, *end = goal + len;
    for (bool first = true;; first = false) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *e = nl ? nl : end;
        size_t n = (size_t)(e - p);
        if (n > 0 && p[n - 1] == '\r')
            n--;
        if (!first && n > 0)
            str_puts(out, "  ");
        put_flat(out, p, n);
        str_putc(out, '\n');
        if (!nl)
            break;
        p = nl + 1;
    }
}

static void put_dashboard(loom_str *out, const working *w, todo_counts tc, bool have_plan,
                          int64_t now_ms)
{
    const dashboard *d = &w->dash;
    str_puts(out, "dashboard: ");
    if (d->window > 0) {
        /* A loaded snapshot may hold any value: no overflow on huge ones. */
        int64_t pct = 0;
        if (d->tokens > 0 && d->tokens <= (INT64_MAX - d->window / 2) / 100)
            pct = (d->tokens * 100 + d->window / 2) / d->window;
        else if (d->tokens > 0)
            pct = d->tokens / d->window > INT64_MAX / 100 ? INT64_MAX
                                                          : d->tokens / d->window * 100;
        str_printf(out, "context %" PRId64 "%% (", pct);
        put_count(out, d->tokens);
        str_puts(out, " of ");
        put_count(out, d->window);
        str_puts(out, " tokens)");
    } else {
        str_puts(out, "context ~");
        put_count(out, d->tokens);
        str_puts(out, " tokens");
    }
    if (d->budget_total > 0) {
        str_puts(out, SEP "budget ");
        put_count(out, d->budget_used);
        str_puts(out, " of ");
        put_count(out, d->budget_total);
        str_puts(out, " tokens used");
    }
    str_puts(out, SEP "progress: ");
    size_t total = tc.pending + tc.in_progress + tc.completed;
    if (w->progress)
        put_line(out, w->progress);
    else if (have_plan && total > 0)
        str_printf(out, "%zu of %zu plan items done", tc.completed, total);
    else
        str_puts(out, "not reported");
    str_printf(out, SEP "errors in last %d steps: %d", WORKING_ERROR_WINDOW, errors_locked(w));
    str_printf(out, SEP "depth %d", d->depth);
    str_puts(out, SEP "heartbeat: ");
    if (d->last_hb_ms == 0) {
        str_puts(out, "off");
    } else {
        int64_t ago = now_ms > d->last_hb_ms
                          ? (int64_t)(((uint64_t)now_ms - (uint64_t)d->last_hb_ms) / 1000)
                          : 0;
        str_printf(out, "%" PRId64 "s ago", ago);
    }
    str_printf(out, SEP "interrupt requested: %s\n", d->interrupt_requested ? "yes" : "no");
}

static void put_events(loom_str *out, const working *w)
{
    str_puts(out, "events:\n");
    /* What must be decided first comes first: critical, high, low; within
     * one urgency, in the order detected. */
    if (pending_locked(w) == 0) {
        str_puts(out, "pending: none\n");
    } else {
        str_puts(out, "pending:\n");
        for (int u = EVENT_CRITICAL; u >= EVENT_LOW; u--) {
            for (size_t i = 0; i < w->nevents; i++) {
                const surface_event *e = &w->events[i];
                if (e->state != EVENT_PROJECTED || (int)e->urgency != u)
                    continue;
                time_t t = (time_t)(e->detected_ms / 1000);
                struct tm tm;
                char hms[16] = "??:??:??";
                if (gmtime_r(&t, &tm))
                    strftime(hms, sizeof hms, "%H:%M:%S", &tm);
                str_puts(out, "- [");
                put_line(out, e->id);
                str_printf(out, "] %s ", event_urgency_name(e->urgency));
                put_line(out, e->source);
                str_puts(out, ": ");
                put_line(out, e->summary);
                str_printf(out, " (detected %s UTC)\n", hms);
            }
        }
    }
    bool risks = false;
    for (size_t i = 0; i < w->nevents; i++) {
        const surface_event *e = &w->events[i];
        if (e->state != EVENT_ACKNOWLEDGED)
            continue;
        if (!risks)
            str_puts(out, "active risks:\n");
        risks = true;
        str_puts(out, "- [");
        put_line(out, e->id);
        str_puts(out, "] ");
        put_line(out, e->source);
        str_puts(out, ": ");
        put_line(out, e->summary);
        str_puts(out, DASH);
        put_line(out, e->disposition);
        if (e->note && *e->note) {
            str_puts(out, ": ");
            put_line(out, e->note);
        }
        str_putc(out, '\n');
    }
    if (w->nrecent > 0)
        str_puts(out, "recent decisions:\n");
    for (size_t i = 0; i < w->nrecent; i++) {
        str_puts(out, "- [");
        put_line(out, w->recent[i].id);
        str_puts(out, "] ");
        put_line(out, w->recent[i].disposition);
        str_puts(out, ": ");
        put_line(out, w->recent[i].summary);
        str_putc(out, '\n');
    }
}

static size_t arr_size(const json_t *a)
{
    return a ? json_array_size(a) : 0;
}

char *working_render(working *w)
{
    /* The plan has its own lock; read it before taking ours. */
    char *plan = w->plan ? todo_list_render(w->plan) : NULL;
    todo_counts tc = w->plan ? todo_list_counts(w->plan) : (todo_counts){0, 0, 0};
    int64_t now = clock_wall_ms();
    loom_str out = LOOM_STR_INIT;

    lock(w);
    str_puts(&out, "<working-memory>\n");
    put_goal(&out, w->goal);
    put_dashboard(&out, w, tc, w->plan != NULL, now);
    str_puts(&out, "plan:\n");
    if (plan && *plan)
        str_puts(&out, plan);
    else
        str_puts(&out, "(no plan yet \u2014 use TodoWrite for multi-step work)\n");
    put_events(&out, w);
    size_t q = arr_size(w->questions), e = arr_size(w->evidence), c = arr_size(w->citations);
    if (q || e || c)
        str_printf(&out,
                   "knowledge: active questions %zu" SEP "evidence packs %zu" SEP
                   "citations %zu\n",
                   q, e, c);
    unlock(w);
    str_puts(&out, "</working-memory>\n");
    free(plan);
    return str_steal(&out);
}

/* ---- M_f snapshots ---- */

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
    loom_str path = LOOM_STR_INIT, body = LOOM_STR_INIT;
    str_printf(&path, "%s/%s", dir, name);
    str_puts(&body, text ? text : "null");
    str_putc(&body, '\n');
    free(text);
    int rc = file_write_atomic(path.ptr, body.ptr, body.len, 0600, err);
    if (rc != 0)
        loom_error_prefix(err, "saving working memory to %s", path.ptr);
    str_free(&path);
    str_free(&body);
    return rc;
}

int working_save(working *w, const char *dir, loom_error *err)
{
    json_t *todos = w->plan ? todo_list_json(w->plan) : json_array();
    json_t *files[4];

    lock(w);
    json_t *steps = json_array();
    for (size_t i = 0; i < w->nsteps; i++)
        json_array_append_new(steps, json_boolean(step_at(w, i)));
    const dashboard *d = &w->dash;
    json_t *dash = json_pack(
        "{s:I, s:I, s:I, s:I, s:i, s:o, s:i, s:I, s:b, s:i}", "tokens", (json_int_t)d->tokens,
        "window", (json_int_t)d->window, "budget_total", (json_int_t)d->budget_total,
        "budget_used", (json_int_t)d->budget_used, "errors_recent", errors_locked(w),
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
    unlock(w);
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
    events_clear(s->events, s->nevents);
    for (size_t i = 0; i < s->nrecent; i++)
        decision_clear(&s->recent[i]);
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
    loom_str path = LOOM_STR_INIT;
    str_printf(&path, "%s/%s", dir, name);
    *path_out = path.ptr;
    if (!file_exists(path.ptr))
        return 0;
    char *data;
    size_t len;
    int rc = file_read_all(path.ptr, &data, &len, err);
    if (rc != 0)
        return rc;
    loom_error perr;
    loom_error_clear(&perr);
    json_t *v = json_parse(data, len, path.ptr, &perr);
    free(data);
    if (!v)
        return loom_error_set(err, LOOM_ERR_SESSION_CORRUPT, "damaged working-memory file: %s",
                              perr.message);
    if (!json_is_object(v)) {
        json_decref(v);
        return corrupt(err, path.ptr, "the top level is not a JSON object");
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
    int u = name_index(urgency_names, 3, urgency);
    int st = name_index(state_names, 5, state);
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
    else if (e->disposition && !valid_disposition(e->disposition))
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
        set_text(&e->fingerprint, e->id);
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
            event_clear(e);
            return rc;
        }
        for (size_t k = 0; k < s->nevents; k++) {
            if (strcmp(s->events[k].id, e->id) == 0) {
                rc = corrupt(err, path, "events[%zu] repeats the id %s", i, e->id);
                event_clear(e);
                return rc;
            }
        }
        if (e->state == EVENT_ARCHIVED)
            event_clear(e);
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
            decision_clear(d);
            return rc;
        }
        if (!d->id || !*d->id)
            rc = corrupt(err, path, "%sid is missing or empty", where);
        else if (!valid_disposition(d->disposition))
            rc = corrupt(err, path, "%sdisposition \"%s\" is not one of: %s", where,
                         d->disposition ? d->disposition : "", EVENT_DISPOSITIONS);
        if (rc != 0) {
            decision_clear(d);
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
        events_clear(w->events, w->nevents);
        for (size_t i = 0; i < w->nrecent; i++)
            decision_clear(&w->recent[i]);
        w->events = s->events;
        w->nevents = w->cap = s->nevents;
        memcpy(w->recent, s->recent, sizeof w->recent);
        w->nrecent = s->nrecent;
        s->events = NULL;
        s->nevents = s->nrecent = 0;
        prune_locked(w);
    }
    if (s->have_knowledge) {
        knowledge_clear(w);
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
        lock(w);
        apply_locked(w, &s);
        unlock(w);
    }
    staged_free(&s);
    return rc;
}
