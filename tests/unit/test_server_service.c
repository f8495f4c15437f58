/* test_server_service.c — the service (src/surfaces/server/runs/) through
 * service.h against loom's replay provider: a run's life (events 1..N with
 * no hole), approvals as objects (approve, reject, expire, answer twice),
 * cancel, pause and resume (seq continuing), the multitask strategies,
 * tenant isolation, the state table, feeds, and crash recovery.
 *
 * The objects come from a config folder this file writes (objects_load_all)
 * and the store is the real SQLite one in the test's folder, where the
 * tests also plant what a crash leaves. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>
#include <pthread.h>

#include "surfaces/server/runs/artifacts.h"
#include "surfaces/server/runs/knowledge.h"
#include "surfaces/server/runs/service.h"
#include "surfaces/server/runs/service_int.h"
#include "tmpdir.h"

/* ---- fixtures -------------------------------------------------------------- */

static char root[512], work[600];
static store *st;
static server_objects *objs;
static service *svc;
static const principal alice = {"acme", NULL, "alice", ROLE_ADMIN, true};
static const principal viewer = {"acme", NULL, "vic", ROLE_VIEWER, false};
static const principal mallory = {"other", NULL, "mallory", ROLE_ADMIN, true};

static service *open_service(bool resume)
{
    char home[700];
    snprintf(home, sizeof home, "%s/home", root);
    service_options o = {.workspace = work, .loom_home = home, .resume_on_restart = resume,
                         .batch_ms = 2};
    srv_error err = {0};
    service *s = service_new(&o, st, objs, NULL, &err);
    if (!s)
        fail_msg("service_new: %s", err.message);
    return s;
}

static void write_config(const char *dir)
{
    tmpdir_write(dir, "profiles.yaml",
                 "profiles:\n"
                 "  default:\n"
                 "    policies: [default]\n"
                 "  weird:\n"
                 "    tools:\n"
                 "      allow: [bash, teleport]\n"
                 "  bashy:\n"
                 "    tools:\n"
                 "      allow: [bash, file_read]\n");
    tmpdir_write(dir, "policies.yaml",
                 "policies:\n"
                 "  default:\n"
                 "    permissions: {mode: acceptEdits, deny: [\"rm -rf\"]}\n"
                 "  ask_echo:\n"
                 "    permissions: {mode: acceptEdits, ask: [\"Bash(echo:*)\"]}\n"
                 "  ask_fast:\n"
                 "    permissions: {mode: acceptEdits, ask: [\"Bash(echo:*)\"]}\n"
                 "    approvals: {timeout_seconds: 1}\n"
                 "  bypass:\n"
                 "    permissions: {mode: bypassPermissions}\n"
                 "  nobash:\n"
                 "    permissions: {mode: acceptEdits, deny: [Bash]}\n");
    tmpdir_write(dir, "knowledge_sources.yaml",
                 "knowledge_sources:\n"
                 "  docs: {type: filesystem, path: kb}\n");
    tmpdir_write(dir, "kb/guide.md", "# Guide\n\nA failed call is retried three times.\n");
    char tenants[4096];
    snprintf(tenants, sizeof tenants,
             "tenants:\n"
             "  acme:\n"
             "    projects:\n"
             "      web: {workspace: %s}\n"
             "      mobile: {workspace: %s}\n"
             "    webhooks:\n"
             "      - id: wh_main\n"
             "        url: http://127.0.0.1:9/hooks\n"
             "        secret: whsec_MDEyMzQ1Njc4OWFiY2RlZg==\n"
             "  other:\n"
             "    projects:\n"
             "      default: {workspace: %s}\n",
             work, work, work);
    tmpdir_write(dir, "tenants.yaml", tenants);
}

static int setup(void **state)
{
    (void)state;
    if (tmpdir_make(root, sizeof root, "loom-svc", true) != 0)
        return -1;
    snprintf(work, sizeof work, "%s/work", root);
    mkdir(work, 0700);
    char claude[700], conf[700];
    snprintf(claude, sizeof claude, "%s/claude", root);
    setenv("CLAUDE_CONFIG_DIR", claude, 1);
    unsetenv("ANTHROPIC_API_KEY");
    unsetenv("OPENAI_API_KEY");
    unsetenv("LOOM_PROVIDER");
    unsetenv("LOOM_MODEL");
    char db[700];
    snprintf(db, sizeof db, "sqlite:%s/store/loom.db", root);
    srv_error serr = {0};
    st = store_open(db, &serr);
    if (!st)
        fail_msg("the store did not open: %s", serr.message);
    snprintf(conf, sizeof conf, "%s/config", root);
    write_config(conf);
    srv_error err = {0};
    objs = objects_load_all(conf, work, &err);
    if (!objs)
        fail_msg("the config is refused: %s", err.message);
    svc = open_service(false);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    service_free(svc);
    svc = NULL;
    objects_free(objs);
    store_close(st);
    tmpdir_remove(root);
    return 0;
}

static int cassette_n;
/* Points LOOM_CASSETTE at a new file of these turns (a JSON array text);
 * sessions made after take it. */
static void cassette(const char *turns)
{
    char rel[64], path[700];
    snprintf(rel, sizeof rel, "cassette%d.json", ++cassette_n);
    snprintf(path, sizeof path, "%s/%s", root, rel);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fprintf(f, "{\"turns\": %s}", turns);
    fclose(f);
    setenv("LOOM_CASSETTE", path, 1);
}

static json_t *ok(char *text, srv_error *err)
{
    if (!text)
        fail_msg("the call failed: %s (%s)", err->message, loom_error_code_name(err->code));
    json_t *o = json_loads(text, 0, NULL);
    free(text);
    assert_non_null(o);
    return o;
}

static const char *str(json_t *o, const char *k)
{
    return json_string_value(json_object_get(o, k));
}

/* A session and a task of goal under policy; the task id into tid. */
static void session_task(const char *policy, const char *goal, char *sid, char *tid)
{
    srv_error err = {0};
    json_t *s = ok(service_session_create(svc, &alice, "{\"user_id\": \"u1\"}", &err), &err);
    snprintf(sid, SVC_ID_LEN, "%s", str(s, "session_id"));
    assert_string_equal(str(s, "tenant_id"), "acme");
    assert_string_equal(str(s, "project_id"), "web");
    assert_true(json_is_null(json_object_get(s, "active_run_id")));
    json_decref(s);
    char body[512];
    snprintf(body, sizeof body, "{\"session_id\": \"%s\", \"goal\": \"%s\"%s%s%s}", sid, goal,
             policy ? ", \"policy_id\": \"" : "", policy ? policy : "", policy ? "\"" : "");
    json_t *t = ok(service_task_create(svc, &alice, body, &err), &err);
    snprintf(tid, SVC_ID_LEN, "%s", str(t, "task_id"));
    assert_string_equal(str(t, "status"), "created");
    json_decref(t);
}

static json_t *start_run(const char *tid, const char *strategy, srv_error *err)
{
    char body[256];
    snprintf(body, sizeof body, "{\"task_id\": \"%s\"%s%s%s}", tid,
             strategy ? ", \"multitask_strategy\": \"" : "", strategy ? strategy : "",
             strategy ? "\"" : "");
    bool ended;
    char *out = service_run_create(svc, &alice, body, -1, &ended, err);
    if (!out)
        return NULL;
    json_t *o = json_loads(out, 0, NULL);
    free(out);
    return o;
}

static json_t *get_run(const char *id)
{
    srv_error err = {0};
    return ok(service_run_get(svc, &alice, id, &err), &err);
}

