/* a2a_task.c — a server run as an A2A v1.0 Task (docs/a2a.md, the state
 * table): the id is the run id, contextId the session, status from the
 * run state (with an agent message saying why: the approval's question,
 * the error, the summary), history the user's goal, artifacts each with
 * its content as one part (text for text, data for JSON, raw otherwise).
 * Also the JSON-RPC envelopes and the service error → A2A error mapping.
 * No state; any thread. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/json.h"
#include "base/str.h"
#include "surfaces/server/a2a/a2a_internal.h"

int a2a_failf(a2a_fail *f, int code, const char *fmt, ...)
{
    f->code = code;
    f->server_code = NULL;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(f->message, sizeof f->message, fmt, ap);
    va_end(ap);
    return -1;
}

int a2a_fail_from(a2a_fail *f, srv_error *err, bool cancel)
{
    int code;
    switch (err->code) {
    case LOOM_ERR_RESOURCE_NOT_FOUND:
        code = A2A_TASK_NOT_FOUND;
        break;
    case LOOM_ERR_INVALID_STATE_TRANSITION:
    case LOOM_ERR_RUN_NOT_RESUMABLE:
        code = cancel ? A2A_TASK_NOT_CANCELABLE : A2A_UNSUPPORTED_OPERATION;
        break;
    case LOOM_ERR_INVALID_REQUEST:
        code = RPC_INVALID_PARAMS;
        break;
    case LOOM_ERR_PROJECT_SCOPE_DENIED:
    case LOOM_ERR_ARTIFACT_SCOPE_DENIED:
    case LOOM_ERR_TENANT_QUOTA_EXCEEDED:
        code = A2A_UNSUPPORTED_OPERATION;
        break;
    default:
        code = RPC_INTERNAL_ERROR;
    }
    a2a_failf(f, code, "%s", err->message[0] ? err->message : "the call failed");
    f->server_code = loom_error_code_name(err->code);
    srv_error_clear(err);
    return -1;
}

static json_t *envelope(const json_t *id)
{
    json_t *o = json_object();
    json_object_set_new(o, "jsonrpc", json_string("2.0"));
    json_object_set_new(o, "id", id ? json_deep_copy(id) : json_null());
    return o;
}

char *a2a_result_text(const json_t *id, json_t *result)
{
    json_t *o = envelope(id);
    json_object_set_new(o, "result", result ? result : json_object());
    char *s = json_dump_compact(o);
    json_decref(o);
    return s;
}

char *a2a_error_text(const json_t *id, const a2a_fail *f)
{
    json_t *o = envelope(id);
    json_t *e = json_object();
    json_object_set_new(e, "code", json_integer(f->code));
    json_object_set_new(e, "message", json_string(f->message[0] ? f->message : "error"));
    if (!json_string_value(json_object_get(e, "message"))) /* not UTF-8 */
        json_object_set_new(e, "message", json_string("error"));
    if (f->server_code) {
        json_t *d = json_object();
        json_object_set_new(d, "loom_code", json_string(f->server_code));
        json_object_set_new(e, "data", d);
    }
    json_object_set_new(o, "error", e);
    char *s = json_dump_compact(o);
    json_decref(o);
    return s;
}

/* The state table (docs/a2a.md). */
static const struct {
    const char *run, *task;
} STATES[] = {
    {"queued", "TASK_STATE_SUBMITTED"},
    {"running", "TASK_STATE_WORKING"},
    {"waiting_approval", "TASK_STATE_INPUT_REQUIRED"},
    {"waiting_external", "TASK_STATE_INPUT_REQUIRED"},
    {"paused", "TASK_STATE_INPUT_REQUIRED"},
    {"completed", "TASK_STATE_COMPLETED"},
    {"failed", "TASK_STATE_FAILED"},
    {"cancelled", "TASK_STATE_CANCELED"},
    {"blocked_by_policy", "TASK_STATE_REJECTED"},
    {"blocked_by_capability", "TASK_STATE_REJECTED"},
};

const char *a2a_task_state(const char *run_state)
{
    for (size_t i = 0; run_state && i < sizeof STATES / sizeof STATES[0]; i++)
        if (strcmp(STATES[i].run, run_state) == 0)
            return STATES[i].task;
    return "TASK_STATE_UNSPECIFIED";
}

