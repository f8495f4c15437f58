/* test_server_a2a.c — loom serve's A2A dispatcher (src/surfaces/server/a2a/)
 * on bytes, against a fake backend (the http_backend table of http.h), so
 * the mapping is tested alone: the Agent Card (skills from the profiles),
 * JSON-RPC's errors (-32700, -32600, -32601, -32602) and A2A's (-32001,
 * -32002, -32004), the state table, SendMessage (blocking, with the
 * artifacts' content as parts), answering an approval on the task
 * ("approve", a data part {decision}, anything else refused), resuming a
 * paused task, CancelTask, SendStreamingMessage's order (Task, working,
 * artifact, the terminal status last), push notification configs (CRUD,
 * loopback only). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <time.h>

#include <cmocka.h>
#include <jansson.h>

#include "surfaces/server/a2a/a2a.h"
#include "tmpdir.h"

/* ---- the fake backend: one session, runs run_1.., a scripted feed ------- */

static char run_state[8][32];   /* run_<i+1>'s state */
static int n_runs;
static char last_goal[256];
static int approvals_answered, last_approve;
static char last_note[256];

struct service_feed {
    int at;
};

static bool fake_auth(const server_objects *o, const char *bearer, principal *out)
{
    (void)o;
    if (strcmp(bearer, "good") != 0)
        return false;
    *out = (principal){"acme", NULL, "alice", ROLE_ADMIN, false};
    return true;
}

static int run_index(const char *id)
{
    if (!id || strncmp(id, "run_", 4) != 0)
        return -1;
    int i = atoi(id + 4) - 1;
    return i >= 0 && i < n_runs ? i : -1;
}

static char *not_found(srv_error *err, const char *id)
{
    srv_fail(err, LOOM_ERR_RESOURCE_NOT_FOUND, "no %s", id);
    return NULL;
}

static char *run_json(int i)
{
    char id[16];
    snprintf(id, sizeof id, "run_%d", i + 1);
    json_t *o = json_pack("{ss ss ss ss ss ss ss ss? ss?}", "run_id", id, "task_id", "task_1",
                          "session_id", "sess_1", "state", run_state[i], "goal", last_goal,
                          "updated_at", "2026-12-02T10:00:00.000Z", "summary", "All done.",
                          "pending_approval_id",
                          strcmp(run_state[i], "waiting_approval") == 0 ? "apv_1" : NULL,
                          "error", NULL);
    char *s = json_dumps(o, JSON_COMPACT);
    json_decref(o);
    return s;
}

static char *f_session_create(service *s, const principal *w, const char *b, srv_error *e)
{
    (void)s, (void)w, (void)b, (void)e;
    return strdup("{\"session_id\":\"sess_1\"}");
}

static char *f_session_get(service *s, const principal *w, const char *id, srv_error *e)
{
    (void)s, (void)w;
    return strcmp(id, "sess_1") == 0 ? strdup("{\"session_id\":\"sess_1\"}") : not_found(e, id);
}

static char *f_task_create(service *s, const principal *w, const char *b, srv_error *e)
{
    (void)s, (void)w, (void)e;
    json_t *o = json_loads(b, 0, NULL);
    snprintf(last_goal, sizeof last_goal, "%s", json_string_value(json_object_get(o, "goal")));
    json_decref(o);
    return strdup("{\"task_id\":\"task_1\"}");
}

static const char *next_state = "completed";

static char *f_run_create(service *s, const principal *w, const char *b, long wait_ms,
                          bool *ended, srv_error *e)
{
    (void)s, (void)w, (void)b, (void)wait_ms, (void)e;
    snprintf(run_state[n_runs], sizeof run_state[0], "%s", next_state);
    *ended = false;
    return run_json(n_runs++);
}

static char *f_run_get(service *s, const principal *w, const char *id, srv_error *e)
{
    (void)s, (void)w;
    int i = run_index(id);
    return i < 0 ? not_found(e, id) : run_json(i);
}

