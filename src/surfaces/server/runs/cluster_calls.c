/* cluster_calls.c — a cluster run's tool calls around a move from one
 * worker to another (docs/deploy.md, Fencing and Reclaims):
 *
 *  - The gate (cluster_tool_gate, loom_run_options' tool_gate): right
 *    before each tool call starts, the worker checks in the store that its
 *    lease of the run is still its own, at its epoch, and not expired (one
 *    UPDATE that also renews it). A worker that stalled past its lease
 *    (SIGSTOP, a swapped-out machine) and wakes with the model's answer in
 *    hand is stopped there: the call does not start, the run is abandoned
 *    here (its writes dropped, its loom run cancelled) and its lease, when
 *    still this worker's, released at once, so another worker takes the run
 *    over without waiting. Fencing the tool.started write alone left a
 *    window: a call started after the lease expired but before the claim.
 *  - The open calls (cluster_open_calls): a run that moved goes on from its
 *    session's records, and the last turn may hold calls with a
 *    function_call but no result (the worker died or stalled between the
 *    model's answer and the call's end), or with a result saying the call
 *    never started (the gate, a cancel). Each is recorded as a
 *    tool.interrupted event, and the resumed turn's note tells the model
 *    they were not run again (those of read-only tools, which are safe to
 *    repeat, it may call again).
 *  - The goal (cluster_goal_recorded): a run whose worker died after its
 *    running state was stored but before its goal reached the session
 *    has no turn to continue; it is started afresh.
 *
 * Owns nothing. Threading: the gate runs on one of loom's tool threads,
 * the rest on the run's exec thread; both take svc->mu as runs/ does and
 * make no store call under it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "surfaces/server/runs/service_int.h"

int cluster_tool_gate(void *ctx, const char *call_id, const char *tool, char **why)
{
    srv_run *r = ctx;
    service *svc = r->svc;
    pthread_mutex_lock(&svc->mu);
    bool held = r->held && !r->abandoned;
    int64_t epoch = r->lease_epoch;
    pthread_mutex_unlock(&svc->mu);
    srv_error err = {0};
    int ok = held ? svc->st->ops->lease_check(svc->st, r->id, svc->worker_id, epoch,
                                              svc->opts.lease_ms, &err)
                  : 0;
    if (ok == 1)
        return 0;
    const char *how = !held   ? "this worker no longer holds the run"
                      : ok < 0 ? "the store could not confirm this worker's lease"
                               : "this worker's lease of the run lapsed";
    fprintf(stderr, "loom-serve: %s: tool call %s (%s) of run %s not started: %s%s%s\n",
            svc->worker_id, call_id ? call_id : "?", tool ? tool : "?", r->id, how,
            ok < 0 ? ": " : "", ok < 0 ? err.message : "");
    srv_error_clear(&err);
    pthread_mutex_lock(&svc->mu);
    if (held)
        cluster_abandon(svc, r, "its lease was lost before a tool call started");
    pthread_mutex_unlock(&svc->mu);
    if (held && ok == 0 &&
        svc->st->ops->lease_release(svc->st, r->id, svc->worker_id, &err) != 0) {
        fprintf(stderr, "loom-serve: lease of %s not released (it expires): %s\n", r->id,
                err.message);
        srv_error_clear(&err);
    }
    /* Not through lr_mu, as on_event: the run is alive (this is its call). */
    loom_run *lr = __atomic_load_n(&r->lr, __ATOMIC_ACQUIRE);
    if (lr)
        loom_run_cancel(lr);
    char text[200];
    snprintf(text, sizeof text, "%s; another worker carries the run on", how);
    *why = strdup(text);
    return 1;
}

/* The calls of the session's last turn without a real result: call id ->
 * {"tool", "not_started"?}. A result marked not_started (the call was
 * stopped before it ran) leaves its call open. */
