/* test_tool_registry.c — the registry: built-ins present in the documented
 * order with their fail-closed flags, duplicates and bad definitions
 * refused, lookups, and the request's tool list in the same order every
 * time (provider prompt caches depend on it), sharing the registry's
 * schemas. Links every built-in tool. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/json.h"
#include "tools/builtin/builtin.h"
#include "tools/registry.h"
#include "tools/schema.h"
#include "message/message.h"

static const char *const builtin_order[] = {
    "Read", "Write", "Edit",      "Glob",      "Grep",           "Bash",
    "TaskOutput", "TaskStop", "TodoWrite", "WebFetch", "AskUserQuestion", "Renew", "AcknowledgeEvent",
    "NotebookEdit", "ExitPlanMode", "TaskCreate", "TaskGet", "TaskUpdate", "TaskList",
    "EnterWorktree", "ExitWorktree",
};
#define N_BUILTINS (sizeof builtin_order / sizeof *builtin_order)

static int noop_run(const json_t *input, tool_ctx *ctx, tool_result *out)
{
    (void)input;
    (void)ctx;
    str_puts(&out->text, "ok");
    return 0;
}

static void test_builtins_in_order(void **state)
{
    (void)state;
    tool_registry *reg = tool_registry_new();
    loom_error err;
    loom_error_clear(&err);
    if (tool_registry_add_builtins(reg, &err) != 0)
        fail_msg("builtins refused: %s", err.message);
    assert_int_equal(tool_registry_count(reg), N_BUILTINS);
    for (size_t i = 0; i < N_BUILTINS; i++) {
        const tool_def *d = tool_registry_at(reg, i);
        assert_non_null(d);
        assert_string_equal(d->name, builtin_order[i]);
        assert_ptr_equal(tool_registry_find(reg, builtin_order[i]), d);
        const json_t *schema = tool_registry_schema(reg, builtin_order[i]);
        assert_non_null(schema);
        assert_string_equal(json_string_value(json_object_get(schema, "type")), "object");
        assert_non_null(d->run);
        assert_true(strlen(d->description) > 20);
    }
    assert_null(tool_registry_at(reg, N_BUILTINS));
    assert_null(tool_registry_find(reg, "read")); /* names are exact */
    assert_null(tool_registry_find(reg, "Nope"));
    assert_null(tool_registry_schema(reg, "Nope"));
    assert_null(tool_registry_find(reg, NULL));

    /* Adding them again: the first duplicate stops it. */
    loom_error_clear(&err);
    assert_true(tool_registry_add_builtins(reg, &err) < 0);
    assert_string_equal(err.message, "tool Read is already registered");
    assert_int_equal(tool_registry_count(reg), N_BUILTINS);
    tool_registry_free(reg);
}

/* The flags docs/tools.md documents. A change here is a change in what
 * may run unattended or in parallel: update the docs with it. */
static void test_builtin_flags(void **state)
{
    (void)state;
    static const struct {
        const tool_def *def;
        bool read_only, concurrency_safe;
    } table[] = {
        {&tool_read, true, true},         {&tool_write, false, false},
        {&tool_edit, false, false},       {&tool_glob, true, true},
        {&tool_grep, true, true},         {&tool_bash, false, false},
        {&tool_task_output, true, true},  {&tool_task_stop, false, false},
        {&tool_todo_write, false, false}, {&tool_web_fetch, true, true},
        {&tool_ask_user, true, false},    {&tool_exit_plan_mode, false, false},
        {&tool_task_create, false, false}, {&tool_task_get, true, true},
        {&tool_task_update, false, false}, {&tool_task_list, true, true},
        {&tool_enter_worktree, false, false}, {&tool_exit_worktree, false, false},
    };
    for (size_t i = 0; i < sizeof table / sizeof *table; i++) {
        if (table[i].def->read_only != table[i].read_only ||
            table[i].def->concurrency_safe != table[i].concurrency_safe)
            fail_msg("%s: read_only=%d concurrency_safe=%d, documented %d/%d",
                     table[i].def->name, table[i].def->read_only,
                     table[i].def->concurrency_safe, table[i].read_only,
                     table[i].concurrency_safe);
    }
    /* Loom-only tools never ask; WebFetch sends data out (docs/permissions.md). */
    static const struct {
        const tool_def *def;
        bool local_state_only, sends_out;
    } perm[] = {
        {&tool_read, false, false},       {&tool_write, false, false},
        {&tool_edit, false, false},       {&tool_glob, false, false},
        {&tool_grep, false, false},       {&tool_bash, false, false},
        {&tool_task_output, false, false}, {&tool_task_stop, false, false},
        {&tool_todo_write, true, false},  {&tool_web_fetch, false, true},
        {&tool_ask_user, false, false},   {&tool_renew, true, false},
        {&tool_ack_event, true, false},   {&tool_exit_plan_mode, true, false},
        {&tool_task_create, true, false}, {&tool_task_get, true, false},
        {&tool_task_update, true, false}, {&tool_task_list, true, false},
        {&tool_enter_worktree, false, false}, {&tool_exit_worktree, false, false},
    };
    for (size_t i = 0; i < sizeof perm / sizeof *perm; i++)
        if (perm[i].def->local_state_only != perm[i].local_state_only ||
            perm[i].def->sends_out != perm[i].sends_out)
            fail_msg("%s: local_state_only=%d sends_out=%d, documented %d/%d", perm[i].def->name,
                     perm[i].def->local_state_only, perm[i].def->sends_out,
                     perm[i].local_state_only, perm[i].sends_out);
}

