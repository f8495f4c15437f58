/* test_api_contracts.c — the entry checks of loom.h: every loom_* function
 * given NULL answers with its documented error (never a crash), a second
 * loom_run_start on a session whose run is still going is
 * invalid_state_transition, and loom_config_set refuses a bad value of each
 * kind of key at once, naming the key and what it takes (the agent checks
 * the values that come from settings files the same way). Every key of the
 * option table is documented in loom.h. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "api/internal.h"
#include "base/fileio.h"
#include "loom.h"
#include "tmpdir.h"

static char home[256], work[300], cassette[512];

static int setup(void **state)
{
    (void)state;
    tmpdir_loom_home(home, sizeof home, work, sizeof work, "loom-contracts");
    snprintf(cassette, sizeof cassette, "%s/cassette.json", home);
    FILE *f = fopen(cassette, "w");
    fputs("{\"turns\":[{\"text\":\"Hello.\",\"usage\":{\"input_tokens\":7,"
          "\"output_tokens\":3}}]}", f);
    fclose(f);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    return tmpdir_remove(home);
}

static loom_config *replay_config(void)
{
    loom_config *cfg = loom_config_new();
    loom_status st;
    assert_int_equal(loom_config_set(cfg, "provider", "replay", &st), 0);
    assert_int_equal(loom_config_set(cfg, "cassette", cassette, &st), 0);
    assert_int_equal(loom_config_set(cfg, "cwd", work, &st), 0);
    return cfg;
}

/* st says invalid_request and names the argument. */
static void null_refused(const loom_status *st, const char *what)
{
    assert_string_equal(st->code_name, "invalid_request");
    if (!strstr(st->message, what) || !strstr(st->message, "NULL"))
        fail_msg("message [%s] does not name %s as NULL", st->message, what);
}

static void test_null_arguments(void **state)
{
    (void)state;
    loom_status st;
    char *report = (char *)"untouched";

    /* config */
    assert_int_equal(loom_config_set(NULL, "model", "m", &st), -1);
    null_refused(&st, "cfg");
    assert_int_equal(loom_config_load_settings(NULL, &st), -1);
    null_refused(&st, "cfg");
    assert_false(loom_config_workspace_trusted(NULL));
    assert_int_equal(loom_config_notice_count(NULL), 0);
    assert_null(loom_config_notice(NULL, 0));
    assert_null(loom_config_workspace(NULL));
    assert_null(loom_config_user_settings_path(NULL));
    assert_int_equal(loom_config_trust_workspace(NULL, &st), -1);
    assert_string_equal(st.code_name, "invalid_request");
    loom_config_free(NULL);
    /* A NULL key is an unknown option; st itself may be NULL. */
    loom_config *cfg = loom_config_new();
    assert_int_equal(loom_config_set(cfg, NULL, "x", &st), -1);
    assert_string_equal(st.code_name, "invalid_request");
    assert_int_equal(loom_config_set(cfg, "max_turns", "many", NULL), -1);
    loom_config_free(cfg);

    /* agent */
    assert_null(loom_agent_new(NULL, &st));
    null_refused(&st, "cfg");
    assert_null(loom_agent_model(NULL));
    assert_null(loom_agent_provider(NULL));
    loom_agent_free(NULL);

    /* session */
    assert_null(loom_session_new(NULL, &st));
    null_refused(&st, "agent");
    assert_null(loom_session_resume(NULL, "x", &st));
    null_refused(&st, "agent");
    assert_null(loom_session_continue(NULL, &st));
    null_refused(&st, "agent");
    assert_null(loom_session_fork(NULL, &st));
    null_refused(&st, "s");
    assert_null(loom_session_id(NULL));
    assert_null(loom_session_path(NULL));
    assert_int_equal(loom_session_warning_count(NULL), 0);
    assert_null(loom_session_warning(NULL, 0));
    assert_int_equal(loom_session_rewind(NULL, 1, &report, &st), -1);
    null_refused(&st, "s");
    assert_null(report);
    assert_null(loom_session_usage_json(NULL));
    report = (char *)"untouched";
    assert_int_equal(loom_session_compact(NULL, NULL, &report, &st), -1);
    null_refused(&st, "s");
    assert_null(report);
    assert_null(loom_session_context_json(NULL));
    assert_null(loom_session_events_json(NULL));
    assert_int_equal(loom_session_remember(NULL, "x", &st), -1);
    null_refused(&st, "s");
    assert_int_equal(loom_session_set_permission_mode(NULL, "plan", &st), -1);
    null_refused(&st, "s");
    assert_null(loom_session_permission_mode(NULL));
    assert_int_equal(loom_session_leave_plan(NULL, &st), -1);
    null_refused(&st, "s");
    loom_session_free(NULL);

    /* run */
    assert_null(loom_run_start(NULL, "goal", NULL, &st));
    null_refused(&st, "s");
    loom_event *ev = (loom_event *)&st; /* anything but NULL */
    assert_int_equal(loom_run_next_event(NULL, &ev, 0), -1);
    assert_null(ev);
    loom_event_free(NULL);
    loom_run_cancel(NULL);
    assert_int_equal(loom_run_signal(NULL, "SIGUSR1"), -1);
    assert_int_equal(loom_run_state_now(NULL), LOOM_RUN_FAILED);
    assert_int_equal(loom_run_wait(NULL), LOOM_RUN_FAILED);
    assert_null(loom_run_result_json(NULL));
    assert_int_equal(loom_run_answer(NULL, "id", "allow", NULL, &st), -1);
    null_refused(&st, "r");
    assert_int_equal(loom_run_approve(NULL, "id", true, NULL, &st), -1);
    null_refused(&st, "r");
    loom_run_free(NULL);
    assert_string_equal(loom_run_state_name((loom_run_state)99), "unknown");

    /* the sandbox on its own */
    const char *why = NULL;
    assert_int_equal(loom_sandbox_confine_self(NULL, false, NULL, 0, NULL, NULL, &why, &st), -1);
    assert_string_equal(st.code_name, "invalid_request");
    assert_int_equal(loom_sandbox_confine_self(work, false, NULL, 0, NULL, NULL, NULL, &st), -1);
    assert_string_equal(st.code_name, "invalid_request");
    assert_int_equal(loom_sandbox_confine_self(work, false, NULL, 2, NULL, NULL, &why, &st), -1);
    assert_string_equal(st.code_name, "invalid_request");
    assert_non_null(loom_version());
}

