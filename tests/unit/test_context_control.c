/* test_context_control.c — context control (context/control.h) with no loop
 * and no run: /compact between runs is context_compact on the session's
 * context_state, reporting through a port the test builds (a fake model,
 * captured events, hooks and usage). What it pins: a compaction appends a
 * summary and reports through the port in order; a second one has nothing
 * new and is skipped with a warning; a PreCompact hook's block is honoured
 * with its reason; a failed model call leaves the session as it was and
 * counts the failure; a too-long refusal teaches the window. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/json.h"
#include "context/control.h"
#include "session/record.h"

typedef struct fixture {
    char dir[64];
    transcript *t;
    provider_config cfg;
    context_config conf;
    context_state cs;
    context_env env;
    /* what the port saw */
    json_t *log;             /* "emit:TYPE", "warn:KIND", "hook:pre", "hook:post" */
    char *last_warning;
    msg_usage usage;
    const char *block;       /* PreCompact blocks with this reason (NULL: allows) */
    bool model_fails;
    int model_calls;
} fixture;

static void log_add(fixture *f, const char *what, const char *name)
{
    char buf[128];
    snprintf(buf, sizeof buf, "%s:%s", what, name);
    json_array_append_new(f->log, json_string(buf));
}

static void p_emit(void *ctx, loom_event_type type, json_t *payload)
{
    log_add(ctx, "emit", loom_event_type_name(type));
    json_decref(payload);
}

static void p_warn(void *ctx, json_t *payload)
{
    fixture *f = ctx;
    log_add(f, "warn", json_get_str(payload, "kind", "?"));
    free(f->last_warning);
    f->last_warning = strdup(json_get_str(payload, "message", ""));
    json_decref(payload);
}

static bool p_fire(void *ctx, context_hook ev, json_t *extra, char **why)
{
    fixture *f = ctx;
    log_add(f, "hook", ev == CONTEXT_HOOK_PRE_COMPACT ? "pre" : "post");
    json_decref(extra);
    if (ev == CONTEXT_HOOK_PRE_COMPACT && f->block) {
        *why = strdup(f->block);
        return true;
    }
    return false;
}

static void p_usage(void *ctx, const msg_usage *u)
{
    fixture *f = ctx;
    msg_usage_add(&f->usage, u);
}

static int p_model(void *ctx, const provider_config *cfg, const msg_request *req,
                   const provider_stream_sink *sink, const loom_cancel *cancel, msg_response *out,
                   loom_error *err)
{
    (void)cfg, (void)req, (void)sink, (void)cancel;
    fixture *f = ctx;
    f->model_calls++;
    memset(out, 0, sizeof *out);
    if (f->model_fails)
        return loom_error_set(err, LOOM_ERR_MODEL_UNAVAILABLE, "the model is down");
    out->message.role = MSG_ROLE_ASSISTANT;
    msg_message_add_text(&out->message,
                          "<analysis>thinking</analysis><summary>the work so far</summary>");
    out->stop_reason = LOOM_STOP_END_TURN;
    out->usage.input_tokens = 300;
    out->usage.output_tokens = 40;
    return 0;
}

static void append(fixture *f, json_t *rec)
{
    loom_error err;
    assert_int_equal(transcript_append_new(f->t, rec, &err), 0);
}

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    strcpy(f->dir, "/tmp/loom-ctx-XXXXXX");
    assert_non_null(mkdtemp(f->dir));
    loom_error err;
    f->t = transcript_create(f->dir, f->dir, "anthropic", "fake-model", &err);
    assert_non_null(f->t);
    /* A finished run: two exchanges. */
    append(f, record_user_text("fix the build"));
    append(f, record_assistant_text("I looked at the Makefile."));
    append(f, record_user_text("and the tests?"));
    append(f, record_assistant_text("They pass now."));
    f->cfg = (provider_config){.kind = PROVIDER_ANTHROPIC, .model = "fake-model",
                               .context_window = 100000, .max_output_tokens = 8192};
    ladder_config_default(&f->conf.ladder);
    f->log = json_array();
    context_state_init(&f->cs);
    context_state_begin(&f->cs, f->t, f->cfg.context_window);
    f->env = (context_env){
        .t = f->t,
        .conf = &f->conf,
        .system_static = "You test.",
        .system_dynamic = "",
        .port = {.ctx = f, .emit = p_emit, .warn = p_warn, .fire_hook = p_fire,
                 .add_usage = p_usage, .model = {p_model, f}},
    };
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    context_state_free(&f->cs);
    transcript_free(f->t);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", f->dir);
    assert_int_equal(system(cmd), 0);
    json_decref(f->log);
    free(f->last_warning);
    free(f);
    return 0;
}

static char *log_text(const fixture *f)
{
    return json_dumps(f->log, JSON_COMPACT);
}