static void expect_refused(tool_registry *reg, const tool_def *def, const char *fragment)
{
    loom_error err;
    loom_error_clear(&err);
    size_t before = tool_registry_count(reg);
    assert_true(tool_registry_add(reg, def, &err) < 0);
    assert_int_equal(err.code, LOOM_ERR_INVALID_REQUEST);
    if (!strstr(err.message, fragment))
        fail_msg("message \"%s\" lacks \"%s\"", err.message, fragment);
    assert_int_equal(tool_registry_count(reg), before);
}

static void test_refusals(void **state)
{
    (void)state;
    tool_registry *reg = tool_registry_new();
    const tool_def ok = {.name = "Mine",
                         .description = "d",
                         .input_schema = "{\"type\":\"object\"}",
                         .run = noop_run};
    assert_int_equal(tool_registry_add(reg, &ok, NULL), 0);

    tool_def dup = ok;
    expect_refused(reg, &dup, "tool Mine is already registered");

    tool_def bad = ok;
    bad.name = "Bad";
    bad.input_schema = "{\"type\":\"object\",";
    expect_refused(reg, &bad, "tool Bad: input schema is not valid JSON");
    bad.input_schema = "{\"type\":\"object\",\"properties\":{\"x\":{\"type\":\"text\"}}}";
    expect_refused(reg, &bad, "tool Bad: invalid input schema at properties.x: unknown type");
    bad.input_schema = "{\"type\":\"string\"}";
    expect_refused(reg, &bad, "must have \"type\": \"object\"");
    bad.input_schema = "{}";
    expect_refused(reg, &bad, "must have \"type\": \"object\"");
    bad.input_schema = NULL;
    expect_refused(reg, &bad, "missing input schema");

    tool_def name = ok;
    name.name = "has space";
    expect_refused(reg, &name, "is not 1-64 characters");
    name.name = "";
    expect_refused(reg, &name, "is not 1-64 characters");
    name.name = NULL;
    expect_refused(reg, &name, "is not 1-64 characters");
    name.name = "mcp__server__a_tool_with_a_really_long_name_that_goes_past_64_chars";
    expect_refused(reg, &name, "is not 1-64 characters");

    tool_def nodesc = ok;
    nodesc.name = "NoDesc";
    nodesc.description = "";
    expect_refused(reg, &nodesc, "has no description");
    tool_def norun = ok;
    norun.name = "NoRun";
    norun.run = NULL;
    expect_refused(reg, &norun, "has no run function");
    expect_refused(reg, NULL, "tool definition missing");

    assert_int_equal(tool_registry_count(reg), 1);
    tool_registry_free(reg);
    tool_registry_free(NULL);
}

/* seed 000 step 1: a call by an alias finds the tool; an alias may not
 * take a name that is already a tool's, and a tool's own name wins. */
static void test_aliases(void **state)
{
    (void)state;
    tool_registry *reg = tool_registry_new();
    static const char *const agent_aliases[] = {"Task", NULL};
    const tool_def agent = {.name = "Agent",
                            .description = "d",
                            .input_schema = "{\"type\":\"object\"}",
                            .run = noop_run,
                            .aliases = agent_aliases};
    assert_int_equal(tool_registry_add(reg, &agent, NULL), 0);
    assert_ptr_equal(tool_registry_find(reg, "Task"), tool_registry_find(reg, "Agent"));
    assert_non_null(tool_registry_schema(reg, "Task"));
    assert_null(tool_registry_find(reg, "task"));

    tool_def task = agent;
    task.name = "Task";
    task.aliases = NULL;
    expect_refused(reg, &task, "tool Task is already registered");
    static const char *const clash[] = {"Agent", NULL};
    tool_def other = agent;
    other.name = "Other";
    other.aliases = clash;
    expect_refused(reg, &other, "alias \"Agent\" is not a free tool name");
    static const char *const bad[] = {"has space", NULL};
    other.aliases = bad;
    expect_refused(reg, &other, "is not a free tool name");
    tool_registry_free(reg);
}

