/* test_governance_pipeline.c — the tool call path and batches: unknown tools and bad
 * input become error results, concurrency-safe neighbours run together
 * (and only they), outcomes stay in call order, output is capped to head
 * and tail without splitting a UTF-8 character; every call has a deadline
 * (LOOM_TOOL_TIMEOUT_MS), and the run's cancel still reaches the tool; a
 * call cancelled or refused by the driver's gate before it starts never
 * runs and says so (notStarted). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "governance/governance.h"
#include "governance/pipeline.h"

static int slow_run(const json_t *input, tool_ctx *ctx, tool_result *out)
{
    (void)ctx;
    usleep((useconds_t)json_integer_value(json_object_get(input, "ms")) * 1000);
    str_printf(&out->text, "slept %lld", (long long)json_integer_value(json_object_get(input, "ms")));
    return 0;
}

static int big_run(const json_t *input, tool_ctx *ctx, tool_result *out)
{
    (void)input;
    (void)ctx;
    for (int i = 0; i < 20000; i++)
        str_puts(&out->text, "é");  /* 40 000 bytes of two-byte characters */
    return 0;
}

static const char *SLEEP_SCHEMA =
    "{\"type\":\"object\",\"properties\":{\"ms\":{\"type\":\"integer\",\"minimum\":0}},"
    "\"required\":[\"ms\"],\"additionalProperties\":false}";

static const tool_def safe_tool = {.name = "Safe", .description = "sleeps", .read_only = true,
                                   .concurrency_safe = true, .run = slow_run};
static const tool_def unsafe_tool = {.name = "Unsafe", .description = "sleeps", .run = slow_run};
static const tool_def big_tool = {.name = "Big", .description = "prints a lot",
                                  .input_schema = "{\"type\":\"object\"}", .read_only = true,
                                  .run = big_run};

static tool_registry *make_registry(void)
{
    tool_def *safe = malloc(sizeof *safe), *unsafe = malloc(sizeof *unsafe);
    *safe = safe_tool;
    *unsafe = unsafe_tool;
    safe->input_schema = unsafe->input_schema = SLEEP_SCHEMA;
    tool_registry *reg = tool_registry_new();
    loom_error err;
    assert_int_equal(tool_registry_add(reg, safe, &err), 0);
    assert_int_equal(tool_registry_add(reg, unsafe, &err), 0);
    assert_int_equal(tool_registry_add(reg, &big_tool, &err), 0);
    return reg;
}

static void free_registry(tool_registry *reg)
{
    const tool_def *a = tool_registry_find(reg, "Safe"), *b = tool_registry_find(reg, "Unsafe");
    tool_registry_free(reg);
    free((void *)a);
    free((void *)b);
}

static void test_unknown_tool_and_bad_input(void **state)
{
    (void)state;
    tool_registry *reg = make_registry();
    tool_ctx ctx = {.cwd = "/"};
    json_t *in = json_pack("{}");
    tool_call call = {"c1", "Nope", in};
    tool_outcome out;
    tool_call_run(reg, &call, &ctx, &out);
    assert_true(out.result.is_error);
    assert_string_equal(out.failed_step, "find_tool");
    assert_non_null(strstr(out.result.text.ptr, "No such tool available: Nope"));
    assert_non_null(strstr(out.result.text.ptr, "Safe"));
    tool_result_free(&out.result);

    json_t *bad = json_pack("{s:s}", "ms", "ten");
    call = (tool_call){"c2", "Safe", bad};
    tool_call_run(reg, &call, &ctx, &out);
    assert_true(out.result.is_error);
    assert_string_equal(out.failed_step, "validate_schema");
    assert_non_null(strstr(out.result.text.ptr, "InputValidationError"));
    assert_non_null(strstr(out.result.text.ptr, "ms"));
    tool_result_free(&out.result);

    json_t *raw = json_pack("{s:s}", "_raw_arguments", "{\"ms\": 1");
    call = (tool_call){"c3", "Safe", raw};
    tool_call_run(reg, &call, &ctx, &out);
    assert_true(out.result.is_error);
    assert_non_null(strstr(out.result.text.ptr, "not valid JSON"));
    tool_result_free(&out.result);
    json_decref(in);
    json_decref(bad);
    json_decref(raw);
    free_registry(reg);
}