static void test_compact_between_runs(void **state)
{
    fixture *f = *state;
    size_t before = transcript_count(f->t);
    loom_error err;
    loom_error_clear(&err);
    assert_int_equal(context_compact(&f->cs, &f->env, &f->cfg, "manual", "keep the tests", &err),
                     1);
    assert_int_equal(f->model_calls, 1);
    /* The summary ends the chain (nothing was left unanswered to carry over). */
    assert_int_equal(transcript_count(f->t), before + 1);
    json_t *last = transcript_record(f->t, transcript_count(f->t) - 1);
    assert_string_equal(record_type(last), "summary");
    char *log = log_text(f);
    assert_string_equal(log, "[\"hook:pre\",\"emit:context.compaction_started\",\"hook:post\","
                             "\"emit:context.compacted\"]");
    free(log);
    /* What the summary cost is reported through the port. */
    assert_int_equal(f->usage.input_tokens, 300);
    assert_int_equal(f->usage.output_tokens, 40);
    assert_int_equal(f->cs.compact_failures, 0);
}

static void test_nothing_new_is_skipped(void **state)
{
    fixture *f = *state;
    loom_error err;
    loom_error_clear(&err);
    assert_int_equal(context_compact(&f->cs, &f->env, &f->cfg, "manual", NULL, &err), 1);
    /* The next /compact, with nothing said since: no model call. */
    json_array_clear(f->log);
    assert_int_equal(context_compact(&f->cs, &f->env, &f->cfg, "manual", NULL, &err), 0);
    assert_int_equal(f->model_calls, 1);
    char *log = log_text(f);
    assert_string_equal(log, "[\"warn:compaction_skipped\"]");
    free(log);
    assert_non_null(strstr(f->last_warning, "nothing new"));
}

static void test_pre_compact_hook_blocks(void **state)
{
    fixture *f = *state;
    f->block = "not now";
    size_t before = transcript_count(f->t);
    loom_error err;
    loom_error_clear(&err);
    assert_int_equal(context_compact(&f->cs, &f->env, &f->cfg, "manual", NULL, &err), 0);
    assert_int_equal(f->model_calls, 0);
    assert_int_equal(transcript_count(f->t), before);
    assert_non_null(strstr(f->last_warning, "not now"));
}

static void test_failed_model_leaves_the_session(void **state)
{
    fixture *f = *state;
    f->model_fails = true;
    size_t before = transcript_count(f->t);
    loom_error err;
    loom_error_clear(&err);
    assert_int_equal(context_compact(&f->cs, &f->env, &f->cfg, "manual", NULL, &err), -1);
    assert_int_equal(err.code, LOOM_ERR_MODEL_UNAVAILABLE);
    assert_int_equal(transcript_count(f->t), before);
    assert_int_equal(f->cs.compact_failures, 1);
    char *log = log_text(f);
    assert_string_equal(log, "[\"hook:pre\",\"emit:context.compaction_started\","
                             "\"warn:compaction_failed\"]");
    free(log);
    /* The next begin (a run, or the next /compact) starts the count afresh. */
    context_state_begin(&f->cs, f->t, f->cfg.context_window);
    assert_int_equal(f->cs.compact_failures, 0);
}

static void test_refusal_teaches_the_window(void **state)
{
    fixture *f = *state;
    assert_int_equal(provider_refusal_window("prompt is too long: 207000 tokens > 200000 maximum"),
                     200000);
    assert_int_equal(provider_refusal_window("This model's maximum context length is 16000 tokens."),
                     16000);
    assert_int_equal(provider_refusal_window("request too large"), 0);
    assert_int_equal(provider_refusal_window(NULL), 0);
    /* A refusal naming a window below what the request was estimated at:
     * the window is learned, the output cap lowered to a quarter of it. */
    int64_t est = 5000;
    assert_int_equal(context_react_too_long(&f->cs, &f->env, &f->cfg, est,
                                            "prompt is too long: 5000 tokens > 4000 maximum"),
                     1);
    assert_int_equal(f->cfg.context_window, 4000);
    assert_int_equal(f->cs.pr.window, 4000);
    assert_int_equal(f->cfg.max_output_tokens, 1000);
    char *log = log_text(f);
    assert_non_null(strstr(log, "warn:prompt_too_long"));
    assert_non_null(strstr(log, "emit:context.compacted"));
    free(log);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_compact_between_runs, setup, teardown),
        cmocka_unit_test_setup_teardown(test_nothing_new_is_skipped, setup, teardown),
        cmocka_unit_test_setup_teardown(test_pre_compact_hook_blocks, setup, teardown),
        cmocka_unit_test_setup_teardown(test_failed_model_leaves_the_session, setup, teardown),
        cmocka_unit_test_setup_teardown(test_refusal_teaches_the_window, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