/* The NULL arguments beside a valid handle. */
static void test_null_beside_a_session(void **state)
{
    (void)state;
    loom_status st;
    loom_config *cfg = replay_config();
    loom_agent *agent = loom_agent_new(cfg, &st);
    loom_config_free(cfg);
    assert_non_null(agent);
    assert_null(loom_session_resume(agent, NULL, &st));
    null_refused(&st, "id");
    loom_session *s = loom_session_new(agent, &st);
    assert_non_null(s);
    assert_null(loom_run_start(s, NULL, NULL, &st));
    assert_string_equal(st.code_name, "invalid_request");
    assert_int_equal(loom_session_set_permission_mode(s, NULL, &st), -1);
    assert_string_equal(st.code_name, "invalid_request");
    assert_int_equal(loom_session_remember(s, NULL, &st), -1);
    assert_string_equal(st.code_name, "invalid_request");
    loom_session_free(s);
    loom_agent_free(agent);
}

/* Holds the run on its own thread (in its first event callback) until the
 * test lets it go, so the run is surely in progress meanwhile. */
typedef struct {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool entered, release;
} gate;

static void hold_first_event(void *ctx, const loom_event *ev)
{
    (void)ev;
    gate *g = ctx;
    pthread_mutex_lock(&g->mu);
    if (!g->entered) {
        g->entered = true;
        pthread_cond_broadcast(&g->cv);
        while (!g->release)
            pthread_cond_wait(&g->cv, &g->mu);
    }
    pthread_mutex_unlock(&g->mu);
}

static void test_run_start_twice(void **state)
{
    (void)state;
    loom_status st;
    loom_config *cfg = replay_config();
    loom_agent *agent = loom_agent_new(cfg, &st);
    loom_config_free(cfg);
    assert_non_null(agent);
    loom_session *s = loom_session_new(agent, &st);
    assert_non_null(s);

    gate g = {.mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER};
    loom_run_options opts = {.on_event = hold_first_event, .event_ctx = &g};
    loom_run *first = loom_run_start(s, "hello", &opts, &st);
    assert_non_null(first);
    pthread_mutex_lock(&g.mu);
    while (!g.entered)
        pthread_cond_wait(&g.cv, &g.mu);
    pthread_mutex_unlock(&g.mu);

    /* One run at a time per session. */
    assert_null(loom_run_start(s, "again", NULL, &st));
    assert_string_equal(st.code_name, "invalid_state_transition");
    assert_non_null(strstr(st.message, "already has a run in progress"));

    /* Another session of the same agent is not held up. */
    loom_session *other = loom_session_new(agent, &st);
    assert_non_null(other);
    loom_run *beside = loom_run_start(other, "hello", NULL, &st);
    assert_non_null(beside);
    assert_int_equal(loom_run_wait(beside), LOOM_RUN_COMPLETED);
    loom_run_free(beside);
    loom_session_free(other);

    pthread_mutex_lock(&g.mu);
    g.release = true;
    pthread_cond_broadcast(&g.cv);
    pthread_mutex_unlock(&g.mu);
    assert_int_equal(loom_run_wait(first), LOOM_RUN_COMPLETED);

    /* Once it has ended, the session takes the next run. */
    loom_run *next = loom_run_start(s, "and again", NULL, &st);
    if (!next)
        fail_msg("the next run was refused: %s", st.message);
    loom_run_wait(next);
    loom_run_free(next);
    loom_run_free(first);
    loom_session_free(s);
    loom_agent_free(agent);
}

typedef struct {
    const char *key, *bad, *expect; /* expect: in the message besides the key */
} bad_value;

