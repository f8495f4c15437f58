/* a2a_rpc.c — the A2A JSON-RPC 2.0 dispatcher on bytes: the envelope
 * (jsonrpc "2.0", a method, an id that is a string, a number or null, and
 * params an object), the method table, and the message handling:
 * SendMessage / SendStreamingMessage create a server session (or reuse the
 * message's contextId), a task with the message's text as its goal, and a
 * run; a message naming a taskId answers that run instead: its pending
 * approval ("approve"/"reject", or a data part {decision}) or, when it is
 * paused, resumes it with the text as the note.
 *
 * Errors are JSON-RPC's: -32700 for bytes that are no JSON, -32600 for an
 * envelope that is wrong, -32601 for an unknown method, -32602 for params
 * of the wrong shape, and A2A's own (-32001 TaskNotFound, -32002
 * TaskNotCancelable, -32004 UnsupportedOperation). No state; any thread. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "base/json.h"
#include "base/str.h"
#include "surfaces/server/a2a/a2a_internal.h"

#define VIS_MASK (1u << LOOM_VIS_USER | 1u << LOOM_VIS_SYSTEM)

typedef struct call {
    const a2a_env *env;
    const principal *who;
    const json_t *id;
    json_t *params;           /* an object (borrowed) */
    a2a_fail f;
    a2a_stream *stream;       /* set by the streaming methods */
} call;

/* A params field that must be a string when present (required: must be). */
static int want_str(call *c, const json_t *o, const char *key, bool required, const char **out)
{
    json_t *v = json_object_get(o, key);
    *out = NULL;
    if (!v || json_is_null(v)) {
        if (required)
            return a2a_failf(&c->f, RPC_INVALID_PARAMS, "params.%s is required", key);
        return 0;
    }
    if (!json_is_string(v))
        return a2a_failf(&c->f, RPC_INVALID_PARAMS, "params.%s must be a string", key);
    *out = json_string_value(v);
    if (required && !**out)
        return a2a_failf(&c->f, RPC_INVALID_PARAMS, "params.%s must not be empty", key);
    return 0;
}

static int want_obj(call *c, const json_t *o, const char *key, bool required, json_t **out)
{
    json_t *v = json_object_get(o, key);
    *out = NULL;
    if (!v || json_is_null(v))
        return required ? a2a_failf(&c->f, RPC_INVALID_PARAMS, "params.%s is required", key) : 0;
    if (!json_is_object(v))
        return a2a_failf(&c->f, RPC_INVALID_PARAMS, "params.%s must be an object", key);
    *out = v;
    return 0;
}

/* The message's text: its text parts, data parts as JSON, file parts by
 * name. NULL (f set) when it has none or a part is of the wrong shape. */
static char *message_text(call *c, const json_t *msg, json_t **data_part)
{
    json_t *parts = json_object_get(msg, "parts");
    *data_part = NULL;
    if (!json_is_array(parts) || json_array_size(parts) == 0) {
        a2a_failf(&c->f, RPC_INVALID_PARAMS, "params.message.parts must be a non-empty array");
        return NULL;
    }
    loom_str s = LOOM_STR_INIT;
    size_t i;
    json_t *p;
    json_array_foreach(parts, i, p) {
        if (!json_is_object(p)) {
            str_free(&s);
            a2a_failf(&c->f, RPC_INVALID_PARAMS, "params.message.parts[%zu] must be an object", i);
            return NULL;
        }
        json_t *t = json_object_get(p, "text"), *d = json_object_get(p, "data");
        json_t *u = json_object_get(p, "url"), *r = json_object_get(p, "raw");
        if (s.len)
            str_puts(&s, "\n\n");
        if (json_is_string(t)) {
            str_puts(&s, json_string_value(t));
        } else if (d && !t) {
            if (!*data_part)
                *data_part = d;
            char *dj = json_dumps(d, JSON_COMPACT | JSON_ENCODE_ANY);
            str_puts(&s, dj ? dj : "null");
            free(dj);
        } else if (json_is_string(u) || json_is_string(r)) {
            str_printf(&s, "[attached file %s%s%s]", json_get_str(p, "filename", "(unnamed)"),
                       json_is_string(u) ? " at " : "",
                       json_is_string(u) ? json_string_value(u) : "");
        } else {
            str_free(&s);
            a2a_failf(&c->f, RPC_INVALID_PARAMS,
                      "params.message.parts[%zu] must hold text, data, url or raw", i);
            return NULL;
        }
    }
    return str_steal(&s);
}

