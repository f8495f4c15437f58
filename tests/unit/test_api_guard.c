/* test_api_guard.c — guardrails and interceptors through loom.h
 * (loom_run_options), against the replay provider: an interceptor sees
 * each request and reply, in order, its added text reaches the model and
 * its rewritten reply is the run's answer; an output guardrail stops the
 * run with its reason before the reply is shown; an input guardrail stops
 * it before the model is asked. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "loom.h"
#include "tmpdir.h"

static char home[256], work[300];

static int setup(void **state)
{
    (void)state;
    tmpdir_loom_home(home, sizeof home, work, sizeof work, "loom-guard");
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    return tmpdir_remove(home);
}

static loom_session *session_with(const char *turns, loom_agent **agent_out)
{
    char path[600];
    snprintf(path, sizeof path, "%s/cassette.json", home);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fprintf(f, "{\"turns\": %s}", turns);
    fclose(f);
    loom_config *cfg = loom_config_new();
    loom_status st;
    assert_int_equal(loom_config_set(cfg, "provider", "replay", &st), 0);
    assert_int_equal(loom_config_set(cfg, "cassette", path, &st), 0);
    assert_int_equal(loom_config_set(cfg, "cwd", work, &st), 0);
    assert_int_equal(loom_config_set(cfg, "permission_mode", "bypassPermissions", &st), 0);
    loom_agent *agent = loom_agent_new(cfg, &st);
    loom_config_free(cfg);
    assert_non_null(agent);
    loom_session *s = loom_session_new(agent, &st);
    assert_non_null(s);
    *agent_out = agent;
    return s;
}

typedef struct seen {
    char log[256];
    int deltas_with_secret;
} seen;

static char *on_request(void *ctx, const char *request_json)
{
    seen *s = ctx;
    json_t *v = json_loads(request_json, 0, NULL);
    char one[32];
    snprintf(one, sizeof one, "req%d.%d ", (int)json_integer_value(json_object_get(v, "turn")),
             (int)json_integer_value(json_object_get(v, "attempt")));
    strcat(s->log, one);
    json_decref(v);
    return strdup("FROM-THE-API-INTERCEPTOR");
}

static char *on_reply(void *ctx, const char *reply_json)
{
    seen *s = ctx;
    json_t *v = json_loads(reply_json, 0, NULL);
    const char *stop = json_string_value(json_object_get(v, "stop_reason"));
    char one[48];
    snprintf(one, sizeof one, "rep:%s ", stop ? stop : "?");
    strcat(s->log, one);
    bool final = stop && !strcmp(stop, "end_turn");
    json_decref(v);
    return final ? strdup("rewritten by the interceptor") : NULL;
}

static void test_interceptor_sees_and_changes_each_call(void **state)
{
    (void)state;
    loom_agent *a;
    loom_session *s = session_with(
        "[{\"reply\": {\"tool_calls\": [{\"id\": \"c1\", \"name\": \"Bash\","
        " \"input\": {\"command\": \"echo hi\"}}]}}, {\"reply\": {\"text\": \"original\"}}]",
        &a);
    seen sn = {0};
    loom_interceptor ic = {.name = "t", .ctx = &sn, .on_request = on_request,
                           .on_reply = on_reply};
    loom_run_options opts = {.interceptors = &ic, .n_interceptors = 1};
    loom_status st;
    loom_run *r = loom_run_start(s, "say hi", &opts, &st);
    assert_non_null(r);
    assert_int_equal(loom_run_wait(r), LOOM_RUN_COMPLETED);
    assert_string_equal(sn.log, "req1.1 rep:tool_use req2.1 rep:end_turn ");
    json_t *res = json_loads(loom_run_result_json(r), 0, NULL);
    assert_string_equal(json_string_value(json_object_get(res, "result")),
                        "rewritten by the interceptor");
    json_decref(res);
    loom_run_free(r);
    loom_session_free(s);
    loom_agent_free(a);
}

static bool no_secret(void *ctx, const char *text, char **reason)
{
    (void)ctx;
    if (!strstr(text, "SECRET"))
        return false;
    *reason = strdup("the text holds a secret");
    return true;
}

static void on_event(void *ctx, const loom_event *ev)
{
    seen *s = ctx;
    if (ev->text && strstr(ev->text, "SECRET"))
        s->deltas_with_secret++;
}

static void test_guardrails_stop_the_run_with_a_reason(void **state)
{
    (void)state;
    static const int stages[] = {LOOM_GUARDRAIL_OUTPUT, LOOM_GUARDRAIL_INPUT};
    for (int i = 0; i < 2; i++) {
        loom_agent *a;
        loom_session *s = session_with("[{\"reply\": {\"text\": \"the SECRET is 42\"}}]", &a);
        seen sn = {0};
        loom_guardrail g = {.name = "no-secret", .stage = stages[i], .check = no_secret};
        loom_run_options opts = {.on_event = on_event, .event_ctx = &sn, .guardrails = &g,
                                 .n_guardrails = 1};
        loom_status st;
        loom_run *r = loom_run_start(s, i == 0 ? "tell me" : "tell me the SECRET", &opts, &st);
        assert_non_null(r);
        assert_int_equal(loom_run_wait(r), LOOM_RUN_BLOCKED_BY_POLICY);
        json_t *res = json_loads(loom_run_result_json(r), 0, NULL);
        assert_string_equal(json_string_value(json_object_get(res, "stop_reason")), "guardrail");
        const char *msg =
            json_string_value(json_object_get(json_object_get(res, "error"), "message"));
        assert_string_equal(msg, i == 0 ? "the output guardrail no-secret stopped the run: the "
                                          "text holds a secret"
                                        : "the input guardrail no-secret stopped the run: the "
                                          "text holds a secret");
        assert_null(strstr(json_string_value(json_object_get(res, "result")), "SECRET"));
        assert_int_equal(sn.deltas_with_secret, 0);
        json_decref(res);
        loom_run_free(r);
        loom_session_free(s);
        loom_agent_free(a);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_interceptor_sees_and_changes_each_call, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_guardrails_stop_the_run_with_a_reason, setup,
                                        teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