/* Polls the run until its state is one of the '|'-separated names. */
static json_t *wait_state(const char *id, const char *states)
{
    for (int i = 0; i < 1500; i++) {
        json_t *r = get_run(id);
        char pat[64];
        snprintf(pat, sizeof pat, "|%s|", str(r, "state"));
        char all[256];
        snprintf(all, sizeof all, "|%s|", states);
        if (strstr(all, pat))
            return r;
        json_decref(r);
        usleep(20000);
    }
    json_t *r = get_run(id);
    fail_msg("run %s stayed %s (step %s), never %s", id, str(r, "state"),
             str(r, "current_step"), states);
    return NULL;
}

static json_t *wait_step(const char *id, const char *prefix)
{
    for (int i = 0; i < 1500; i++) {
        json_t *r = get_run(id);
        const char *s = str(r, "current_step");
        if (s && !strncmp(s, prefix, strlen(prefix)))
            return r;
        json_decref(r);
        usleep(20000);
    }
    fail_msg("run %s never reached step %s", id, prefix);
    return NULL;
}

/* Every stored event of the run (all visibilities), checked: seq 1..N, no
 * hole, event_id "<run>.<seq>". */
static json_t *all_events(const char *id)
{
    srv_error err = {0};
    json_t *page = ok(service_events_page(svc, &alice, id, 0, 1000, 7, &err), &err);
    json_t *items = json_incref(json_object_get(page, "items"));
    json_decref(page);
    size_t i;
    json_t *e;
    json_array_foreach(items, i, e) {
        if (json_integer_value(json_object_get(e, "seq")) != (json_int_t)i + 1)
            fail_msg("event %zu of %s has seq %lld", i + 1, id,
                     (long long)json_integer_value(json_object_get(e, "seq")));
        char want[128];
        snprintf(want, sizeof want, "%s.%zu", id, i + 1);
        assert_string_equal(str(e, "event_id"), want);
        assert_string_equal(str(e, "run_id"), id);
    }
    return items;
}

/* How many events of type (and, for run.state_changed, new state) the run has. */
static int count_events(json_t *evs, const char *type, const char *state)
{
    int n = 0;
    size_t i;
    json_t *e;
    json_array_foreach(evs, i, e) {
        if (strcmp(str(e, "type"), type))
            continue;
        json_t *p = json_object_get(e, "payload");
        if (state && (!str(p, "state") || strcmp(str(p, "state"), state) ||
                      !json_object_get(p, "from")))
            continue;
        n++;
    }
    return n;
}

static const char *DONE = "[{\"reply\": {\"text\": \"Done.\"}}]";

/* ---- the tests ------------------------------------------------------------ */

static void test_state_table(void **state)
{
    (void)state;
    static const char *const listed[] = {
        "queued>running",          "queued>cancelled",        "queued>failed",
        "queued>blocked_by_policy", "queued>blocked_by_capability",
        "running>waiting_approval", "running>waiting_external", "running>paused",
        "running>completed",       "running>failed",          "running>cancelled",
        "running>blocked_by_policy", "running>blocked_by_capability",
        "waiting_approval>running", "waiting_approval>paused", "waiting_approval>failed",
        "waiting_approval>cancelled", "waiting_external>running", "waiting_external>paused",
        "waiting_external>failed", "waiting_external>cancelled", "paused>queued",
        "paused>cancelled",        "failed>queued",
    };
    int allowed = 0;
    for (int f = 0; f < LOOM_RUN_STATE_END; f++)
        for (int t = 0; t < LOOM_RUN_STATE_END; t++) {
            char pair[80];
            snprintf(pair, sizeof pair, "%s>%s", loom_run_state_name((loom_run_state)f),
                     loom_run_state_name((loom_run_state)t));
            bool want = false;
            for (size_t i = 0; i < sizeof listed / sizeof listed[0]; i++)
                want = want || !strcmp(listed[i], pair);
            if (run_state_can((loom_run_state)f, (loom_run_state)t) != want)
                fail_msg("%s is %s in the table", pair, want ? "missing" : "wrongly allowed");
            allowed += want;
        }
    assert_int_equal(allowed, (int)(sizeof listed / sizeof listed[0]));
    assert_false(run_state_can(LOOM_RUN_STATE_END, LOOM_RUN_QUEUED));
}

static void test_run_completes_with_every_event(void **state)
{
    (void)state;
    cassette(DONE);
    char sid[SVC_ID_LEN], tid[SVC_ID_LEN];
    session_task(NULL, "say done", sid, tid);
    srv_error err = {0};
    bool ended = false;
    char body[128];
    snprintf(body, sizeof body, "{\"task_id\": \"%s\"}", tid);
    json_t *r = ok(service_run_create(svc, &alice, body, 20000, &ended, &err), &err);
    assert_true(ended);
    assert_string_equal(str(r, "state"), "completed");
    assert_string_equal(str(r, "summary"), "Done.");
    assert_string_equal(str(r, "current_step"), "ended");
    assert_string_equal(str(r, "policy_id"), "default");
    assert_string_equal(str(r, "multitask_strategy"), "reject");
    assert_true(json_is_string(json_object_get(r, "started_at")));
    assert_true(json_is_string(json_object_get(r, "ended_at")));
    assert_true(json_is_null(json_object_get(r, "error")));
    const char *id = str(r, "run_id");
    assert_true(!strncmp(id, "run_", 4) && strlen(id) == 30);
    json_t *evs = all_events(id);
    json_t *first = json_array_get(evs, 0);
    assert_string_equal(str(first, "type"), "run.state_changed");
    assert_true(json_is_null(json_object_get(json_object_get(first, "payload"), "from")));
    assert_int_equal(count_events(evs, "run.state_changed", "running"), 1);
    assert_int_equal(count_events(evs, "run.state_changed", "completed"), 1);
    assert_true(count_events(evs, "artifact.created", NULL) >= 4); /* conclusion … summary */
    json_t *last = json_array_get(evs, json_array_size(evs) - 1);
    assert_string_equal(str(last, "type"), "run.completed");
    assert_string_equal(str(last, "visibility"), "system");
    if (count_events(evs, "token.delta", NULL) + count_events(evs, "model.completed", NULL) == 0)
        fail_msg("loom's own events are not in the run's events");
    /* The default mask leaves audit out; a viewer may not ask for it. */
    json_t *page = ok(service_events_page(svc, &viewer, id, 2, 1, 0, &err), &err);
    assert_int_equal(json_integer_value(json_object_get(page, "next_after")), 3);
    assert_true(json_is_true(json_object_get(page, "has_more")));
    json_decref(page);
    assert_null(service_events_page(svc, &viewer, id, 0, 10, 7, &err));
    assert_int_equal(err.code, LOOM_ERR_INVALID_REQUEST);
    srv_error_clear(&err);
    /* A feed gives each event once, then the end. */
    service_feed *f = service_feed_open(svc, &alice, id, 0, 7, &err);
    assert_non_null(f);
    char *json;
    int64_t seq;
    size_t n = 0;
    int rc;
    while ((rc = service_feed_next(f, &json, &seq, 2000)) == 1) {
        assert_int_equal(seq, (int64_t)++n);
        free(json);
    }
    assert_int_equal(rc, -1);
    assert_non_null(strstr(json, "\"completed\""));
    free(json);
    assert_int_equal(n, json_array_size(evs));
    service_feed_close(f);
    /* Transcript and artifacts. */
    json_t *tr = ok(service_transcript(svc, &alice, id, &err), &err);
    assert_true(json_array_size(json_object_get(tr, "items")) >= 2);
    json_decref(tr);
    json_t *arts = ok(service_artifacts_list(svc, &alice, id, &err), &err);
    json_t *sum = NULL;
    size_t k;
    json_t *a0;
    json_array_foreach(json_object_get(arts, "items"), k, a0) if (!strcmp(str(a0, "name"),
                                                                           "summary.json")) sum = a0;
    assert_non_null(sum);
    char uri[128];
    snprintf(uri, sizeof uri, "artifact://%s/summary.json", id);
    assert_string_equal(str(sum, "uri"), uri);
    assert_string_equal(str(sum, "kind"), "summary");
    json_decref(arts);
    size_t len;
    char *ct = NULL;
    char *data = service_artifact_content(svc, &alice, id, "summary.json", &len, &ct, &err);
    assert_non_null(data);
    assert_string_equal(ct, "application/json");
    free(data);
    free(ct);
    /* The run list has it; a resume of a completed run is refused. */
    json_t *list = ok(service_run_list(svc, &alice, sid, NULL, NULL, 10, &err), &err);
    assert_int_equal(json_array_size(json_object_get(list, "items")), 1);
    json_decref(list);
    assert_null(service_run_resume(svc, &alice, id, NULL, &err));
    assert_int_equal(err.code, LOOM_ERR_INVALID_STATE_TRANSITION);
    srv_error_clear(&err);
    assert_null(service_run_cancel(svc, &alice, id, NULL, &err));
    assert_int_equal(err.code, LOOM_ERR_INVALID_STATE_TRANSITION);
    srv_error_clear(&err);
    json_decref(evs);
    json_decref(r);
}

