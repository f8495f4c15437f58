/* test_runtime_loop.c — the agent loop (runtime/loop.h) driven through its
 * ports alone: a fake model behind loop_io.model (no HTTP, no mock server)
 * and fake tools in a registry of their own, over a real session file.
 * What it pins: a final answer ends the run; a tool call is executed and
 * its result sent back; max_turns stops; the cancel flag stops; a provider
 * error becomes the documented stop (model_error, or the fallback model);
 * a too-long refusal is compacted through the context port and sent again;
 * interceptors see every request in order and every reply in reverse
 * order, and may change both; a guardrail stops the run with its reason
 * before the model sees the goal, or before a reply is shown. */
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
#include "base/str.h"
#include "runtime/guardrail.h"
#include "runtime/intercept.h"
#include "runtime/loop.h"
#include "session/record.h"
#include "tools/registry.h"

/* --- the fake model -------------------------------------------------------- */

typedef enum { SAY, CALL, FAIL } step_kind;

typedef struct step {
    step_kind kind;
    const char *text;        /* SAY: the answer; CALL: the tool's input text; FAIL: message */
    loom_error_code code;    /* FAIL */
} step;

typedef struct fake_model {
    const step *script;
    size_t n, next;
    int calls;
    char *models[8];         /* the model each call asked for */
    bool saw_tool_result;    /* a request carried a tool_result block */
    int saw_tree_note;       /* requests that carried "TREE-NOTE" in a text block */
    char *tool_result_text;
} fake_model;

/* Notes the tool results a request sends back. */
static void note_request(fake_model *m, const msg_request *req)
{
    bool note = false;
    for (size_t i = 0; i < req->n_messages; i++)
        for (size_t b = 0; b < req->messages[i].n_blocks; b++) {
            const msg_block *blk = &req->messages[i].blocks[b];
            note |= blk->kind == MSG_BLOCK_TEXT && blk->text && strstr(blk->text, "TREE-NOTE");
        }
    m->saw_tree_note += note;
    for (size_t i = 0; i < req->n_messages; i++)
        for (size_t b = 0; b < req->messages[i].n_blocks; b++) {
            const msg_block *blk = &req->messages[i].blocks[b];
            if (blk->kind == MSG_BLOCK_TOOL_RESULT) {
                m->saw_tool_result = true;
                free(m->tool_result_text);
                m->tool_result_text = strdup(blk->text ? blk->text : "");
            }
        }
}

static int fake_complete(void *ctx, const provider_config *cfg, const msg_request *req,
                         const provider_stream_sink *sink, const loom_cancel *cancel,
                         msg_response *out, loom_error *err)
{
    (void)cancel;
    fake_model *m = ctx;
    memset(out, 0, sizeof *out);
    if (m->calls < 8)
        m->models[m->calls] = strdup(cfg->model);
    m->calls++;
    note_request(m, req);
    if (req->system && strstr(req->system, "You summarize a conversation")) {
        /* A compaction's request (context/compact.h): answer with a summary. */
        out->message.role = MSG_ROLE_ASSISTANT;
        msg_message_add_text(&out->message, "<summary>the work so far</summary>");
        out->stop_reason = LOOM_STOP_END_TURN;
        out->usage.input_tokens = 100;
        out->usage.output_tokens = 20;
        return 0;
    }
    const step *s = &m->script[m->next < m->n ? m->next : m->n - 1];
    if (m->next < m->n)
        m->next++;
    if (s->kind == FAIL)
        return loom_error_set(err, s->code, "%s", s->text);
    out->message.role = MSG_ROLE_ASSISTANT;
    out->usage.input_tokens = 10;
    out->usage.output_tokens = 5;
    if (s->kind == SAY) {
        if (sink && sink->on_text)
            sink->on_text(sink->ctx, s->text, strlen(s->text));
        msg_message_add_text(&out->message, s->text);
        out->stop_reason = LOOM_STOP_END_TURN;
    } else {
        char id[32];
        snprintf(id, sizeof id, "call_%d", m->calls);
        msg_message_add_tool_use(&out->message, id, "Echo", json_pack("{s:s}", "text", s->text));
        out->stop_reason = LOOM_STOP_TOOL_USE;
    }
    return 0;
}