static json_t *wrap(const char *key, json_t *v)
{
    json_t *o = json_object();
    json_object_set_new(o, key, v);
    return o;
}

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

#define CANCEL_WAIT_MS 10000

/* Waits (blocking SendMessage) until the run has ended or waits for input
 * (or only until it has ended); the Run's JSON then (malloc'd), or NULL
 * with f set. */
static char *wait_run(call *c, const char *run_id, long budget_ms, bool only_end)
{
    for (long waited = 0;; waited += 50) {
        srv_error err = {0};
        char *rj = c->env->be->run_get(c->env->svc, c->who, run_id, &err);
        if (!rj) {
            a2a_fail_from(&c->f, &err, false);
            return NULL;
        }
        json_t *r = json_loads(rj, 0, NULL);
        const char *st = json_get_str(r, "state", "");
        bool settled = a2a_run_ended(st) ||
                       (!only_end && (strcmp(st, "waiting_approval") == 0 ||
                                      strcmp(st, "waiting_external") == 0 ||
                                      strcmp(st, "paused") == 0));
        json_decref(r);
        if (settled || waited >= budget_ms)
            return rj;
        free(rj);
        sleep_ms(50);
    }
}

static char *wait_settled(call *c, const char *run_id, long budget_ms)
{
    return wait_run(c, run_id, budget_ms, false);
}

static char *wait_ended(call *c, const char *run_id, long budget_ms)
{
    return wait_run(c, run_id, budget_ms, true);
}

static bool config_returns_now(const json_t *params)
{
    json_t *cfg = json_object_get(params, "configuration");
    return json_is_true(json_object_get(cfg, "returnImmediately"));
}

/* "approve"/"reject" from the message: a data part {decision} or the text. */
static int decision_of(const char *text, const json_t *data, bool *approve)
{
    const char *d = json_is_object(data) ? json_get_str(data, "decision", NULL) : NULL;
    char word[32] = "";
    if (d) {
        snprintf(word, sizeof word, "%s", d);
    } else if (text) {
        while (isspace((unsigned char)*text))
            text++;
        size_t n = 0;
        while (text[n] && !isspace((unsigned char)text[n]) && text[n] != '.' && text[n] != '!' &&
               n + 1 < sizeof word) {
            word[n] = text[n];
            n++;
        }
        word[n] = '\0';
    }
    static const char *const YES[] = {"approve", "approved", "allow", "yes", NULL};
    static const char *const NO[] = {"reject", "rejected", "deny", "no", NULL};
    for (size_t i = 0; YES[i]; i++)
        if (strcasecmp(word, YES[i]) == 0)
            return *approve = true, 0;
    for (size_t i = 0; NO[i]; i++)
        if (strcasecmp(word, NO[i]) == 0)
            return *approve = false, 0;
    return -1;
}

/* A message to an existing task: answer its approval, or resume it. The
 * run id it acted on is task_id; its Run JSON (malloc'd) or NULL. */
