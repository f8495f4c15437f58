/* test_governance_child.c — a sub-agent's governance (governance_child):
 * the role gate and the tools / disallowedTools lists at the permission
 * step of the real pipeline over the built-in tools (they only ever deny,
 * even in bypassPermissions), agent_id / agent_type in every hook payload,
 * the agent file's own hooks after the session's, the session-level
 * events a sub-agent does not fire, its approvals in the parent's registry
 * under the root run's id, pipeline_recheck_input (a rewritten Agent input
 * that breaks a deny rule, a headless ask, a bad schema), bad list entries
 * named, and freeing a child before its parent (run under ASan). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <ftw.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/fileio.h"
#include "base/json.h"
#include "base/str.h"
#include "governance/governance.h"
#include "governance/pipeline.h"
#include "tools/file_state.h"
#include "tools/registry.h"

static char dir[256];

static int rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb;
    (void)flag;
    (void)ftw;
    return remove(path);
}

static int group_setup(void **state)
{
    (void)state;
    const char *base = getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%s/loom-govchild-XXXXXX", base && *base ? base : "/tmp");
    if (!mkdtemp(dir))
        return -1;
    setenv("LOOM_HOME", dir, 1); /* the audit log lands here */
    char path[300];
    snprintf(path, sizeof path, "%s/notes.txt", dir);
    loom_error err;
    return file_write_atomic(path, "hello\n", 6, 0644, &err) < 0 ? -1 : 0;
}

