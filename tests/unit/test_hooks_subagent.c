/* test_hooks_subagent.c — the sub-agent events of the hooks runner:
 * SubagentStart's hookSpecificOutput.updatedInput is read (a command hook
 * and a built-in), other non-tool events still ignore one with a warning;
 * SubagentStart and SubagentStop match on agent_type; SubagentStop's
 * "decision": "block" and exit 2 block with the reason (the agent goes on);
 * and hook_outcome_merge folds a second firing into the first by the rules
 * of one firing. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/str.h"
#include "hooks/registry.h"
#include "hooks/run.h"

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
    snprintf(dir, sizeof dir, "%s/loom-hooksub-XXXXXX", base && *base ? base : "/tmp");
    return mkdtemp(dir) ? 0 : -1;
}

static int group_teardown(void **state)
{
    (void)state;
    return nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* One command hook for ev under matcher (NULL: none). */
static hook_registry *one_hook(const char *ev, const char *matcher, const char *command)
{
    json_t *group = json_pack("{s:[{s:s,s:s}]}", "hooks", "type", "command", "command", command);
    if (matcher)
        json_object_set_new(group, "matcher", json_string(matcher));
    json_t *hooks = json_pack("{s:[o]}", ev, group);
    hook_registry *reg = hook_registry_new();
    loom_error err;
    if (hook_registry_load(reg, hooks, HOOK_SRC_USER, true, &err) != 0)
        fail_msg("%s", err.message);
    json_decref(hooks);
    return reg;
}

static json_t *start_payload(const char *type)
{
    return json_pack("{s:s,s:s,s:s,s:s,s:s}", "cwd", dir, "agent_id", "agent-1", "agent_type",
                     type, "prompt", "look around", "description", "explore");
}

static bool has_warning(const hook_outcome *o, const char *needle)
{
    for (size_t i = 0; i < o->n_notices; i++)
        if (o->notices[i].kind == HOOK_NOTICE_WARNING && strstr(o->notices[i].text, needle))
            return true;
    return false;
}

static void test_subagent_start_updated_input(void **state)
{
    (void)state;
    hook_registry *reg = one_hook(
        "SubagentStart", NULL,
        "echo '{\"hookSpecificOutput\":{\"hookEventName\":\"SubagentStart\","
        "\"updatedInput\":{\"subagent_type\":\"Explore\",\"prompt\":\"REWRITTEN\"},"
        "\"additionalContext\":\"be brief\"}}'");
    json_t *p = start_payload("Explore");
    hook_outcome o = hooks_run(reg, HOOK_SUBAGENT_START, p, NULL);
    assert_int_equal(o.ran, 1);
    assert_non_null(o.updated_input);
    assert_string_equal(json_string_value(json_object_get(o.updated_input, "prompt")),
                        "REWRITTEN");
    assert_string_equal(o.additional_context, "be brief");
    assert_false(has_warning(&o, "updatedInput"));
    hook_outcome_free(&o);

    /* A non-object is refused with a warning, never applied. */
    hook_registry_free(reg);
    reg = one_hook("SubagentStart", NULL,
                   "echo '{\"hookSpecificOutput\":{\"hookEventName\":\"SubagentStart\","
                   "\"updatedInput\":\"just text\"}}'");
    o = hooks_run(reg, HOOK_SUBAGENT_START, p, NULL);
    assert_null(o.updated_input);
    assert_true(has_warning(&o, "not an object"));
    hook_outcome_free(&o);
    hook_registry_free(reg);

    /* Elsewhere (SessionStart) an updatedInput is still ignored, and said so. */
    reg = one_hook("SessionStart", NULL,
                   "echo '{\"hookSpecificOutput\":{\"hookEventName\":\"SessionStart\","
                   "\"updatedInput\":{\"x\":1}}}'");
    json_t *sp = json_pack("{s:s,s:s}", "cwd", dir, "source", "startup");
    o = hooks_run(reg, HOOK_SESSION_START, sp, NULL);
    assert_null(o.updated_input);
    assert_true(has_warning(&o, "only applies to PreToolUse, PermissionRequest and "
                                "SubagentStart"));
    hook_outcome_free(&o);
    json_decref(sp);
    hook_registry_free(reg);
    json_decref(p);
}

static int builtin_rewrite(void *ctx, hook_event ev, const json_t *payload, json_t **reply,
                           loom_error *err)
{
    (void)ctx;
    (void)ev;
    (void)payload;
    (void)err;
    *reply = json_pack("{s:{s:s,s:{s:s}}}", "hookSpecificOutput", "hookEventName",
                       "SubagentStart", "updatedInput", "prompt", "FROM BUILTIN");
    return 0;
}

