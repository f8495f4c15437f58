/* test_agents_runner.c — a sub-agent's lifecycle against a fake model
 * (agents/runner.c): prepare builds a child with its sidechain, execute
 * runs it to its answer with the tree's usage, release frees what it holds
 * and a second execute resumes the same conversation; detach adds the
 * children's usage to the run's; the depth limit hands off, the running
 * cap refuses. No HTTP, no governance (tool_ctx.gov NULL). */
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

#include "agents/agents.h"
#include "agents/runner.h"
#include "agents/tree.h"
#include "base/str.h"
#include "runtime/loop.h"
#include "session/transcript.h"
#include "tools/registry.h"

typedef struct fake {
    int calls;
    size_t last_messages;    /* messages in the last request */
    char *last_system;
} fake;

static int fake_complete(void *ctx, const provider_config *cfg, const msg_request *req,
                         const provider_stream_sink *sink, const loom_cancel *cancel,
                         msg_response *out, loom_error *err)
{
    (void)cfg, (void)sink, (void)cancel, (void)err;
    fake *f = ctx;
    f->calls++;
    f->last_messages = req->n_messages;
    free(f->last_system);
    f->last_system = strdup(req->system ? req->system : "");
    memset(out, 0, sizeof *out);
    out->message.role = MSG_ROLE_ASSISTANT;
    char text[64];
    snprintf(text, sizeof text, "answer %d", f->calls);
    msg_message_add_text(&out->message, text);
    out->stop_reason = LOOM_STOP_END_TURN;
    out->usage.input_tokens = 10;
    out->usage.output_tokens = 5;
    return 0;
}

typedef struct fixture {
    char dir[64];
    agents_session *s;
    transcript *t;
    tool_registry *reg;
    provider_config cfg;
    loop_params p;
    loop_io io;
    tool_ctx tctx;
    loom_cancel cancel;
    fake model;
    spawn_node *root;
    int events;
} fixture;

static void on_emit(void *ctx, loom_event_type type, loom_visibility vis, const char *corr,
                    json_t *payload)
{
    (void)type, (void)vis, (void)corr;
    ((fixture *)ctx)->events++;
    json_decref(payload);
}

static fixture *make(int max_depth, int max_running)
{
    fixture *f = calloc(1, sizeof *f);
    strcpy(f->dir, "/tmp/loom-runner-XXXXXX");
    assert_non_null(mkdtemp(f->dir));
    loom_error err;
    f->t = transcript_create(f->dir, f->dir, "anthropic", "fake-model", &err);
    assert_non_null(f->t);
    f->reg = tool_registry_new();
    assert_int_equal(tool_registry_add_builtins(f->reg, &err), 0);
    assert_int_equal(agents_add_tools(f->reg, NULL, &err), 0);
    f->cfg = (provider_config){.kind = PROVIDER_ANTHROPIC, .model = "fake-model",
                               .context_window = 100000, .max_output_tokens = 4096};
    f->p = (loop_params){.provider = &f->cfg, .tools = f->reg, .system_static = "PARENT-SYS",
                         .system_dynamic = "", .max_turns = 10, .repeat_threshold = 100};
    atomic_init(&f->cancel, 0);
    f->tctx = (tool_ctx){.cwd = f->dir, .session_id = transcript_session_id(f->t),
                         .cancel = &f->cancel, .call_id = "call_parent_1"};
    f->io = (loop_io){.t = f->t, .tools = &f->tctx, .cancel = &f->cancel, .emit = on_emit,
                      .emit_ctx = f, .model = {fake_complete, &f->model}};
    agents_config c;
    agents_config_defaults(&c);
    c.enabled = true;
    c.max_depth = max_depth;
    c.max_running = max_running;
    char mf[128];
    snprintf(mf, sizeof mf, "%s/s.mf", f->dir);
    agents_session_opts o = {.config = &c, .session_id = "s1", .mf_dir = mf, .cwd = f->dir};
    f->s = agents_session_new(&o);
    agents_run_env env = {.params = &f->p, .io = &f->io, .tctx = &f->tctx, .run_id = "run-1"};
    f->root = agents_run_attach(f->s, &env);
    f->tctx.spawn = f->root;
    assert_non_null(f->io.tree.charge);
    return f;
}

static void destroy(fixture *f)
{
    agents_session_free(f->s);
    transcript_free(f->t);
    tool_registry_free(f->reg);
    free(f->model.last_system);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", f->dir);
    assert_int_equal(system(cmd), 0);
    free(f);
}