bool a2a_run_ended(const char *s)
{
    static const char *const END[] = {"completed", "failed", "cancelled", "blocked_by_policy",
                                      "blocked_by_capability"};
    for (size_t i = 0; s && i < sizeof END / sizeof END[0]; i++)
        if (strcmp(END[i], s) == 0)
            return true;
    return false;
}

static json_t *message(const char *role, const char *message_id, const char *text,
                       const char *task_id, const char *context_id)
{
    json_t *m = json_object();
    json_object_set_new(m, "messageId", json_string(message_id));
    json_object_set_new(m, "role", json_string(role));
    json_t *parts = json_array();
    json_t *p = json_object();
    json_object_set_new(p, "text", json_string(text));
    if (!json_object_get(p, "text"))
        json_object_set_new(p, "text", json_string("(not UTF-8)"));
    json_array_append_new(parts, p);
    json_object_set_new(m, "parts", parts);
    if (task_id)
        json_object_set_new(m, "taskId", json_string(task_id));
    if (context_id)
        json_object_set_new(m, "contextId", json_string(context_id));
    return m;
}

json_t *a2a_status(const char *run_state, const char *timestamp, const char *text,
                   const char *task_id, const char *context_id)
{
    json_t *st = json_object();
    json_object_set_new(st, "state", json_string(a2a_task_state(run_state)));
    if (timestamp)
        json_object_set_new(st, "timestamp", json_string(timestamp));
    if (text && *text) {
        char mid[160];
        snprintf(mid, sizeof mid, "msg_%s_%s", task_id ? task_id : "task",
                 run_state ? run_state : "status");
        json_object_set_new(st, "message", message("ROLE_AGENT", mid, text, task_id, context_id));
    }
    return st;
}

/* A content type that is text (shown as a text part). */
static bool is_text_type(const char *ct)
{
    return ct && (strncmp(ct, "text/", 5) == 0 || strstr(ct, "markdown") || strstr(ct, "diff") ||
                  strstr(ct, "x-patch"));
}

json_t *a2a_artifact(const a2a_env *env, const principal *who, const char *run_id,
                     const char *artifact_id, const char *name, const char *title)
{
    json_t *a = json_object();
    json_object_set_new(a, "artifactId", json_string(artifact_id ? artifact_id : name));
    json_object_set_new(a, "name", json_string(name));
    if (title)
        json_object_set_new(a, "description", json_string(title));
    json_t *parts = json_array();
    srv_error err = {0};
    size_t len = 0;
    char *ct = NULL;
    void *bytes = env->be->artifact_content(env->svc, who, run_id, name, &len, &ct, &err);
    if (bytes) {
        json_t *p = json_object();
        json_t *data = NULL;
        if (ct && strstr(ct, "json"))
            data = json_loadb(bytes, len, JSON_DECODE_ANY, NULL);
        if (data) {
            json_object_set_new(p, "data", data);
        } else {
            json_t *t = is_text_type(ct) || (ct && strstr(ct, "json")) ? json_stringn(bytes, len)
                                                                       : NULL;
            if (t) {
                json_object_set_new(p, "text", t);
            } else {
                loom_str b64 = LOOM_STR_INIT;
                str_put_base64(&b64, bytes, len);
                json_object_set_new(p, "raw", json_string(str_cstr(&b64)));
                str_free(&b64);
            }
        }
        if (ct)
            json_object_set_new(p, "mediaType", json_string(ct));
        json_object_set_new(p, "filename", json_string(name));
        json_array_append_new(parts, p);
    } else {
        srv_error_clear(&err);
    }
    free(bytes);
    free(ct);
    json_object_set_new(a, "parts", parts);
    return a;
}

/* The agent's words for a run's status: why it waits, why it failed, what
 * it concluded. malloc'd or NULL. */