static void fake_model_free(fake_model *m)
{
    for (int i = 0; i < 8; i++)
        free(m->models[i]);
    free(m->tool_result_text);
}

/* --- the fake tool ------------------------------------------------------- */

static int echo_runs;
static loom_cancel *cancel_on_run; /* set: the tool cancels the run (a user's Ctrl-C) */

static int echo_run(const json_t *input, tool_ctx *ctx, tool_result *out)
{
    (void)ctx;
    echo_runs++;
    if (cancel_on_run)
        atomic_store(cancel_on_run, CANCEL_RUN);
    str_printf(&out->text, "echo: %s", json_get_str(input, "text", "?"));
    return 0;
}

static const tool_def echo_def = {
    .name = "Echo",
    .description = "Echoes its input.",
    .input_schema = "{\"type\":\"object\",\"properties\":{\"text\":{\"type\":\"string\"}},"
                    "\"required\":[\"text\"]}",
    .read_only = true,
    .run = echo_run,
};

/* --- the fixture ------------------------------------------------------------ */

typedef struct fixture {
    char dir[64];
    transcript *t;
    tool_registry *reg;
    provider_config cfg;
    loop_params p;
    tool_ctx tctx;
    loom_cancel cancel;
    loop_io io;
    fake_model model;
    json_t *events;          /* the types emitted, in order */
} fixture;

static void on_emit(void *ctx, loom_event_type type, loom_visibility vis, const char *corr,
                    json_t *payload)
{
    (void)vis, (void)corr;
    fixture *f = ctx;
    json_array_append_new(f->events, json_string(loom_event_type_name(type)));
    json_decref(payload);
}

static bool emitted(const fixture *f, const char *type)
{
    size_t i;
    json_t *v;
    json_array_foreach(f->events, i, v) if (!strcmp(json_string_value(v), type)) return true;
    return false;
}

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    strcpy(f->dir, "/tmp/loom-loop-XXXXXX");
    assert_non_null(mkdtemp(f->dir));
    loom_error err;
    f->t = transcript_create(f->dir, f->dir, "anthropic", "fake-model", &err);
    assert_non_null(f->t);
    f->reg = tool_registry_new();
    assert_int_equal(tool_registry_add(f->reg, &echo_def, &err), 0);
    f->cfg = (provider_config){.kind = PROVIDER_ANTHROPIC, .model = "fake-model",
                               .context_window = 100000, .max_output_tokens = 4096,
                               .stream = true};
    f->p = (loop_params){.provider = &f->cfg, .tools = f->reg, .system_static = "You test.",
                         .system_dynamic = "", .repeat_threshold = 100};
    atomic_init(&f->cancel, 0);
    f->tctx = (tool_ctx){.cwd = f->dir, .session_id = transcript_session_id(f->t),
                         .cancel = &f->cancel};
    f->events = json_array();
    f->io = (loop_io){.t = f->t, .tools = &f->tctx, .cancel = &f->cancel, .emit = on_emit,
                      .emit_ctx = f, .model = {fake_complete, &f->model}};
    echo_runs = 0;
    cancel_on_run = NULL;
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    fake_model_free(&f->model);
    json_decref(f->events);
    tool_registry_free(f->reg);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", f->dir);
    transcript_free(f->t);
    assert_int_equal(system(cmd), 0);
    free(f);
    return 0;
}

static void run(fixture *f, const step *script, size_t n, loop_result *out)
{
    f->model.script = script;
    f->model.n = n;
    loop_run(&f->p, &f->io, "do the thing", out);
}


/* --- the spawn tree's port (loop_tree_port) ---------------------------------- */

typedef struct fake_tree {
    int64_t charged;         /* tokens charged */
    int charges;
    int64_t cap;             /* exhausted once charged reaches it (0: never) */
    int notes;               /* take_notes calls that returned a note */
    int finals;              /* before_final calls */
    int send_back;           /* before_final answers this many times */
} fake_tree;