static const char *BASH_ECHO_THEN_WRITE =
    "[{\"reply\": {\"text\": \"Checking.\", \"tool_calls\": [{\"id\": \"c1\", \"name\": \"Bash\","
    " \"input\": {\"command\": \"echo hello-approval\"}}]}},"
    " {\"reply\": {\"text\": \"Writing.\", \"tool_calls\": [{\"id\": \"c2\", \"name\": \"Write\","
    " \"input\": {\"file_path\": \"%s/new.txt\", \"content\": \"fresh\\n\"}}]}},"
    " {\"reply\": {\"text\": \"Done.\"}}]";

/* The run's one pending approval (waits for it). */
static json_t *pending_approval(const char *run_id)
{
    json_t *r = wait_state(run_id, "waiting_approval");
    assert_string_equal(str(r, "current_step"), "waiting_approval");
    char apv[SVC_ID_LEN];
    snprintf(apv, sizeof apv, "%s", str(r, "pending_approval_id"));
    json_decref(r);
    srv_error err = {0};
    json_t *list = ok(service_approval_list(svc, &alice, run_id, "pending", &err), &err);
    assert_int_equal(json_array_size(json_object_get(list, "items")), 1);
    json_t *a = json_incref(json_array_get(json_object_get(list, "items"), 0));
    json_decref(list);
    assert_string_equal(str(a, "approval_id"), apv);
    return a;
}

static void test_approval_approved_then_patch(void **state)
{
    (void)state;
    char turns[2048];
    snprintf(turns, sizeof turns, BASH_ECHO_THEN_WRITE, work);
    cassette(turns);
    char sid[SVC_ID_LEN], tid[SVC_ID_LEN];
    session_task("ask_echo", "say hello", sid, tid);
    srv_error err = {0};
    bool ended = true;
    char body[128];
    snprintf(body, sizeof body, "{\"task_id\": \"%s\"}", tid);
    /* Sync: the run stops to wait for a person. */
    assert_null(service_run_create(svc, &alice, body, 20000, &ended, &err));
    assert_int_equal(err.code, LOOM_ERR_RUN_WAITING_APPROVAL);
    char run_id[sizeof err.run_id];
    snprintf(run_id, sizeof run_id, "%s", err.run_id);
    srv_error_clear(&err);
    json_t *a = pending_approval(run_id);
    assert_string_equal(str(a, "kind"), "tool_execution");
    assert_string_equal(str(a, "question"), "Allow Bash: echo hello-approval?");
    json_t *ctx = json_object_get(a, "context");
    assert_string_equal(str(ctx, "tool"), "Bash");
    assert_string_equal(str(ctx, "command"), "echo hello-approval");
    assert_int_equal(json_integer_value(json_object_get(a, "timeout_seconds")), 600);
    char apv[SVC_ID_LEN];
    snprintf(apv, sizeof apv, "%s", str(a, "approval_id"));
    json_decref(a);
    /* A viewer may not answer; another tenant does not see it. */
    assert_null(service_approval_answer(svc, &viewer, apv, true, NULL, &err));
    assert_int_equal(err.code, LOOM_ERR_PROJECT_SCOPE_DENIED);
    srv_error_clear(&err);
    assert_null(service_approval_answer(svc, &mallory, apv, true, NULL, &err));
    assert_int_equal(err.code, LOOM_ERR_RESOURCE_NOT_FOUND);
    srv_error_clear(&err);
    json_t *ans = ok(service_approval_answer(svc, &alice, apv, true,
                                             "{\"comment\": \"fine\"}", &err),
                     &err);
    assert_string_equal(str(ans, "status"), "approved");
    assert_string_equal(str(ans, "actor_id"), "alice");
    assert_string_equal(str(ans, "comment"), "fine");
    assert_true(json_is_string(json_object_get(ans, "resolved_at")));
    json_decref(ans);
    /* Answering twice (a second client taking over late) is refused. */
    assert_null(service_approval_answer(svc, &alice, apv, false, NULL, &err));
    assert_int_equal(err.code, LOOM_ERR_INVALID_STATE_TRANSITION);
    srv_error_clear(&err);
    json_t *r = wait_state(run_id, "completed|failed|cancelled");
    assert_string_equal(str(r, "state"), "completed");
    assert_true(json_is_null(json_object_get(r, "pending_approval_id")));
    json_decref(r);
    json_t *evs = all_events(run_id);
    assert_int_equal(count_events(evs, "run.state_changed", "waiting_approval"), 1);
    assert_int_equal(count_events(evs, "approval.answered", NULL), 1);
    assert_int_equal(count_events(evs, "run.state_changed", "running"), 2);
    json_decref(evs);
    size_t len;
    char *ct = NULL;
    char *patch = service_artifact_content(svc, &alice, run_id, "patch.diff", &len, &ct, &err);
    if (!patch)
        fail_msg("no patch.diff: %s", err.message);
    if (!strstr(patch, "+++ b/new.txt"))
        fail_msg("the patch does not hold the new file:\n%s", patch);
    assert_string_equal(ct, "text/x-diff");
    free(patch);
    free(ct);
}

static void test_approval_rejected(void **state)
{
    (void)state;
    char turns[2048];
    snprintf(turns, sizeof turns, BASH_ECHO_THEN_WRITE, work);
    cassette(turns);
    char sid[SVC_ID_LEN], tid[SVC_ID_LEN];
    session_task("ask_echo", "say hello", sid, tid);
    srv_error err = {0};
    json_t *r = start_run(tid, NULL, &err);
    assert_non_null(r);
    assert_string_equal(str(r, "state"), "queued");
    char run_id[SVC_ID_LEN];
    snprintf(run_id, sizeof run_id, "%s", str(r, "run_id"));
    json_decref(r);
    json_t *a = pending_approval(run_id);
    json_t *ans = ok(service_approval_answer(svc, &alice, str(a, "approval_id"), false,
                                             "{\"actor_id\": \"bob\", \"comment\": \"no\"}", &err),
                     &err);
    assert_string_equal(str(ans, "status"), "rejected");
    assert_string_equal(str(ans, "actor_id"), "bob");
    json_decref(ans);
    json_decref(a);
    r = wait_state(run_id, "completed|failed|cancelled");
    assert_string_equal(str(r, "state"), "completed");
    json_decref(r);
}