static int group_teardown(void **state)
{
    (void)state;
    return nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

static governance *parent_gov(const char *mode, bool interactive, const json_t *user)
{
    governance_settings gs = {.mode = mode, .interactive = interactive, .user = user,
                              .trust = GOVERNANCE_TRUSTED};
    loom_error err;
    governance *g = governance_new(dir, "parent-session", "/tmp/parent.jsonl", &gs, &err);
    if (!g)
        fail_msg("%s", err.message);
    return g;
}

static governance *child_gov(governance *parent, const governance_child_opts *o)
{
    loom_error err;
    governance *c = governance_child(parent, o, &err);
    if (!c)
        fail_msg("%s", err.message);
    return c;
}

/* A tool call through the whole pipeline; returns the outcome (caller
 * frees). */
static tool_outcome run_call(const tool_registry *reg, governance *gov, const char *tool,
                             const char *input_json)
{
    json_t *in = json_loads(input_json, 0, NULL);
    assert_non_null(in);
    file_state *fs = file_state_new();
    tool_ctx ctx = {.cwd = dir, .gov = gov, .files = fs, .run_id = "root-run"};
    tool_call call = {"call-1", tool, in};
    tool_outcome out;
    tool_call_run(reg, &call, &ctx, &out);
    json_decref(in);
    file_state_free(fs);
    return out;
}

static tool_registry *builtins(void)
{
    tool_registry *reg = tool_registry_new();
    loom_error err;
    assert_int_equal(tool_registry_add_builtins(reg, &err), 0);
    return reg;
}

/* Explore's role: Write is refused at the permission step with a reason
 * the model can act on, even though the parent runs in bypassPermissions;
 * Read still runs. */
static void test_role_read_only_denies_write(void **state)
{
    (void)state;
    tool_registry *reg = builtins();
    governance *parent = parent_gov("bypassPermissions", false, NULL);
    governance_child_opts o = {.mode = MODE_BYPASS, .agent_id = "a1", .agent_type = "Explore",
                               .role_read_only = true};
    governance *child = child_gov(parent, &o);

    char in[400];
    snprintf(in, sizeof in, "{\"file_path\":\"%s/x.txt\",\"content\":\"no\"}", dir);
    tool_outcome out = run_call(reg, child, "Write", in);
    assert_true(out.result.is_error);
    assert_non_null(out.failed_step);
    assert_string_equal(out.failed_step, "role");
    assert_non_null(strstr(out.result.text.ptr, "the Explore agent is read-only: Write is not "
                                                "available"));
    tool_outcome_free(&out);
    char x[300];
    snprintf(x, sizeof x, "%s/x.txt", dir);
    assert_int_not_equal(access(x, F_OK), 0);

    snprintf(in, sizeof in, "{\"file_path\":\"%s/notes.txt\"}", dir);
    out = run_call(reg, child, "Read", in);
    assert_null(out.failed_step);
    assert_false(out.result.is_error);
    assert_non_null(strstr(out.result.text.ptr, "hello"));
    tool_outcome_free(&out);

    /* The parent itself is not confined by its child's role. */
    snprintf(in, sizeof in, "{\"file_path\":\"%s/y.txt\",\"content\":\"yes\"}", dir);
    out = run_call(reg, parent, "Write", in);
    assert_null(out.failed_step);
    tool_outcome_free(&out);

    governance_free(child);
    governance_free(parent);
    tool_registry_free(reg);
}

/* tools: Bash(git:*) confines Bash to git commands; Read stays, Write (not
 * listed) is gone. */
static void test_allow_list_confines_bash(void **state)
{
    (void)state;
    tool_registry *reg = builtins();
    governance *parent = parent_gov("bypassPermissions", false, NULL);
    const char *tools[] = {"Read", "Bash(git:*)", NULL};
    governance_child_opts o = {.mode = MODE_BYPASS, .agent_id = "a2", .agent_type = "gitter",
                               .tools = tools};
    governance *child = child_gov(parent, &o);

    tool_outcome out = run_call(reg, child, "Bash", "{\"command\":\"git status\"}");
    assert_null(out.failed_step); /* it ran (outside a repository git says so, but it ran) */
    tool_outcome_free(&out);

    out = run_call(reg, child, "Bash", "{\"command\":\"ls\"}");
    assert_true(out.result.is_error);
    assert_string_equal(out.failed_step, "agent_tools");
    assert_non_null(strstr(out.result.text.ptr, "Bash is not available to the gitter agent"));
    assert_non_null(strstr(out.result.text.ptr, "Read, Bash(git:*)"));
    tool_outcome_free(&out);

    /* A git command chained to another is not all git. */
    out = run_call(reg, child, "Bash", "{\"command\":\"git status; rm -f notes.txt\"}");
    assert_string_equal(out.failed_step, "agent_tools");
    tool_outcome_free(&out);

    char in[400];
    snprintf(in, sizeof in, "{\"file_path\":\"%s/w.txt\",\"content\":\"no\"}", dir);
    out = run_call(reg, child, "Write", in);
    assert_string_equal(out.failed_step, "agent_tools");
    tool_outcome_free(&out);

    governance_free(child);
    governance_free(parent);
    tool_registry_free(reg);
}

static int ok_run(const json_t *input, tool_ctx *ctx, tool_result *out)
{
    (void)input;
    (void)ctx;
    str_puts(&out->text, "ran");
    return 0;
}

/* mcp__github__* covers that server's tools and no other's. */
static void test_allow_list_mcp_server_glob(void **state)
{
    (void)state;
    static const tool_def gh = {.name = "mcp__github__list_issues", .description = "x",
                                .input_schema = "{\"type\":\"object\"}", .read_only = true,
                                .run = ok_run};
    static const tool_def gl = {.name = "mcp__gitlab__list_issues", .description = "x",
                                .input_schema = "{\"type\":\"object\"}", .read_only = true,
                                .run = ok_run};
    tool_registry *reg = tool_registry_new();
    loom_error err;
    assert_int_equal(tool_registry_add(reg, &gh, &err), 0);
    assert_int_equal(tool_registry_add(reg, &gl, &err), 0);
    governance *parent = parent_gov("bypassPermissions", false, NULL);
    const char *tools[] = {"mcp__github__*", NULL};
    governance_child_opts o = {.mode = MODE_BYPASS, .agent_type = "triage", .tools = tools};
    governance *child = child_gov(parent, &o);
    tool_outcome out = run_call(reg, child, "mcp__github__list_issues", "{}");
    assert_null(out.failed_step);
    assert_string_equal(out.result.text.ptr, "ran");
    tool_outcome_free(&out);
    out = run_call(reg, child, "mcp__gitlab__list_issues", "{}");
    assert_string_equal(out.failed_step, "agent_tools");
    tool_outcome_free(&out);
    governance_free(child);
    governance_free(parent);
    tool_registry_free(reg);
}

/* disallowedTools: Write is refused, other tools still run; a narrow deny
 * (Bash(rm:*)) takes only those commands. */
static void test_disallowed_denies(void **state)
{
    (void)state;
    tool_registry *reg = builtins();
    governance *parent = parent_gov("bypassPermissions", false, NULL);
    const char *deny[] = {"Write", "Bash(rm:*)", NULL};
    governance_child_opts o = {.mode = MODE_BYPASS, .agent_type = "careful",
                               .disallowed = deny};
    governance *child = child_gov(parent, &o);
    char in[400];
    snprintf(in, sizeof in, "{\"file_path\":\"%s/d.txt\",\"content\":\"no\"}", dir);
    tool_outcome out = run_call(reg, child, "Write", in);
    assert_string_equal(out.failed_step, "agent_tools");
    assert_non_null(strstr(out.result.text.ptr, "disallowedTools has Write"));
    tool_outcome_free(&out);
    out = run_call(reg, child, "Bash", "{\"command\":\"rm -f nothing-here\"}");
    assert_string_equal(out.failed_step, "agent_tools");
    tool_outcome_free(&out);
    out = run_call(reg, child, "Bash", "{\"command\":\"echo fine\"}");
    assert_null(out.failed_step);
    assert_non_null(strstr(out.result.text.ptr, "fine"));
    tool_outcome_free(&out);
    governance_free(child);
    governance_free(parent);
    tool_registry_free(reg);
}

static char *slurp(const char *path)
{
    char *text = NULL;
    size_t len = 0;
    loom_error err;
    if (file_read_all(path, &text, &len, &err) < 0)
        return NULL;
    return text;
}

/* Every hook fired in a child carries agent_id and agent_type; the agent
 * file's own hooks run after the session's and their answers merge; the
 * session's Stop hooks do not fire for a sub-agent, while the file's Stop
 * hooks became SubagentStop hooks. */
static void test_payload_and_scoped_hooks(void **state)
{
    (void)state;
    char session_log[300], agent_log[300];
    snprintf(session_log, sizeof session_log, "%s/session-hook.json", dir);
    snprintf(agent_log, sizeof agent_log, "%s/agent-hook.json", dir);
    loom_str cmd = LOOM_STR_INIT;
    str_printf(&cmd, "cat > '%s'", session_log);
    json_t *user = json_pack("{s:{s:[{s:s,s:[{s:s,s:s}]}],s:[{s:[{s:s,s:s}]}]}}", "hooks",
                             "PreToolUse", "matcher", "Bash", "hooks", "type", "command",
                             "command", cmd.ptr, "Stop", "hooks", "type", "command", "command",
                             "true");
    governance *parent = parent_gov("bypassPermissions", false, user);
    str_clear(&cmd);
    str_printf(&cmd, "cat > '%s'; echo '{\"hookSpecificOutput\":{\"hookEventName\":"
                     "\"PreToolUse\",\"permissionDecision\":\"deny\","
                     "\"permissionDecisionReason\":\"agent hook says no\"}}'",
               agent_log);
    json_t *hooks = json_pack("{s:[{s:s,s:[{s:s,s:s}]}],s:[{s:[{s:s,s:s}]}]}", "PreToolUse",
                              "matcher", "Bash", "hooks", "type", "command", "command", cmd.ptr,
                              "Stop", "hooks", "type", "command", "command", "true");
    governance_child_opts o = {.mode = MODE_BYPASS, .agent_id = "agent-42",
                               .agent_type = "reviewer", .hooks = hooks,
                               .transcript_path = "/tmp/child.jsonl"};
    governance *child = child_gov(parent, &o);

    json_t *p = governance_payload(child, HOOK_PRE_TOOL_USE);
    assert_string_equal(json_string_value(json_object_get(p, "agent_id")), "agent-42");
    assert_string_equal(json_string_value(json_object_get(p, "agent_type")), "reviewer");
    assert_string_equal(json_string_value(json_object_get(p, "transcript_path")),
                        "/tmp/child.jsonl");
    json_decref(p);
    p = governance_payload(parent, HOOK_PRE_TOOL_USE);
    assert_null(json_object_get(p, "agent_id"));
    json_decref(p);

    assert_int_equal(governance_hook_count(parent, HOOK_STOP), 1);
    assert_int_equal(governance_hook_count(child, HOOK_STOP), 0);
    assert_int_equal(governance_hook_count(child, HOOK_SUBAGENT_STOP), 1);
    assert_int_equal(governance_hook_count(child, HOOK_PRE_TOOL_USE), 2);
    hook_outcome none = governance_fire(child, HOOK_STOP, json_pack("{s:b}", "stop_hook_active",
                                                                    0), NULL);
    assert_int_equal(none.ran, 0);
    hook_outcome_free(&none);

    tool_registry *reg = builtins();
    tool_outcome out = run_call(reg, child, "Bash", "{\"command\":\"echo hi\"}");
    /* The agent's own hook denied it; both hooks saw the call. */
    assert_string_equal(out.failed_step, "decide");
    assert_non_null(strstr(out.result.text.ptr, "agent hook says no"));
    tool_outcome_free(&out);
    const char *logs[] = {session_log, agent_log};
    for (int i = 0; i < 2; i++) {
        char *text = slurp(logs[i]);
        assert_non_null(text);
        json_t *seen = json_loads(text, 0, NULL);
        assert_non_null(seen);
        assert_string_equal(json_string_value(json_object_get(seen, "agent_id")), "agent-42");
        assert_string_equal(json_string_value(json_object_get(seen, "agent_type")), "reviewer");
        assert_string_equal(json_string_value(json_object_get(seen, "tool_name")), "Bash");
        json_decref(seen);
        free(text);
        unlink(logs[i]);
    }
    /* The parent's call sees only the session's hook, without agent fields. */
    out = run_call(reg, parent, "Bash", "{\"command\":\"echo hi\"}");
    assert_null(out.failed_step);
    tool_outcome_free(&out);
    char *text = slurp(session_log);
    assert_non_null(text);
    assert_null(strstr(text, "agent_id"));
    free(text);
    assert_int_not_equal(access(agent_log, F_OK), 0);

    tool_registry_free(reg);
    governance_free(child);
    governance_free(parent);
    json_decref(hooks);
    json_decref(user);
    str_free(&cmd);
}

/* The child owns its mode, cwd and ids; the parent's stay as they were.
 * Invalid sandbox settings stay invalid in the child. */
static void test_owned_parts(void **state)
{
    (void)state;
    governance *parent = parent_gov("default", true, NULL);
    free(parent->sandbox_error);
    parent->sandbox_error = xstrdup("sandbox.filesystem: bad");
    governance_add_read_dir(parent, "/tmp");
    governance_child_opts o = {.mode = MODE_PLAN, .cwd = "/tmp", .session_id = "child-sess",
                               .agent_id = "a9", .agent_type = "Plan", .agent_name = "planner",
                               .role_read_only = true};
    governance *child = child_gov(parent, &o);
    assert_int_equal(child->mode.mode, MODE_PLAN);
    assert_int_equal(parent->mode.mode, MODE_DEFAULT);
    assert_string_equal(child->cwd, "/tmp");
    assert_string_equal(child->session_id, "child-sess");
    assert_string_equal(child->agent_name, "planner");
    assert_ptr_equal(child->parent, parent);
    assert_ptr_equal(child->rules, parent->rules);
    assert_ptr_equal(child->approvals, parent->approvals);
    assert_true(child->interactive);
    assert_true(child->trusted);
    assert_true(child->session_started);
    assert_string_equal(child->sandbox_error, "sandbox.filesystem: bad");
    assert_int_equal(child->n_additional_dirs, parent->n_additional_dirs);
    assert_ptr_not_equal(child->additional_dirs, parent->additional_dirs);
    /* A grandchild borrows from the child, which borrows from the root. */
    governance_child_opts go = {.mode = MODE_PLAN, .agent_id = "a10", .agent_type = "Explore"};
    governance *grand = child_gov(child, &go);
    assert_ptr_equal(grand->rules, parent->rules);
    assert_string_equal(grand->cwd, "/tmp");
    governance_free(grand);
    governance_free(child);
    governance_free(parent);
}

/* "Allow always" in a child (say in a worktree) lands in the session's
 * rules and its project's local settings, not in the child's cwd. */
static void test_allow_always_in_child(void **state)
{
    (void)state;
    char wt[300];
    snprintf(wt, sizeof wt, "%s/worktree", dir);
    assert_int_equal(mkdir(wt, 0755), 0);
    governance *parent = parent_gov("default", true, NULL);
    governance_child_opts o = {.mode = MODE_DEFAULT, .cwd = wt, .agent_type = "worker"};
    governance *child = child_gov(parent, &o);
    loom_error err;
    assert_int_equal(governance_allow_always(child, "Bash(echo:*)", &err), 0);
    json_t *in = json_pack("{s:s}", "command", "echo hi");
    assert_int_equal(perm_rules_check(parent->rules, "Bash", in, dir).verdict, PERM_ALLOW);
    json_decref(in);
    char path[400];
    snprintf(path, sizeof path, "%s/.loom/settings.local.json", dir);
    char *text = slurp(path);
    assert_non_null(text);
    assert_non_null(strstr(text, "Bash(echo:*)"));
    free(text);
    snprintf(path, sizeof path, "%s/.loom", wt);
    assert_int_not_equal(access(path, F_OK), 0);
    governance_free(child);
    governance_free(parent);
}

/* A bad entry fails the whole child and names it. */
static void test_bad_entries_named(void **state)
{
    (void)state;
    governance *parent = parent_gov("default", false, NULL);
    loom_error err;
    const char *tools[] = {"Read", "Bash(", NULL};
    governance_child_opts o = {.agent_type = "broken", .tools = tools};
    assert_null(governance_child(parent, &o, &err));
    assert_non_null(strstr(err.message, "agent broken: tools[1]"));
    const char *deny[] = {"", NULL};
    o = (governance_child_opts){.agent_type = "broken", .disallowed = deny};
    assert_null(governance_child(parent, &o, &err));
    assert_non_null(strstr(err.message, "agent broken: disallowedTools[0]"));
    json_t *hooks = json_pack("{s:[{s:[{s:s}]}]}", "PreToolUse", "hooks", "type", "command");
    o = (governance_child_opts){.agent_type = "broken", .hooks = hooks};
    assert_null(governance_child(parent, &o, &err));
    assert_non_null(strstr(err.message, "agent broken"));
    assert_non_null(strstr(err.message, "hooks.PreToolUse[0].hooks[0]"));
    json_decref(hooks);
    hooks = json_string("nope");
    o = (governance_child_opts){.agent_type = "broken", .hooks = hooks};
    assert_null(governance_child(parent, &o, &err));
    assert_non_null(strstr(err.message, "agent broken: hooks must be an object"));
    json_decref(hooks);
    governance_free(parent);
}

static const char *AGENT_SCHEMA =
    "{\"type\":\"object\",\"properties\":{\"subagent_type\":{\"type\":\"string\"},"
    "\"prompt\":{\"type\":\"string\"},\"description\":{\"type\":\"string\"}},"
    "\"required\":[\"prompt\"]}";

/* SubagentStart rewrote the Agent call: the rewrite is checked as a call
 * would be — a deny rule, the schema, and a headless ask refuse it. */
static void test_recheck_input(void **state)
{
    (void)state;
    tool_def agent = {.name = "Agent", .description = "spawns", .input_schema = AGENT_SCHEMA,
                      .concurrency_safe = true, .run = ok_run};
    tool_registry *reg = tool_registry_new();
    loom_error err;
    assert_int_equal(tool_registry_add(reg, &agent, &err), 0);
    json_t *user = json_pack("{s:{s:[s],s:[s]}}", "permissions", "deny", "Agent(Explore)",
                             "allow", "Agent");
    governance *gov = parent_gov("default", false, user);
    tool_ctx ctx = {.cwd = dir, .gov = gov, .run_id = "root-run", .call_id = "call-7"};
    loom_str why = LOOM_STR_INIT;

    json_t *in = json_pack("{s:s,s:s}", "subagent_type", "general-purpose", "prompt", "go");
    assert_int_equal(pipeline_recheck_input(reg, "Agent", in, &ctx, &why), 0);
    assert_int_equal(why.len, 0);
    json_decref(in);

    in = json_pack("{s:s,s:s}", "subagent_type", "Explore", "prompt", "REWRITTEN");
    assert_int_equal(pipeline_recheck_input(reg, "Agent", in, &ctx, &why), -1);
    assert_non_null(strstr(why.ptr, "decide"));
    assert_non_null(strstr(why.ptr, "Agent(Explore)"));
    json_decref(in);

    str_clear(&why);
    in = json_pack("{s:i}", "prompt", 3);
    assert_int_equal(pipeline_recheck_input(reg, "Agent", in, &ctx, &why), -1);
    assert_non_null(strstr(why.ptr, "validate_schema"));
    json_decref(in);

    str_clear(&why);
    in = json_pack("{s:s}", "prompt", "x");
    assert_int_equal(pipeline_recheck_input(reg, "Nope", in, &ctx, &why), -1);
    assert_non_null(strstr(why.ptr, "find_tool"));
    governance_free(gov);
    json_decref(user);

    /* No rule allows it, nobody can be asked: refused (headless). */
    gov = parent_gov("default", false, NULL);
    ctx.gov = gov;
    str_clear(&why);
    assert_int_equal(pipeline_recheck_input(reg, "Agent", in, &ctx, &why), -1);
    assert_non_null(strstr(why.ptr, "decide"));
    governance_free(gov);

    /* A child's own limits count too: Explore cannot spawn. */
    gov = parent_gov("bypassPermissions", false, NULL);
    governance_child_opts o = {.mode = MODE_BYPASS, .agent_type = "Explore",
                               .role_read_only = true};
    governance *child = child_gov(gov, &o);
    ctx.gov = child;
    str_clear(&why);
    assert_int_equal(pipeline_recheck_input(reg, "Agent", in, &ctx, &why), -1);
    assert_non_null(strstr(why.ptr, "role"));
    ctx.gov = gov;
    assert_int_equal(pipeline_recheck_input(reg, "Agent", in, &ctx, &why), 0);
    governance_free(child);
    governance_free(gov);
    json_decref(in);
    str_free(&why);
    tool_registry_free(reg);
}

typedef struct answerer {
    approval_registry *approvals;
    int found;
} answerer;

/* Plays the surface: finds the pending approval under the root run's id
 * and approves it. */
static void *answer_main(void *arg)
{
    answerer *a = arg;
    for (int i = 0; i < 500 && !a->found; i++) {
        json_t *pending = approval_list_pending(a->approvals, "root-run");
        if (json_array_size(pending) > 0) {
            const char *id = json_string_value(json_object_get(json_array_get(pending, 0), "approval_id"));
            loom_error err;
            if (id && approval_resolve(a->approvals, id, true, false, "ok", &err) == 0)
                a->found = 1;
        }
        json_decref(pending);
        usleep(10000);
    }
    return NULL;
}

/* A child's ask sits in the parent's approvals under the root run's id,
 * where the session's surfaces look, and its answer lets the call run. */
static void test_child_ask_goes_through_parent_approvals(void **state)
{
    (void)state;
    tool_registry *reg = builtins();
    governance *parent = parent_gov("default", true, NULL);
    governance_child_opts o = {.mode = MODE_DEFAULT, .agent_type = "general-purpose",
                               .agent_id = "a3"};
    governance *child = child_gov(parent, &o);
    answerer a = {.approvals = parent->approvals};
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, answer_main, &a), 0);
    char in[400];
    snprintf(in, sizeof in, "{\"file_path\":\"%s/asked.txt\",\"content\":\"yes\"}", dir);
    tool_outcome out = run_call(reg, child, "Write", in);
    pthread_join(th, NULL);
    assert_int_equal(a.found, 1);
    assert_null(out.failed_step);
    assert_false(out.result.is_error);
    tool_outcome_free(&out);
    governance_free(child);
    governance_free(parent);
    tool_registry_free(reg);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_role_read_only_denies_write),
        cmocka_unit_test(test_allow_list_confines_bash),
        cmocka_unit_test(test_allow_list_mcp_server_glob),
        cmocka_unit_test(test_disallowed_denies),
        cmocka_unit_test(test_payload_and_scoped_hooks),
        cmocka_unit_test(test_owned_parts),
        cmocka_unit_test(test_allow_always_in_child),
        cmocka_unit_test(test_bad_entries_named),
        cmocka_unit_test(test_recheck_input),
        cmocka_unit_test(test_child_ask_goes_through_parent_approvals),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