static void tree_charge(void *ctx, const msg_usage *u, double usd)
{
    (void)usd;
    fake_tree *t = ctx;
    t->charged += msg_usage_total(u);
    t->charges++;
}

static bool tree_exhausted(void *ctx, loom_stop_reason *stop, char *msg, size_t size)
{
    fake_tree *t = ctx;
    if (!t->cap || t->charged < t->cap)
        return false;
    *stop = LOOM_STOP_BUDGET_SHARE;
    snprintf(msg, size, "share of %lld tokens spent", (long long)t->cap);
    return true;
}

static char *tree_take_notes(void *ctx)
{
    fake_tree *t = ctx;
    if (t->notes++ > 0)
        return NULL;
    return strdup("TREE-NOTE: agent_1 finished");
}

static char *tree_before_final(void *ctx, const char *final_text)
{
    fake_tree *t = ctx;
    assert_non_null(final_text);
    t->finals++;
    return t->send_back-- > 0 ? strdup("call StructuredOutput first") : NULL;
}

static void set_tree(fixture *f, fake_tree *t)
{
    f->io.tree = (loop_tree_port){t, tree_charge, tree_exhausted, tree_take_notes,
                                  tree_before_final};
}

static void test_tree_is_charged_every_reply(void **state)
{
    fixture *f = *state;
    fake_tree t = {0};
    set_tree(f, &t);
    static const step script[] = {{CALL, "a", 0}, {SAY, "done", 0}};
    loop_result out;
    run(f, script, 2, &out);
    assert_int_equal(out.state, LOOM_RUN_COMPLETED);
    assert_int_equal(t.charges, 2);
    assert_int_equal(t.charged, msg_usage_total(&out.usage));
    /* The note taken at the first turn's boundary rode on that request
     * only (a reminder, not history). */
    assert_int_equal(f->model.saw_tree_note, 1);
    loop_result_free(&out);
}

static void test_tree_exhausted_stops_with_its_reason(void **state)
{
    fixture *f = *state;
    fake_tree t = {.cap = 30};
    set_tree(f, &t);
    static const step script[] = {{CALL, "again", 0}};
    loop_result out;
    run(f, script, 1, &out);
    assert_int_equal(out.state, LOOM_RUN_FAILED);
    assert_string_equal(loom_stop_reason_name(out.stop_reason), "budget_share");
    assert_non_null(strstr(out.err.message, "share of 30 tokens"));
    assert_int_equal(f->model.calls, 2); /* 15 tokens a reply: stopped before the third */
    loop_result_free(&out);
}

static void test_before_final_sends_the_run_back(void **state)
{
    fixture *f = *state;
    fake_tree t = {.send_back = 1};
    set_tree(f, &t);
    static const step script[] = {{SAY, "first answer", 0}, {SAY, "second answer", 0}};
    loop_result out;
    run(f, script, 2, &out);
    assert_int_equal(out.state, LOOM_RUN_COMPLETED);
    assert_int_equal(f->model.calls, 2);
    assert_int_equal(t.finals, 2);
    assert_string_equal(out.final_text, "second answer");
    loop_result_free(&out);
}

/* --- the tests -------------------------------------------------------------- */

static void test_final_answer_ends_the_run(void **state)
{
    fixture *f = *state;
    static const step script[] = {{SAY, "all done", 0}};
    loop_result out;
    run(f, script, 1, &out);
    assert_int_equal(out.state, LOOM_RUN_COMPLETED);
    assert_string_equal(loom_stop_reason_name(out.stop_reason), "end_turn");
    assert_string_equal(out.final_text, "all done");
    assert_int_equal(out.turns, 1);
    assert_int_equal(f->model.calls, 1);
    assert_int_equal(out.usage.input_tokens, 10);
    assert_true(emitted(f, "token.delta"));
    assert_true(emitted(f, "model.completed"));
    /* The goal and the reply are in the session. */
    json_t *last = transcript_record(f->t, transcript_count(f->t) - 1);
    char *text = record_message_text(last);
    assert_string_equal(text, "all done");
    free(text);
    loop_result_free(&out);
}

