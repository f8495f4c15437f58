/* working.c — C_working's state: the goal, dashboard, plan, event surface
 * and knowledge surface the model sees at the tail of every request (see
 * working.h). Rendering them is working_render.c; their M_f snapshots for
 * renew are mf_state.c; the struct they share is working_impl.h.
 *
 * One mutex guards everything here. The plan is the session's todo list,
 * which has its own lock: it is read before our lock is taken, so the two
 * locks are never held together.
 *
 * The surface keeps projected events (pending), acknowledged ones (active
 * risks) and resolved ones while a recent decision still names them: those
 * are what a new detection is deduplicated against. A resolved event whose
 * decision has left the recent window is archived, i.e. dropped here; the
 * runtime journal keeps it.
 */
#include "context/working.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "base/json.h"
#include "base/str.h"
#include "base/uuid.h"
#include "context/plan.h"
#include "context/working_impl.h"

/* seed 000 L354–390: the legal ack dispositions (EVENT_DISPOSITIONS). */
static const char *const disposition_names[] = {
    "ignore", "defer", "replan", "decompose", "handoff_to_harness", "terminate_current_act",
};
#define N_DISPOSITIONS (sizeof disposition_names / sizeof disposition_names[0])

static const char *const urgency_names[] = {"low", "high", "critical"};
static const char *const state_names[] = {"detected", "projected", "acknowledged", "resolved",
                                          "archived"};

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

bool working_valid_disposition(const char *s)
{
    return name_index(disposition_names, N_DISPOSITIONS, s) >= 0;
}

int working_urgency_index(const char *s)
{
    return name_index(urgency_names, 3, s);
}

int working_state_index(const char *s)
{
    return name_index(state_names, 5, s);
}

/* ---- events and decisions ---- */

void working_event_clear(surface_event *e)
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

void working_decision_clear(decision *d)
{
    free(d->id);
    free(d->disposition);
    free(d->summary);
    free(d->note);
    memset(d, 0, sizeof *d);
}

void working_events_clear(surface_event *evs, size_t n)
{
    for (size_t i = 0; i < n; i++)
        working_event_clear(&evs[i]);
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
        working_decision_clear(&w->recent[0]);
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
void working_prune_locked(working *w)
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
            working_event_clear(e);
        else
            w->events[kept++] = *e;
    }
    w->nevents = kept;
}

size_t working_pending_locked(const working *w)
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

void working_knowledge_clear(working *w)
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
    working_events_clear(w->events, w->nevents);
    for (size_t i = 0; i < w->nrecent; i++)
        working_decision_clear(&w->recent[i]);
    working_knowledge_clear(w);
    free(w->renew_reason);
    pthread_mutex_destroy(&w->lock);
    free(w);
}

void working_lock(working *w)
{
    pthread_mutex_lock(&w->lock);
}

void working_unlock(working *w)
{
    pthread_mutex_unlock(&w->lock);
}

/* Replaces *slot with a copy of s (NULL or "" clear it). */
void working_set_text(char **slot, const char *s)
{
    free(*slot);
    *slot = s && *s ? xstrdup(s) : NULL;
}

void working_set_goal(working *w, const char *goal)
{
    working_lock(w);
    working_set_text(&w->goal, goal);
    working_unlock(w);
}

char *working_goal(working *w)
{
    working_lock(w);
    char *g = xstrdup(w->goal ? w->goal : "");
    working_unlock(w);
    return g;
}

void working_set_progress(working *w, const char *goal_progress)
{
    working_lock(w);
    working_set_text(&w->progress, goal_progress);
    working_unlock(w);
}

void working_set_dashboard(working *w, const dashboard *d)
{
    if (!d)
        return;
    working_lock(w);
    w->dash.tokens = d->tokens;
    w->dash.window = d->window;
    w->dash.budget_total = d->budget_total;
    w->dash.budget_used = d->budget_used;
    w->dash.depth = d->depth;
    w->dash.turn = d->turn;
    working_unlock(w);
}

int working_errors_locked(const working *w)
{
    int n = 0;
    for (size_t i = 0; i < w->nsteps; i++)
        n += w->steps[i];
    return n;
}