static char *status_text(const a2a_env *env, const principal *who, json_t *run)
{
    const char *state = json_get_str(run, "state", "");
    loom_str s = LOOM_STR_INIT;
    if (strcmp(state, "waiting_approval") == 0) {
        const char *apv = json_get_str(run, "pending_approval_id", NULL);
        srv_error err = {0};
        char *aj = apv ? env->be->approval_get(env->svc, who, apv, &err) : NULL;
        json_t *a = aj ? json_loads(aj, 0, NULL) : NULL;
        str_printf(&s, "%s — reply on this task with \"approve\" or \"reject\" (or a data part "
                       "{\"decision\": \"approve\"|\"reject\"}).",
                   json_get_str(a, "question", "The run waits for an approval"));
        json_decref(a);
        free(aj);
        srv_error_clear(&err);
    } else if (strcmp(state, "paused") == 0) {
        str_puts(&s, "The run is paused — send a message on this task to resume it.");
    } else if (strcmp(state, "waiting_external") == 0) {
        str_puts(&s, "The run waits for an outside answer.");
    } else if (a2a_run_ended(state)) {
        json_t *e = json_get_obj(run, "error");
        const char *msg = e ? json_get_str(e, "message", NULL) : NULL;
        const char *sum = json_get_str(run, "summary", NULL);
        if (msg && *msg && strcmp(state, "completed") != 0)
            str_puts(&s, msg);
        else if (sum && *sum)
            str_puts(&s, sum);
    }
    return s.len ? str_steal(&s) : (str_free(&s), NULL);
}

json_t *a2a_task_from_run(const a2a_env *env, const principal *who, const char *run_json,
                          a2a_fail *f)
{
    json_t *run = json_loads(run_json, 0, NULL);
    const char *id = json_get_str(run, "run_id", NULL);
    if (!id) {
        json_decref(run);
        a2a_failf(f, RPC_INTERNAL_ERROR, "the service answered no run");
        return NULL;
    }
    const char *ctx = json_get_str(run, "session_id", "");
    const char *state = json_get_str(run, "state", "");
    json_t *t = json_object();
    json_object_set_new(t, "id", json_string(id));
    json_object_set_new(t, "contextId", json_string(ctx));
    char *text = status_text(env, who, run);
    json_object_set_new(t, "status", a2a_status(state, json_get_str(run, "updated_at", NULL),
                                                text, id, ctx));
    free(text);
    json_t *hist = json_array();
    char mid[160];
    snprintf(mid, sizeof mid, "msg_%s_goal", id);
    json_array_append_new(hist, message("ROLE_USER", mid, json_get_str(run, "goal", ""), id, ctx));
    json_object_set_new(t, "history", hist);
    json_t *arts = json_array();
    if (a2a_run_ended(state)) {
        srv_error err = {0};
        char *lj = env->be->artifacts_list(env->svc, who, id, &err);
        json_t *l = lj ? json_loads(lj, 0, NULL) : NULL;
        size_t i;
        json_t *it;
        json_array_foreach(json_get_arr(l, "items"), i, it)
            json_array_append_new(arts, a2a_artifact(env, who, id,
                                                     json_get_str(it, "artifact_id", NULL),
                                                     json_get_str(it, "name", "artifact"),
                                                     json_get_str(it, "title", NULL)));
        json_decref(l);
        free(lj);
        srv_error_clear(&err);
    }
    json_object_set_new(t, "artifacts", arts);
    json_t *meta = json_object();
    json_t *loom = json_object();
    json_object_set_new(loom, "run_id", json_string(id));
    json_object_set(loom, "task_id", json_object_get(run, "task_id"));
    json_object_set_new(loom, "state", json_string(state));
    if (json_get_str(run, "pending_approval_id", NULL))
        json_object_set(loom, "pending_approval_id", json_object_get(run, "pending_approval_id"));
    json_object_set_new(meta, "loom", loom);
    json_object_set_new(t, "metadata", meta);
    json_decref(run);
    return t;
}

json_t *a2a_task_get(const a2a_env *env, const principal *who, const char *id, a2a_fail *f)
{
    if (!id || strncmp(id, "run_", 4) != 0) {
        a2a_failf(f, A2A_TASK_NOT_FOUND, "no task %.200s", id ? id : "(none)");
        return NULL;
    }
    srv_error err = {0};
    char *rj = env->be->run_get(env->svc, who, id, &err);
    if (!rj) {
        a2a_fail_from(f, &err, false);
        return NULL;
    }
    json_t *t = a2a_task_from_run(env, who, rj, f);
    free(rj);
    return t;
}