static char *answer_task(call *c, const char *task_id, const char *ctx_id, const char *text,
                         const json_t *data)
{
    const http_backend *be = c->env->be;
    srv_error err = {0};
    if (strncmp(task_id, "run_", 4) != 0) {
        a2a_failf(&c->f, A2A_TASK_NOT_FOUND, "no task %.200s", task_id);
        return NULL;
    }
    char *rj = be->run_get(c->env->svc, c->who, task_id, &err);
    if (!rj) {
        a2a_fail_from(&c->f, &err, false);
        return NULL;
    }
    json_t *run = json_loads(rj, 0, NULL);
    free(rj);
    const char *st = json_get_str(run, "state", "");
    char *out = NULL;
    if (ctx_id && strcmp(ctx_id, json_get_str(run, "session_id", "")) != 0) {
        a2a_failf(&c->f, RPC_INVALID_PARAMS, "task %s is not of context %.200s", task_id, ctx_id);
    } else if (strcmp(st, "waiting_approval") == 0) {
        bool approve = false;
        const char *apv = json_get_str(run, "pending_approval_id", NULL);
        if (decision_of(text, data, &approve) != 0) {
            a2a_failf(&c->f, RPC_INVALID_PARAMS,
                      "task %s waits for an approval: answer \"approve\" or \"reject\" (or a "
                      "data part {\"decision\": …})", task_id);
        } else if (!apv) {
            a2a_failf(&c->f, A2A_UNSUPPORTED_OPERATION, "task %s has no pending approval", task_id);
        } else {
            json_t *b = json_object();
            if (c->who->actor_id)
                json_object_set_new(b, "actor_id", json_string(c->who->actor_id));
            json_object_set_new(b, "comment", json_string("answered over A2A"));
            char *bt = json_dump_compact(b);
            json_decref(b);
            char *aj = be->approval_answer(c->env->svc, c->who, apv, approve, bt, &err);
            free(bt);
            if (!aj)
                a2a_fail_from(&c->f, &err, false);
            else
                out = xstrdup(task_id);
            free(aj);
        }
    } else if (strcmp(st, "paused") == 0) {
        json_t *b = json_object();
        json_object_set_new(b, "note", json_string(text ? text : ""));
        char *bt = json_dump_compact(b);
        json_decref(b);
        char *j = be->run_resume(c->env->svc, c->who, task_id, bt, &err);
        free(bt);
        if (!j)
            a2a_fail_from(&c->f, &err, false);
        else
            out = xstrdup(task_id);
        free(j);
    } else if (a2a_run_ended(st)) {
        a2a_failf(&c->f, A2A_UNSUPPORTED_OPERATION,
                  "task %s has ended (%s); send a new message in its contextId for a new task",
                  task_id, a2a_task_state(st));
    } else {
        a2a_failf(&c->f, A2A_UNSUPPORTED_OPERATION,
                  "task %s is %s and takes no input now", task_id, a2a_task_state(st));
    }
    json_decref(run);
    return out;
}

/* A new task: a session (or the contextId's), a task, a run (started
 * async). The run id (malloc'd) or NULL; *run_json the Run as created. */
static char *start_task(call *c, const json_t *msg, const char *text, char **run_json)
{
    const http_backend *be = c->env->be;
    srv_error err = {0};
    const char *ctx_id = json_get_str(msg, "contextId", NULL);
    char *session = NULL;
    *run_json = NULL;
    if (ctx_id && *ctx_id) {
        char *sj = be->session_get(c->env->svc, c->who, ctx_id, &err);
        if (!sj) {
            if (err.code == LOOM_ERR_RESOURCE_NOT_FOUND) {
                srv_error_clear(&err);
                a2a_failf(&c->f, RPC_INVALID_PARAMS, "no context %.200s", ctx_id);
            } else {
                a2a_fail_from(&c->f, &err, false);
            }
            return NULL;
        }
        free(sj);
        session = xstrdup(ctx_id);
    } else {
        json_t *b = json_object();
        json_t *meta = json_object();
        json_object_set_new(meta, "a2a", json_true());
        json_object_set_new(b, "metadata", meta);
        char *bt = json_dump_compact(b);
        json_decref(b);
        char *sj = be->session_create(c->env->svc, c->who, bt, &err);
        free(bt);
        json_t *s = sj ? json_loads(sj, 0, NULL) : NULL;
        free(sj);
        session = xstrdup(json_get_str(s, "session_id", NULL));
        json_decref(s);
        if (!session) {
            a2a_fail_from(&c->f, &err, false);
            return NULL;
        }
    }
    /* The skill (a profile id) from the request's or the message's metadata. */
    const char *skill = json_get_str(json_object_get(c->params, "metadata"), "skillId", NULL);
    if (!skill)
        skill = json_get_str(json_object_get(msg, "metadata"), "skillId", NULL);
    json_t *tb = json_object();
    json_object_set_new(tb, "session_id", json_string(session));
    json_object_set_new(tb, "goal", json_string(text));
    if (skill)
        json_object_set_new(tb, "agent_profile", json_string(skill));
    char *tbt = json_dump_compact(tb);
    json_decref(tb);
    free(session);
    char *tj = tbt ? be->task_create(c->env->svc, c->who, tbt, &err) : NULL;
    free(tbt);
    json_t *task = tj ? json_loads(tj, 0, NULL) : NULL;
    free(tj);
    if (!task) {
        if (err.code == LOOM_OK)
            a2a_failf(&c->f, RPC_INVALID_PARAMS, "the message text is not UTF-8");
        else
            a2a_fail_from(&c->f, &err, false);
        return NULL;
    }
    json_t *rb = json_object();
    json_object_set(rb, "task_id", json_object_get(task, "task_id"));
    json_object_set_new(rb, "multitask_strategy", json_string("enqueue"));
    char *rbt = json_dump_compact(rb);
    json_decref(rb);
    json_decref(task);
    /* Always async: a blocking caller waits after its push config is in place. */
    bool ended = false;
    char *rj = be->run_create(c->env->svc, c->who, rbt, -1, &ended, &err);
    free(rbt);
    char *run_id = NULL;
    if (rj) {
        json_t *r = json_loads(rj, 0, NULL);
        run_id = xstrdup(json_get_str(r, "run_id", NULL));
        json_decref(r);
        if (run_id)
            *run_json = rj;
        else {
            free(rj);
            a2a_failf(&c->f, RPC_INTERNAL_ERROR, "the service answered no run");
        }
    } else {
        a2a_fail_from(&c->f, &err, false);
    }
    return run_id;
}

