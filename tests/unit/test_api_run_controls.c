/* test_api_run_controls.c — the run controls loom serve is built on, through
 * loom.h against the replay provider: a run waiting for an approval says
 * waiting_approval (state and run.state_changed) until it is answered; an
 * approval is a tool_execution with a deadline (approval_timeout_seconds)
 * and expires into a denial the model reads, after which answering it is
 * run_approval_expired; ask_tools rules ask; loom_run_pause stops a run at
 * its next turn boundary, paused and resumable, and loom_run_continue goes
 * on from there with a resume note that is nobody's prompt; loom_run_patch
 * is a unified diff of the run's edits that git applies; a rule's denial
 * (not a person's) is a policy.denied audit event; max_tool_seconds stops
 * a long command; max_agent_depth 0 takes the Agent tool away. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>

#include "loom.h"
#include "tmpdir.h"

static char home[256], work[300];

static int setup(void **state)
{
    (void)state;
    tmpdir_loom_home(home, sizeof home, work, sizeof work, "loom-runctl");
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    return tmpdir_remove(home);
}

/* A session on a replay cassette with these turns (JSON array text). */
static loom_session *session_with(const char *name, const char *turns, const char *const *kv,
                                  loom_agent **agent_out)
{
    char path[600];
    snprintf(path, sizeof path, "%s/%s.json", home, name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fprintf(f, "{\"turns\": %s}", turns);
    fclose(f);
    loom_config *cfg = loom_config_new();
    loom_status st;
    assert_int_equal(loom_config_set(cfg, "provider", "replay", &st), 0);
    assert_int_equal(loom_config_set(cfg, "cassette", path, &st), 0);
    assert_int_equal(loom_config_set(cfg, "cwd", work, &st), 0);
    for (size_t i = 0; kv && kv[i]; i += 2)
        if (loom_config_set(cfg, kv[i], kv[i + 1], &st) != 0)
            fail_msg("option %s=%s refused: %s", kv[i], kv[i + 1], st.message);
    loom_agent *agent = loom_agent_new(cfg, &st);
    loom_config_free(cfg);
    if (!agent)
        fail_msg("the agent was refused: %s", st.message);
    loom_session *s = loom_session_new(agent, &st);
    assert_non_null(s);
    *agent_out = agent;
    return s;
}

/* The next event of the run whose type is type (others are skipped);
 * fails when the run ends first. The caller frees the payload. */
static json_t *wait_for(loom_run *r, const char *type, const char *state_name)
{
    for (;;) {
        loom_event *ev = NULL;
        int rc = loom_run_next_event(r, &ev, 20000);
        if (rc != 1)
            fail_msg("the run ended (or stalled) before a %s %s event", type,
                     state_name ? state_name : "");
        if (!strcmp(ev->type, type)) {
            json_t *e = json_loads(ev->json, 0, NULL);
            json_t *payload = json_incref(json_object_get(e, "payload"));
            json_decref(e);
            loom_event_free(ev);
            const char *st = json_string_value(json_object_get(payload, "state"));
            if (!state_name || (st && !strcmp(st, state_name)))
                return payload;
            json_decref(payload);
            continue;
        }
        loom_event_free(ev);
    }
}

static void drain(loom_run *r)
{
    loom_event *ev;
    while (loom_run_next_event(r, &ev, 20000) == 1)
        loom_event_free(ev);
}

static const char *BASH_THEN_DONE =
    "[{\"reply\": {\"text\": \"Checking.\", \"tool_calls\": [{\"id\": \"c1\", \"name\": \"Bash\","
    " \"input\": {\"command\": \"echo hello-approval\"}}]}},"
    " {\"reply\": {\"text\": \"Done.\"}}]";

static void test_waiting_approval_until_answered(void **state)
{
    (void)state;
    const char *kv[] = {"interactive", "true", "ask_tools", "Bash(echo:*)", NULL};
    loom_agent *agent;
    loom_session *s = session_with("approve", BASH_THEN_DONE, kv, &agent);
    loom_status st;
    loom_run_options opts = {.queue_events = true};
    loom_run *r = loom_run_start(s, "say hello", &opts, &st);
    assert_non_null(r);

    json_t *req = wait_for(r, "approval.requested", NULL);
    assert_string_equal(json_string_value(json_object_get(req, "kind")), "tool_execution");
    if (!json_is_string(json_object_get(req, "expires_at")) ||
        !json_is_string(json_object_get(req, "requested_at")))
        fail_msg("approval.requested carries no requested_at/expires_at");
    const char *id = json_string_value(json_object_get(req, "approval_id"));
    json_t *waiting = wait_for(r, "run.state_changed", "waiting_approval");
    assert_string_equal(json_string_value(json_object_get(waiting, "approval_id")), id);
    json_decref(waiting);
    if (loom_run_state_now(r) != LOOM_RUN_WAITING_APPROVAL)
        fail_msg("a run with a pending approval reports %s, not waiting_approval",
                 loom_run_state_name(loom_run_state_now(r)));
    char *pending = loom_run_pending_approvals_json(r);
    if (!strstr(pending, id))
        fail_msg("the pending approvals %s do not list %s", pending, id);
    free(pending);

    assert_int_equal(loom_run_answer(r, id, "allow", NULL, &st), 0);
    json_t *resolved = wait_for(r, "approval.resolved", NULL);
    assert_string_equal(json_string_value(json_object_get(resolved, "status")), "approved");
    json_decref(resolved);
    json_decref(wait_for(r, "run.state_changed", "running"));
    json_decref(req);
    drain(r);
    assert_int_equal(loom_run_wait(r), LOOM_RUN_COMPLETED);
    loom_run_free(r);
    loom_session_free(s);
    loom_agent_free(agent);
}

/* The whole next event of type (others skipped); the caller frees it. */
static json_t *next_event_of(loom_run *r, const char *type)
{
    for (;;) {
        loom_event *ev = NULL;
        if (loom_run_next_event(r, &ev, 20000) != 1)
            fail_msg("the run ended (or stalled) before a %s event", type);
        json_t *e = !strcmp(ev->type, type) ? json_loads(ev->json, 0, NULL) : NULL;
        loom_event_free(ev);
        if (e)
            return e;
    }
}

/* docs/events.md: an approval's correlation_id (and its call_id) is the id
 * of the tool call it asks about, so a surface finds the call at once. */
static void test_approval_events_correlate_with_the_call(void **state)
{
    (void)state;
    const char *kv[] = {"interactive", "true", "ask_tools", "Bash(echo:*)", NULL};
    loom_agent *agent;
    loom_session *s = session_with("correlate", BASH_THEN_DONE, kv, &agent);
    loom_status st;
    loom_run_options opts = {.queue_events = true};
    loom_run *r = loom_run_start(s, "say hello", &opts, &st);
    assert_non_null(r);
    json_t *req = next_event_of(r, "approval.requested");
    assert_string_equal(json_string_value(json_object_get(req, "correlation_id")), "c1");
    const json_t *p = json_object_get(req, "payload");
    assert_string_equal(json_string_value(json_object_get(p, "call_id")), "c1");
    assert_int_equal(loom_run_answer(r, json_string_value(json_object_get(p, "approval_id")),
                                     "allow", NULL, &st),
                     0);
    json_t *res = next_event_of(r, "approval.resolved");
    assert_string_equal(json_string_value(json_object_get(res, "correlation_id")), "c1");
    json_decref(req);
    json_decref(res);
    drain(r);
    loom_run_free(r);
    loom_session_free(s);
    loom_agent_free(agent);
}

static void test_approval_expires_into_a_denial(void **state)
{
    (void)state;
    const char *kv[] = {"interactive", "true", "ask_tools", "Bash(echo:*)",
                        "approval_timeout_seconds", "1", NULL};
    loom_agent *agent;
    loom_session *s = session_with("expire", BASH_THEN_DONE, kv, &agent);
    loom_status st;
    loom_run_options opts = {.queue_events = true};
    loom_run *r = loom_run_start(s, "say hello", &opts, &st);
    assert_non_null(r);
    json_t *req = wait_for(r, "approval.requested", NULL);
    char *id = strdup(json_string_value(json_object_get(req, "approval_id")));
    json_decref(req);
    /* Nobody answers. */
    json_t *resolved = wait_for(r, "approval.resolved", NULL);
    assert_string_equal(json_string_value(json_object_get(resolved, "status")), "expired");
    assert_false(json_is_true(json_object_get(resolved, "approved")));
    json_decref(resolved);
    json_t *failed = wait_for(r, "tool.failed", NULL);
    const char *out = json_string_value(json_object_get(failed, "output"));
    if (!out || !strstr(out, "expired"))
        fail_msg("the model is not told the approval expired: %s", out ? out : "(none)");
    json_decref(failed);
    assert_int_equal(loom_run_answer(r, id, "allow", NULL, &st), -1);
    assert_string_equal(st.code_name, "run_approval_expired");
    free(id);
    drain(r);
    assert_int_equal(loom_run_wait(r), LOOM_RUN_COMPLETED);
    loom_run_free(r);
    loom_session_free(s);
    loom_agent_free(agent);
}

static void test_pause_then_continue(void **state)
{
    (void)state;
    const char *turns =
        "[{\"reply\": {\"text\": \"Step one.\", \"tool_calls\": [{\"id\": \"r1\", \"name\": "
        "\"Bash\", \"input\": {\"command\": \"sleep 1; echo one\"}}]}},"
        " {\"reply\": {\"text\": \"All done after the pause.\"}}]";
    const char *kv[] = {"permission_mode", "bypassPermissions", NULL};
    loom_agent *agent;
    loom_session *s = session_with("pause", turns, kv, &agent);
    loom_status st;
    loom_run_options opts = {.queue_events = true};
    loom_run *r = loom_run_start(s, "count to two", &opts, &st);
    assert_non_null(r);
    json_decref(wait_for(r, "tool.started", NULL));
    assert_int_equal(loom_run_pause(r, &st), 0);
    json_t *end = NULL;
    for (;;) { /* the last run.state_changed is the result */
        json_t *p = wait_for(r, "run.state_changed", NULL);
        const char *name = json_string_value(json_object_get(p, "state"));
        if (name && strcmp(name, "running") != 0) {
            end = p;
            break;
        }
        json_decref(p);
    }
    assert_string_equal(json_string_value(json_object_get(end, "state")), "paused");
    assert_string_equal(json_string_value(json_object_get(end, "stop_reason")), "paused");
    assert_string_equal(
        json_string_value(json_object_get(json_object_get(end, "error"), "code")),
        "run_resumable");
    json_decref(end);
    drain(r);
    assert_int_equal(loom_run_wait(r), LOOM_RUN_PAUSED);
    /* Paused: the tool's result is in, the model's next reply is not. */
    assert_int_equal(loom_run_pause(r, &st), -1);
    assert_string_equal(st.code_name, "invalid_state_transition");
    loom_run_free(r);

    loom_run *next = loom_run_continue(s, NULL, NULL, &st);
    if (!next)
        fail_msg("loom_run_continue refused: %s", st.message);
    assert_int_equal(loom_run_wait(next), LOOM_RUN_COMPLETED);
    const char *result = loom_run_result_json(next);
    if (!strstr(result, "All done after the pause."))
        fail_msg("the continued run did not reach the model's next reply: %s", result);
    loom_run_free(next);

    char *conv = loom_session_conversation_json(s);
    if (!strstr(conv, "\"resume_note\"") || !strstr(conv, "count to two"))
        fail_msg("the conversation does not show the prompt and the resume note: %s", conv);
    free(conv);
    char *list = loom_sessions_json(agent, NULL);
    if (!strstr(list, "\"first_prompt\":\"count to two\""))
        fail_msg("the session's first prompt is not the person's: %s", list);
    free(list);
    loom_session_free(s);
    loom_agent_free(agent);
}

static void test_continue_needs_a_goal(void **state)
{
    (void)state;
    loom_agent *agent;
    loom_session *s = session_with("nogoal", "[{\"reply\": {\"text\": \"Hi.\"}}]", NULL, &agent);
    loom_status st;
    assert_null(loom_run_continue(s, NULL, NULL, &st));
    assert_string_equal(st.code_name, "resource_not_found");
    loom_session_free(s);
    loom_agent_free(agent);
}

static void write_file(const char *name, const char *text)
{
    char path[600];
    snprintf(path, sizeof path, "%s/%s", work, name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static void test_patch_applies_with_git(void **state)
{
    (void)state;
    write_file("keep.txt", "alpha\nbeta\ngamma\n");
    write_file("gone.txt", "bye\n");
    char turns[2048];
    snprintf(turns, sizeof turns,
             "[{\"reply\": {\"text\": \"Editing.\", \"tool_calls\": ["
             "{\"id\": \"e1\", \"name\": \"Read\", \"input\": {\"file_path\": \"%s/keep.txt\"}}]}},"
             " {\"reply\": {\"text\": \"Now.\", \"tool_calls\": ["
             "{\"id\": \"e2\", \"name\": \"Edit\", \"input\": {\"file_path\": \"%s/keep.txt\","
             " \"old_string\": \"beta\", \"new_string\": \"BETA\"}},"
             "{\"id\": \"e3\", \"name\": \"Write\", \"input\": {\"file_path\": \"%s/new.txt\","
             " \"content\": \"fresh\\nfile\"}}]}},"
             " {\"reply\": {\"text\": \"Done.\"}}]",
             work, work, work);
    const char *kv[] = {"permission_mode", "acceptEdits", NULL};
    loom_agent *agent;
    loom_session *s = session_with("patch", turns, kv, &agent);
    loom_status st;
    loom_run *r = loom_run_start(s, "edit the files", NULL, &st);
    assert_non_null(r);
    assert_int_equal(loom_run_wait(r), LOOM_RUN_COMPLETED);
    char *patch = loom_run_patch(r);
    assert_non_null(patch);
    if (!strstr(patch, "--- a/keep.txt\n+++ b/keep.txt\n") || !strstr(patch, "-beta\n+BETA\n"))
        fail_msg("the edit is not in the patch:\n%s", patch);
    if (!strstr(patch, "--- /dev/null\n+++ b/new.txt\n") ||
        !strstr(patch, "+file\n\\ No newline at end of file\n"))
        fail_msg("the new file is not in the patch:\n%s", patch);
    if (strstr(patch, "gone.txt"))
        fail_msg("a file the run did not touch is in the patch:\n%s", patch);
    /* The patch undoes cleanly from the files as they are now. */
    char path[700], cmd[1600];
    snprintf(path, sizeof path, "%s/run.patch", home);
    FILE *f = fopen(path, "w");
    fputs(patch, f);
    fclose(f);
    snprintf(cmd, sizeof cmd, "cd '%s' && git apply --check -R '%s' 2>&1", work, path);
    if (system(cmd) != 0)
        fail_msg("git apply -R --check refuses the patch:\n%s", patch);
    free(patch);
    loom_run_free(r);

    /* A run that changes nothing has an empty patch. */
    loom_run *quiet = loom_run_start(s, "nothing", NULL, &st);
    assert_non_null(quiet);
    loom_run_wait(quiet);
    char *none = loom_run_patch(quiet);
    assert_string_equal(none, "");
    free(none);
    loom_run_free(quiet);
    loom_session_free(s);
    loom_agent_free(agent);
}

/* Every event type of the run until it ends, one a line; visibility of
 * policy.denied checked on the way. */
static char *event_types(loom_run *r)
{
    size_t cap = 4096, len = 0;
    char *out = calloc(1, cap);
    loom_event *ev;
    while (loom_run_next_event(r, &ev, 20000) == 1) {
        if (!strcmp(ev->type, "policy.denied") && !strstr(ev->json, "\"visibility\":\"audit\""))
            fail_msg("policy.denied is not an audit event: %s", ev->json);
        if (!strcmp(ev->type, "policy.denied") && !strstr(ev->json, "Bash(rm:*)") &&
            strstr(ev->json, "rm -rf"))
            fail_msg("policy.denied does not name the rule: %s", ev->json);
        size_t n = strlen(ev->type);
        if (len + n + 2 > cap)
            out = realloc(out, cap *= 2);
        memcpy(out + len, ev->type, n);
        len += n;
        out[len++] = '\n';
        out[len] = '\0';
        loom_event_free(ev);
    }
    return out;
}

static void test_policy_denied_for_a_rule_not_a_person(void **state)
{
    (void)state;
    const char *turns =
        "[{\"reply\": {\"text\": \"Cleaning.\", \"tool_calls\": [{\"id\": \"d1\", \"name\": "
        "\"Bash\", \"input\": {\"command\": \"rm -rf build\"}}]}},"
        " {\"reply\": {\"text\": \"Could not.\"}}]";
    const char *kv[] = {"disallowed_tools", "Bash(rm:*)", NULL};
    loom_agent *agent;
    loom_session *s = session_with("deny", turns, kv, &agent);
    loom_status st;
    loom_run_options opts = {.queue_events = true};
    loom_run *r = loom_run_start(s, "clean", &opts, &st);
    assert_non_null(r);
    char *types = event_types(r);
    if (!strstr(types, "policy.denied\n"))
        fail_msg("a deny rule's denial gave no policy.denied event:\n%s", types);
    free(types);
    loom_run_free(r);
    loom_session_free(s);
    loom_agent_free(agent);

    /* A person's rejection is not a policy's. */
    const char *ask[] = {"interactive", "true", "ask_tools", "Bash(echo:*)", NULL};
    s = session_with("reject", BASH_THEN_DONE, ask, &agent);
    r = loom_run_start(s, "say hello", &opts, &st);
    assert_non_null(r);
    json_t *req = wait_for(r, "approval.requested", NULL);
    assert_int_equal(loom_run_answer(r, json_string_value(json_object_get(req, "approval_id")),
                                     "deny", "not now", &st),
                     0);
    json_decref(req);
    types = event_types(r);
    if (strstr(types, "policy.denied"))
        fail_msg("a person's rejection was reported as policy.denied:\n%s", types);
    free(types);
    loom_run_free(r);
    loom_session_free(s);
    loom_agent_free(agent);
}

static void test_max_tool_seconds_stops_a_long_command(void **state)
{
    (void)state;
    const char *turns =
        "[{\"reply\": {\"text\": \"Waiting.\", \"tool_calls\": [{\"id\": \"s1\", \"name\": "
        "\"Bash\", \"input\": {\"command\": \"sleep 30\"}}]}},"
        " {\"reply\": {\"text\": \"Stopped.\"}}]";
    const char *kv[] = {"permission_mode", "bypassPermissions", "max_tool_seconds", "1", NULL};
    loom_agent *agent;
    loom_session *s = session_with("slow", turns, kv, &agent);
    loom_status st;
    loom_run_options opts = {.queue_events = true};
    loom_run *r = loom_run_start(s, "wait", &opts, &st);
    assert_non_null(r);
    json_t *failed = wait_for(r, "tool.failed", NULL);
    const char *out = json_string_value(json_object_get(failed, "output"));
    if (!out || !strstr(out, "deadline of 1000 ms"))
        fail_msg("sleep 30 was not stopped at max_tool_seconds: %s", out ? out : "(none)");
    json_decref(failed);
    drain(r);
    loom_run_free(r);
    loom_session_free(s);
    loom_agent_free(agent);
}

static void test_max_agent_depth_zero_means_no_sub_agents(void **state)
{
    (void)state;
    const char *on[] = {"agents", "true", NULL};
    const char *off[] = {"agents", "true", "max_agent_depth", "0", NULL};
    loom_agent *agent;
    loom_session *s = session_with("agents-on", "[]", on, &agent);
    char *tools = loom_session_tools_json(s);
    if (!strstr(tools, "\"Agent\""))
        fail_msg("sub-agents on, yet no Agent tool: %s", tools);
    free(tools);
    loom_session_free(s);
    loom_agent_free(agent);
    s = session_with("agents-off", "[]", off, &agent);
    tools = loom_session_tools_json(s);
    if (strstr(tools, "\"Agent\""))
        fail_msg("max_agent_depth 0 still offers the Agent tool: %s", tools);
    free(tools);
    loom_session_free(s);
    loom_agent_free(agent);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_waiting_approval_until_answered),
        cmocka_unit_test(test_approval_events_correlate_with_the_call),
        cmocka_unit_test(test_approval_expires_into_a_denial),
        cmocka_unit_test(test_pause_then_continue),
        cmocka_unit_test(test_continue_needs_a_goal),
        cmocka_unit_test(test_patch_applies_with_git),
        cmocka_unit_test(test_policy_denied_for_a_rule_not_a_person),
        cmocka_unit_test(test_max_tool_seconds_stops_a_long_command),
        cmocka_unit_test(test_max_agent_depth_zero_means_no_sub_agents),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
