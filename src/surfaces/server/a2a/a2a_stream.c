/* a2a_stream.c — SendStreamingMessage's and SubscribeToTask's answer: a
 * sequence of JSON-RPC responses whose results are A2A StreamResponses —
 * the Task first, then {statusUpdate} for each run state change that
 * changes the A2A state (run.state_changed events), {artifactUpdate} for
 * each artifact.created (the artifact's content as one part, lastChunk
 * true). It reads the run's stored events through the backend's feed, so
 * it sees what GET /runs/{id}/stream sees, once each, in order. When the
 * run has ended and every event was read it gives a last statusUpdate
 * with the terminal state (if none was given yet) and ends; A2A v1.0 has
 * no `final` flag: the stream's end is the end, and the terminal status
 * is held back until then, so it comes after the run's artifacts (the
 * service announces them after the state change).
 *
 * A stream belongs to the thread that reads it; it copies what it needs
 * of the request (the env, the principal, the JSON-RPC id). */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/json.h"
#include "base/str.h"
#include "surfaces/server/a2a/a2a_internal.h"

#define VIS_MASK (1u << LOOM_VIS_USER | 1u << LOOM_VIS_SYSTEM)

struct a2a_stream {
    a2a_env env;
    principal who;
    json_t *id;
    char *run_id, *context_id;
    service_feed *feed;
    json_t *queue;            /* JSON-RPC response texts (strings) not yet given */
    char last_state[32];      /* the last run state told (A2A-mapped changes only) */
    char *end_state, *end_ts; /* the terminal state seen, told when the feed ends */
    bool ended;
};

static void give(a2a_stream *s, const char *key, json_t *v)
{
    json_t *sr = json_object();
    json_object_set_new(sr, key, v);
    char *text = a2a_result_text(s->id, sr);
    json_array_append_new(s->queue, json_string(text));
    free(text);
}

a2a_stream *a2a_stream_open(const a2a_env *env, const principal *who, const json_t *id,
                            const char *run_id, const char *context_id, int64_t after,
                            json_t *first, a2a_fail *f)
{
    srv_error err = {0};
    service_feed *feed = env->be->feed_open(env->svc, who, run_id, after, VIS_MASK, &err);
    if (!feed) {
        json_decref(first);
        a2a_fail_from(f, &err, false);
        return NULL;
    }
    a2a_stream *s = xcalloc(1, sizeof *s);
    s->env = *env;
    s->env.base_url = NULL;
    s->who = *who;
    s->id = id ? json_deep_copy(id) : json_null();
    s->run_id = xstrdup(run_id);
    s->context_id = xstrdup(context_id);
    s->feed = feed;
    s->queue = json_array();
    if (first) {
        const char *st = json_get_str(json_get_obj(json_get_obj(first, "metadata"), "loom"),
                                      "state", "");
        snprintf(s->last_state, sizeof s->last_state, "%s", st);
        give(s, "task", first);
    }
    return s;
}

void a2a_stream_free(a2a_stream *s)
{
    if (!s)
        return;
    if (s->feed)
        s->env.be->feed_close(s->feed);
    json_decref(s->id);
    json_decref(s->queue);
    free(s->run_id);
    free(s->context_id);
    free(s->end_state);
    free(s->end_ts);
    free(s);
}

/* A statusUpdate for run state st at ts; the Task's status (with its
 * agent message) when the run is still in that state. */