static void test_tool_call_runs_and_its_result_goes_back(void **state)
{
    fixture *f = *state;
    static const step script[] = {{CALL, "hi", 0}, {SAY, "the tool said hi", 0}};
    loop_result out;
    run(f, script, 2, &out);
    assert_int_equal(out.state, LOOM_RUN_COMPLETED);
    assert_int_equal(echo_runs, 1);
    assert_int_equal(f->model.calls, 2);
    assert_true(f->model.saw_tool_result);
    assert_string_equal(f->model.tool_result_text, "echo: hi");
    assert_true(emitted(f, "tool.started"));
    assert_true(emitted(f, "tool.finished"));
    assert_string_equal(out.final_text, "the tool said hi");
    assert_int_equal(out.turns, 2);
    assert_int_equal(out.usage.input_tokens, 20);
    loop_result_free(&out);
}

static void test_max_turns_stops(void **state)
{
    fixture *f = *state;
    static const step script[] = {{CALL, "again", 0}};
    f->p.max_turns = 3;
    loop_result out;
    run(f, script, 1, &out);
    assert_int_equal(out.state, LOOM_RUN_FAILED);
    assert_string_equal(loom_stop_reason_name(out.stop_reason), "max_turns");
    assert_int_equal(out.err.code, LOOM_ERR_RUN_RESUMABLE);
    assert_int_equal(out.turns, 3);
    assert_int_equal(f->model.calls, 3);
    assert_int_equal(echo_runs, 3);
    loop_result_free(&out);
}

static void test_cancel_flag_stops(void **state)
{
    fixture *f = *state;
    static const step script[] = {{CALL, "slow", 0}, {SAY, "never", 0}};
    cancel_on_run = &f->cancel; /* the user cancels while the tool runs */
    loop_result out;
    run(f, script, 2, &out);
    assert_int_equal(out.state, LOOM_RUN_CANCELLED);
    assert_string_equal(loom_stop_reason_name(out.stop_reason), "cancelled");
    assert_int_equal(out.err.code, LOOM_ERR_RUN_CANCELLED);
    assert_int_equal(f->model.calls, 1);
    /* The interruption is recorded last, and never drives a run. */
    json_t *last = transcript_record(f->t, transcript_count(f->t) - 1);
    assert_true(record_skip_run(last));
    loop_result_free(&out);
}

static void test_cancel_before_the_first_turn(void **state)
{
    fixture *f = *state;
    static const step script[] = {{SAY, "never", 0}};
    atomic_store(&f->cancel, CANCEL_RUN);
    loop_result out;
    run(f, script, 1, &out);
    assert_int_equal(out.state, LOOM_RUN_CANCELLED);
    assert_int_equal(f->model.calls, 0);
    loop_result_free(&out);
}

static void test_provider_error_is_model_error(void **state)
{
    fixture *f = *state;
    static const step script[] = {{FAIL, "bad request (HTTP 400)", LOOM_ERR_MODEL_REQUEST_REJECTED}};
    loop_result out;
    run(f, script, 1, &out);
    assert_int_equal(out.state, LOOM_RUN_FAILED);
    assert_string_equal(loom_stop_reason_name(out.stop_reason), "model_error");
    assert_int_equal(out.err.code, LOOM_ERR_MODEL_REQUEST_REJECTED);
    assert_non_null(strstr(out.err.message, "bad request"));
    assert_string_equal(out.final_text, "");
    loop_result_free(&out);
}

static void test_transient_error_switches_to_the_fallback(void **state)
{
    fixture *f = *state;
    static const step script[] = {{FAIL, "overloaded", LOOM_ERR_MODEL_OVERLOADED},
                                  {SAY, "from the fallback", 0}};
    f->p.fallback_model = "fallback-model";
    loop_result out;
    run(f, script, 2, &out);
    assert_int_equal(out.state, LOOM_RUN_COMPLETED);
    assert_string_equal(f->model.models[0], "fake-model");
    assert_string_equal(f->model.models[1], "fallback-model");
    assert_int_equal(out.turns, 1); /* the failed call was not a turn */
    assert_true(emitted(f, "stream.restarted"));
    loop_result_free(&out);
}