static void test_approval_expires(void **state)
{
    (void)state;
    char turns[2048];
    snprintf(turns, sizeof turns, BASH_ECHO_THEN_WRITE, work);
    cassette(turns);
    char sid[SVC_ID_LEN], tid[SVC_ID_LEN];
    session_task("ask_fast", "say hello", sid, tid);
    srv_error err = {0};
    json_t *r = start_run(tid, NULL, &err);
    char run_id[SVC_ID_LEN];
    snprintf(run_id, sizeof run_id, "%s", str(r, "run_id"));
    json_decref(r);
    json_t *a = pending_approval(run_id);
    char apv[SVC_ID_LEN];
    snprintf(apv, sizeof apv, "%s", str(a, "approval_id"));
    assert_int_equal(json_integer_value(json_object_get(a, "timeout_seconds")), 1);
    json_decref(a);
    r = wait_state(run_id, "completed|failed|cancelled");
    json_decref(r);
    json_t *got = ok(service_approval_get(svc, &alice, apv, &err), &err);
    assert_string_equal(str(got, "status"), "expired");
    json_decref(got);
    assert_null(service_approval_answer(svc, &alice, apv, true, NULL, &err));
    assert_int_equal(err.code, LOOM_ERR_RUN_APPROVAL_EXPIRED);
    srv_error_clear(&err);
}

static const char *SLEEPER =
    "[{\"reply\": {\"text\": \"Working.\", \"tool_calls\": [{\"id\": \"s1\", \"name\": \"Bash\","
    " \"input\": {\"command\": \"sleep %d; echo slept\"}}]}},"
    " {\"reply\": {\"text\": \"First done.\"}}, {\"reply\": {\"text\": \"Second done.\"}},"
    " {\"reply\": {\"text\": \"Third done.\"}}]";

static void sleeper(int seconds)
{
    char turns[1024];
    snprintf(turns, sizeof turns, SLEEPER, seconds);
    cassette(turns);
}

static void test_cancel(void **state)
{
    (void)state;
    sleeper(10);
    char sid[SVC_ID_LEN], tid[SVC_ID_LEN];
    session_task("bypass", "sleep", sid, tid);
    srv_error err = {0};
    json_t *r = start_run(tid, NULL, &err);
    char run_id[SVC_ID_LEN];
    snprintf(run_id, sizeof run_id, "%s", str(r, "run_id"));
    json_decref(r);
    json_decref(wait_step(run_id, "tool:Bash"));
    json_t *s = ok(service_session_get(svc, &alice, sid, &err), &err);
    assert_string_equal(str(s, "active_run_id"), run_id);
    json_decref(s);
    json_decref(ok(service_run_cancel(svc, &alice, run_id, "{\"reason\": \"enough\"}", &err),
                   &err));
    r = wait_state(run_id, "cancelled|completed|failed");
    assert_string_equal(str(r, "state"), "cancelled");
    assert_string_equal(str(json_object_get(r, "error"), "code"), "run_cancelled");
    json_decref(r);
    assert_null(service_run_cancel(svc, &alice, run_id, NULL, &err));
    assert_int_equal(err.code, LOOM_ERR_INVALID_STATE_TRANSITION);
    srv_error_clear(&err);
    assert_null(service_run_pause(svc, &alice, run_id, &err));
    assert_int_equal(err.code, LOOM_ERR_INVALID_STATE_TRANSITION);
    srv_error_clear(&err);
}

static void test_pause_then_resume(void **state)
{
    (void)state;
    sleeper(1);
    char sid[SVC_ID_LEN], tid[SVC_ID_LEN];
    session_task("bypass", "count", sid, tid);
    srv_error err = {0};
    json_t *r = start_run(tid, NULL, &err);
    char run_id[SVC_ID_LEN];
    snprintf(run_id, sizeof run_id, "%s", str(r, "run_id"));
    json_decref(r);
    json_decref(wait_step(run_id, "tool:Bash"));
    json_decref(ok(service_run_pause(svc, &alice, run_id, &err), &err));
    r = wait_state(run_id, "paused|completed|failed|cancelled");
    assert_string_equal(str(r, "state"), "paused");
    assert_string_equal(str(r, "stop_reason"), "paused");
    json_decref(r);
    assert_null(service_run_pause(svc, &alice, run_id, &err));
    assert_int_equal(err.code, LOOM_ERR_INVALID_STATE_TRANSITION);
    srv_error_clear(&err);
    json_t *before = all_events(run_id);
    size_t n_before = json_array_size(before);
    json_decref(before);
    r = ok(service_run_resume(svc, &alice, run_id, "{\"note\": \"go on\"}", &err), &err);
    assert_string_equal(str(r, "run_id"), run_id);
    assert_true(json_is_null(json_object_get(r, "resumed_from")));
    json_decref(r);
    r = wait_state(run_id, "completed|failed|cancelled");
    assert_string_equal(str(r, "state"), "completed");
    assert_string_equal(str(r, "summary"), "First done.");
    json_decref(r);
    json_t *evs = all_events(run_id); /* seq goes on, no hole */
    assert_true(json_array_size(evs) > n_before);
    assert_int_equal(count_events(evs, "run.state_changed", "paused"), 1);
    assert_int_equal(count_events(evs, "run.state_changed", "queued"), 2); /* created, resumed */
    assert_int_equal(count_events(evs, "run.state_changed", "running"), 2);
    json_decref(evs);
}

static void test_multitask_strategies(void **state)
{
    (void)state;
    sleeper(2);
    char sid[SVC_ID_LEN], tid[SVC_ID_LEN];
    session_task("bypass", "sleep", sid, tid);
    srv_error err = {0};
    json_t *first = start_run(tid, NULL, &err);
    char r1[SVC_ID_LEN];
    snprintf(r1, sizeof r1, "%s", str(first, "run_id"));
    json_decref(first);
    /* reject (the default): 409 naming the active run. */
    assert_null(start_run(tid, "reject", &err));
    assert_int_equal(err.code, LOOM_ERR_INVALID_STATE_TRANSITION);
    assert_string_equal(err.run_id, r1);
    srv_error_clear(&err);
    assert_null(start_run(tid, "sideways", &err));
    assert_int_equal(err.code, LOOM_ERR_INVALID_REQUEST);
    srv_error_clear(&err);
    /* enqueue: queued until the first ends. */
    json_t *second = start_run(tid, "enqueue", &err);
    assert_non_null(second);
    char r2[SVC_ID_LEN];
    snprintf(r2, sizeof r2, "%s", str(second, "run_id"));
    assert_string_equal(str(second, "state"), "queued");
    json_decref(second);
    json_t *a = wait_state(r1, "completed|failed|cancelled");
    assert_string_equal(str(a, "state"), "completed");
    json_decref(a);
    json_t *b = wait_state(r2, "completed|failed|cancelled");
    assert_string_equal(str(b, "state"), "completed");
    assert_string_equal(str(b, "summary"), "Second done.");
    json_decref(b);

    /* interrupt: the active run is cancelled, the new one runs. */
    sleeper(10);
    session_task("bypass", "sleep", sid, tid);
    json_t *long_run = start_run(tid, NULL, &err);
    char r3[SVC_ID_LEN];
    snprintf(r3, sizeof r3, "%s", str(long_run, "run_id"));
    json_decref(long_run);
    json_decref(wait_step(r3, "tool:Bash"));
    json_t *cut = start_run(tid, "interrupt", &err);
    assert_non_null(cut);
    char r4[SVC_ID_LEN];
    snprintf(r4, sizeof r4, "%s", str(cut, "run_id"));
    json_decref(cut);
    json_t *c = wait_state(r3, "completed|failed|cancelled");
    if (strcmp(str(c, "state"), "cancelled")) {
        json_t *ev3 = all_events(r3);
        size_t k;
        json_t *x;
        json_array_foreach(ev3, k, x) {
            char *pl = json_dumps(json_object_get(x, "payload"), JSON_COMPACT);
            fprintf(stderr, "%s %.300s\n", str(x, "type"), pl);
            free(pl);
        }
        fail_msg("the interrupted run is %s", str(c, "state"));
    }
    json_decref(c);
    json_t *evs = all_events(r3);
    char why[128];
    snprintf(why, sizeof why, "interrupted by %s", r4);
    bool said = false;
    size_t i;
    json_t *e;
    json_array_foreach(evs, i, e) {
        const char *reason = str(json_object_get(e, "payload"), "reason");
        said = said || (reason && !strcmp(reason, why));
    }
    assert_true(said);
    json_decref(evs);
    json_t *d = wait_state(r4, "completed|failed|cancelled");
    assert_string_equal(str(d, "state"), "completed");
    json_decref(d);
}