/* Matchers of the sub-agent events test agent_type (Claude Code's rule). */
static void test_subagent_matchers_use_agent_type(void **state)
{
    (void)state;
    hook_registry *reg = hook_registry_new();
    assert_int_equal(hook_registry_add_builtin(reg, HOOK_SUBAGENT_START, "Explore|Plan", 0,
                                               builtin_rewrite, NULL),
                     0);
    json_t *p = start_payload("Explore");
    hook_outcome o = hooks_run(reg, HOOK_SUBAGENT_START, p, NULL);
    assert_int_equal(o.ran, 1);
    assert_string_equal(json_string_value(json_object_get(o.updated_input, "prompt")),
                        "FROM BUILTIN");
    hook_outcome_free(&o);
    json_decref(p);
    p = start_payload("general-purpose");
    o = hooks_run(reg, HOOK_SUBAGENT_START, p, NULL);
    assert_int_equal(o.ran, 0);
    assert_null(o.updated_input);
    hook_outcome_free(&o);
    json_decref(p);
    hook_registry_free(reg);

    reg = one_hook("SubagentStop", "^review", "exit 2");
    json_t *sp = json_pack("{s:s,s:s,s:s}", "cwd", dir, "agent_type", "reviewer", "agent_id",
                           "a");
    o = hooks_run(reg, HOOK_SUBAGENT_STOP, sp, NULL);
    assert_int_equal(o.ran, 1);
    hook_outcome_free(&o);
    json_object_set_new(sp, "agent_type", json_string("Explore"));
    o = hooks_run(reg, HOOK_SUBAGENT_STOP, sp, NULL);
    assert_int_equal(o.ran, 0);
    hook_outcome_free(&o);
    json_decref(sp);
    hook_registry_free(reg);
}

/* SubagentStop: "decision": "block" and exit 2 keep the agent at work, the
 * reason its next instruction; "continue": false still ends it. */
static void test_subagent_stop_block(void **state)
{
    (void)state;
    json_t *p = json_pack("{s:s,s:s,s:s,s:s,s:s,s:b}", "cwd", dir, "agent_id", "a1",
                          "agent_type", "Explore", "agent_transcript_path", "/tmp/a1.jsonl",
                          "last_assistant_message", "done?", "stop_hook_active", 0);
    hook_registry *reg = one_hook("SubagentStop", NULL,
                                  "echo '{\"decision\":\"block\",\"reason\":\"run the tests "
                                  "first\"}'");
    hook_outcome o = hooks_run(reg, HOOK_SUBAGENT_STOP, p, NULL);
    assert_true(o.blocked);
    assert_string_equal(o.block_reason, "run the tests first");
    assert_false(o.stop);
    hook_outcome_free(&o);
    hook_registry_free(reg);

    reg = one_hook("SubagentStop", NULL, "echo 'not yet: no report' >&2; exit 2");
    o = hooks_run(reg, HOOK_SUBAGENT_STOP, p, NULL);
    assert_true(o.blocked);
    assert_non_null(strstr(o.block_reason, "not yet: no report"));
    hook_outcome_free(&o);
    hook_registry_free(reg);

    reg = one_hook("SubagentStop", NULL,
                   "echo '{\"continue\":false,\"stopReason\":\"enough\"}'");
    o = hooks_run(reg, HOOK_SUBAGENT_STOP, p, NULL);
    assert_true(o.stop);
    assert_string_equal(o.stop_reason, "enough");
    hook_outcome_free(&o);
    hook_registry_free(reg);
    json_decref(p);
}

/* Two firings merged read as one: deny beats allow, reasons and context
 * are joined, the later input wins with a warning, results are all kept. */
static void test_outcome_merge(void **state)
{
    (void)state;
    json_t *pre = json_pack("{s:s,s:s,s:{s:s}}", "cwd", dir, "tool_name", "Bash", "tool_input",
                            "command", "ls");
    hook_registry *a = one_hook("PreToolUse", "Bash",
                                "echo '{\"hookSpecificOutput\":{\"hookEventName\":\"PreToolUse\","
                                "\"permissionDecision\":\"allow\",\"updatedInput\":{\"command\":"
                                "\"ls -a\"},\"additionalContext\":\"first\"}}'");
    hook_registry *b = one_hook("PreToolUse", "Bash",
                                "echo '{\"hookSpecificOutput\":{\"hookEventName\":\"PreToolUse\","
                                "\"permissionDecision\":\"deny\",\"permissionDecisionReason\":"
                                "\"no listing\",\"updatedInput\":{\"command\":\"ls -l\"},"
                                "\"additionalContext\":\"second\"}}'");
    hook_outcome x = hooks_run(a, HOOK_PRE_TOOL_USE, pre, NULL);
    hook_outcome y = hooks_run(b, HOOK_PRE_TOOL_USE, pre, NULL);
    assert_int_equal(x.permission, PERM_ALLOW);
    hook_outcome_merge(&x, &y);
    assert_int_equal(x.ran, 2);
    assert_int_equal(x.n_results, 2);
    assert_int_equal(x.permission, PERM_DENY);
    assert_string_equal(x.permission_reason, "no listing");
    assert_true(x.blocked);
    assert_string_equal(x.block_reason, "no listing");
    assert_string_equal(json_string_value(json_object_get(x.updated_input, "command")), "ls -l");
    assert_string_equal(x.additional_context, "first\nsecond");
    assert_true(has_warning(&x, "both changed the input"));
    assert_int_equal(y.ran, 0);
    assert_null(y.results);
    hook_outcome_free(&y);
    hook_outcome_free(&x);
    hook_registry_free(a);
    hook_registry_free(b);
    json_decref(pre);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_subagent_start_updated_input),
        cmocka_unit_test(test_subagent_matchers_use_agent_type),
        cmocka_unit_test(test_subagent_stop_block),
        cmocka_unit_test(test_outcome_merge),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