static json_t *send_message(call *c, bool streaming)
{
    json_t *msg, *cfg;
    const char *task_id;
    if (want_obj(c, c->params, "message", true, &msg) != 0 ||
        want_obj(c, c->params, "configuration", false, &cfg) != 0 ||
        want_str(c, msg, "taskId", false, &task_id) != 0)
        return NULL;
    const char *ctx_id;
    if (want_str(c, msg, "contextId", false, &ctx_id) != 0)
        return NULL;
    json_t *data = NULL;
    char *text = message_text(c, msg, &data);
    if (!text)
        return NULL;
    bool blocking = !streaming && !config_returns_now(c->params);
    char *run_id = NULL, *run_json = NULL;
    int64_t after = 0;
    if (task_id && *task_id) {
        after = streaming ? a2a_run_tail(c->env, c->who, task_id) : 0;
        run_id = answer_task(c, task_id, ctx_id && *ctx_id ? ctx_id : NULL, text, data);
        if (run_id && blocking)
            run_json = wait_settled(c, run_id, c->env->block_ms > 0 ? c->env->block_ms : 300000);
    } else {
        run_id = start_task(c, msg, text, &run_json);
    }
    free(text);
    if (!run_id)
        return NULL;
    json_t *push = cfg ? json_object_get(cfg, "taskPushNotificationConfig") : NULL;
    if (json_is_object(push) && a2a_push_attach(c->env, c->who, run_id, push, &c->f) != 0) {
        free(run_id);
        free(run_json);
        return NULL;
    }
    if (blocking && !(task_id && *task_id)) {
        free(run_json);
        run_json = wait_settled(c, run_id, c->env->block_ms > 0 ? c->env->block_ms : 300000);
        if (!run_json) {
            free(run_id);
            return NULL;
        }
    }
    json_t *task = run_json ? a2a_task_from_run(c->env, c->who, run_json, &c->f)
                            : a2a_task_get(c->env, c->who, run_id, &c->f);
    free(run_json);
    if (!task) {
        free(run_id);
        return NULL;
    }
    json_t *out = NULL;
    if (streaming) {
        const char *ctx = json_get_str(task, "contextId", "");
        char *ctx_copy = xstrdup(ctx);
        c->stream = a2a_stream_open(c->env, c->who, c->id, run_id, ctx_copy, after, task, &c->f);
        free(ctx_copy);
    } else {
        out = wrap("task", task);
    }
    free(run_id);
    return out;
}

static json_t *m_send(call *c)
{
    return send_message(c, false);
}

static json_t *m_stream(call *c)
{
    send_message(c, true);
    return NULL;
}

static json_t *m_get(call *c)
{
    const char *id;
    if (want_str(c, c->params, "id", true, &id) != 0)
        return NULL;
    json_t *hl = json_object_get(c->params, "historyLength");
    if (hl && !json_is_null(hl) && (!json_is_integer(hl) || json_integer_value(hl) < 0)) {
        a2a_failf(&c->f, RPC_INVALID_PARAMS, "params.historyLength must be a whole number");
        return NULL;
    }
    json_t *t = a2a_task_get(c->env, c->who, id, &c->f);
    if (t && json_is_integer(hl) && json_integer_value(hl) == 0)
        json_object_set_new(t, "history", json_array());
    return t;
}