static void test_capability_missing_blocks(void **state)
{
    (void)state;
    cassette(DONE);
    srv_error err = {0};
    json_t *s = ok(service_session_create(svc, &alice, NULL, &err), &err);
    char body[256];
    snprintf(body, sizeof body, "{\"session_id\": \"%s\", \"goal\": \"g\", \"agent_profile\": "
             "\"weird\"}", str(s, "session_id"));
    json_decref(s);
    json_t *t = ok(service_task_create(svc, &alice, body, &err), &err);
    json_t *r = start_run(str(t, "task_id"), NULL, &err);
    json_decref(t);
    json_t *end = wait_state(str(r, "run_id"), "blocked_by_capability|failed|completed");
    assert_string_equal(str(end, "state"), "blocked_by_capability");
    json_t *e = json_object_get(end, "error");
    assert_string_equal(str(e, "code"), "run_blocked_by_capability");
    assert_non_null(strstr(str(e, "message"), "teleport"));
    json_decref(end);
    json_decref(r);
}

/* The profile needs Bash and the task's policy denies it outright: the run
 * is blocked by policy (not by capability: the server has the tool), with
 * the policy named, before any model call. */
static void test_policy_denying_a_needed_tool_blocks(void **state)
{
    (void)state;
    cassette(DONE);
    srv_error err = {0};
    json_t *s = ok(service_session_create(svc, &alice, NULL, &err), &err);
    char body[256];
    snprintf(body, sizeof body, "{\"session_id\": \"%s\", \"goal\": \"g\", \"agent_profile\": "
             "\"bashy\", \"policy_id\": \"nobash\"}", str(s, "session_id"));
    json_decref(s);
    json_t *t = ok(service_task_create(svc, &alice, body, &err), &err);
    json_t *r = start_run(str(t, "task_id"), NULL, &err);
    json_decref(t);
    json_t *end = wait_state(str(r, "run_id"), "blocked_by_policy|blocked_by_capability|failed|completed");
    if (strcmp(str(end, "state"), "blocked_by_policy"))
        fail_msg("the run ended %s: %s", str(end, "state"), json_dumps(json_object_get(end, "error"), 0));
    json_t *e = json_object_get(end, "error");
    assert_string_equal(str(e, "code"), "run_blocked_by_policy");
    if (!strstr(str(e, "message"), "nobash") || !strstr(str(e, "message"), "Bash"))
        fail_msg("the blocked run does not name the policy and the tool: %s", str(e, "message"));
    json_decref(end);
    json_decref(r);
}

/* Two tasks of one session under different policies: the second run works
 * under its own policy (its Bash call asks), not the first task's
 * bypassPermissions. */
static void test_each_task_runs_under_its_own_policy(void **state)
{
    (void)state;
    static const char *ECHO_DONE =
        "[{\"reply\": {\"text\": \"Checking.\", \"tool_calls\": [{\"id\": \"c1\", \"name\": "
        "\"Bash\", \"input\": {\"command\": \"echo hello-approval\"}}]}},"
        " {\"reply\": {\"text\": \"Done.\"}},"
        " {\"reply\": {\"text\": \"Again.\", \"tool_calls\": [{\"id\": \"c2\", \"name\": "
        "\"Bash\", \"input\": {\"command\": \"echo hello-approval\"}}]}},"
        " {\"reply\": {\"text\": \"Done again.\"}}]";
    /* One script for the session's conversation: the replay provider picks
     * the turn by how far the conversation has got. */
    cassette(ECHO_DONE);
    char sid[SVC_ID_LEN], tid[SVC_ID_LEN];
    session_task("bypass", "echo it", sid, tid);
    srv_error err = {0};
    json_t *r1 = start_run(tid, NULL, &err);
    json_t *d1 = wait_state(str(r1, "run_id"), "completed|failed|waiting_approval");
    assert_string_equal(str(d1, "state"), "completed");
    json_decref(d1);
    json_decref(r1);
    char body[256];
    snprintf(body, sizeof body,
             "{\"session_id\": \"%s\", \"goal\": \"echo again\", \"policy_id\": \"ask_echo\"}", sid);
    json_t *t2 = ok(service_task_create(svc, &alice, body, &err), &err);
    json_t *r2 = start_run(str(t2, "task_id"), NULL, &err);
    json_decref(t2);
    json_t *w = wait_state(str(r2, "run_id"), "waiting_approval|completed|failed");
    if (strcmp(str(w, "state"), "waiting_approval"))
        fail_msg("the second task's run did not ask under its own policy: %s %s", str(w, "state"),
                 json_dumps(json_object_get(w, "error"), 0));
    json_decref(w);
    json_t *a = pending_approval(str(r2, "run_id"));
    assert_string_equal(str(a, "question"), "Allow Bash: echo hello-approval?");
    json_t *ans = ok(service_approval_answer(svc, &alice, str(a, "approval_id"), true, NULL, &err),
                     &err);
    json_decref(ans);
    json_decref(a);
    json_t *d2 = wait_state(str(r2, "run_id"), "completed|failed");
    assert_string_equal(str(d2, "state"), "completed");
    json_decref(d2);
    json_decref(r2);
}