static json_t *last_turn_open(loom_session *ls)
{
    char *text = loom_session_conversation_json(ls);
    json_t *conv = text ? json_loads(text, 0, NULL) : NULL;
    free(text);
    json_t *open = json_object();
    size_t i;
    json_t *e;
    json_array_foreach(conv, i, e) {
        const char *kind = json_string_value(json_object_get(e, "kind")) ?: "";
        const char *id = json_string_value(json_object_get(e, "call_id"));
        if (!strcmp(kind, "user") || !strcmp(kind, "resume_note")) {
            json_object_clear(open);
        } else if (!strcmp(kind, "tool_call") && id && *id) {
            json_object_set_new(open, id, json_pack("{s:O}", "tool", json_object_get(e, "name")));
        } else if (!strcmp(kind, "tool_result") && id && *id) {
            json_t *c = json_object_get(open, id);
            if (c && json_is_true(json_object_get(e, "not_started")))
                json_object_set_new(c, "not_started", json_true());
            else
                json_object_del(open, id);
        }
    }
    json_decref(conv);
    return open;
}

/* Whether tool is read-only in ls (safe to repeat). */
static bool read_only(json_t *specs, const char *tool)
{
    size_t i;
    json_t *t;
    json_array_foreach(specs, i, t)
        if (tool && !strcmp(json_string_value(json_object_get(t, "name")) ?: "", tool))
            return json_is_true(json_object_get(t, "read_only"));
    return false;
}

static void add_id(char *buf, size_t cap, const char *id, const char *tool)
{
    size_t n = strlen(buf);
    if (n < cap)
        snprintf(buf + n, cap - n, "%s%s (%s)", n ? ", " : "", id, tool ? tool : "?");
}

void cluster_open_calls(service *svc, srv_run *r, loom_session *ls)
{
    pthread_mutex_lock(&svc->mu);
    bool moved = r->moved;
    r->moved = false;
    json_t *known = r->interrupted;
    r->interrupted = NULL;
    pthread_mutex_unlock(&svc->mu);
    if (!moved) {
        json_decref(known);
        return;
    }
    if (!known)
        known = json_object();
    json_t *open = last_turn_open(ls);
    char *st = loom_session_tool_specs_json(ls);
    json_t *specs = st ? json_loads(st, 0, NULL) : NULL;
    free(st);
    char ids[600] = "", again[400] = "";
    pthread_mutex_lock(&svc->mu);
    const char *id;
    json_t *c;
    json_object_foreach(open, id, c) {
        const char *tool = json_string_value(json_object_get(c, "tool"));
        if (json_object_get(known, id))
            continue;
        bool never = json_is_true(json_object_get(c, "not_started"));
        json_t *p = json_object();
        json_object_set_new(p, "call_id", json_string(id));
        json_object_set_new(p, "tool", tool ? json_string(tool) : json_null());
        json_object_set_new(p, "reason",
                            json_string(never ? "its worker lost the run before the call "
                                                "started; it is not run again"
                                              : "the model asked for it, and its worker "
                                                "stopped before its result; it is not run "
                                                "again"));
        if (never)
            json_object_set_new(p, "not_started", json_true());
        svc_emit(svc, r, "tool.interrupted", LOOM_VIS_SYSTEM, id, p);
        json_object_set_new(known, id, tool ? json_string(tool) : json_null());
    }
    json_object_foreach(known, id, c) {
        const char *tool = json_string_value(c);
        add_id(ids, sizeof ids, id, tool);
        if (read_only(specs, tool))
            add_id(again, sizeof again, id, tool);
    }
    if (ids[0]) {
        char note[1400];
        snprintf(note, sizeof note,
                 "%s%sThese tool calls were in flight and were interrupted; they were NOT run "
                 "again and their effects are unknown: %s. Check before repeating them.%s%s%s",
                 r->note ? r->note : "", r->note ? "\n\n" : "", ids,
                 again[0] ? " These only read and are safe to call again: " : "", again,
                 again[0] ? "." : "");
        free(r->note);
        r->note = strdup(note);
    }
    pthread_mutex_unlock(&svc->mu);
    json_decref(specs);
    json_decref(open);
    json_decref(known);
}

bool cluster_goal_recorded(loom_session *ls, const char *goal)
{
    char *text = loom_session_conversation_json(ls);
    json_t *conv = text ? json_loads(text, 0, NULL) : NULL;
    free(text);
    bool found = false;
    size_t i;
    json_t *e;
    json_array_foreach(conv, i, e) {
        if (!strcmp(json_string_value(json_object_get(e, "kind")) ?: "", "user") &&
            !strcmp(json_string_value(json_object_get(e, "text")) ?: "", goal ? goal : ""))
            found = true;
    }
    json_decref(conv);
    return found;
}