static json_t *m_cancel(call *c)
{
    const char *id;
    if (want_str(c, c->params, "id", true, &id) != 0)
        return NULL;
    if (strncmp(id, "run_", 4) != 0) {
        a2a_failf(&c->f, A2A_TASK_NOT_FOUND, "no task %.200s", id);
        return NULL;
    }
    srv_error err = {0};
    char *rj = c->env->be->run_cancel(c->env->svc, c->who, id, "{\"reason\":\"cancelled over A2A\"}",
                                      &err);
    if (!rj) {
        a2a_fail_from(&c->f, &err, true);
        return NULL;
    }
    /* The cancel is asynchronous; the answer is the Task once it has ended
     * (canceled), or as it is after CANCEL_WAIT_MS. */
    free(rj);
    long budget = c->env->block_ms > 0 && c->env->block_ms < CANCEL_WAIT_MS ? c->env->block_ms
                                                                             : CANCEL_WAIT_MS;
    rj = wait_ended(c, id, budget);
    if (!rj)
        return NULL;
    json_t *t = a2a_task_from_run(c->env, c->who, rj, &c->f);
    free(rj);
    return t;
}

static json_t *m_list(call *c)
{
    const char *ctx, *token, *status;
    if (want_str(c, c->params, "contextId", false, &ctx) != 0 ||
        want_str(c, c->params, "pageToken", false, &token) != 0 ||
        want_str(c, c->params, "status", false, &status) != 0)
        return NULL;
    json_t *ps = json_object_get(c->params, "pageSize");
    int limit = 50;
    if (ps && !json_is_null(ps)) {
        if (!json_is_integer(ps) || json_integer_value(ps) < 1 || json_integer_value(ps) > 200) {
            a2a_failf(&c->f, RPC_INVALID_PARAMS, "params.pageSize must be 1–200");
            return NULL;
        }
        limit = (int)json_integer_value(ps);
    }
    bool with_artifacts = json_is_true(json_object_get(c->params, "includeArtifacts"));
    srv_error err = {0};
    char *lj = c->env->be->run_list(c->env->svc, c->who, ctx && *ctx ? ctx : NULL, NULL,
                                    token && *token ? token : NULL, limit, &err);
    if (!lj && err.code == LOOM_ERR_RESOURCE_NOT_FOUND) {
        /* A context that is not the caller's (or none): no tasks. */
        srv_error_clear(&err);
        lj = xstrdup("{\"items\":[],\"next_cursor\":null}");
    }
    if (!lj) {
        a2a_fail_from(&c->f, &err, false);
        return NULL;
    }
    json_t *l = json_loads(lj, 0, NULL);
    free(lj);
    json_t *tasks = json_array();
    size_t i;
    json_t *it;
    json_array_foreach(json_get_arr(l, "items"), i, it) {
        char *rj = json_dump_compact(it);
        a2a_fail f;
        json_t *t = rj ? a2a_task_from_run(c->env, c->who, rj, &f) : NULL;
        free(rj);
        if (!t)
            continue;
        const char *ts = json_get_str(json_object_get(t, "status"), "state", "");
        if (status && *status && strcmp(status, "TASK_STATE_UNSPECIFIED") != 0 &&
            strcmp(status, ts) != 0) {
            json_decref(t);
            continue;
        }
        if (!with_artifacts)
            json_object_del(t, "artifacts");
        json_array_append_new(tasks, t);
    }
    json_t *out = json_object();
    json_object_set_new(out, "pageSize", json_integer(limit));
    json_object_set_new(out, "totalSize", json_integer((json_int_t)json_array_size(tasks)));
    json_object_set_new(out, "tasks", tasks);
    const char *next = json_get_str(l, "next_cursor", NULL);
    json_object_set_new(out, "nextPageToken", json_string(next ? next : ""));
    json_decref(l);
    return out;
}

static json_t *m_subscribe(call *c)
{
    const char *id;
    if (want_str(c, c->params, "id", true, &id) != 0)
        return NULL;
    int64_t after = a2a_run_tail(c->env, c->who, id);
    json_t *t = a2a_task_get(c->env, c->who, id, &c->f);
    if (!t)
        return NULL;
    const char *st = json_get_str(json_object_get(t, "metadata") ? json_object_get(json_object_get(t, "metadata"), "loom") : NULL, "state", "");
    if (a2a_run_ended(st)) {
        a2a_failf(&c->f, A2A_UNSUPPORTED_OPERATION, "task %s has ended: nothing to subscribe to",
                  id);
        json_decref(t);
        return NULL;
    }
    char *ctx = xstrdup(json_get_str(t, "contextId", ""));
    c->stream = a2a_stream_open(c->env, c->who, c->id, id, ctx, after, t, &c->f);
    free(ctx);
    return NULL;
}