static void test_tenant_isolation(void **state)
{
    (void)state;
    cassette(DONE);
    char sid[SVC_ID_LEN], tid[SVC_ID_LEN];
    session_task(NULL, "say done", sid, tid);
    srv_error err = {0};
    json_t *r = start_run(tid, NULL, &err);
    char run_id[SVC_ID_LEN];
    snprintf(run_id, sizeof run_id, "%s", str(r, "run_id"));
    json_decref(r);
    json_decref(wait_state(run_id, "completed"));
    char body[128];
    snprintf(body, sizeof body, "{\"task_id\": \"%s\"}", tid);
    char tbody[160];
    snprintf(tbody, sizeof tbody, "{\"session_id\": \"%s\", \"goal\": \"x\"}", sid);
    const principal *m = &mallory;
    size_t len;
    char *ct;
    bool ended;
#define DENIED(call)                                                                           \
    do {                                                                                       \
        void *p_ = (void *)(call);                                                             \
        if (p_)                                                                                \
            fail_msg("%s answered another tenant", #call);                                     \
        if (err.code != LOOM_ERR_RESOURCE_NOT_FOUND)                                           \
            fail_msg("%s: %s, not resource_not_found", #call, loom_error_code_name(err.code)); \
        srv_error_clear(&err);                                                                 \
    } while (0)
    DENIED(service_session_get(svc, m, sid, &err));
    DENIED(service_task_get(svc, m, tid, &err));
    DENIED(service_task_create(svc, m, tbody, &err));
    DENIED(service_run_create(svc, m, body, -1, &ended, &err));
    DENIED(service_run_get(svc, m, run_id, &err));
    DENIED(service_run_cancel(svc, m, run_id, NULL, &err));
    DENIED(service_run_pause(svc, m, run_id, &err));
    DENIED(service_run_resume(svc, m, run_id, NULL, &err));
    DENIED(service_events_page(svc, m, run_id, 0, 10, 0, &err));
    DENIED(service_feed_open(svc, m, run_id, 0, 0, &err));
    DENIED(service_artifacts_list(svc, m, run_id, &err));
    DENIED(service_artifact_content(svc, m, run_id, "summary.json", &len, &ct, &err));
    DENIED(service_transcript(svc, m, run_id, &err));
    DENIED(service_citations(svc, m, run_id, &err));
    DENIED(service_approval_list(svc, m, run_id, NULL, &err));
    DENIED(service_run_list(svc, m, sid, NULL, NULL, 10, &err));
    /* Their own listing does not show it. */
    json_t *list = ok(service_run_list(svc, m, NULL, NULL, NULL, 50, &err), &err);
    assert_int_equal(json_array_size(json_object_get(list, "items")), 0);
    json_decref(list);
    /* A project-bound token of the same tenant, another project. */
    const principal elsewhere = {"acme", "mobile", "p", ROLE_ADMIN, false};
    assert_null(service_run_get(svc, &elsewhere, run_id, &err));
    assert_int_equal(err.code, LOOM_ERR_PROJECT_SCOPE_DENIED);
    srv_error_clear(&err);
    assert_null(service_artifacts_list(svc, &elsewhere, run_id, &err));
    assert_int_equal(err.code, LOOM_ERR_ARTIFACT_SCOPE_DENIED);
    srv_error_clear(&err);
}

static void test_knowledge_search_makes_citations(void **state)
{
    (void)state;
    cassette(DONE);
    char sid[SVC_ID_LEN], tid[SVC_ID_LEN];
    session_task(NULL, "say done", sid, tid);
    srv_error err = {0};
    json_t *r = start_run(tid, NULL, &err);
    char run_id[SVC_ID_LEN];
    snprintf(run_id, sizeof run_id, "%s", str(r, "run_id"));
    json_decref(r);
    json_decref(wait_state(run_id, "completed"));
    char body[200];
    snprintf(body, sizeof body, "{\"query\": \"retried\", \"run_id\": \"%s\"}", run_id);
    json_t *pack = ok(service_knowledge_search(svc, &alice, body, &err), &err);
    assert_true(!strncmp(str(pack, "evidence_pack_id"), "evp_", 4));
    assert_true(json_array_size(json_object_get(pack, "citations")) >= 1);
    json_decref(pack);
    json_t *c = ok(service_citations(svc, &alice, run_id, &err), &err);
    assert_true(json_array_size(json_object_get(c, "items")) >= 1);
    json_decref(c);
    assert_null(service_knowledge_search(svc, &alice, "{\"query\": \"x\", "
                                         "\"knowledge_sources\": [\"nope\"]}", &err));
    assert_int_equal(err.code, LOOM_ERR_KNOWLEDGE_SOURCE_SCOPE_DENIED);
    srv_error_clear(&err);
}

static void put_doc(store_kind kind, const char *id, const char *parent, const char *state_name,
                    const char *json)
{
    store_doc_keys k = {"acme", parent, state_name, "2026-12-02T10:00:00.000Z"};
    srv_error err = {0};
    assert_int_equal(st->ops->put(st, kind, id, &k, json, &err), 0);
}

static void test_recovery_fails_what_was_running(void **state)
{
    (void)state;
    service_free(svc);
    const char *sid = "sess_00000000000000000000000001";
    const char *rid = "run_00000000000000000000000001";
    put_doc(STORE_SESSION, sid, NULL, NULL,
            "{\"session_id\": \"sess_00000000000000000000000001\", \"tenant_id\": \"acme\","
            " \"project_id\": \"web\", \"created_at\": \"2026-12-02T10:00:00.000Z\"}");
    put_doc(STORE_RUN, rid, sid, "running",
            "{\"run_id\": \"run_00000000000000000000000001\", \"task_id\": \"task_x\","
            " \"session_id\": \"sess_00000000000000000000000001\", \"tenant_id\": \"acme\","
            " \"project_id\": \"web\", \"state\": \"running\", \"goal\": \"g\","
            " \"multitask_strategy\": \"reject\", \"created_at\": \"2026-12-02T10:00:00.000Z\","
            " \"pending_approval_id\": \"apv_00000000000000000000000001\"}");
    put_doc(STORE_APPROVAL, "apv_00000000000000000000000001", rid, "pending",
            "{\"approval_id\": \"apv_00000000000000000000000001\", \"run_id\":"
            " \"run_00000000000000000000000001\", \"tenant_id\": \"acme\", \"project_id\": \"web\","
            " \"status\": \"pending\", \"requested_at\": \"2026-12-02T10:00:00.000Z\"}");
    store_event evs[3];
    char texts[3][400];
    for (int i = 0; i < 3; i++) {
        snprintf(texts[i], sizeof texts[i],
                 "{\"event_id\": \"%s.%d\", \"seq\": %d, \"run_id\": \"%s\", \"type\": "
                 "\"token.delta\", \"visibility\": \"user\", \"payload\": {}}",
                 rid, i + 1, i + 1, rid);
        evs[i] = (store_event){i + 1, texts[i]};
    }
    srv_error err = {0};
    assert_int_equal(st->ops->append_events(st, rid, evs, 3, &err), 0);
    svc = open_service(false);
    json_t *r = get_run(rid);
    assert_string_equal(str(r, "state"), "failed");
    json_t *e = json_object_get(r, "error");
    assert_string_equal(str(e, "code"), "run_resumable");
    assert_non_null(strstr(str(e, "message"), "while the run was running"));
    assert_true(json_is_null(json_object_get(r, "pending_approval_id")));
    json_decref(r);
    json_t *all = all_events(rid);
    assert_int_equal(json_array_size(all), 4);
    json_t *p = json_object_get(json_array_get(all, 3), "payload");
    assert_string_equal(str(p, "from"), "running");
    assert_string_equal(str(p, "state"), "failed");
    json_decref(all);
    json_t *a = ok(service_approval_get(svc, &alice, "apv_00000000000000000000000001", &err),
                   &err);
    assert_string_equal(str(a, "status"), "expired");
    assert_string_equal(str(a, "reason"), "the server restarted");
    json_decref(a);
}


/* The tests change acme's quotas between runs (the set is read-only for
 * the server; here no run reads them while they change). */
static tenant_quotas *acme_quotas(void)
{
    return (tenant_quotas *)&objects_tenant(objs, "acme")->quotas;
}

static void test_quotas_refuse_and_stop(void **state)
{
    (void)state;
    sleeper(3);
    acme_quotas()->concurrent_runs = 1;
    char sid[SVC_ID_LEN], tid[SVC_ID_LEN], sid2[SVC_ID_LEN], tid2[SVC_ID_LEN];
    session_task("bypass", "sleep", sid, tid);
    session_task("bypass", "sleep", sid2, tid2);
    srv_error err = {0};
    json_t *r = start_run(tid, NULL, &err);
    char r1[SVC_ID_LEN];
    snprintf(r1, sizeof r1, "%s", str(r, "run_id"));
    json_decref(r);
    /* A second session's run is over the tenant's concurrent_runs. */
    assert_null(start_run(tid2, NULL, &err));
    assert_int_equal(err.code, LOOM_ERR_TENANT_QUOTA_EXCEEDED);
    assert_true(err.retryable);
    srv_error_clear(&err);
    json_decref(wait_state(r1, "completed|failed|cancelled"));
    acme_quotas()->concurrent_runs = 8;
    /* One tool execution per project: the run that starts a second is stopped. */
    acme_quotas()->tool_executions_per_project = 1;
    r = start_run(tid2, NULL, &err);
    assert_null(r);
    assert_int_equal(err.code, LOOM_ERR_TENANT_QUOTA_EXCEEDED); /* r1 ran the one tool */
    srv_error_clear(&err);
    acme_quotas()->tool_executions_per_project = 2;
    r = start_run(tid2, NULL, &err);
    assert_non_null(r);
    json_t *end = wait_state(str(r, "run_id"), "completed|failed|cancelled");
    assert_string_equal(str(end, "state"), "completed"); /* its tool is the second: allowed */
    json_decref(end);
    json_decref(r);
    assert_null(start_run(tid2, NULL, &err));
    assert_int_equal(err.code, LOOM_ERR_TENANT_QUOTA_EXCEEDED);
    srv_error_clear(&err);
    /* Room for one more: a run calling two tools is stopped at the second. */
    acme_quotas()->tool_executions_per_project = 3;
    cassette("[{\"reply\": {\"text\": \"Two.\", \"tool_calls\": ["
             "{\"id\": \"t1\", \"name\": \"Bash\", \"input\": {\"command\": \"echo a\"}},"
             "{\"id\": \"t2\", \"name\": \"Bash\", \"input\": {\"command\": \"echo b\"}}]}},"
             " {\"reply\": {\"text\": \"Done.\"}}]");
    char sid3[SVC_ID_LEN], tid3[SVC_ID_LEN];
    session_task("bypass", "two tools", sid3, tid3);
    r = start_run(tid3, NULL, &err);
    assert_non_null(r);
    end = wait_state(str(r, "run_id"), "completed|failed|cancelled");
    assert_string_equal(str(end, "state"), "failed");
    assert_string_equal(str(json_object_get(end, "error"), "code"), "tenant_quota_exceeded");
    json_decref(end);
    json_decref(r);
    acme_quotas()->tool_executions_per_project = 0;
}

static void test_feed_follows_a_live_run(void **state)
{
    (void)state;
    sleeper(1);
    char sid[SVC_ID_LEN], tid[SVC_ID_LEN];
    session_task("bypass", "sleep", sid, tid);
    srv_error err = {0};
    json_t *r = start_run(tid, NULL, &err);
    char id[SVC_ID_LEN];
    snprintf(id, sizeof id, "%s", str(r, "run_id"));
    json_decref(r);
    /* From the middle (as Last-Event-ID: 1), user events only. */
    service_feed *f = service_feed_open(svc, &alice, id, 1, 1u << LOOM_VIS_USER, &err);
    assert_non_null(f);
    char *json;
    int64_t seq, last = 1;
    int rc, keepalives = 0, n = 0;
    while ((rc = service_feed_next(f, &json, &seq, 200)) >= 0) {
        if (rc == 0) {
            keepalives++;
            continue;
        }
        assert_true(seq > last);
        last = seq;
        json_t *e = json_loads(json, 0, NULL);
        assert_string_equal(str(e, "visibility"), "user");
        json_decref(e);
        free(json);
        n++;
    }
    assert_non_null(strstr(json, "completed"));
    free(json);
    assert_true(n > 0);
    assert_true(keepalives > 0); /* the sleep left it quiet for a while */
    service_feed_close(f);
    json_t *end = get_run(id);
    assert_string_equal(str(end, "state"), "completed");
    json_decref(end);
}

static void test_recovery_resumes_on_restart(void **state)
{
    (void)state;
    cassette("[{\"reply\": {\"text\": \"Done.\"}}, {\"reply\": {\"text\": \"Resumed done.\"}}]");
    char sid[SVC_ID_LEN], tid[SVC_ID_LEN];
    session_task(NULL, "say done", sid, tid);
    srv_error err = {0};
    json_t *r = start_run(tid, NULL, &err);
    char id[SVC_ID_LEN];
    snprintf(id, sizeof id, "%s", str(r, "run_id"));
    json_decref(r);
    r = wait_state(id, "completed");
    service_free(svc);
    /* As if the server had died mid-run: the stored run says running. */
    json_object_set_new(r, "state", json_string("running"));
    char *doc = json_dumps(r, JSON_COMPACT);
    json_decref(r);
    put_doc(STORE_RUN, id, sid, "running", doc);
    free(doc);
    srv_error me = {0};
    int64_t before = st->ops->max_seq(st, id, &me);
    svc = open_service(true);
    r = wait_state(id, "completed|cancelled");
    assert_string_equal(str(r, "state"), "completed");
    assert_string_equal(str(r, "summary"), "Resumed done.");
    json_decref(r);
    json_t *evs = all_events(id);
    assert_true((int64_t)json_array_size(evs) > before);
    json_t *next = json_array_get(evs, (size_t)before);
    assert_string_equal(str(json_object_get(next, "payload"), "state"), "failed");
    assert_int_equal(count_events(evs, "run.state_changed", "queued"), 2);
    json_decref(evs);
}

/* A stop of the server (SIGTERM: service_free) while a run works ends the
 * run failed with run_resumable, as a crash would, not cancelled: nobody
 * cancelled it, and :resume after the restart goes on. */
static void test_server_stop_leaves_runs_resumable(void **state)
{
    (void)state;
    sleeper(30);
    char sid[SVC_ID_LEN], tid[SVC_ID_LEN];
    session_task("bypass", "sleep", sid, tid);
    srv_error err = {0};
    json_t *r = start_run(tid, NULL, &err);
    char id[SVC_ID_LEN];
    snprintf(id, sizeof id, "%s", str(r, "run_id"));
    json_decref(r);
    json_decref(wait_state(id, "running"));
    service_free(svc);
    svc = open_service(false);
    r = wait_state(id, "failed|cancelled|completed");
    if (strcmp(str(r, "state"), "failed"))
        fail_msg("a run the server's stop interrupted is %s, not failed (resumable)", str(r, "state"));
    assert_string_equal(str(json_object_get(r, "error"), "code"), "run_resumable");
    json_decref(r);
}

/* AskUserQuestion in a server run: waiting_external with an input.requested
 * event, answered through service_run_input (what POST /runs/{id}:input
 * calls), then running again and the model reads the answer; a second
 * answer, or one to a run that asks nothing, is invalid_state_transition. */
static void test_question_waits_for_an_outside_answer(void **state)
{
    (void)state;
    cassette("[{\"reply\": {\"text\": \"Asking.\", \"tool_calls\": [{\"id\": \"q1\", \"name\": "
             "\"AskUserQuestion\", \"input\": {\"questions\": [{\"question\": \"Which colour?\", "
             "\"header\": \"Colour\", \"multiSelect\": false, \"options\": [{\"label\": \"red\", "
             "\"description\": \"warm\"}, {\"label\": \"blue\", \"description\": \"cold\"}]}]}}]}},"
             " {\"reply\": {\"text\": \"Blue it is.\"}}]");
    char sid[SVC_ID_LEN], tid[SVC_ID_LEN];
    session_task("bypass", "pick a colour", sid, tid);
    srv_error err = {0};
    json_t *r = start_run(tid, NULL, &err);
    char id[SVC_ID_LEN];
    snprintf(id, sizeof id, "%s", str(r, "run_id"));
    json_decref(r);
    json_t *w = wait_state(id, "waiting_external|completed|failed");
    if (strcmp(str(w, "state"), "waiting_external"))
        fail_msg("a run whose model asks a question is %s, not waiting_external", str(w, "state"));
    assert_string_equal(str(w, "current_step"), "waiting_external");
    json_decref(w);
    json_t *evs = all_events(id);
    const char *input_id = NULL;
    size_t i;
    json_t *e;
    json_array_foreach(evs, i, e) if (!strcmp(str(e, "type"), "input.requested"))
        input_id = str(json_object_get(e, "payload"), "input_id");
    if (!input_id)
        fail_msg("no input.requested event names the question");
    char body[256];
    snprintf(body, sizeof body, "{\"input_id\": \"%s\", \"answers\": {\"Which colour?\": \"blue\"}}",
             input_id);
    json_decref(ok(service_run_input(svc, &alice, id, body, &err), &err));
    assert_null(service_run_input(svc, &alice, id, body, &err));
    assert_int_equal(err.code, LOOM_ERR_INVALID_STATE_TRANSITION);
    srv_error_clear(&err);
    json_decref(evs);
    json_t *d = wait_state(id, "completed|failed");
    assert_string_equal(str(d, "state"), "completed");
    json_decref(d);
    char *tr = service_transcript(svc, &alice, id, &err);
    if (!tr || !strstr(tr, "Which colour?") || !strstr(tr, "blue"))
        fail_msg("the model was not given the answer: %s", tr ? tr : err.message);
    free(tr);
    evs = all_events(id);
    bool resolved = false;
    json_array_foreach(evs, i, e) if (!strcmp(str(e, "type"), "input.resolved"))
        resolved = !strcmp(str(json_object_get(e, "payload"), "status"), "answered");
    assert_true(resolved);
    json_decref(evs);
}

static void test_sync_wait_times_out(void **state)
{
    (void)state;
    sleeper(2);
    char sid[SVC_ID_LEN], tid[SVC_ID_LEN];
    session_task("bypass", "sleep", sid, tid);
    srv_error err = {0};
    char body[128];
    snprintf(body, sizeof body, "{\"task_id\": \"%s\"}", tid);
    bool ended = true;
    json_t *r = ok(service_run_create(svc, &alice, body, 300, &ended, &err), &err);
    assert_false(ended);
    if (strcmp(str(r, "state"), "queued") && strcmp(str(r, "state"), "running"))
        fail_msg("a run 300 ms in is %s", str(r, "state"));
    json_decref(wait_state(str(r, "run_id"), "completed"));
    json_decref(r);
}

#define N_PAR 4
static void *poll_runs(void *arg)
{
    char(*ids)[SVC_ID_LEN] = arg;
    for (int k = 0; k < 50; k++)
        for (int i = 0; i < N_PAR; i++) {
            srv_error err = {0};
            free(service_run_get(svc, &alice, ids[i], &err));
            free(service_events_page(svc, &alice, ids[i], 0, 50, 0, &err));
            srv_error_clear(&err);
        }
    return NULL;
}

static void test_sessions_run_side_by_side(void **state)
{
    (void)state;
    sleeper(1);
    char ids[N_PAR][SVC_ID_LEN];
    for (int i = 0; i < N_PAR; i++) {
        char sid[SVC_ID_LEN], tid[SVC_ID_LEN];
        session_task("bypass", "sleep", sid, tid);
        srv_error err = {0};
        json_t *r = start_run(tid, NULL, &err);
        assert_non_null(r);
        snprintf(ids[i], SVC_ID_LEN, "%s", str(r, "run_id"));
        json_decref(r);
    }
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, poll_runs, ids), 0);
    for (int i = 0; i < N_PAR; i++) {
        json_t *r = wait_state(ids[i], "completed|failed|cancelled");
        assert_string_equal(str(r, "state"), "completed");
        json_decref(r);
        json_decref(all_events(ids[i])); /* each run's seq has no hole */
    }
    pthread_join(t, NULL);
    srv_error err = {0};
    json_t *list = ok(service_run_list(svc, &alice, NULL, "completed", NULL, 2, &err), &err);
    assert_int_equal(json_array_size(json_object_get(list, "items")), 2);
    const char *cursor = str(list, "next_cursor");
    assert_non_null(cursor);
    json_t *more = ok(service_run_list(svc, &alice, NULL, "completed", cursor, 200, &err), &err);
    assert_int_equal(json_array_size(json_object_get(more, "items")), N_PAR - 2);
    json_decref(more);
    json_decref(list);
}