dashboard working_get_dashboard(working *w)
{
    working_lock(w);
    dashboard d = w->dash;
    d.errors_recent = working_errors_locked(w);
    working_unlock(w);
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
    working_lock(w);
    note_step_locked(w, failed);
    working_unlock(w);
}

/* The ring's i-th outcome, oldest first. */
bool working_step_at(const working *w, size_t i)
{
    size_t start = (w->next_step + WORKING_ERROR_WINDOW - w->nsteps) % WORKING_ERROR_WINDOW;
    return w->steps[(start + i) % WORKING_ERROR_WINDOW];
}

void working_set_interrupt(working *w, bool requested)
{
    working_lock(w);
    w->dash.interrupt_requested = requested;
    working_unlock(w);
}

void working_set_heartbeat(working *w, int64_t now_ms)
{
    working_lock(w);
    w->dash.last_hb_ms = now_ms;
    working_unlock(w);
}

void working_request_renew(working *w, const char *reason)
{
    working_lock(w);
    free(w->renew_reason);
    w->renew_reason = xstrdup(reason && *reason ? reason : "requested");
    working_unlock(w);
}

char *working_take_renew(working *w)
{
    working_lock(w);
    char *r = w->renew_reason;
    w->renew_reason = NULL;
    working_unlock(w);
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

    working_lock(w);
    for (size_t i = 0; i < w->nevents; i++) {
        if (strcmp(w->events[i].fingerprint, fp) == 0 || strcmp(w->events[i].id, id) == 0) {
            working_unlock(w);
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
    working_unlock(w);
    return 1;
}

int working_ack_event(working *w, const char *id, const char *disposition, const char *note,
                      loom_error *why)
{
    working_lock(w);
    surface_event *e = find_event(w, id);
    if (!e) {
        working_unlock(w);
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
        working_unlock(w);
        return -1;
    }
    if (!working_valid_disposition(disposition)) {
        working_unlock(w);
        loom_error_set(why, LOOM_ERR_INVALID_REQUEST,
                       "disposition \"%s\" is not one of: %s", disposition ? disposition : "",
                       EVENT_DISPOSITIONS);
        return -1;
    }
    working_set_text(&e->disposition, disposition);
    working_set_text(&e->note, note);
    /* "ignore" needs no further action, so it is complete at once. */
    e->state = strcmp(disposition, "ignore") == 0 ? EVENT_RESOLVED : EVENT_ACKNOWLEDGED;
    push_decision(w, e);
    /* seed 000 L380: acknowledging the pending events clears the
     * heartbeat's interrupt request. */
    if (working_pending_locked(w) == 0)
        w->dash.interrupt_requested = false;
    working_prune_locked(w);
    working_unlock(w);
    return 0;
}

int working_resolve_event(working *w, const char *id)
{
    working_lock(w);
    surface_event *e = find_event(w, id);
    int rc = -1;
    if (e && e->state == EVENT_ACKNOWLEDGED) {
        e->state = EVENT_RESOLVED;
        working_prune_locked(w);
        rc = 0;
    }
    working_unlock(w);
    return rc;
}

surface_event *working_events(working *w, size_t *n)
{
    working_lock(w);
    size_t count = w->nevents;
    surface_event *out = xcalloc(count ? count : 1, sizeof *out);
    for (size_t i = 0; i < count; i++)
        out[i] = event_copy(&w->events[i]);
    working_unlock(w);
    if (n)
        *n = count;
    return out;
}

void working_events_free(surface_event *evs, size_t n)
{
    if (evs)
        working_events_clear(evs, n);
}

size_t working_pending_count(working *w)
{
    working_lock(w);
    size_t n = working_pending_locked(w);
    working_unlock(w);
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
    working_lock(w);
    working_knowledge_clear(w);
    w->questions = active_questions;
    w->evidence = evidence_packs;
    w->citations = citations;
    working_unlock(w);
}

void working_get_knowledge(working *w, json_t **active_questions, json_t **evidence_packs,
                           json_t **citations)
{
    working_lock(w);
    *active_questions = w->questions ? json_deep_copy(w->questions) : json_array();
    *evidence_packs = w->evidence ? json_deep_copy(w->evidence) : json_array();
    *citations = w->citations ? json_deep_copy(w->citations) : json_array();
    working_unlock(w);
}
