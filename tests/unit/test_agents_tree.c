/* test_agents_tree.c — the spawn tree and its pool (agents/tree.c): ids and
 * lookup by name, usage charged to the node, every ancestor and the pool,
 * shares reserved against the unreserved rest, exhausted() by share, by
 * pool and by an ancestor's cancel, the inbox, the running cap; and the
 * pieces of the runner that need no model: the hand-off result, the tool
 * set's role and rule filters, StructuredOutput and its reminder. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "agents/agents.h"
#include "agents/runner.h"
#include "agents/structured.h"
#include "agents/toolset.h"
#include "agents/tree.h"
#include "base/json.h"
#include "tools/registry.h"

static agents_session *session(void)
{
    agents_config c;
    agents_config_defaults(&c);
    c.enabled = true;
    agents_session_opts o = {.config = &c, .session_id = "s1", .cwd = "/tmp"};
    return agents_session_new(&o);
}

static msg_usage tokens(int64_t in, int64_t out)
{
    msg_usage u = {0};
    u.input_tokens = in;
    u.output_tokens = out;
    return u;
}

static void test_ids_names_and_lookup(void **state)
{
    (void)state;
    agents_session *s = session();
    loop_params p = {0};
    spawn_node *root = spawn_node_new_root(s, "run1", &p, NULL);
    loom_error err;
    spawn_node *a = spawn_node_new_child(root, "Explore", "scout", "look", &err);
    spawn_node *b = spawn_node_new_child(a, "general-purpose", NULL, NULL, &err);
    assert_non_null(a);
    assert_non_null(b);
    assert_string_equal(a->id, "agent_1");
    assert_string_equal(b->id, "agent_2");
    assert_int_equal(a->depth, 1);
    assert_int_equal(b->depth, 2);
    assert_ptr_equal(spawn_session_find(s, "scout"), a);
    assert_ptr_equal(spawn_session_find(s, "agent_2"), b);
    assert_null(spawn_session_find(s, "nobody"));
    assert_string_equal(spawn_node_label(b), "agent_2");
    /* A name is one agent's. */
    assert_null(spawn_node_new_child(root, "Plan", "scout", NULL, &err));
    assert_non_null(strstr(err.message, "scout"));
    agents_session_free(s);
}

static void test_charge_reaches_ancestors_and_pool(void **state)
{
    (void)state;
    agents_session *s = session();
    loop_params p = {.max_tokens_total = 1000};
    spawn_node *root = spawn_node_new_root(s, "run1", &p, NULL);
    loom_error err;
    spawn_node *a = spawn_node_new_child(root, "general-purpose", NULL, NULL, &err);
    spawn_node *b = spawn_node_new_child(a, "general-purpose", NULL, NULL, &err);
    msg_usage u = tokens(100, 20);
    spawn_node_charge(b, &u, 0.5);
    u = tokens(10, 0);
    spawn_node_charge(root, &u, -1);
    msg_usage got;
    double usd;
    spawn_node_usage(b, false, &got, &usd);
    assert_int_equal(got.input_tokens, 100);
    assert_true(usd > 0.49 && usd < 0.51);
    spawn_node_usage(a, false, &got, NULL);
    assert_int_equal(msg_usage_total(&got), 0);
    spawn_node_usage(a, true, &got, NULL);
    assert_int_equal(msg_usage_total(&got), 120);
    spawn_node_usage(root, true, &got, NULL);
    assert_int_equal(msg_usage_total(&got), 130);
    assert_int_equal(atomic_load(&root->pool->used_tokens), 130);
    json_t *rows = spawn_usage_by_agent(root);
    assert_int_equal(json_array_size(rows), 2);
    assert_string_equal(json_string_value(json_object_get(json_array_get(rows, 1), "agent_id")),
                        "agent_2");
    json_decref(rows);
    agents_session_free(s);
}