static json_t *m_card(call *c)
{
    char *cj = a2a_card_json(c->env, c->who);
    json_t *card = cj ? json_loads(cj, 0, NULL) : NULL;
    free(cj);
    if (!card)
        a2a_failf(&c->f, RPC_INTERNAL_ERROR, "no card");
    return card;
}

static json_t *m_push_create(call *c) { return a2a_push_create(c->env, c->who, c->params, &c->f); }
static json_t *m_push_get(call *c) { return a2a_push_get(c->env, c->who, c->params, &c->f); }
static json_t *m_push_list(call *c) { return a2a_push_list(c->env, c->who, c->params, &c->f); }
static json_t *m_push_delete(call *c) { return a2a_push_delete(c->env, c->who, c->params, &c->f); }

static const struct {
    const char *name;
    json_t *(*fn)(call *c);
    bool streams;
} METHODS[] = {
    {"SendMessage", m_send, false},
    {"SendStreamingMessage", m_stream, true},
    {"GetTask", m_get, false},
    {"ListTasks", m_list, false},
    {"CancelTask", m_cancel, false},
    {"SubscribeToTask", m_subscribe, true},
    {"CreateTaskPushNotificationConfig", m_push_create, false},
    {"GetTaskPushNotificationConfig", m_push_get, false},
    {"ListTaskPushNotificationConfigs", m_push_list, false},
    {"DeleteTaskPushNotificationConfig", m_push_delete, false},
    {"GetExtendedAgentCard", m_card, false},
};

static a2a_answer answer_error(const json_t *id, int code, const char *msg)
{
    a2a_fail f;
    a2a_failf(&f, code, "%s", msg);
    return (a2a_answer){.json = a2a_error_text(id, &f)};
}

a2a_answer a2a_dispatch(const a2a_env *env, const principal *who, const char *body, size_t len)
{
    json_error_t jerr;
    json_t *req = body && len ? json_loadb(body, len, JSON_REJECT_DUPLICATES, &jerr) : NULL;
    if (!req) {
        char m[300];
        snprintf(m, sizeof m, "parse error: %s", body && len ? jerr.text : "an empty body");
        return answer_error(NULL, RPC_PARSE_ERROR, m);
    }
    a2a_answer ans = {0};
    json_t *id = json_object_get(req, "id");
    const char *method = json_get_str(req, "method", NULL);
    json_t *params = json_object_get(req, "params");
    if (!json_is_object(req)) {
        ans = answer_error(NULL, RPC_INVALID_REQUEST, "a request must be a JSON object");
    } else if (id && !json_is_string(id) && !json_is_integer(id) && !json_is_null(id)) {
        ans = answer_error(NULL, RPC_INVALID_REQUEST, "id must be a string, a number or null");
    } else if (!json_is_string(json_object_get(req, "jsonrpc")) ||
               strcmp(json_string_value(json_object_get(req, "jsonrpc")), "2.0") != 0) {
        ans = answer_error(id, RPC_INVALID_REQUEST, "jsonrpc must be \"2.0\"");
    } else if (!method) {
        ans = answer_error(id, RPC_INVALID_REQUEST, "method must be a string");
    } else if (params && !json_is_object(params) && !json_is_null(params)) {
        ans = answer_error(id, RPC_INVALID_PARAMS, "params must be an object");
    } else {
        size_t i = 0;
        size_t n = sizeof METHODS / sizeof METHODS[0];
        while (i < n && strcmp(METHODS[i].name, method) != 0)
            i++;
        if (i == n) {
            char m[200];
            snprintf(m, sizeof m, "method not found: %.120s", method);
            ans = answer_error(id, RPC_METHOD_NOT_FOUND, m);
        } else {
            json_t *empty = json_object();
            call c = {.env = env, .who = who, .id = id,
                      .params = json_is_object(params) ? params : empty};
            json_t *res = METHODS[i].fn(&c);
            if (METHODS[i].streams && c.stream)
                ans.stream = c.stream;
            else if (res)
                ans.json = a2a_result_text(id, res);
            else
                ans.json = a2a_error_text(id, c.f.code ? &c.f
                                                       : &(a2a_fail){RPC_INTERNAL_ERROR,
                                                                     "no answer", NULL});
            json_decref(empty);
        }
    }
    if (!id && ans.json && json_is_object(req) && method)
        ans.notification = true; /* JSON-RPC: a notification is not answered */
    json_decref(req);
    return ans;
}