static void give_status(a2a_stream *s, const char *st, const char *ts)
{
    if (strcmp(a2a_task_state(st), a2a_task_state(s->last_state)) == 0 &&
        strcmp(st, s->last_state) == 0)
        return;
    snprintf(s->last_state, sizeof s->last_state, "%s", st);
    json_t *status = NULL;
    if (strcmp(st, "queued") != 0 && strcmp(st, "running") != 0) {
        a2a_fail f;
        json_t *t = a2a_task_get(&s->env, &s->who, s->run_id, &f);
        const char *now = json_get_str(json_get_obj(json_get_obj(t, "metadata"), "loom"),
                                       "state", "");
        if (t && strcmp(now, st) == 0)
            status = json_incref(json_object_get(t, "status"));
        json_decref(t);
    }
    if (!status)
        status = a2a_status(st, ts, NULL, s->run_id, s->context_id);
    json_t *u = json_object();
    json_object_set_new(u, "taskId", json_string(s->run_id));
    json_object_set_new(u, "contextId", json_string(s->context_id));
    json_object_set_new(u, "status", status);
    give(s, "statusUpdate", u);
}

static void on_event(a2a_stream *s, const char *json)
{
    json_t *ev = json_loads(json, 0, NULL);
    const char *type = json_get_str(ev, "type", "");
    json_t *p = json_get_obj(ev, "payload");
    if (strcmp(type, "run.state_changed") == 0) {
        const char *st = json_get_str(p, "state", NULL);
        if (st && a2a_run_ended(st)) {
            free(s->end_state);
            free(s->end_ts);
            s->end_state = xstrdup(st);
            s->end_ts = xstrdup(json_get_str(ev, "ts", NULL));
        } else if (st) {
            give_status(s, st, json_get_str(ev, "ts", NULL));
        }
    } else if (strcmp(type, "artifact.created") == 0) {
        const char *name = json_get_str(p, "name", NULL);
        if (name) {
            json_t *u = json_object();
            json_object_set_new(u, "taskId", json_string(s->run_id));
            json_object_set_new(u, "contextId", json_string(s->context_id));
            json_object_set_new(u, "artifact",
                                a2a_artifact(&s->env, &s->who, s->run_id,
                                             json_get_str(p, "artifact_id", NULL), name,
                                             json_get_str(p, "title", NULL)));
            json_object_set_new(u, "append", json_false());
            json_object_set_new(u, "lastChunk", json_true());
            give(s, "artifactUpdate", u);
        }
    }
    json_decref(ev);
}

static long now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

int a2a_stream_next(a2a_stream *s, char **json, int timeout_ms)
{
    long deadline = now_ms() + (timeout_ms > 0 ? timeout_ms : 0);
    for (;;) {
        if (json_array_size(s->queue) > 0) {
            *json = xstrdup(json_string_value(json_array_get(s->queue, 0)));
            json_array_remove(s->queue, 0);
            return 1;
        }
        if (s->ended)
            return -1;
        long left = deadline - now_ms();
        if (left <= 0)
            return 0;
        char *ej = NULL;
        int64_t seq = 0;
        int rc = s->env.be->feed_next(s->feed, &ej, &seq, (int)left);
        if (rc > 0 && ej) {
            on_event(s, ej);
        } else if (rc < 0) {
            /* Ended: the terminal state, if no event told it yet. */
            json_t *end = ej ? json_loads(ej, 0, NULL) : NULL;
            const char *st = s->end_state ? s->end_state : json_get_str(end, "state", NULL);
            if (st && !a2a_run_ended(s->last_state))
                give_status(s, st, s->end_state ? s->end_ts : NULL);
            json_decref(end);
            s->ended = true;
        }
        free(ej);
        if (rc == 0)
            return 0;
    }
}

int64_t a2a_run_tail(const a2a_env *env, const principal *who, const char *run_id)
{
    int64_t after = 0;
    for (int pages = 0; pages < 100000; pages++) {
        srv_error err = {0};
        char *pj = env->be->events_page(env->svc, who, run_id, after, 1000, VIS_MASK, &err);
        srv_error_clear(&err);
        json_t *p = pj ? json_loads(pj, 0, NULL) : NULL;
        free(pj);
        if (!p)
            return after;
        int64_t next = json_get_int(p, "next_after", after);
        bool more = json_is_true(json_object_get(p, "has_more"));
        json_decref(p);
        if (next <= after || !more)
            return next > after ? next : after;
        after = next;
    }
    return after;
}