static void test_shares_and_exhausted(void **state)
{
    (void)state;
    agents_session *s = session();
    loop_params p = {.max_tokens_total = 3300};
    spawn_node *root = spawn_node_new_root(s, "run1", &p, NULL);
    msg_usage u = tokens(300, 0);
    spawn_node_charge(root, &u, -1);
    loom_error err;
    spawn_node *c[4];
    char *why = NULL;
    for (int i = 0; i < 3; i++) {
        c[i] = spawn_node_new_child(root, "general-purpose", NULL, NULL, &err);
        assert_int_equal(spawn_pool_reserve(c[i], 1000, 0, &why), 0);
    }
    c[3] = spawn_node_new_child(root, "general-purpose", NULL, NULL, &err);
    assert_int_equal(spawn_pool_reserve(c[3], 1000, 0, &why), -1);
    assert_non_null(strstr(why, "1000 tokens"));
    free(why);
    loom_stop_reason stop;
    char msg[200];
    assert_false(spawn_node_exhausted(c[0], &stop, msg, sizeof msg));
    u = tokens(999, 0);
    spawn_node_charge(c[0], &u, -1);
    assert_false(spawn_node_exhausted(c[0], &stop, msg, sizeof msg));
    u = tokens(1, 0);
    spawn_node_charge(c[0], &u, -1);
    assert_true(spawn_node_exhausted(c[0], &stop, msg, sizeof msg));
    assert_int_equal(stop, LOOM_STOP_BUDGET_SHARE);
    /* Its spending came out of its own reservation: still nothing left. */
    c[3]->share_tokens = 0;
    assert_int_equal(spawn_pool_reserve(c[3], 1, 0, &why), -1);
    free(why);
    /* A share binds the subtree too. */
    spawn_node *g = spawn_node_new_child(c[0], "general-purpose", NULL, NULL, &err);
    assert_true(spawn_node_exhausted(g, &stop, msg, sizeof msg));
    assert_int_equal(stop, LOOM_STOP_BUDGET_SHARE);
    /* The pool: everyone spent. */
    u = tokens(1000, 0);
    spawn_node_charge(c[1], &u, -1);
    spawn_node_charge(c[2], &u, -1);
    assert_true(spawn_node_exhausted(root, &stop, msg, sizeof msg));
    assert_int_equal(stop, LOOM_STOP_TOKEN_BUDGET);
    assert_non_null(strstr(msg, "3300"));
    agents_session_free(s);
}

static void test_cancel_inbox_and_running_cap(void **state)
{
    (void)state;
    agents_session *s = session();
    loop_params p = {0};
    loom_cancel outer = CANCEL_NONE;
    spawn_node *root = spawn_node_new_root(s, "run1", &p, &outer);
    loom_error err;
    spawn_node *a = spawn_node_new_child(root, "general-purpose", NULL, NULL, &err);
    spawn_node *b = spawn_node_new_child(a, "general-purpose", NULL, NULL, &err);
    spawn_node *other = spawn_node_new_child(root, "general-purpose", NULL, NULL, &err);
    loom_stop_reason stop;
    char msg[200];
    assert_false(spawn_node_exhausted(b, &stop, msg, sizeof msg));
    spawn_node_cancel_subtree(a, CANCEL_RUN);
    assert_true(cancel_run_requested(&b->cancel));
    assert_false(cancel_requested(&other->cancel));
    assert_true(spawn_node_exhausted(b, &stop, msg, sizeof msg));
    assert_int_equal(stop, LOOM_STOP_CANCELLED);
    /* The run's own flag reaches every node through the backstop. */
    assert_false(spawn_node_cancelled(other));
    outer = CANCEL_RUN;
    assert_true(spawn_node_cancelled(other));
    outer = CANCEL_NONE;

    assert_null(spawn_node_take_notes(other));
    assert_false(spawn_node_wait_notes(other, 10));
    spawn_node_post_note(other, "one");
    spawn_node_post_note(other, "two");
    assert_true(spawn_node_wait_notes(other, 0));
    char *notes = spawn_node_take_notes(other);
    assert_string_equal(notes, "one\n\ntwo");
    free(notes);
    assert_null(spawn_node_take_notes(other));

    assert_int_equal(spawn_pool_begin_run(a, 2), 0);
    assert_int_equal(spawn_pool_begin_run(b, 2), 0);
    assert_int_equal(spawn_pool_begin_run(other, 2), -1);
    spawn_pool_end_run(a);
    assert_int_equal(spawn_pool_begin_run(other, 2), 0);
    agents_session_free(s);
}