static int deliveries_of(const char *type)
{
    store_list_query q = {"acme", NULL, NULL, NULL, 1000};
    char *next = NULL;
    srv_error err = {0};
    char *arr = st->ops->list(st, STORE_DELIVERY, &q, &next, &err);
    free(next);
    json_t *docs = json_loads(arr ? arr : "[]", 0, NULL);
    free(arr);
    int n = 0;
    size_t i;
    json_t *d;
    json_array_foreach(docs, i, d) if (!strcmp(str(d, "event_type"), type) &&
                                       json_integer_value(json_object_get(d, "attempt")) <= 1) n++;
    json_decref(docs);
    return n;
}

static void test_webhooks_are_sent(void **state)
{
    (void)state;
    service_free(svc);
    webhooks_options wo = {.max_attempts = 1, .first_backoff_ms = 10, .timeout_ms = 500};
    srv_error err = {0};
    webhooks *wh = webhooks_new(st, &wo, &err);
    assert_non_null(wh);
    char home[700];
    snprintf(home, sizeof home, "%s/home", root);
    service_options o = {.workspace = work, .loom_home = home, .batch_ms = 2};
    svc = service_new(&o, st, objs, wh, &err);
    assert_non_null(svc);
    char turns[2048];
    snprintf(turns, sizeof turns, BASH_ECHO_THEN_WRITE, work);
    cassette(turns);
    char sid[SVC_ID_LEN], tid[SVC_ID_LEN];
    session_task("ask_echo", "say hello", sid, tid);
    json_t *r = start_run(tid, NULL, &err);
    char run_id[SVC_ID_LEN];
    snprintf(run_id, sizeof run_id, "%s", str(r, "run_id"));
    json_decref(r);
    json_t *a = pending_approval(run_id);
    json_decref(ok(service_approval_answer(svc, &alice, str(a, "approval_id"), true, NULL, &err),
                   &err));
    json_decref(a);
    json_decref(wait_state(run_id, "completed"));
    webhooks_flush(wh, 10000);
    service_free(svc);
    svc = NULL;
    webhooks_free(wh);
    assert_int_equal(deliveries_of("approval.requested"), 1);
    assert_int_equal(deliveries_of("run.completed"), 1);
    assert_true(deliveries_of("artifact.created") >= 4);
    svc = open_service(false);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_state_table),
        cmocka_unit_test_setup_teardown(test_run_completes_with_every_event, setup, teardown),
        cmocka_unit_test_setup_teardown(test_approval_approved_then_patch, setup, teardown),
        cmocka_unit_test_setup_teardown(test_approval_rejected, setup, teardown),
        cmocka_unit_test_setup_teardown(test_approval_expires, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cancel, setup, teardown),
        cmocka_unit_test_setup_teardown(test_pause_then_resume, setup, teardown),
        cmocka_unit_test_setup_teardown(test_multitask_strategies, setup, teardown),
        cmocka_unit_test_setup_teardown(test_capability_missing_blocks, setup, teardown),
        cmocka_unit_test_setup_teardown(test_policy_denying_a_needed_tool_blocks, setup, teardown),
        cmocka_unit_test_setup_teardown(test_each_task_runs_under_its_own_policy, setup, teardown),
        cmocka_unit_test_setup_teardown(test_tenant_isolation, setup, teardown),
        cmocka_unit_test_setup_teardown(test_knowledge_search_makes_citations, setup, teardown),
        cmocka_unit_test_setup_teardown(test_recovery_fails_what_was_running, setup, teardown),
        cmocka_unit_test_setup_teardown(test_quotas_refuse_and_stop, setup, teardown),
        cmocka_unit_test_setup_teardown(test_feed_follows_a_live_run, setup, teardown),
        cmocka_unit_test_setup_teardown(test_recovery_resumes_on_restart, setup, teardown),
        cmocka_unit_test_setup_teardown(test_sync_wait_times_out, setup, teardown),
        cmocka_unit_test_setup_teardown(test_question_waits_for_an_outside_answer, setup, teardown),
        cmocka_unit_test_setup_teardown(test_server_stop_leaves_runs_resumable, setup, teardown),
        cmocka_unit_test_setup_teardown(test_sessions_run_side_by_side, setup, teardown),
        cmocka_unit_test_setup_teardown(test_webhooks_are_sent, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