static void test_too_long_is_compacted_and_sent_again(void **state)
{
    fixture *f = *state;
    static const step script[] = {
        {CALL, "a", 0},
        {FAIL, "prompt is too long: 5000 tokens > 4000 maximum", LOOM_ERR_MODEL_PROMPT_TOO_LONG},
        {SAY, "fits now", 0}};
    loop_result out;
    run(f, script, 3, &out);
    assert_int_equal(out.state, LOOM_RUN_COMPLETED);
    assert_string_equal(out.final_text, "fits now");
    /* reply, refusal, the compaction's call, the resent request */
    assert_int_equal(f->model.calls, 4);
    assert_true(emitted(f, "context.compacted"));
    /* The compaction's tokens are the run's: 3 replies of 10 + one of 100. */
    assert_int_equal(out.usage.input_tokens, 120);
    loop_result_free(&out);
}

/* --- interceptors and guardrails ------------------------------------------ */

typedef struct trace {
    char log[512];           /* "name:stage:turn.attempt " in the order seen */
    const char *name;
    const char *add;         /* on_request: a block added to the last message */
    const char *replace;     /* on_reply: the reply's text becomes this */
    bool saw_tail;           /* the request it saw already held the working tail */
} trace;

static char shared_log[1024];

static int trace_request(void *ctx, const intercept_call *call, msg_request *req,
                         loom_error *err)
{
    (void)err;
    trace *t = ctx;
    char one[64];
    snprintf(one, sizeof one, "%s:req:%d.%d ", t->name, call->turn, call->attempt);
    strcat(shared_log, one);
    msg_message *last = &req->messages[req->n_messages - 1];
    for (size_t b = 0; b < last->n_blocks; b++)
        t->saw_tail |= last->blocks[b].tail;
    if (t->add)
        msg_message_add_text(last, t->add)->tail = true;
    return 0;
}

static void trace_reply(void *ctx, const intercept_call *call, msg_response *resp)
{
    trace *t = ctx;
    char one[64];
    snprintf(one, sizeof one, "%s:rep:%d.%d ", t->name, call->turn, call->attempt);
    strcat(shared_log, one);
    if (t->replace && resp->stop_reason == LOOM_STOP_END_TURN) {
        msg_message_free(&resp->message);
        memset(&resp->message, 0, sizeof resp->message);
        resp->message.role = MSG_ROLE_ASSISTANT;
        msg_message_add_text(&resp->message, t->replace);
    }
}

static int notes_given;
static char *one_note(void *ctx)
{
    (void)ctx;
    return notes_given++ ? NULL : strdup("a queued note");
}

static void test_interceptors_see_every_call_in_order(void **state)
{
    fixture *f = *state;
    notes_given = 0;
    f->io.toolset.take_notes = one_note; /* a reminder for the tail of turn 1 */
    shared_log[0] = 0;
    trace a = {.name = "A", .add = "NOTE-FROM-A"}, b = {.name = "B", .replace = "rewritten"};
    loop_interceptor chain[] = {
        {.name = "A", .ctx = &a, .on_request = trace_request, .on_reply = trace_reply},
        {.name = "B", .ctx = &b, .on_request = trace_request, .on_reply = trace_reply}};
    f->io.interceptors = chain;
    f->io.n_interceptors = 2;
    static const step script[] = {
        {CALL, "a", 0},
        {FAIL, "prompt is too long: 5000 tokens > 4000 maximum", LOOM_ERR_MODEL_PROMPT_TOO_LONG},
        {SAY, "original", 0}};
    loop_result out;
    f->model.saw_tree_note = 0;
    run(f, script, 3, &out);
    assert_int_equal(out.state, LOOM_RUN_COMPLETED);
    /* Turn 1 answered; turn 2 refused (no reply stage), compacted, sent
     * again as attempt 2. Requests A then B, replies B then A. */
    assert_string_equal(shared_log, "A:req:1.1 B:req:1.1 B:rep:1.1 A:rep:1.1 "
                                    "A:req:2.1 B:req:2.1 "
                                    "A:req:2.2 B:req:2.2 B:rep:2.2 A:rep:2.2 ");
    /* The tail interceptor ran first: A saw the request with its tail. */
    assert_true(a.saw_tail);
    /* B's rewrite is what the run answered and recorded. */
    assert_string_equal(out.final_text, "rewritten");
    loop_result_free(&out);
}