static void test_handoff_result(void **state)
{
    (void)state;
    agents_session *s = session();
    loop_params p = {0};
    spawn_node *root = spawn_node_new_root(s, "run1", &p, NULL);
    root->depth = 3;
    tool_result r;
    tool_result_init(&r);
    agent_handoff_result(root, 3, "do the thing", &r);
    assert_false(r.is_error);
    json_t *j = json_loads(str_cstr(&r.text), 0, NULL);
    assert_non_null(j);
    assert_string_equal(json_string_value(json_object_get(j, "status")), "handoff");
    assert_string_equal(json_string_value(json_object_get(j, "reason")), "depth_limit");
    assert_int_equal(json_integer_value(json_object_get(j, "d_max")), 3);
    assert_string_equal(json_string_value(json_object_get(j, "goal")), "do the thing");
    json_decref(j);
    tool_result_free(&r);
    agents_session_free(s);
}

static int noop_run(const json_t *input, tool_ctx *ctx, tool_result *out)
{
    (void)input;
    (void)ctx;
    (void)out;
    return 0;
}

static void test_toolset_filters(void **state)
{
    (void)state;
    tool_registry *parent = tool_registry_new();
    loom_error err;
    assert_int_equal(tool_registry_add_builtins(parent, &err), 0);
    assert_int_equal(agents_add_tools(parent, NULL, &err), 0);
    assert_non_null(tool_registry_find(parent, "Agent"));
    assert_non_null(tool_registry_find(parent, "Task")); /* the alias */

    agent_toolset_opts o = {.parent = parent, .read_only = true};
    tool_registry *ro = agent_toolset_build(&o, NULL, &err);
    assert_non_null(ro);
    assert_non_null(tool_registry_find(ro, "Read"));
    assert_non_null(tool_registry_find(ro, "Grep"));
    assert_non_null(tool_registry_find(ro, "TodoWrite"));
    assert_null(tool_registry_find(ro, "Write"));
    assert_null(tool_registry_find(ro, "Edit"));
    assert_null(tool_registry_find(ro, "Bash"));
    assert_null(tool_registry_find(ro, "Agent"));
    assert_null(tool_registry_find(ro, "WebFetch"));
    tool_registry_free(ro);

    char *tools[] = {"Read", "Bash(git:*)", "Task", NULL};
    char *deny[] = {"Agent", NULL};
    agent_def def = {.name = "custom", .tools = tools};
    o = (agent_toolset_opts){.parent = parent, .def = &def};
    tool_registry *t = agent_toolset_build(&o, NULL, &err);
    assert_int_equal(tool_registry_count(t), 3);
    assert_non_null(tool_registry_find(t, "Bash"));
    assert_non_null(tool_registry_find(t, "Agent"));
    tool_registry_free(t);
    def.disallowed = deny;
    t = agent_toolset_build(&o, NULL, &err);
    assert_null(tool_registry_find(t, "Agent"));
    tool_registry_free(t);
    /* A content rule in disallowed leaves the tool for the pipeline. */
    char *deny_cmd[] = {"Bash(rm:*)", NULL};
    def.tools = NULL;
    def.disallowed = deny_cmd;
    t = agent_toolset_build(&o, NULL, &err);
    assert_non_null(tool_registry_find(t, "Bash"));
    tool_registry_free(t);
    /* A grandchild's parent already holds Publish: declared once. */
    static const tool_def fake_publish = {.name = "Publish", .description = "p",
                                          .input_schema = "{\"type\":\"object\"}",
                                          .run = noop_run, .local_state_only = true};
    tool_registry *with_pub = tool_registry_new();
    assert_int_equal(tool_registry_add_builtins(with_pub, &err), 0);
    assert_int_equal(tool_registry_add(with_pub, &fake_publish, &err), 0);
    o = (agent_toolset_opts){.parent = with_pub, .read_only = true, .publish = &fake_publish};
    t = agent_toolset_build(&o, NULL, &err);
    assert_non_null(t);
    assert_non_null(tool_registry_find(t, "Publish"));
    tool_registry_free(t);
    tool_registry_free(with_pub);
    const char *mcp[] = {"mcp__github__*", NULL};
    assert_true(agent_toolset_rule_names(mcp, "mcp__github__list"));
    assert_false(agent_toolset_rule_names(mcp, "mcp__gitlab__list"));
    tool_registry_free(parent);
}

