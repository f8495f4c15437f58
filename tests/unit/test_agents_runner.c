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

#include "agents_fixture.h"

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
    destroy(f, false);
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
    destroy(f, false);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_prepare_execute_release_resume),
        cmocka_unit_test(test_depth_and_running_cap),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