/* Three safe calls overlap; the unsafe one after them runs alone. */
static void test_batch_parallel_and_ordered(void **state)
{
    (void)state;
    tool_registry *reg = make_registry();
    tool_ctx ctx = {.cwd = "/"};
    json_t *in[4] = {json_pack("{s:i}", "ms", 150), json_pack("{s:i}", "ms", 50),
                     json_pack("{s:i}", "ms", 100), json_pack("{s:i}", "ms", 10)};
    tool_call calls[4] = {{"a", "Safe", in[0]}, {"b", "Safe", in[1]}, {"c", "Safe", in[2]},
                          {"d", "Unsafe", in[3]}};
    tool_outcome outs[4];
    tool_batch_run(reg, calls, 4, &ctx, NULL, outs);
    assert_string_equal(outs[0].result.text.ptr, "slept 150");
    assert_string_equal(outs[1].result.text.ptr, "slept 50");
    assert_string_equal(outs[2].result.text.ptr, "slept 100");
    assert_string_equal(outs[3].result.text.ptr, "slept 10");
    /* The safe three overlapped: each started before any of them finished. */
    int64_t last_start = outs[0].started_us, first_end = outs[0].finished_us;
    for (int i = 1; i < 3; i++) {
        if (outs[i].started_us > last_start)
            last_start = outs[i].started_us;
        if (outs[i].finished_us < first_end)
            first_end = outs[i].finished_us;
    }
    assert_true(last_start < first_end);
    /* The unsafe one waited for the whole safe group. */
    for (int i = 0; i < 3; i++)
        assert_true(outs[3].started_us >= outs[i].finished_us);
    for (int i = 0; i < 4; i++) {
        tool_result_free(&outs[i].result);
        json_decref(in[i]);
    }
    free_registry(reg);
}

static void test_output_cap_keeps_head_and_tail(void **state)
{
    (void)state;
    tool_registry *reg = make_registry();
    tool_ctx ctx = {.cwd = "/"};
    json_t *in = json_object();
    tool_call call = {"c", "Big", in};
    tool_outcome out;
    tool_call_run(reg, &call, &ctx, &out);
    assert_false(out.result.is_error);
    assert_true(out.result.text.len < PIPELINE_OUTPUT_CAP + 200);
    assert_non_null(strstr(out.result.text.ptr, "characters cut from the middle"));
    /* Every byte sequence is still whole UTF-8: no lone continuation bytes. */
    json_t *s = json_string(out.result.text.ptr);
    assert_non_null(s);
    json_decref(s);
    assert_memory_equal(out.result.text.ptr, "éé", 4);
    assert_memory_equal(out.result.text.ptr + out.result.text.len - 4, "éé", 4);
    tool_result_free(&out.result);
    json_decref(in);
    free_registry(reg);
}

static void test_cancel_before_start(void **state)
{
    (void)state;
    tool_registry *reg = make_registry();
    loom_cancel cancel = 1;
    tool_ctx ctx = {.cwd = "/", .cancel = &cancel};
    json_t *in = json_pack("{s:i}", "ms", 1000);
    tool_call call = {"c", "Unsafe", in};
    tool_outcome out;
    tool_call_run(reg, &call, &ctx, &out);
    assert_true(out.result.is_error);
    assert_null(strstr(out.result.text.ptr, "slept")); /* the tool never ran */
    assert_non_null(strstr(out.result.text.ptr, "Interrupted"));
    assert_true(json_is_true(json_object_get(out.result.raw, "notStarted")));
    tool_result_free(&out.result);
    json_decref(in);
    free_registry(reg);
}

/* The driver's gate (loom_run_options.tool_gate): asked with the call right
 * before it runs; a refusal keeps the tool from running, says why, and
 * marks the result notStarted. */
typedef struct gate_seen {
    int asked;
    char call_id[16], tool[16];
    bool refuse;
} gate_seen;