static char *f_run_list(service *s, const principal *w, const char *sess, const char *st,
                        const char *cur, int limit, srv_error *e)
{
    (void)s, (void)w, (void)sess, (void)st, (void)cur, (void)limit, (void)e;
    char *one = n_runs ? run_json(0) : NULL;
    char buf[1200];
    snprintf(buf, sizeof buf, "{\"items\":[%s],\"next_cursor\":null}", one ? one : "");
    free(one);
    return strdup(buf);
}

static bool ended_state(const char *s)
{
    return strcmp(s, "completed") == 0 || strcmp(s, "cancelled") == 0 || strcmp(s, "failed") == 0;
}

static char *f_run_cancel(service *s, const principal *w, const char *id, const char *b,
                          srv_error *e)
{
    (void)s, (void)w, (void)b;
    int i = run_index(id);
    if (i < 0)
        return not_found(e, id);
    if (ended_state(run_state[i])) {
        srv_fail(e, LOOM_ERR_INVALID_STATE_TRANSITION, "run %s has ended", id);
        return NULL;
    }
    snprintf(run_state[i], sizeof run_state[0], "cancelled");
    return run_json(i);
}

static char *f_run_resume(service *s, const principal *w, const char *id, const char *b,
                          srv_error *e)
{
    (void)s, (void)w;
    int i = run_index(id);
    if (i < 0)
        return not_found(e, id);
    json_t *o = json_loads(b, 0, NULL);
    snprintf(last_note, sizeof last_note, "%s", json_string_value(json_object_get(o, "note")));
    json_decref(o);
    snprintf(run_state[i], sizeof run_state[0], "completed");
    return run_json(i);
}

static char *f_events_page(service *s, const principal *w, const char *id, int64_t after,
                           int limit, unsigned mask, srv_error *e)
{
    (void)s, (void)w, (void)id, (void)after, (void)limit, (void)mask, (void)e;
    return strdup("{\"items\":[],\"next_after\":0,\"has_more\":false}");
}

static char *f_artifacts_list(service *s, const principal *w, const char *id, srv_error *e)
{
    (void)s, (void)w, (void)id, (void)e;
    return strdup("{\"items\":[{\"artifact_id\":\"art_1\",\"name\":\"conclusion.md\","
                  "\"title\":\"Conclusion\"},{\"artifact_id\":\"art_2\",\"name\":\"result.json\","
                  "\"title\":\"Result\"}]}");
}

static void *f_artifact_content(service *s, const principal *w, const char *id,
                                const char *name, size_t *len, char **ct, srv_error *e)
{
    (void)s, (void)w, (void)id, (void)e;
    const char *body = strcmp(name, "result.json") == 0 ? "{\"ok\":true}" : "Done.";
    *ct = strdup(strcmp(name, "result.json") == 0 ? "application/json" : "text/markdown");
    *len = strlen(body);
    return strdup(body);
}

static char *f_approval_get(service *s, const principal *w, const char *id, srv_error *e)
{
    (void)s, (void)w, (void)id, (void)e;
    return strdup("{\"approval_id\":\"apv_1\",\"question\":\"Allow Bash: echo hi?\"}");
}

static char *f_approval_answer(service *s, const principal *w, const char *id, bool approve,
                               const char *b, srv_error *e)
{
    (void)s, (void)w, (void)id, (void)b, (void)e;
    approvals_answered++;
    last_approve = approve;
    for (int i = 0; i < n_runs; i++)
        if (strcmp(run_state[i], "waiting_approval") == 0)
            snprintf(run_state[i], sizeof run_state[0], approve ? "completed" : "failed");
    return strdup("{\"approval_id\":\"apv_1\",\"status\":\"approved\"}");
}

static service_feed *f_feed_open(service *s, const principal *w, const char *id, int64_t after,
                                 unsigned mask, srv_error *e)
{
    (void)s, (void)w, (void)after, (void)mask;
    if (run_index(id) < 0)
        return (service_feed *)not_found(e, id);
    return calloc(1, sizeof(service_feed));
}

/* The run's events as the service stores them: the terminal state change
 * before the artifact (the service announces artifacts after it). */