static void test_prepare_execute_release_resume(void **state)
{
    (void)state;
    fixture *f = make(3, 8);
    agent_request req = {.description = "d", .prompt = "do it", .name = "helper"};
    spawn_node *child = NULL;
    tool_result out;
    tool_result_init(&out);
    loom_error err;
    assert_int_equal(agent_prepare(f->root, &f->tctx, &req, &child, &out, &err), AGENT_PREP_OK);
    assert_non_null(child);
    assert_string_equal(child->id, "agent_1");
    assert_int_equal(child->depth, 1);
    assert_string_equal(child->model, "fake-model");
    assert_true(child->res->live);
    struct stat st;
    assert_int_equal(stat(child->transcript_path, &st), 0);
    assert_true(f->events >= 1); /* agent.spawned */

    agent_outcome o;
    assert_int_equal(agent_execute(child, NULL, &o), 0);
    assert_int_equal(o.state, LOOM_RUN_COMPLETED);
    assert_string_equal(o.final_text, "answer 1");
    assert_int_equal(msg_usage_total(&o.usage), 15);
    assert_string_equal(f->model.last_system, "PARENT-SYS"); /* no def: the parent's prompt */
    agent_outcome_result(child, "do it", &o, &out);
    assert_false(out.is_error);
    assert_string_equal(str_cstr(&out.text), "answer 1");
    assert_string_equal(json_string_value(json_object_get(out.raw, "status")), "completed");
    assert_string_equal(json_string_value(json_object_get(out.raw, "agentId")), "agent_1");
    assert_int_equal(json_integer_value(json_object_get(out.raw, "totalTokens")), 15);
    tool_result_free(&out);
    agent_outcome_free(&o);
    agent_release(child);
    assert_false(child->res->live);
    assert_int_equal(spawn_node_state(child), SPAWN_IDLE);
    assert_int_equal(atomic_load(&child->pool->running), 0);
    agent_release(child); /* idempotent */

    /* Resume: the same sidechain, one more user turn. */
    assert_int_equal(agent_execute(child, "and now more", &o), 0);
    assert_string_equal(o.final_text, "answer 2");
    assert_true(f->model.last_messages >= 3);
    assert_int_equal(msg_usage_total(&o.usage), 30);
    agent_outcome_free(&o);
    agent_release(child);

    loop_result res = {0};
    res.usage.input_tokens = 100;
    res.cost_usd = -1;
    json_t *by = NULL;
    agents_run_detach(f->s, f->root, &res, &by);
    assert_int_equal(res.usage.input_tokens, 120);
    assert_int_equal(json_array_size(by), 1);
    json_decref(by);
    destroy(f);
}

static void test_depth_and_running_cap(void **state)
{
    (void)state;
    fixture *f = make(1, 1);
    agent_request req = {.prompt = "first"};
    spawn_node *a = NULL, *b = NULL;
    tool_result out;
    tool_result_init(&out);
    loom_error err;
    assert_int_equal(agent_prepare(f->root, &f->tctx, &req, &a, &out, &err), AGENT_PREP_OK);
    /* One may run: a second is refused while the first holds its slot. */
    agent_request twin = {.prompt = "second", .name = "twin"};
    assert_int_equal(agent_prepare(f->root, &f->tctx, &twin, &b, &out, &err), AGENT_PREP_REFUSED);
    assert_null(b);
    assert_true(out.is_error);
    assert_non_null(strstr(str_cstr(&out.text), "maxRunning"));
    tool_result_free(&out);
    /* At d_max the child's own Agent call spawns nothing. */
    tool_result_init(&out);
    assert_int_equal(agent_prepare(a, &a->res->tctx, &req, &b, &out, &err), AGENT_PREP_HANDOFF);
    assert_null(b);
    tool_result_free(&out);
    /* An unknown type is a clear refusal. */
    agent_release(a);
    agent_request bad = {.prompt = "x", .subagent_type = "no-such-agent"};
    tool_result_init(&out);
    assert_int_equal(agent_prepare(f->root, &f->tctx, &bad, &b, &out, &err), AGENT_PREP_REFUSED);
    assert_non_null(strstr(str_cstr(&out.text), "no-such-agent"));
    tool_result_free(&out);
    /* A refused spawn left its name free. */
    tool_result_init(&out);
    assert_int_equal(agent_prepare(f->root, &f->tctx, &twin, &b, &out, &err), AGENT_PREP_OK);
    assert_ptr_equal(spawn_session_find(f->s, "twin"), b);
    agent_release(b);
    tool_result_free(&out);
    loop_result res = {0};
    agents_run_detach(f->s, f->root, &res, NULL);
    destroy(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_prepare_execute_release_resume),
        cmocka_unit_test(test_depth_and_running_cap),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
