/* test_cli_agent_tree.c — the REPL's sub-agent tree (src/surfaces/cli/
 * agent_tree.c): one line per running agent, indented by depth, with its
 * current tool, tokens and time; an ended agent leaves the tree with a
 * summary line; hostile names cannot restyle the terminal; a forwarded
 * event is told from the run's own. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "base/json.h"
#include "surfaces/cli/agent_tree.h"

static json_t *js(const char *text)
{
    loom_error err;
    json_t *v = json_parse(text, strlen(text), "test", &err);
    assert_non_null(v);
    return v;
}

static char *render(agent_tree *t, int64_t now, int cols)
{
    loom_str out = LOOM_STR_INIT;
    agent_tree_render(t, now, cols, &out);
    str_puts(&out, "");
    return str_steal(&out);
}

static void spawn(agent_tree *t, const char *payload, int64_t now)
{
    json_t *p = js(payload);
    agent_tree_spawned(t, p, now);
    json_decref(p);
}

static void lines_by_depth_tool_tokens_time(void **state)
{
    (void)state;
    agent_tree *t = agent_tree_new();
    char *empty = render(t, 0, 80);
    assert_string_equal(empty, "");
    free(empty);
    spawn(t, "{\"agent_id\":\"a1\",\"name\":\"reviewer\",\"agent_type\":\"code-reviewer\",\"depth\":1}",
          1000);
    spawn(t, "{\"agent_id\":\"a2\",\"agent_type\":\"Explore\",\"description\":\"find uses\","
             "\"depth\":2}", 2000);
    json_t *p = js("{\"agent_id\":\"a1\",\"tool\":\"Bash\",\"tokens\":12300,\"elapsed_ms\":8200}");
    agent_tree_progress(t, p, 4800); /* 8.2 s in at 4.8 s: started at -3.4 s */
    json_decref(p);
    agent_tree_tool(t, "a2", "Grep");
    assert_int_equal(agent_tree_count(t), 2);
    assert_string_equal(agent_tree_name(t, "a1"), "reviewer");
    char *s = render(t, 5000, 200);
    assert_string_equal(s, "  \xe2\x8e\xbf reviewer (code-reviewer) \xc2\xb7 Bash \xc2\xb7 12.3k tokens \xc2\xb7 8s\n"
                           "    \xe2\x8e\xbf find uses (Explore) \xc2\xb7 Grep \xc2\xb7 0 tokens \xc2\xb7 3s");
    free(s);
    /* Between progress events the clock goes on. */
    s = render(t, 7000, 200);
    assert_non_null(strstr(s, "12.3k tokens \xc2\xb7 10s\n"));
    free(s);
    /* The tool ends: the line loses it. */
    agent_tree_tool(t, "a2", NULL);
    s = render(t, 5000, 200);
    assert_non_null(strstr(s, "find uses (Explore) \xc2\xb7 0 tokens"));
    free(s);
    agent_tree_free(t);
}

static void completed_leaves_with_summary(void **state)
{
    (void)state;
    agent_tree *t = agent_tree_new();
    spawn(t, "{\"agent_id\":\"a1\",\"name\":\"reviewer\",\"agent_type\":\"code-reviewer\",\"depth\":1}",
          0);
    json_t *p = js("{\"agent_id\":\"a1\",\"agent_type\":\"code-reviewer\",\"state\":\"completed\","
                   "\"stop_reason\":\"end_turn\",\"tool_uses\":3,\"duration_ms\":8100,"
                   "\"usage\":{\"inputTokens\":12000,\"outputTokens\":300}}");
    loom_str sum = LOOM_STR_INIT;
    assert_true(agent_tree_completed(t, p, &sum));
    assert_string_equal(str_cstr(&sum), "\xe2\x9c\x93 reviewer (code-reviewer) completed \xc2\xb7 3 tool uses "
                                        "\xc2\xb7 12.3k tokens \xc2\xb7 8.1s");
    assert_int_equal(agent_tree_count(t), 0);
    char *s = render(t, 0, 80);
    assert_string_equal(s, "");
    free(s);
    json_decref(p);
    str_free(&sum);
    /* Unknown to the tree (spawned before the view began): still a summary. */
    p = js("{\"agent_id\":\"zz\",\"agent_type\":\"Explore\",\"state\":\"failed\","
           "\"stop_reason\":\"budget_share\",\"tool_uses\":1,\"duration_ms\":61000}");
    assert_false(agent_tree_completed(t, p, &sum));
    assert_string_equal(str_cstr(&sum), "\xe2\x9c\x97 Explore failed (budget_share) \xc2\xb7 1 tool use "
                                        "\xc2\xb7 0 tokens \xc2\xb7 1m 01s");
    json_decref(p);
    str_free(&sum);
    agent_tree_free(t);
}