static int f_feed_next(service_feed *f, char **json, int64_t *seq, int timeout_ms)
{
    (void)timeout_ms;
    static const char *const EV[] = {
        "{\"type\":\"run.state_changed\",\"ts\":\"t1\",\"payload\":{\"from\":\"queued\",\"state\":\"running\"}}",
        "{\"type\":\"model.delta\",\"payload\":{}}",
        "{\"type\":\"run.state_changed\",\"ts\":\"t2\",\"payload\":{\"from\":\"running\",\"state\":\"completed\"}}",
        "{\"type\":\"artifact.created\",\"payload\":{\"artifact_id\":\"art_1\",\"name\":\"conclusion.md\",\"title\":\"Conclusion\"}}",
    };
    if (f->at < 4) {
        *json = strdup(EV[f->at]);
        *seq = ++f->at;
        return 1;
    }
    *json = strdup("{\"state\":\"completed\"}");
    return -1;
}

static void f_feed_close(service_feed *f)
{
    free(f);
}

static const http_backend FAKE = {
    .authenticate = fake_auth,
    .session_create = f_session_create,
    .session_get = f_session_get,
    .task_create = f_task_create,
    .run_create = f_run_create,
    .run_get = f_run_get,
    .run_list = f_run_list,
    .run_cancel = f_run_cancel,
    .run_resume = f_run_resume,
    .events_page = f_events_page,
    .artifacts_list = f_artifacts_list,
    .artifact_content = f_artifact_content,
    .approval_get = f_approval_get,
    .approval_answer = f_approval_answer,
    .feed_open = f_feed_open,
    .feed_next = f_feed_next,
    .feed_close = f_feed_close,
};

static const principal WHO = {"acme", NULL, "alice", ROLE_ADMIN, false};
static a2a_env ENV = {.be = &FAKE, .base_url = "http://127.0.0.1:9999", .block_ms = 200};

static int reset(void **state)
{
    (void)state;
    n_runs = 0;
    approvals_answered = 0;
    next_state = "completed";
    return 0;
}

/* Dispatches text; the response parsed. */
static json_t *rpc(const char *text)
{
    a2a_answer a = a2a_dispatch(&ENV, &WHO, text, strlen(text));
    assert_null(a.stream);
    assert_non_null(a.json);
    json_t *r = json_loads(a.json, 0, NULL);
    assert_non_null(r);
    assert_string_equal(json_string_value(json_object_get(r, "jsonrpc")), "2.0");
    free(a.json);
    return r;
}

static int error_code(json_t *r)
{
    json_t *e = json_object_get(r, "error");
    return e ? (int)json_integer_value(json_object_get(e, "code")) : 0;
}

static int rpc_code(const char *text)
{
    json_t *r = rpc(text);
    int c = error_code(r);
    json_decref(r);
    return c;
}

static const char *task_state(json_t *r)
{
    return json_string_value(
        json_object_get(json_object_get(json_object_get(json_object_get(r, "result"), "task"),
                                        "status"),
                        "state"));
}

#define SEND(text_part) \
    "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"SendMessage\",\"params\":{\"message\":{" \
    "\"messageId\":\"m1\",\"role\":\"ROLE_USER\",\"parts\":[" text_part "]}}}"