static int test_gate(void *ctx, const char *call_id, const char *tool, char **why)
{
    gate_seen *g = ctx;
    g->asked++;
    snprintf(g->call_id, sizeof g->call_id, "%s", call_id);
    snprintf(g->tool, sizeof g->tool, "%s", tool);
    if (!g->refuse)
        return 0;
    *why = strdup("the lease lapsed");
    return 1;
}

static void test_gate_before_start(void **state)
{
    (void)state;
    tool_registry *reg = make_registry();
    gate_seen g = {.refuse = true};
    tool_ctx ctx = {.cwd = "/", .gate = test_gate, .gate_ctx = &g};
    json_t *in = json_pack("{s:i}", "ms", 1);
    tool_call call = {"c7", "Unsafe", in};
    tool_outcome out;
    tool_call_run(reg, &call, &ctx, &out);
    assert_int_equal(g.asked, 1);
    assert_string_equal(g.call_id, "c7");
    assert_string_equal(g.tool, "Unsafe");
    assert_true(out.result.is_error);
    assert_null(strstr(out.result.text.ptr, "slept")); /* the tool never ran */
    assert_string_equal(out.result.text.ptr, "Not run: the lease lapsed");
    assert_true(json_is_true(json_object_get(out.result.raw, "notStarted")));
    tool_result_free(&out.result);
    g.refuse = false;
    tool_call_run(reg, &call, &ctx, &out);
    assert_int_equal(g.asked, 2);
    assert_false(out.result.is_error);
    assert_string_equal(out.result.text.ptr, "slept 1");
    assert_null(json_object_get(out.result.raw, "notStarted"));
    tool_result_free(&out.result);
    json_decref(in);
    free_registry(reg);
}


static int plain_run(const json_t *input, tool_ctx *ctx, tool_result *out)
{
    (void)input;
    (void)ctx;
    str_puts(&out->text, "ran");
    return 0;
}

/* seed 003: a tool that declares nothing is treated as writing and as not
 * concurrency-safe — headless default mode denies it, and two of them never
 * overlap. */
static void test_unflagged_tool_fails_closed(void **state)
{
    (void)state;
    char home[] = "/tmp/loom-pipe-XXXXXX";
    assert_non_null(mkdtemp(home));
    setenv("LOOM_HOME", home, 1);
    static const tool_def bare = {.name = "Bare", .description = "declares no flags",
                                  .input_schema = "{\"type\":\"object\"}", .run = plain_run};
    assert_false(bare.read_only);
    assert_false(bare.concurrency_safe);
    tool_registry *reg = tool_registry_new();
    loom_error err;
    assert_int_equal(tool_registry_add(reg, &bare, &err), 0);
    governance_settings gs = {.mode = "default", .interactive = false};
    governance *gov = governance_new(home, "test-session", NULL, &gs, &err);
    assert_non_null(gov);
    tool_ctx ctx = {.cwd = home, .gov = gov};
    json_t *in = json_object();
    tool_call call = {"c1", "Bare", in};
    tool_outcome out;
    tool_call_run(reg, &call, &ctx, &out);
    assert_true(out.result.is_error);
    assert_string_equal(out.failed_step, "decide");
    assert_non_null(strstr(out.result.text.ptr, "denied"));
    tool_outcome_free(&out);

    /* Allowed, two calls run one after the other. */
    governance_free(gov);
    gs.mode = "bypassPermissions";
    gov = governance_new(home, "test-session", NULL, &gs, &err);
    ctx.gov = gov;
    tool_call calls[2] = {{"a", "Bare", in}, {"b", "Bare", in}};
    tool_outcome outs[2];
    tool_batch_run(reg, calls, 2, &ctx, NULL, outs);
    assert_string_equal(outs[0].result.text.ptr, "ran");
    assert_true(outs[1].started_us >= outs[0].finished_us);
    tool_outcome_free(&outs[0]);
    tool_outcome_free(&outs[1]);
    json_decref(in);
    governance_free(gov);
    tool_registry_free(reg);
    char cmd[100];
    snprintf(cmd, sizeof cmd, "rm -rf %s", home);
    assert_int_equal(system(cmd), 0);
}