static void test_structured_output(void **state)
{
    (void)state;
    agents_session *s = session();
    loop_params p = {0};
    spawn_node *root = spawn_node_new_root(s, "run1", &p, NULL);
    loom_error err;
    spawn_node *n = spawn_node_new_child(root, "verification", NULL, NULL, &err);
    n->output_schema = json_loads("{\"type\":\"object\",\"properties\":{\"verdict\":{\"enum\":"
                                  "[\"PASS\",\"FAIL\"]}},\"required\":[\"verdict\"]}",
                                  0, NULL);
    tool_def *d = structured_tool_new(n->output_schema, &err);
    assert_non_null(d);
    tool_registry *reg = tool_registry_new();
    assert_int_equal(tool_registry_add(reg, d, &err), 0);
    char *r1 = structured_before_final(n, "no");
    assert_non_null(r1);
    assert_non_null(strstr(r1, "StructuredOutput"));
    free(r1);
    tool_ctx ctx = {.spawn = n, .self = d};
    tool_result out;
    tool_result_init(&out);
    json_t *bad = json_pack("{s:s}", "verdict", "MAYBE");
    assert_int_equal(d->run(bad, &ctx, &out), 0);
    assert_true(out.is_error);
    assert_non_null(strstr(str_cstr(&out.text), "verdict"));
    tool_result_free(&out);
    json_decref(bad);
    tool_result_init(&out);
    json_t *good = json_pack("{s:s}", "verdict", "PASS");
    assert_int_equal(d->run(good, &ctx, &out), 0);
    assert_false(out.is_error);
    assert_true(json_equal(n->structured, good));
    assert_null(structured_before_final(n, "done"));
    tool_result_free(&out);
    json_decref(good);
    /* Bounded: with no attempt accepted, at most STRUCTURED_MAX_REMINDERS. */
    json_decref(n->structured);
    n->structured = NULL;
    n->structured_attempts = 0;
    n->structured_reminders = 0;
    int k = 0;
    for (char *r; (r = structured_before_final(n, "x")) != NULL; k++)
        free(r);
    assert_int_equal(k, STRUCTURED_MAX_REMINDERS);
    /* A non-object schema is wrapped under "value". */
    json_t *arr = json_loads("{\"type\":\"array\",\"items\":{\"type\":\"string\"}}", 0, NULL);
    tool_def *d2 = structured_tool_new(arr, &err);
    assert_non_null(strstr(d2->input_schema, "\"value\""));
    assert_int_equal(tool_registry_add(reg, d2, &err), -1); /* same name: one per registry */
    structured_tool_free(d2);
    json_decref(arr);
    tool_registry_free(reg);
    structured_tool_free(d);

    /* A verification verdict stands only on commands the agent ran. */
    agent_def ver = {.name = "verification", .role = AGENT_ROLE_VERIFICATION};
    spawn_node *v = spawn_node_new_child(root, "verification", NULL, NULL, &err);
    v->def = &ver;
    v->output_schema = json_loads("{\"type\":\"object\"}", 0, NULL);
    tool_def *vd = structured_tool_new(v->output_schema, &err);
    tool_ctx vctx = {.spawn = v, .self = vd};
    spawn_node_note_command(v, "  bash test.sh\n");
    json_t *claim = json_loads("{\"verdict\":\"PASS\",\"steps\":[{\"command\":\"bash test.sh\"},"
                               "{\"command\":\"make test\"}]}",
                               0, NULL);
    tool_result_init(&out);
    assert_int_equal(vd->run(claim, &vctx, &out), 0);
    assert_true(out.is_error);
    assert_non_null(strstr(str_cstr(&out.text), "make test"));
    assert_null(v->structured);
    tool_result_free(&out);
    json_array_remove(json_object_get(claim, "steps"), 1);
    tool_result_init(&out);
    assert_int_equal(vd->run(claim, &vctx, &out), 0);
    assert_false(out.is_error);
    assert_non_null(v->structured);
    tool_result_free(&out);
    json_decref(claim);
    structured_tool_free(vd);
    agents_session_free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ids_names_and_lookup),
        cmocka_unit_test(test_charge_reaches_ancestors_and_pool),
        cmocka_unit_test(test_shares_and_exhausted),
        cmocka_unit_test(test_cancel_inbox_and_running_cap),
        cmocka_unit_test(test_handoff_result),
        cmocka_unit_test(test_toolset_filters),
        cmocka_unit_test(test_structured_output),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