static void test_errors(void **state)
{
    (void)state;
    assert_int_equal(rpc_code("{\"jsonrpc\":\"2.0\","), -32700);
    assert_int_equal(rpc_code(""), -32700);
    assert_int_equal(rpc_code("[1,2]"), -32600);
    assert_int_equal(rpc_code("{\"id\":1,\"method\":\"GetTask\"}"), -32600);
    assert_int_equal(rpc_code("{\"jsonrpc\":\"1.0\",\"id\":1,\"method\":\"GetTask\"}"), -32600);
    assert_int_equal(rpc_code("{\"jsonrpc\":\"2.0\",\"id\":{},\"method\":\"GetTask\"}"), -32600);
    assert_int_equal(rpc_code("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":7}"), -32600);
    assert_int_equal(rpc_code("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"message/send\"}"),
                     -32601);
    assert_int_equal(rpc_code("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"GetTask\",\"params\":[]}"),
                     -32602);
    assert_int_equal(rpc_code("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"GetTask\",\"params\":{\"id\":7}}"),
                     -32602);
    assert_int_equal(rpc_code("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"GetTask\",\"params\":{}}"),
                     -32602);
    assert_int_equal(rpc_code("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"GetTask\",\"params\":"
                              "{\"id\":\"run_1\",\"historyLength\":-1}}"),
                     -32602);
    assert_int_equal(rpc_code("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"SendMessage\",\"params\":"
                              "{\"message\":\"hi\"}}"),
                     -32602);
    assert_int_equal(rpc_code(SEND("")), -32602);
    assert_int_equal(rpc_code(SEND("{\"kind\":\"text\"}")), -32602);
    assert_int_equal(rpc_code(SEND("7")), -32602);
    assert_int_equal(rpc_code("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"GetTask\",\"params\":{\"id\":\"run_9\"}}"),
                     -32001);
    assert_int_equal(rpc_code("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"GetTask\",\"params\":{\"id\":\"nope\"}}"),
                     -32001);
    assert_int_equal(rpc_code("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"CancelTask\",\"params\":{\"id\":\"run_9\"}}"),
                     -32001);
    /* The id comes back as it was sent; a bad id gets null. */
    json_t *r = rpc("{\"jsonrpc\":\"2.0\",\"id\":\"abc\",\"method\":\"Nope\"}");
    assert_string_equal(json_string_value(json_object_get(r, "id")), "abc");
    json_decref(r);
    r = rpc("{\"jsonrpc\":\"2.0\",\"id\":[1],\"method\":\"Nope\"}");
    assert_true(json_is_null(json_object_get(r, "id")));
    json_decref(r);
    /* A notification is not answered. */
    const char *note = "{\"jsonrpc\":\"2.0\",\"method\":\"GetTask\"}";
    a2a_answer a = a2a_dispatch(&ENV, &WHO, note, strlen(note));
    assert_true(a.notification);
    free(a.json);
}

static void test_state_table(void **state)
{
    (void)state;
    static const char *const T[][2] = {
        {"queued", "TASK_STATE_SUBMITTED"},          {"running", "TASK_STATE_WORKING"},
        {"waiting_approval", "TASK_STATE_INPUT_REQUIRED"},
        {"waiting_external", "TASK_STATE_INPUT_REQUIRED"},
        {"paused", "TASK_STATE_INPUT_REQUIRED"},     {"completed", "TASK_STATE_COMPLETED"},
        {"failed", "TASK_STATE_FAILED"},             {"cancelled", "TASK_STATE_CANCELED"},
        {"blocked_by_policy", "TASK_STATE_REJECTED"},
        {"blocked_by_capability", "TASK_STATE_REJECTED"},
        {"frobbed", "TASK_STATE_UNSPECIFIED"},
    };
    for (size_t i = 0; i < sizeof T / sizeof T[0]; i++)
        assert_string_equal(a2a_task_state(T[i][0]), T[i][1]);
}

static void test_send_blocking(void **state)
{
    (void)state;
    json_t *r = rpc(SEND("{\"text\":\"say hello\"},{\"data\":{\"k\":1}}"));
    assert_int_equal(error_code(r), 0);
    assert_int_equal(json_integer_value(json_object_get(r, "id")), 7);
    assert_string_equal(task_state(r), "TASK_STATE_COMPLETED");
    assert_string_equal(last_goal, "say hello\n\n{\"k\":1}");
    json_t *t = json_object_get(json_object_get(r, "result"), "task");
    assert_string_equal(json_string_value(json_object_get(t, "id")), "run_1");
    assert_string_equal(json_string_value(json_object_get(t, "contextId")), "sess_1");
    json_t *arts = json_object_get(t, "artifacts");
    assert_int_equal(json_array_size(arts), 2);
    json_t *p0 = json_array_get(json_object_get(json_array_get(arts, 0), "parts"), 0);
    assert_string_equal(json_string_value(json_object_get(p0, "text")), "Done.");
    assert_string_equal(json_string_value(json_object_get(p0, "mediaType")), "text/markdown");
    json_t *p1 = json_array_get(json_object_get(json_array_get(arts, 1), "parts"), 0);
    assert_true(json_is_true(json_object_get(json_object_get(p1, "data"), "ok")));
    json_t *msg = json_object_get(json_object_get(t, "status"), "message");
    assert_string_equal(json_string_value(json_object_get(msg, "role")), "ROLE_AGENT");
    json_decref(r);
    /* A context that does not exist; one that does. */
    assert_int_equal(rpc_code("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"SendMessage\",\"params\":"
                              "{\"message\":{\"contextId\":\"sess_9\",\"parts\":[{\"text\":\"x\"}]}}}"),
                     -32602);
    assert_int_equal(rpc_code("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"SendMessage\",\"params\":"
                              "{\"message\":{\"contextId\":\"sess_1\",\"parts\":[{\"text\":\"x\"}]}}}"),
                     0);
    /* A message to an ended task. */
    assert_int_equal(rpc_code("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"SendMessage\",\"params\":"
                              "{\"message\":{\"taskId\":\"run_1\",\"parts\":[{\"text\":\"x\"}]}}}"),
                     -32004);
    r = rpc("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ListTasks\",\"params\":{\"contextId\":\"sess_1\"}}");
    assert_int_equal(json_array_size(json_object_get(json_object_get(r, "result"), "tasks")), 1);
    json_decref(r);
}

static void test_approval(void **state)
{
    (void)state;
    next_state = "waiting_approval";
    json_t *r = rpc(SEND("{\"text\":\"echo please\"}"));
    assert_string_equal(task_state(r), "TASK_STATE_INPUT_REQUIRED");
    json_t *t = json_object_get(json_object_get(r, "result"), "task");
    const char *q = json_string_value(json_object_get(
        json_array_get(json_object_get(json_object_get(json_object_get(t, "status"), "message"),
                                       "parts"),
                       0),
        "text"));
    assert_non_null(strstr(q, "Allow Bash: echo hi?"));
    json_decref(r);
#define ANSWER(part) \
    "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"SendMessage\",\"params\":{\"message\":{" \
    "\"taskId\":\"run_1\",\"parts\":[" part "]}}}"
    assert_int_equal(rpc_code(ANSWER("{\"text\":\"maybe later\"}")), -32602);
    assert_int_equal(approvals_answered, 0);
    r = rpc(ANSWER("{\"text\":\" Approve.\"}"));
    assert_string_equal(task_state(r), "TASK_STATE_COMPLETED");
    assert_int_equal(approvals_answered, 1);
    assert_int_equal(last_approve, 1);
    json_decref(r);
    /* A data part {decision: reject}. */
    r = rpc(SEND("{\"text\":\"echo again\"}"));
    json_decref(r);
    r = rpc("{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"SendMessage\",\"params\":{\"message\":{"
            "\"taskId\":\"run_2\",\"parts\":[{\"data\":{\"decision\":\"reject\"}}]}}}");
    assert_int_equal(last_approve, 0);
    assert_string_equal(task_state(r), "TASK_STATE_FAILED");
    json_decref(r);
    /* A paused task: a message resumes it with the text as the note. */
    next_state = "paused";
    r = rpc(SEND("{\"text\":\"work\"}"));
    assert_string_equal(task_state(r), "TASK_STATE_INPUT_REQUIRED");
    json_decref(r);
    r = rpc("{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"SendMessage\",\"params\":{\"message\":{"
            "\"taskId\":\"run_3\",\"parts\":[{\"text\":\"go on\"}]}}}");
    assert_string_equal(task_state(r), "TASK_STATE_COMPLETED");
    assert_string_equal(last_note, "go on");
    json_decref(r);
}

static void test_cancel(void **state)
{
    (void)state;
    next_state = "running";
    json_t *r = rpc("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"SendMessage\",\"params\":{"
                    "\"message\":{\"parts\":[{\"text\":\"long\"}]},"
                    "\"configuration\":{\"returnImmediately\":true}}}");
    assert_string_equal(task_state(r), "TASK_STATE_WORKING");
    json_decref(r);
    r = rpc("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"CancelTask\",\"params\":{\"id\":\"run_1\"}}");
    assert_string_equal(json_string_value(json_object_get(
                            json_object_get(json_object_get(r, "result"), "status"), "state")),
                        "TASK_STATE_CANCELED");
    json_decref(r);
    assert_int_equal(rpc_code("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"CancelTask\",\"params\":{\"id\":\"run_1\"}}"),
                     -32002);
    assert_int_equal(rpc_code("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"SubscribeToTask\",\"params\":{\"id\":\"run_1\"}}"),
                     -32004);
}

static void test_stream_order(void **state)
{
    (void)state;
    next_state = "queued";
    const char *req = "{\"jsonrpc\":\"2.0\",\"id\":\"s1\",\"method\":\"SendStreamingMessage\","
                      "\"params\":{\"message\":{\"parts\":[{\"text\":\"stream it\"}]}}}";
    a2a_answer a = a2a_dispatch(&ENV, &WHO, req, strlen(req));
    assert_null(a.json);
    assert_non_null(a.stream);
    const char *want[] = {"task", "statusUpdate", "artifactUpdate", "statusUpdate"};
    const char *states[] = {"TASK_STATE_SUBMITTED", "TASK_STATE_WORKING", NULL,
                            "TASK_STATE_COMPLETED"};
    char *j;
    int n = 0;
    while (a2a_stream_next(a.stream, &j, 1000) == 1) {
        assert_true(n < 4);
        json_t *r = json_loads(j, 0, NULL);
        assert_string_equal(json_string_value(json_object_get(r, "id")), "s1");
        json_t *res = json_object_get(r, "result");
        json_t *v = json_object_get(res, want[n]);
        assert_non_null(v);
        if (states[n])
            assert_string_equal(json_string_value(json_object_get(json_object_get(v, "status"),
                                                                  "state")),
                                states[n]);
        else
            assert_string_equal(json_string_value(json_object_get(json_object_get(v, "artifact"),
                                                                  "name")),
                                "conclusion.md");
        json_decref(r);
        free(j);
        n++;
    }
    assert_int_equal(n, 4);
    assert_int_equal(a2a_stream_next(a.stream, &j, 10), -1);
    a2a_stream_free(a.stream);
}

static pthread_mutex_t cap_mu = PTHREAD_MUTEX_INITIALIZER;
static char captured[8][512];
static int n_captured;

static void capture(const char *url, const char *const *headers, const char *body)
{
    pthread_mutex_lock(&cap_mu);
    if (n_captured < 8) {
        snprintf(captured[n_captured], sizeof captured[0], "%s|%s|%s|%.300s", url, headers[0],
                 headers[1] ? headers[1] : "", body);
        n_captured++;
    }
    pthread_mutex_unlock(&cap_mu);
}

static void test_push_configs(void **state)
{
    (void)state;
    a2a_push_set_sender(capture);
    json_t *r = rpc(SEND("{\"text\":\"x\"}"));
    json_decref(r);
    assert_int_equal(rpc_code("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"CreateTaskPushNotificationConfig\","
                              "\"params\":{\"taskId\":\"run_1\",\"url\":\"http://192.0.2.1/x\"}}"),
                     -32602);
    assert_int_equal(rpc_code("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"CreateTaskPushNotificationConfig\","
                              "\"params\":{\"taskId\":\"run_9\",\"url\":\"http://127.0.0.1:9/x\"}}"),
                     -32001);
    r = rpc("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"CreateTaskPushNotificationConfig\","
            "\"params\":{\"taskId\":\"run_1\",\"id\":\"c1\",\"url\":\"http://127.0.0.1:9/x\","
            "\"token\":\"t\"}}");
    assert_string_equal(json_string_value(json_object_get(json_object_get(r, "result"), "id")),
                        "c1");
    json_decref(r);
    /* The watcher delivers the Task and the updates after it, with the token. */
    for (int i = 0; i < 200; i++) {
        pthread_mutex_lock(&cap_mu);
        int n = n_captured;
        pthread_mutex_unlock(&cap_mu);
        if (n >= 2)
            break;
        struct timespec ts = {0, 10000000};
        nanosleep(&ts, NULL);
    }
    pthread_mutex_lock(&cap_mu);
    assert_true(n_captured >= 2);
    assert_non_null(strstr(captured[0], "http://127.0.0.1:9/x|Content-Type: application/json|"
                                        "X-A2A-Notification-Token: t|{\"task\":"));
    assert_non_null(strstr(captured[1], "{\"statusUpdate\":"));
    pthread_mutex_unlock(&cap_mu);
    assert_int_equal(rpc_code("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"CreateTaskPushNotificationConfig\","
                              "\"params\":{\"taskId\":\"run_1\",\"url\":\"http://127.0.0.1:9/y\","
                              "\"token\":\"a\\r\\nX-Evil: 1\"}}"),
                     -32602);
    r = rpc("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"GetTaskPushNotificationConfig\","
            "\"params\":{\"taskId\":\"run_1\",\"id\":\"c1\"}}");
    assert_string_equal(json_string_value(json_object_get(json_object_get(r, "result"), "token")),
                        "t");
    json_decref(r);
    r = rpc("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ListTaskPushNotificationConfigs\","
            "\"params\":{\"taskId\":\"run_1\"}}");
    assert_int_equal(json_array_size(json_object_get(json_object_get(r, "result"), "configs")), 1);
    json_decref(r);
    assert_int_equal(rpc_code("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"DeleteTaskPushNotificationConfig\","
                              "\"params\":{\"taskId\":\"run_1\",\"id\":\"c1\"}}"),
                     0);
    assert_int_equal(rpc_code("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"DeleteTaskPushNotificationConfig\","
                              "\"params\":{\"taskId\":\"run_1\",\"id\":\"c1\"}}"),
                     -32001);
    a2a_shutdown();
    a2a_push_set_sender(NULL);
}

static void test_card(void **state)
{
    (void)state;
    char dir[512];
    assert_int_equal(tmpdir_make(dir, sizeof dir, "loom-a2a", true), 0);
    tmpdir_write(dir, "profiles.yaml",
                 "profiles:\n"
                 "  default: {}\n"
                 "  reviewer:\n"
                 "    model: claude-x\n");
    srv_error err = {0};
    server_objects *objs = objects_load_all(dir, dir, &err);
    assert_non_null(objs);
    a2a_env env = ENV;
    env.objs = objs;
    char *c = a2a_card_json(&env, NULL);
    json_t *card = json_loads(c, 0, NULL);
    free(c);
    assert_string_equal(json_string_value(json_object_get(card, "name")), "Loom");
    json_t *ifc = json_array_get(json_object_get(card, "supportedInterfaces"), 0);
    assert_string_equal(json_string_value(json_object_get(ifc, "url")), "http://127.0.0.1:9999/a2a");
    assert_string_equal(json_string_value(json_object_get(ifc, "protocolBinding")), "JSONRPC");
    assert_string_equal(json_string_value(json_object_get(ifc, "protocolVersion")), "1.0");
    json_t *caps = json_object_get(card, "capabilities");
    assert_true(json_is_true(json_object_get(caps, "streaming")));
    assert_true(json_is_true(json_object_get(caps, "pushNotifications")));
    json_t *skills = json_object_get(card, "skills");
    assert_int_equal(json_array_size(skills), 2);
    assert_string_equal(json_string_value(json_object_get(json_array_get(skills, 1), "id")),
                        "reviewer");
    assert_non_null(strstr(json_string_value(json_object_get(json_array_get(skills, 1),
                                                             "description")),
                           "claude-x"));
    assert_non_null(json_object_get(json_object_get(json_object_get(card, "securitySchemes"),
                                                    "bearer"),
                                    "httpAuthSecurityScheme"));
    json_decref(card);
    objects_free(objs);
    tmpdir_remove(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_errors, reset),
        cmocka_unit_test(test_state_table),
        cmocka_unit_test_setup(test_send_blocking, reset),
        cmocka_unit_test_setup(test_approval, reset),
        cmocka_unit_test_setup(test_cancel, reset),
        cmocka_unit_test_setup(test_stream_order, reset),
        cmocka_unit_test_setup(test_push_configs, reset),
        cmocka_unit_test(test_card),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