/* A tool that only stops when its cancel flag rises (a search stuck on a
 * pipe, a command that never ends) or after n × 10 ms. */
static int until_cancel_run(const json_t *input, tool_ctx *ctx, tool_result *out)
{
    long n = (long)json_integer_value(json_object_get(input, "n"));
    for (long i = 0; i < n && !cancel_requested(ctx->cancel); i++)
        usleep(10000);
    str_printf(&out->text, "%s", cancel_requested(ctx->cancel) ? "stopped" : "gave up");
    return 0;
}

static const tool_def hang_tool = {.name = "Hang", .description = "waits",
                                   .input_schema = "{\"type\":\"object\"}", .read_only = true,
                                   .concurrency_safe = true, .run = until_cancel_run};

static void test_call_deadline(void **state)
{
    (void)state;
    tool_registry *reg = tool_registry_new();
    loom_error err;
    assert_int_equal(tool_registry_add(reg, &hang_tool, &err), 0);
    setenv("LOOM_TOOL_TIMEOUT_MS", "200", 1);
    tool_ctx ctx = {.cwd = "/"};
    json_t *in = json_pack("{s:i}", "n", 3000);
    tool_call call = {"d1", "Hang", in};
    tool_outcome out;
    tool_call_run(reg, &call, &ctx, &out);
    assert_true(out.result.is_error);
    assert_non_null(strstr(out.result.text.ptr, "did not finish within its deadline of 200 ms"));
    assert_true(json_is_true(json_object_get(out.result.raw, "deadlineExceeded")));
    tool_outcome_free(&out);

    /* A bad value is ignored: the default (minutes) applies, and a short
     * call finishes untouched. */
    setenv("LOOM_TOOL_TIMEOUT_MS", "soon", 1);
    loom_cancel flag = 0;
    ctx.cancel = &flag;
    json_t *brief = json_pack("{s:i}", "n", 30);
    tool_call quick = {"d1b", "Hang", brief};
    tool_call_run(reg, &quick, &ctx, &out);
    json_decref(brief);
    assert_string_equal(out.result.text.ptr, "gave up");
    tool_outcome_free(&out);
    unsetenv("LOOM_TOOL_TIMEOUT_MS");
    json_decref(in);
    tool_registry_free(reg);
}

typedef struct raiser {
    loom_cancel *flag;
    int level;
} raiser;

static void *raise_later(void *arg)
{
    raiser *r = arg;
    usleep(150000);
    atomic_store(r->flag, r->level);
    return NULL;
}

/* The run's cancel and the heartbeat's interruption reach a running tool
 * (through the deadline watch), and neither is mistaken for the deadline. */
static void test_run_cancel_reaches_tool(void **state)
{
    (void)state;
    tool_registry *reg = tool_registry_new();
    loom_error err;
    assert_int_equal(tool_registry_add(reg, &hang_tool, &err), 0);
    json_t *in = json_pack("{s:i}", "n", 3000);
    tool_call call = {"d2", "Hang", in};
    for (int level = CANCEL_RUN; level <= CANCEL_ACT_NOW; level++) {
        loom_cancel flag = 0;
        tool_ctx ctx = {.cwd = "/", .cancel = &flag};
        raiser r = {&flag, level};
        pthread_t th;
        assert_int_equal(pthread_create(&th, NULL, raise_later, &r), 0);
        tool_outcome out;
        tool_call_run(reg, &call, &ctx, &out);
        pthread_join(th, NULL);
        assert_string_equal(out.result.text.ptr, "stopped");
        assert_null(strstr(out.result.text.ptr, "deadline"));
        tool_outcome_free(&out);
    }
    json_decref(in);
    tool_registry_free(reg);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_unknown_tool_and_bad_input),
        cmocka_unit_test(test_batch_parallel_and_ordered),
        cmocka_unit_test(test_output_cap_keeps_head_and_tail),
        cmocka_unit_test(test_cancel_before_start),
        cmocka_unit_test(test_gate_before_start),
        cmocka_unit_test(test_unflagged_tool_fails_closed),
        cmocka_unit_test(test_call_deadline),
        cmocka_unit_test(test_run_cancel_reaches_tool),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