static bool deny_word(void *ctx, guardrail_stage stage, const char *text, char **reason)
{
    (void)stage;
    if (!strstr(text, (const char *)ctx))
        return false;
    *reason = strdup("it says the forbidden word");
    return true;
}

static void test_input_guardrail_stops_before_the_model(void **state)
{
    fixture *f = *state;
    loop_guardrail g[] = {{.name = "no-thing", .stage = GUARDRAIL_INPUT, .ctx = "thing",
                           .check = deny_word}};
    f->io.guardrails = g;
    f->io.n_guardrails = 1;
    static const step script[] = {{SAY, "never", 0}};
    loop_result out;
    run(f, script, 1, &out);
    assert_int_equal(out.state, LOOM_RUN_BLOCKED_BY_POLICY);
    assert_int_equal(out.stop_reason, LOOM_STOP_GUARDRAIL);
    assert_int_equal(out.err.code, LOOM_ERR_RUN_BLOCKED_BY_POLICY);
    assert_string_equal(out.err.message,
                        "the input guardrail no-thing stopped the run: it says the forbidden word");
    assert_int_equal(f->model.calls, 0);
    assert_true(emitted(f, "guardrail.tripped"));
    loop_result_free(&out);
}

static void test_output_guardrail_withholds_the_reply(void **state)
{
    fixture *f = *state;
    loop_guardrail g[] = {{.name = "no-secret", .stage = GUARDRAIL_OUTPUT, .ctx = "SECRET",
                           .check = deny_word}};
    f->io.guardrails = g;
    f->io.n_guardrails = 1;
    static const step script[] = {{CALL, "a", 0}, {SAY, "the SECRET is 42", 0}};
    loop_result out;
    run(f, script, 2, &out);
    assert_int_equal(out.state, LOOM_RUN_BLOCKED_BY_POLICY);
    assert_int_equal(out.stop_reason, LOOM_STOP_GUARDRAIL);
    assert_non_null(strstr(out.err.message, "the output guardrail no-secret stopped the run"));
    assert_null(strstr(out.final_text, "SECRET"));
    assert_true(emitted(f, "guardrail.tripped"));
    /* Neither shown (no text delta: the tool call's turn had none) nor recorded. */
    assert_false(emitted(f, "token.delta"));
    json_t **chain = NULL;
    size_t n = 0;
    assert_int_equal(transcript_active(f->t, &chain, &n), 0);
    for (size_t i = 0; i < n; i++) {
        char *s = json_dumps(chain[i], 0);
        assert_null(strstr(s, "SECRET is"));
        free(s);
    }
    free(chain);
    loop_result_free(&out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_final_answer_ends_the_run, setup, teardown),
        cmocka_unit_test_setup_teardown(test_tool_call_runs_and_its_result_goes_back, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_max_turns_stops, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cancel_flag_stops, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cancel_before_the_first_turn, setup, teardown),
        cmocka_unit_test_setup_teardown(test_provider_error_is_model_error, setup, teardown),
        cmocka_unit_test_setup_teardown(test_tree_is_charged_every_reply, setup, teardown),
        cmocka_unit_test_setup_teardown(test_tree_exhausted_stops_with_its_reason, setup, teardown),
        cmocka_unit_test_setup_teardown(test_before_final_sends_the_run_back, setup, teardown),
        cmocka_unit_test_setup_teardown(test_transient_error_switches_to_the_fallback, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_too_long_is_compacted_and_sent_again, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_interceptors_see_every_call_in_order, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_input_guardrail_stops_before_the_model, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_output_guardrail_withholds_the_reply, setup,
                                        teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