static void test_to_request(void **state)
{
    (void)state;
    tool_registry *reg = tool_registry_new();
    assert_int_equal(tool_registry_add_builtins(reg, NULL), 0);
    const tool_def extra = {.name = "mcp__srv__ping",
                            .description = "Pings.",
                            .input_schema = "{\"type\":\"object\",\"properties\":{}}",
                            .run = noop_run};
    assert_int_equal(tool_registry_add(reg, &extra, NULL), 0);

    /* Two requests built from one registry carry identical tool lists. */
    msg_request a, b;
    memset(&a, 0, sizeof a);
    memset(&b, 0, sizeof b);
    tool_registry_to_request(reg, &a);
    tool_registry_to_request(reg, &b);
    assert_int_equal(a.n_tools, N_BUILTINS + 1);
    assert_int_equal(b.n_tools, a.n_tools);
    for (size_t i = 0; i < a.n_tools; i++) {
        const char *want = i < N_BUILTINS ? builtin_order[i] : "mcp__srv__ping";
        assert_string_equal(a.tools[i].name, want);
        assert_string_equal(a.tools[i].description, tool_registry_at(reg, i)->description);
        /* Shared, not copied: the registry's own schema, one reference per
         * request on top of the registry's. */
        const json_t *mine = tool_registry_schema(reg, want);
        assert_ptr_equal(a.tools[i].input_schema, mine);
        assert_ptr_equal(b.tools[i].input_schema, mine);
        assert_int_equal(mine->refcount, 3);
        char *ja = json_dump_compact(a.tools[i].input_schema);
        char *jb = json_dump_compact(b.tools[i].input_schema);
        assert_string_equal(ja, jb);
        free(ja);
        free(jb);
    }
    msg_request_free(&a);
    msg_request_free(&b);
    /* The registry's schemas survive the requests. */
    assert_non_null(json_object_get(tool_registry_schema(reg, "TodoWrite"), "properties"));
    assert_int_equal(tool_registry_schema(reg, "TodoWrite")->refcount, 1);
    tool_registry_free(reg);
}

static void test_builtin_schemas_accept_examples(void **state)
{
    (void)state;
    /* One well-formed call per tool of mine, checked against the schema
     * the registry holds: the schemas say what the descriptions say. */
    tool_registry *reg = tool_registry_new();
    assert_int_equal(tool_registry_add_builtins(reg, NULL), 0);
    static const struct {
        const char *tool, *input;
    } calls[] = {
        {"TodoWrite", "{\"todos\":[{\"content\":\"a\",\"status\":\"pending\",\"activeForm\":\"A\"}]}"},
        {"WebFetch", "{\"url\":\"https://example.com\",\"prompt\":\"summarise\"}"},
        {"AskUserQuestion",
         "{\"questions\":[{\"question\":\"Q?\",\"header\":\"H\",\"multiSelect\":false,"
         "\"options\":[{\"label\":\"a\",\"description\":\"x\"},"
         "{\"label\":\"b\",\"description\":\"y\"}]}]}"},
        {"ExitPlanMode", "{\"plan\":\"1. do it\"}"},
        {"TaskCreate", "{\"subject\":\"s\",\"description\":\"d\",\"activeForm\":\"S-ing\"}"},
        {"TaskGet", "{\"taskId\":\"1\"}"},
        {"TaskUpdate", "{\"taskId\":\"1\",\"status\":\"deleted\",\"addBlocks\":[\"2\"],"
                       "\"owner\":\"a\",\"metadata\":{\"k\":null}}"},
        {"TaskList", "{}"},
        {"EnterWorktree", "{\"name\":\"feature\"}"},
        {"ExitWorktree", "{\"action\":\"remove\",\"discard_changes\":true}"},
    };
    for (size_t i = 0; i < sizeof calls / sizeof *calls; i++) {
        json_t *in = json_loads(calls[i].input, 0, NULL);
        loom_str why = LOOM_STR_INIT;
        if (schema_validate(tool_registry_schema(reg, calls[i].tool), in, &why) != 0)
            fail_msg("%s: %s", calls[i].tool, why.ptr);
        str_free(&why);
        json_decref(in);
    }
    tool_registry_free(reg);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_builtins_in_order),
        cmocka_unit_test(test_builtin_flags),
        cmocka_unit_test(test_refusals),
        cmocka_unit_test(test_aliases),
        cmocka_unit_test(test_to_request),
        cmocka_unit_test(test_builtin_schemas_accept_examples),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