static void hostile_names_and_width(void **state)
{
    (void)state;
    agent_tree *t = agent_tree_new();
    spawn(t, "{\"agent_id\":\"a1\",\"name\":\"evil\\u001b[31m\\nsecond\",\"agent_type\":\"x\",\"depth\":1}", 0);
    char *s = render(t, 0, 200);
    assert_null(strchr(s, '\x1b'));
    assert_null(strchr(s, '\n'));
    free(s);
    /* Cut to the width: no line wraps under the spinner. */
    spawn(t, "{\"agent_id\":\"a2\",\"name\":\"a very long agent name that goes on and on\","
             "\"agent_type\":\"general-purpose\",\"depth\":9}", 0);
    s = render(t, 0, 30);
    const char *second = strchr(s, '\n');
    assert_non_null(second);
    assert_true(strlen(second + 1) <= 30 * 3); /* ≤ 30 characters of ≤ 3 bytes */
    assert_non_null(strstr(second + 1, "\xe2\x80\xa6"));
    free(s);
    agent_tree_free(t);
}

static void many_agents_fold(void **state)
{
    (void)state;
    agent_tree *t = agent_tree_new();
    for (int i = 0; i < 12; i++) {
        char p[128];
        snprintf(p, sizeof p, "{\"agent_id\":\"a%d\",\"agent_type\":\"Explore\",\"depth\":1}", i);
        spawn(t, p, 0);
    }
    char *s = render(t, 0, 80);
    int lines = 1;
    for (const char *c = s; *c; c++)
        lines += *c == '\n';
    assert_int_equal(lines, 8);
    assert_non_null(strstr(s, "and 5 more agents"));
    free(s);
    agent_tree_free(t);
}

static void forwarded_events_told_apart(void **state)
{
    (void)state;
    const char *own = "{\"type\":\"tool.started\",\"payload\":{\"call_id\":\"c\",\"tool\":\"Bash\"}}";
    const char *child = "{\"type\":\"tool.started\",\"payload\":{\"call_id\":\"c\",\"tool\":\"Bash\","
                        "\"agent_id\":\"a1\",\"agent_name\":\"r\"}}";
    const char *spawned = "{\"type\":\"agent.spawned\",\"payload\":{\"agent_id\":\"a1\"}}";
    loom_event e1 = {.json = own, .kind = LOOM_EV_TOOL_STARTED};
    loom_event e2 = {.json = child, .kind = LOOM_EV_TOOL_STARTED};
    loom_event e3 = {.json = spawned, .kind = LOOM_EV_AGENT_SPAWNED};
    json_t *d1 = js(own), *d2 = js(child), *d3 = js(spawned);
    assert_null(agent_tree_event_agent(&e1, d1));
    assert_string_equal(agent_tree_event_agent(&e2, d2), "a1");
    assert_null(agent_tree_event_agent(&e3, d3));
    json_decref(d1);
    json_decref(d2);
    json_decref(d3);
    /* Tokens: the text may say "agent_id" without being a sub-agent's. */
    loom_event t1 = {.json = "{\"type\":\"token.delta\",\"payload\":{\"channel\":\"text\","
                             "\"text\":\"the \\\"agent_id\\\": key\"}}",
                     .text = "x", .channel = "text", .kind = LOOM_EV_TOKEN_DELTA};
    loom_event t2 = {.json = "{\"type\":\"token.delta\",\"payload\":{\"channel\":\"text\","
                             "\"text\":\"hi\",\"agent_id\":\"a1\"}}",
                     .text = "hi", .channel = "text", .kind = LOOM_EV_TOKEN_DELTA};
    loom_event t3 = {.json = "{\"type\":\"token.delta\",\"payload\":{\"channel\":\"text\","
                             "\"text\":\"agent_id\"}}",
                     .text = "agent_id", .channel = "text", .kind = LOOM_EV_TOKEN_DELTA};
    assert_false(agent_tree_token_from_agent(&t1));
    assert_true(agent_tree_token_from_agent(&t2));
    assert_false(agent_tree_token_from_agent(&t3));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(lines_by_depth_tool_tokens_time),
        cmocka_unit_test(completed_leaves_with_summary),
        cmocka_unit_test(hostile_names_and_width),
        cmocka_unit_test(many_agents_fold),
        cmocka_unit_test(forwarded_events_told_apart),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