static void test_config_set_bad_values(void **state)
{
    (void)state;
    static const bad_value cases[] = {
        {"max_turns", "many", "whole number from 1 to 1000000"},
        {"max_turns", "0", "whole number from 1 to 1000000"},
        {"max_retries", "101", "whole number from 0 to 100"},
        {"loop_threshold", "1", "whole number from 2 to 1000"},
        {"max_tokens_total", "-5", "whole number"},
        {"context_window", "12", "whole number from 1000"},
        {"max_output_tokens", "lots", "whole number from 1"},
        {"max_usd", "-1", "non-negative number"},
        {"price_input_per_mtok", "cheap", "non-negative number"},
        {"price_output_per_mtok", "", "non-negative number"},
        {"renew_lambda", "x", "non-negative number"},
        {"stream", "maybe", "true or false"},
        {"interactive", "2", "true or false"},
        {"auto_compact", "sometimes", "true or false"},
        {"provider", "bogus", "anthropic, openai, openai-responses, replay"},
        {"permission_mode", "bogus", "default, acceptEdits, plan"},
        {"token_budget", "lots", "an amount like 500k"},
        {"compaction", "{not json", "not JSON"},
        {"heartbeat", "[", "not JSON"},
    };
    loom_config *cfg = loom_config_new();
    loom_status st;
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        const bad_value *c = &cases[i];
        const char *key = strcmp(c->key, "permission_mode") ? c->key : "permission mode";
        if (loom_config_set(cfg, c->key, c->bad, &st) != -1)
            fail_msg("%s=\"%s\" was accepted", c->key, c->bad);
        assert_string_equal(st.code_name, "config_invalid");
        if (!strstr(st.message, key) || !strstr(st.message, c->expect))
            fail_msg("%s=\"%s\": message [%s] lacks the key or [%s]", c->key, c->bad,
                     st.message, c->expect);
        /* A refused value is not kept. */
        assert_null(api_value(cfg->values, c->key));
    }
    /* Good values of the same keys pass, NULL unsets, text keys take anything. */
    assert_int_equal(loom_config_set(cfg, "max_turns", "7", &st), 0);
    assert_int_equal(loom_config_set(cfg, "max_turns", NULL, &st), 0);
    assert_null(api_value(cfg->values, "max_turns"));
    assert_int_equal(loom_config_set(cfg, "stream", "no", &st), 0);
    assert_int_equal(loom_config_set(cfg, "token_budget", "+500k", &st), 0);
    assert_int_equal(loom_config_set(cfg, "permission_mode", "acceptEdits", &st), 0);
    assert_int_equal(loom_config_set(cfg, "compaction", "{}", &st), 0);
    assert_int_equal(loom_config_set(cfg, "model", "", &st), 0);
    assert_string_equal(st.code_name, "ok");
    loom_config_free(cfg);
}

/* A bad value from a settings file never went through loom_config_set: the
 * agent refuses it with the same message. */
static void test_agent_checks_settings_values(void **state)
{
    (void)state;
    char dir[400], path[500];
    snprintf(dir, sizeof dir, "%s/.loom", work);
    mkdir(dir, 0700);
    snprintf(path, sizeof path, "%s/settings.local.json", dir);
    FILE *f = fopen(path, "w");
    fputs("{\"max_turns\": \"many\"}", f);
    fclose(f);
    setenv("LOOM_TRUST_WORKSPACE", "1", 1);
    loom_config *cfg = replay_config();
    loom_status st;
    assert_int_equal(loom_config_load_settings(cfg, &st), 0);
    assert_null(loom_agent_new(cfg, &st));
    assert_string_equal(st.code_name, "config_invalid");
    assert_non_null(strstr(st.message, "max_turns must be a whole number"));
    loom_config_free(cfg);
    unsetenv("LOOM_TRUST_WORKSPACE");
    unlink(path);
    rmdir(dir);
}

/* Every key of the option table has its line in loom.h's list. */
static void test_every_key_documented(void **state)
{
    (void)state;
    const char *data = getenv("LOOM_TEST_DATA");
    assert_non_null(data);
    char path[600];
    snprintf(path, sizeof path, "%s/../include/loom.h", data);
    char *text = NULL;
    size_t len = 0;
    loom_error err;
    assert_int_equal(file_read_all(path, &text, &len, &err), 0);
    const char *list = strstr(text, "loom_config *loom_config_new(void);");
    const char *end = list ? strstr(list, "int loom_config_set(") : NULL;
    assert_non_null(end);
    size_t n = 0;
    for (const api_option *o; (o = api_option_at(n)) != NULL; n++) {
        bool found = false;
        size_t klen = strlen(o->key);
        for (const char *p = list; !found && (p = strstr(p, o->key)) && p < end; p += klen)
            found = (p[-1] == ' ' || p[-1] == ',') &&
                    (p[klen] == ' ' || p[klen] == ',' || p[klen] == '\n');
        if (!found)
            fail_msg("option %s is not documented in loom.h", o->key);
    }
    assert_true(n >= 29);
    free(text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_null_arguments),
        cmocka_unit_test(test_null_beside_a_session),
        cmocka_unit_test(test_run_start_twice),
        cmocka_unit_test(test_config_set_bad_values),
        cmocka_unit_test(test_agent_checks_settings_values),
        cmocka_unit_test(test_every_key_documented),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
