/* test_hooks.c — the hook registry and planning: loading settings in Claude
 * Code's shape, errors that name the bad entry, matchers, `if` conditions,
 * priority order, dedupe, once-only hooks (also under threads), the trust
 * gate, built-ins first, and prompt/agent hooks with and without a runner.
 *
 * Hooks are real bash commands that append a tag to a log file in a
 * mkdtemp directory; the file's contents are the execution order. */
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
#include <unistd.h>

#include "base/fileio.h"
#include "base/glob.h"
#include "base/json.h"
#include "base/str.h"
#include "hooks/events.h"
#include "hooks/match.h"
#include "hooks/registry.h"
#include "hooks/run.h"

static char tmpdir[256];
static char logpath[300];

static int rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    return remove(path);
}

static int group_setup(void **state)
{
    const char *base = getenv("TMPDIR");
    snprintf(tmpdir, sizeof tmpdir, "%s/loom-hooks-XXXXXX", base && *base ? base : "/tmp");
    if (!mkdtemp(tmpdir))
        return -1;
    snprintf(logpath, sizeof logpath, "%s/order.log", tmpdir);
    return 0;
}

static int group_teardown(void **state)
{
    return nftw(tmpdir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

static int test_setup(void **state)
{
    unlink(logpath);
    return 0;
}

/* The log so far ("" when no hook wrote). Caller frees. */
static char *read_log(void)
{
    char *data = NULL;
    loom_error err;
    if (file_read_all(logpath, &data, NULL, &err) < 0)
        return strdup("");
    return data;
}

static void assert_log(const char *want)
{
    char *got = read_log();
    assert_string_equal(got, want);
    free(got);
}

/* A command that appends tag and a space to the log. */
static char *append_cmd(const char *tag)
{
    loom_str s = LOOM_STR_INIT;
    str_printf(&s, "printf '%%s ' %s >> '%s'", tag, logpath);
    return str_steal(&s);
}

static json_t *parse(const char *text)
{
    json_error_t je;
    json_t *v = json_loads(text, 0, &je);
    if (!v)
        fail_msg("bad test JSON (%s): %s", je.text, text);
    return v;
}

static void load_ok(hook_registry *reg, const char *hooks_json, hook_source src, bool trusted)
{
    json_t *h = parse(hooks_json);
    loom_error err;
    loom_error_clear(&err);
    int rc = hook_registry_load(reg, h, src, trusted, &err);
    json_decref(h);
    if (rc != 0)
        fail_msg("load failed: %s", err.message);
}

/* Builds {"Event": [{"matcher": m, "hooks": [{"type":"command","command":
 * append(tag), extra…}]}]} with printf-style extra hook members. */
static void load_tag(hook_registry *reg, const char *event, const char *matcher, const char *tag,
                     const char *extra, hook_source src, bool trusted)
{
    char *cmd = append_cmd(tag);
    json_t *hook = json_pack("{s:s, s:s}", "type", "command", "command", cmd);
    free(cmd);
    if (extra) {
        json_t *x = parse(extra);
        json_object_update(hook, x);
        json_decref(x);
    }
    json_t *group = json_pack("{s:[o]}", "hooks", hook);
    if (matcher)
        json_object_set_new(group, "matcher", json_string(matcher));
    json_t *hooks = json_pack("{s:[o]}", event, group);
    loom_error err;
    loom_error_clear(&err);
    int rc = hook_registry_load(reg, hooks, src, trusted, &err);
    json_decref(hooks);
    if (rc != 0)
        fail_msg("load failed: %s", err.message);
}

static hook_outcome run_tool(hook_registry *reg, hook_event ev, const char *tool,
                             const char *tool_input_json)
{
    json_t *p = json_pack("{s:s, s:s, s:s}", "session_id", "s1", "tool_name", tool, "cwd", tmpdir);
    if (tool_input_json)
        json_object_set_new(p, "tool_input", parse(tool_input_json));
    hook_outcome o = hooks_run(reg, ev, p, NULL);
    json_decref(p);
    return o;
}

static void run_and_free(hook_registry *reg, hook_event ev, const char *tool, const char *input)
{
    hook_outcome o = run_tool(reg, ev, tool, input);
    hook_outcome_free(&o);
}

/* ---- events ------------------------------------------------------------- */

static void test_events_table(void **state)
{
    /* seed 001 §6.1's 28, then Loom's InputGuardrail and OutputGuardrail */
    assert_int_equal(HOOK_EVENT__COUNT, 30);
    for (int i = 0; i < HOOK_EVENT__COUNT; i++) {
        hook_event ev;
        assert_int_equal(hook_event_parse(hook_event_name((hook_event)i), &ev), 0);
        assert_int_equal(ev, i);
    }
    hook_event ev;
    assert_int_equal(hook_event_parse("pretooluse", &ev), -1);
    assert_string_equal(hook_event_match_field(HOOK_PRE_TOOL_USE), "tool_name");
    assert_string_equal(hook_event_match_field(HOOK_PERMISSION_DENIED), "tool_name");
    assert_string_equal(hook_event_match_field(HOOK_SESSION_START), "source");
    assert_string_equal(hook_event_match_field(HOOK_SESSION_END), "reason");
    assert_string_equal(hook_event_match_field(HOOK_PRE_COMPACT), "trigger");
    assert_string_equal(hook_event_match_field(HOOK_NOTIFICATION), "notification_type");
    assert_null(hook_event_match_field(HOOK_STOP));
    assert_null(hook_event_match_field(HOOK_USER_PROMPT_SUBMIT));
}

/* ---- loading ------------------------------------------------------------ */

static void test_load_claude_code_settings(void **state)
{
    /* A settings file as a Claude Code user has it, plus an event this
     * Loom does not know (a newer Claude Code's): it must still load. */
    const char *settings =
        "{\"PreToolUse\": [{\"matcher\": \"Bash|Edit\", \"hooks\": ["
        "    {\"type\": \"command\", \"command\": \"$CLAUDE_PROJECT_DIR/.claude/hooks/guard.sh\","
        "     \"timeout\": 60},"
        "    {\"type\": \"http\", \"url\": \"http://127.0.0.1:9/hook\","
        "     \"headers\": {\"Authorization\": \"Bearer $TOKEN\"}, \"allowedEnvVars\": [\"TOKEN\"]}]}],"
        " \"PostToolUse\": [{\"matcher\": \"Write\", \"hooks\": [{\"type\": \"command\","
        "     \"command\": \"prettier --write\", \"async\": true, \"statusMessage\": \"fmt\"}]}],"
        " \"UserPromptSubmit\": [{\"hooks\": [{\"type\": \"prompt\", \"prompt\": \"Check $ARGUMENTS\"}]}],"
        " \"Stop\": [{\"hooks\": [{\"type\": \"agent\", \"prompt\": \"verify\", \"model\": \"m\"}]}],"
        " \"SessionStart\": [{\"matcher\": \"startup|resume\", \"hooks\": [{\"type\": \"command\","
        "     \"command\": \"cat notes.md\", \"name\": \"notes\", \"priority\": \"High\", \"once\": true,"
        "     \"if\": \"source == startup\"}]}],"
        " \"SomeFutureEvent\": [{\"hooks\": [{\"type\": \"command\", \"command\": \"true\"}]}]}";
    hook_registry *reg = hook_registry_new();
    load_ok(reg, settings, HOOK_SRC_USER, true);
    assert_int_equal(hook_registry_count(reg, HOOK_PRE_TOOL_USE), 2);
    assert_int_equal(hook_registry_count(reg, HOOK_POST_TOOL_USE), 1);
    assert_int_equal(hook_registry_count(reg, HOOK_USER_PROMPT_SUBMIT), 1);
    assert_int_equal(hook_registry_count(reg, HOOK_STOP), 1);
    assert_int_equal(hook_registry_count(reg, HOOK_SESSION_START), 1);
    assert_int_equal(hook_registry_warning_count(reg), 1);
    assert_non_null(strstr(hook_registry_warning(reg, 0), "SomeFutureEvent"));
    assert_null(hook_registry_warning(reg, 1));

    /* null and {} load nothing. */
    loom_error err;
    assert_int_equal(hook_registry_load(reg, NULL, HOOK_SRC_PROJECT, true, &err), 0);
    json_t *empty = json_object();
    assert_int_equal(hook_registry_load(reg, empty, HOOK_SRC_PROJECT, true, &err), 0);
    json_decref(empty);

    hook_registry_remove_source(reg, HOOK_SRC_USER);
    assert_int_equal(hook_registry_count(reg, HOOK_PRE_TOOL_USE), 0);
    hook_registry_free(reg);
}

static void test_load_errors(void **state)
{
    static const struct {
        const char *json;
        const char *want;
    } cases[] = {
        {"[]", "hooks: must be an object"},
        {"{\"PreToolUse\": {}}", "hooks.PreToolUse: must be an array"},
        {"{\"PreToolUse\": [\"Bash\"]}", "hooks.PreToolUse[0]: must be an object"},
        {"{\"PreToolUse\": [{\"matcher\": 5, \"hooks\": []}]}",
         "hooks.PreToolUse[0]: \"matcher\" must be a string"},
        {"{\"PreToolUse\": [{\"matcher\": \"Bash\"}]}",
         "hooks.PreToolUse[0]: \"hooks\" must be an array"},
        {"{\"PreToolUse\": [{\"hooks\": [{\"type\": \"command\"}]}]}",
         "hooks.PreToolUse[0].hooks[0]: \"command\" must be a non-empty string"},
        {"{\"PreToolUse\": [{\"hooks\": [{\"command\": \"x\"}]}]}",
         "hooks.PreToolUse[0].hooks[0]: \"type\" is missing"},
        {"{\"PreToolUse\": [{\"hooks\": [{\"type\": \"shell\", \"command\": \"x\"}]}]}",
         "hooks.PreToolUse[0].hooks[0]: unknown hook type \"shell\""},
        {"{\"PreToolUse\": [{\"matcher\": \"Bash(\", \"hooks\": [{\"type\": \"command\", "
         "\"command\": \"x\"}]}]}",
         "hooks.PreToolUse[0]: matcher /Bash(/ is not a valid regular expression"},
        {"{\"Stop\": [{\"hooks\": [{\"type\": \"command\", \"command\": \"x\", \"timeout\": 0}]}]}",
         "hooks.Stop[0].hooks[0]: \"timeout\" must be a number of seconds"},
        {"{\"Stop\": [{\"hooks\": [{\"type\": \"command\", \"command\": \"x\", \"priority\": "
         "\"urgent\"}]}]}",
         "hooks.Stop[0].hooks[0]: \"priority\" must be"},
        {"{\"Stop\": [{\"hooks\": [{\"type\": \"command\", \"command\": \"x\", \"once\": 1}]}]}",
         "\"once\" must be true or false"},
        {"{\"PreToolUse\": [{\"hooks\": [{\"type\": \"command\", \"command\": \"x\", \"if\": "
         "\"tool_input.command =~ (\"}]}]}",
         "hooks.PreToolUse[0].hooks[0]: `if` condition"},
        {"{\"PreToolUse\": [{\"hooks\": [{\"type\": \"command\", \"command\": \"x\", \"if\": "
         "\"what is this\"}]}]}",
         "is not understood"},
        {"{\"PreToolUse\": [{\"if\": 3, \"hooks\": [{\"type\": \"command\", \"command\": \"x\"}]}]}",
         "hooks.PreToolUse[0]: `if` must be a string"},
        {"{\"PreToolUse\": [{\"hooks\": [{\"type\": \"http\", \"url\": \"ftp://x\"}]}]}",
         "\"url\" must start with http:// or https://"},
        {"{\"PreToolUse\": [{\"hooks\": [{\"type\": \"http\", \"url\": \"http://x\", \"headers\": "
         "{\"A\": 1}}]}]}",
         "header \"A\" must be a one-line string"},
        {"{\"Stop\": [{\"hooks\": [{\"type\": \"prompt\"}]}]}",
         "hooks.Stop[0].hooks[0]: \"prompt\" must be a non-empty string"},
        /* The second group is the bad one: its index is named and the good
         * first group is not added either (all or nothing). */
        {"{\"PostToolUse\": [{\"hooks\": [{\"type\": \"command\", \"command\": \"ok\"}]},"
         " {\"hooks\": [{\"type\": \"command\", \"command\": \"ok\"}, {\"type\": \"command\", "
         "\"command\": \"\"}]}]}",
         "hooks.PostToolUse[1].hooks[1]: \"command\" must be a non-empty string"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        hook_registry *reg = hook_registry_new();
        json_t *h = parse(cases[i].json);
        loom_error err;
        loom_error_clear(&err);
        int rc = hook_registry_load(reg, h, HOOK_SRC_PROJECT, true, &err);
        json_decref(h);
        if (rc >= 0)
            fail_msg("case %zu loaded: %s", i, cases[i].json);
        assert_int_equal(err.code, LOOM_ERR_CONFIG);
        if (!strstr(err.message, cases[i].want))
            fail_msg("case %zu: \"%s\" does not contain \"%s\"", i, err.message, cases[i].want);
        for (int ev = 0; ev < HOOK_EVENT__COUNT; ev++)
            assert_int_equal(hook_registry_count(reg, (hook_event)ev), 0);
        hook_registry_free(reg);
    }
}

/* ---- matchers ----------------------------------------------------------- */

static bool mt(const char *matcher, const char *value)
{
    hook_matcher *m;
    loom_error err;
    if (hook_matcher_compile(matcher, &m, &err) < 0)
        fail_msg("compile %s: %s", matcher, err.message);
    bool ok = hook_matcher_test(m, value);
    hook_matcher_free(m);
    return ok;
}

static void test_matcher_rules(void **state)
{
    assert_true(mt("Bash", "Bash"));
    assert_false(mt("Bash", "BashOutput")); /* a plain name is exact */
    assert_false(mt("Bash", "bash"));
    assert_true(mt("Edit|Write", "Edit"));
    assert_true(mt("Edit|Write", "Write"));
    assert_false(mt("Edit|Write", "NotebookEdit"));
    assert_true(mt("mcp__.*", "mcp__github__create_issue"));
    assert_false(mt("mcp__.*", "Bash"));
    assert_true(mt("mcp__memory__.*", "mcp__memory__store"));
    assert_false(mt("mcp__memory__.*", "mcp__github__x"));
    assert_true(mt("Notebook.*", "NotebookEdit"));
    assert_true(mt("^(Read|Grep)$", "Grep"));
    assert_false(mt("^(Read|Grep)$", "GrepX"));
    assert_true(mt(NULL, "anything"));
    assert_true(mt("", "anything"));
    assert_true(mt("*", "anything"));
    assert_true(mt("*", NULL));
    assert_false(mt("Bash", NULL));
}

static void test_matcher_through_run(void **state)
{
    hook_registry *reg = hook_registry_new();
    load_tag(reg, "PreToolUse", "Bash", "bash", NULL, HOOK_SRC_USER, true);
    load_tag(reg, "PreToolUse", "Edit|Write", "editwrite", NULL, HOOK_SRC_USER, true);
    load_tag(reg, "PreToolUse", "mcp__.*", "mcp", NULL, HOOK_SRC_USER, true);
    load_tag(reg, "PreToolUse", "", "empty", NULL, HOOK_SRC_USER, true);
    load_tag(reg, "PreToolUse", NULL, "absent", NULL, HOOK_SRC_USER, true);
    load_tag(reg, "PostToolUse", "Bash", "post", NULL, HOOK_SRC_USER, true);
    /* Stop has no match field: its matcher is ignored. */
    load_tag(reg, "Stop", "NeverMatches", "stop", NULL, HOOK_SRC_USER, true);

    run_and_free(reg, HOOK_PRE_TOOL_USE, "Bash", "{\"command\": \"ls\"}");
    assert_log("bash empty absent ");
    unlink(logpath);
    run_and_free(reg, HOOK_PRE_TOOL_USE, "Write", "{}");
    assert_log("editwrite empty absent ");
    unlink(logpath);
    run_and_free(reg, HOOK_PRE_TOOL_USE, "mcp__github__create_issue", "{}");
    assert_log("mcp empty absent ");
    unlink(logpath);
    run_and_free(reg, HOOK_PRE_TOOL_USE, "NotebookEdit", "{}");
    assert_log("empty absent ");
    unlink(logpath);
    json_t *p = json_pack("{s:s}", "cwd", tmpdir);
    hook_outcome o = hooks_run(reg, HOOK_STOP, p, NULL);
    json_decref(p);
    assert_int_equal(o.ran, 1);
    hook_outcome_free(&o);
    assert_log("stop ");
    hook_registry_free(reg);
}

/* ---- `if` conditions ---------------------------------------------------- */

static bool cond(const char *c, const char *payload_json)
{
    json_t *v = json_string(c);
    hook_cond *hc;
    loom_error err;
    if (hook_cond_parse(v, &hc, &err) < 0)
        fail_msg("parse %s: %s", c, err.message);
    json_decref(v);
    json_t *p = parse(payload_json);
    bool ok = hook_cond_eval(hc, p, "/proj");
    json_decref(p);
    hook_cond_free(hc);
    return ok;
}

#define BASH(cmd) "{\"tool_name\":\"Bash\",\"cwd\":\"/proj\",\"tool_input\":{\"command\":\"" cmd "\"}}"
#define FILE_TOOL(tool, path) \
    "{\"tool_name\":\"" tool "\",\"cwd\":\"/proj\",\"tool_input\":{\"file_path\":\"" path "\"}}"

static void test_if_conditions(void **state)
{
    /* Claude Code's permission-rule form. */
    assert_true(cond("Bash", BASH("anything")));
    assert_false(cond("Bash", FILE_TOOL("Edit", "/proj/a.c")));
    assert_true(cond("Bash(git push *)", BASH("git push origin main")));
    assert_true(cond("Bash(git push *)", BASH("git push")));
    assert_false(cond("Bash(git push *)", BASH("git status")));
    assert_true(cond("Bash(git push *)", BASH("cd repo && git push -f")));
    assert_true(cond("Bash(git push *)", BASH("FOO=1 git push")));
    assert_false(cond("Bash(git push *)", BASH("echo 'a && git push x'")));
    assert_true(cond("Bash(npm test:*)", BASH("npm test -- --watch")));
    assert_false(cond("Bash(npm test:*)", BASH("npm testing")));
    assert_true(cond("Bash(rm *)", BASH("ls | rm -rf x")));
    assert_false(cond("Bash(ls *)", BASH("lsof")));
    assert_true(cond("Edit(src/**)", FILE_TOOL("Edit", "/proj/src/a/b.c")));
    assert_true(cond("Edit(src/**)", FILE_TOOL("Edit", "src/x.c")));
    assert_false(cond("Edit(src/**)", FILE_TOOL("Edit", "/proj/lib/x.c")));
    assert_true(cond("Edit(/src/*.c)", FILE_TOOL("Edit", "/proj/src/x.c")));
    assert_false(cond("Edit(/src/*.c)", FILE_TOOL("Edit", "/proj/src/a/x.c")));
    assert_true(cond("Read(*.env)", FILE_TOOL("Read", "/proj/deep/dir/.prod.env")));
    assert_true(cond("Read(//etc/**)", FILE_TOOL("Read", "/etc/passwd")));
    assert_true(cond("Write(*)", FILE_TOOL("Write", "/x")));
    assert_true(cond("WebFetch(domain:*.example.com)",
                     "{\"tool_name\":\"WebFetch\",\"tool_input\":{\"url\":\"https://api.Example.com/x\"}}"));
    assert_false(cond("WebFetch(domain:example.com)",
                      "{\"tool_name\":\"WebFetch\",\"tool_input\":{\"url\":\"https://evil.com/example.com\"}}"));
    assert_true(cond("mcp__github", "{\"tool_name\":\"mcp__github__create_issue\"}"));
    assert_false(cond("mcp__github", "{\"tool_name\":\"mcp__githubx__y\"}"));
    assert_false(cond("Bash(git *)", "{\"source\":\"startup\"}"));

    /* Issue #10 class 20: Bash(...) reads as the same settings rule, so
     * every wrapped spelling a deny rule stops fires the hook too. */
    static const char *const WRAPPED[] = {
        "sudo git push", "env X=1 git push", "bash -c 'git push'", "echo $(git push)",
        "echo `git push`", "timeout 5 git push", "nice -n 5 git push", "sh -c \\\"git push -f\\\"",
        "git -C . push", "git --no-pager push", "git -c alias.pp=push pp", "x=push; git $x",
        "xargs git push < f", "find . -exec git push \\\\;", "taskset -c 0 git push",
        "trap 'git push' EXIT", "(git push)", "{ git push; }", "if true; then git push; fi",
        "/usr/bin/git push", "command git push", "eval 'git push'", NULL,
    };
    for (size_t k = 0; WRAPPED[k]; k++) {
        char payload[512];
        snprintf(payload, sizeof payload, BASH("%s"), WRAPPED[k]);
        if (!cond("Bash(git push:*)", payload))
            fail_msg("Bash(git push:*) did not fire for %s", WRAPPED[k]);
        if (!cond("Bash(git push *)", payload))
            fail_msg("Bash(git push *) did not fire for %s", WRAPPED[k]);
    }
    assert_false(cond("Bash(git push:*)", BASH("git status")));
    assert_false(cond("Bash(git push:*)", BASH("echo git push")));
    assert_false(cond("Bash(git push:*)", BASH("git -C . pull")));
    /* A rule the engine rejects is an error at load time, not a silent miss. */
    json_t *badv = json_string("Bash(git push && rm x)");
    hook_cond *bad;
    loom_error berr;
    assert_true(hook_cond_parse(badv, &bad, &berr) < 0);
    assert_non_null(strstr(berr.message, "one simple command"));
    json_decref(badv);

    /* Loom's expression form. */
    assert_true(cond("tool_input.command =~ ^rm\\s", BASH("rm -rf build")));
    assert_false(cond("tool_input.command =~ ^rm\\s", BASH("echo rm")));
    assert_true(cond("tool_input.command =~ /GIT/i", BASH("git log")));
    assert_true(cond("tool_input.command matches 'git push'", BASH("git push")));
    assert_true(cond("tool_input.command !~ ^ls", BASH("pwd")));
    assert_true(cond("/tool_input/file_path == \"/proj/a.c\"", FILE_TOOL("Edit", "/proj/a.c")));
    assert_false(cond("/tool_input/file_path == \"/proj/a.c\"", FILE_TOOL("Edit", "/proj/b.c")));
    assert_true(cond("tool_name == Edit", FILE_TOOL("Edit", "x")));
    assert_true(cond("tool_name != Edit", BASH("x")));
    assert_true(cond("tool_input.n == 3", "{\"tool_input\":{\"n\":3}}"));
    assert_false(cond("tool_input.n == 3", "{\"tool_input\":{\"n\":\"3\"}}"));
    assert_true(cond("tool_input.edits.1.old == 'b c'",
                     "{\"tool_input\":{\"edits\":[{\"old\":\"a\"},{\"old\":\"b c\"}]}}"));
    assert_true(cond("missing.field == null", "{}"));
    assert_false(cond("missing.field =~ .", "{}"));
    assert_true(cond("stop_hook_active == false", "{\"stop_hook_active\":false}"));

    /* An array is any-of. */
    json_t *arr = parse("[\"Bash(npm *)\", \"Bash(yarn *)\"]");
    hook_cond *hc;
    loom_error err;
    assert_int_equal(hook_cond_parse(arr, &hc, &err), 0);
    json_t *p = parse(BASH("yarn add x"));
    assert_true(hook_cond_eval(hc, p, NULL));
    json_decref(p);
    p = parse(BASH("pnpm add x"));
    assert_false(hook_cond_eval(hc, p, NULL));
    json_decref(p);
    hook_cond_free(hc);
    json_decref(arr);
}

static void test_if_through_run(void **state)
{
    hook_registry *reg = hook_registry_new();
    load_tag(reg, "PreToolUse", "Bash", "push", "{\"if\": \"Bash(git push *)\"}", HOOK_SRC_USER,
             true);
    load_tag(reg, "PreToolUse", "Bash", "rm", "{\"if\": \"tool_input.command =~ ^rm \"}",
             HOOK_SRC_USER, true);
    /* A group-level `if` applies to every hook of the group. */
    char *cmd = append_cmd("curlgroup");
    json_t *h = json_pack("{s:[{s:s, s:s, s:[{s:s, s:s}]}]}", "PreToolUse", "matcher", "Bash", "if",
                          "tool_input.command =~ curl", "hooks", "type", "command", "command", cmd);
    free(cmd);
    loom_error err;
    assert_int_equal(hook_registry_load(reg, h, HOOK_SRC_USER, true, &err), 0);
    json_decref(h);

    run_and_free(reg, HOOK_PRE_TOOL_USE, "Bash", "{\"command\": \"git status\"}");
    assert_log("");
    run_and_free(reg, HOOK_PRE_TOOL_USE, "Bash", "{\"command\": \"make && git push origin\"}");
    assert_log("push ");
    unlink(logpath);
    run_and_free(reg, HOOK_PRE_TOOL_USE, "Bash", "{\"command\": \"rm -rf /tmp/x\"}");
    assert_log("rm ");
    unlink(logpath);
    run_and_free(reg, HOOK_PRE_TOOL_USE, "Bash", "{\"command\": \"curl http://x\"}");
    assert_log("curlgroup ");
    hook_registry_free(reg);
}

/* ---- order, dedupe, once ------------------------------------------------ */

static void test_priority_order(void **state)
{
    hook_registry *reg = hook_registry_new();
    load_tag(reg, "PreToolUse", "Bash", "low", "{\"priority\": \"Low\"}", HOOK_SRC_USER, true);
    load_tag(reg, "PreToolUse", "Bash", "normal1", NULL, HOOK_SRC_USER, true);
    load_tag(reg, "PreToolUse", "*", "highest", "{\"priority\": \"highest\"}", HOOK_SRC_PROJECT,
             true);
    load_tag(reg, "PreToolUse", "Bash", "p100", "{\"priority\": 100}", HOOK_SRC_LOCAL, true);
    load_tag(reg, "PreToolUse", "Bash", "lowest", "{\"priority\": \"Lowest\"}", HOOK_SRC_USER, true);
    load_tag(reg, "PreToolUse", "Bash", "normal2", "{\"priority\": 500}", HOOK_SRC_USER, true);
    load_tag(reg, "PreToolUse", "Bash", "structured", "{\"priority\": \"StructuredOutput\"}",
             HOOK_SRC_USER, true);
    run_and_free(reg, HOOK_PRE_TOOL_USE, "Bash", "{\"command\": \"ls\"}");
    assert_log("highest p100 structured normal1 normal2 low lowest ");
    hook_registry_free(reg);
}

static void test_dedupe(void **state)
{
    hook_registry *reg = hook_registry_new();
    /* The same command under two matchers and in two settings files. */
    load_tag(reg, "PreToolUse", "Bash", "same", NULL, HOOK_SRC_USER, true);
    load_tag(reg, "PreToolUse", "*", "same", NULL, HOOK_SRC_PROJECT, true);
    /* Same name, different commands: the name is the identity. */
    load_tag(reg, "PreToolUse", "Bash", "named1", "{\"name\": \"fmt\"}", HOOK_SRC_USER, true);
    load_tag(reg, "PreToolUse", "Bash", "named2", "{\"name\": \"fmt\"}", HOOK_SRC_USER, true);
    load_tag(reg, "PreToolUse", "Bash", "other", NULL, HOOK_SRC_USER, true);
    hook_outcome o = run_tool(reg, HOOK_PRE_TOOL_USE, "Bash", "{\"command\": \"ls\"}");
    assert_int_equal(o.ran, 3);
    assert_int_equal(o.n_results, 3);
    assert_string_equal(o.results[1].label, "fmt");
    hook_outcome_free(&o);
    assert_log("same named1 other ");
    hook_registry_free(reg);
}

static void test_once(void **state)
{
    hook_registry *reg = hook_registry_new();
    load_tag(reg, "PreToolUse", NULL, "once", "{\"once\": true}", HOOK_SRC_USER, true);
    load_tag(reg, "PreToolUse", NULL, "every", NULL, HOOK_SRC_USER, true);
    run_and_free(reg, HOOK_PRE_TOOL_USE, "Bash", NULL);
    run_and_free(reg, HOOK_PRE_TOOL_USE, "Read", NULL);
    run_and_free(reg, HOOK_PRE_TOOL_USE, "Bash", NULL);
    assert_log("once every every every ");
    hook_registry_free(reg);
}

typedef struct {
    hook_registry *reg;
} thread_arg;

static void *fire(void *p)
{
    thread_arg *a = p;
    run_and_free(a->reg, HOOK_POST_TOOL_USE, "Bash", NULL);
    return NULL;
}

/* Tool pool threads fire the same event at once: a once-only hook still
 * runs exactly once, the others once per call. */
static void test_once_across_threads(void **state)
{
    hook_registry *reg = hook_registry_new();
    load_tag(reg, "PostToolUse", NULL, "O", "{\"once\": true}", HOOK_SRC_USER, true);
    load_tag(reg, "PostToolUse", NULL, "e", NULL, HOOK_SRC_USER, true);
    enum { N = 8 };
    pthread_t t[N];
    thread_arg a = {reg};
    for (int i = 0; i < N; i++)
        assert_int_equal(pthread_create(&t[i], NULL, fire, &a), 0);
    for (int i = 0; i < N; i++)
        pthread_join(t[i], NULL);
    char *log = read_log();
    int once = 0, every = 0;
    for (char *p = log; *p; p++) {
        once += *p == 'O';
        every += *p == 'e';
    }
    free(log);
    assert_int_equal(once, 1);
    assert_int_equal(every, N);
    hook_registry_free(reg);
}

/* ---- trust, built-ins, prompt and agent hooks --------------------------- */

static void test_untrusted_skipped_with_notice(void **state)
{
    hook_registry *reg = hook_registry_new();
    load_tag(reg, "PreToolUse", "Bash", "untrusted1", NULL, HOOK_SRC_PROJECT, false);
    load_tag(reg, "PreToolUse", "Bash", "untrusted2", "{\"once\": true}", HOOK_SRC_PROJECT, false);
    load_tag(reg, "PreToolUse", "Read", "untrusted_other_tool", NULL, HOOK_SRC_PROJECT, false);
    load_tag(reg, "PreToolUse", "Bash", "skillhook", NULL, HOOK_SRC_SKILL, false);
    load_tag(reg, "PreToolUse", "Bash", "trusted", NULL, HOOK_SRC_USER, true);
    hook_outcome o = run_tool(reg, HOOK_PRE_TOOL_USE, "Bash", "{\"command\": \"ls\"}");
    assert_int_equal(o.ran, 1);
    assert_int_equal(o.n_results, 4);
    size_t skipped = 0;
    for (size_t i = 0; i < o.n_results; i++)
        skipped += o.results[i].status == HOOK_STATUS_SKIPPED;
    assert_int_equal(skipped, 3);
    assert_int_equal(o.n_notices, 2);
    assert_int_equal(o.notices[0].kind, HOOK_NOTICE_SKIPPED);
    assert_non_null(strstr(o.notices[0].text,
                           "skipped 2 PreToolUse hook(s) from untrusted project settings; trust "
                           "this workspace"));
    assert_non_null(strstr(o.notices[1].text, "from untrusted skill frontmatter"));
    hook_outcome_free(&o);
    assert_log("trusted ");

    /* The integrator's hint replaces the default one. */
    hook_run_opts opts = {.trust_hint = "run `loom trust` to allow them"};
    json_t *p = json_pack("{s:s, s:s}", "tool_name", "Bash", "cwd", tmpdir);
    o = hooks_run(reg, HOOK_PRE_TOOL_USE, p, &opts);
    json_decref(p);
    assert_non_null(strstr(o.notices[0].text, "; run `loom trust` to allow them"));
    hook_outcome_free(&o);

    /* A skipped once-only hook did not spend its once: trusted later (the
     * settings reloaded as trusted), it runs. */
    hook_registry_remove_source(reg, HOOK_SRC_PROJECT);
    load_tag(reg, "PreToolUse", "Bash", "untrusted2", "{\"once\": true}", HOOK_SRC_PROJECT, true);
    unlink(logpath);
    run_and_free(reg, HOOK_PRE_TOOL_USE, "Bash", NULL);
    run_and_free(reg, HOOK_PRE_TOOL_USE, "Bash", NULL);
    assert_log("trusted untrusted2 trusted ");
    hook_registry_free(reg);
}

static int builtin_append(void *ctx, hook_event ev, const json_t *payload, json_t **reply,
                          loom_error *err)
{
    FILE *f = fopen(logpath, "a");
    fprintf(f, "%s ", (const char *)ctx);
    fclose(f);
    if (strcmp(ctx, "deny") == 0)
        *reply = json_pack("{s:{s:s, s:s, s:s}}", "hookSpecificOutput", "hookEventName",
                           "PreToolUse", "permissionDecision", "deny", "permissionDecisionReason",
                           "built-in says no");
    if (strcmp(ctx, "fail") == 0)
        return loom_error_set(err, LOOM_ERR_INTERNAL, "built-in broke");
    return 0;
}

static void test_builtin_first(void **state)
{
    hook_registry *reg = hook_registry_new();
    load_tag(reg, "PreToolUse", "Bash", "user_highest", "{\"priority\": 0}", HOOK_SRC_USER, true);
    assert_int_equal(hook_registry_add_builtin(reg, HOOK_PRE_TOOL_USE, "Bash",
                                               HOOK_PRIORITY_LOWEST, builtin_append, "b_lowest"),
                     0);
    assert_int_equal(hook_registry_add_builtin(reg, HOOK_PRE_TOOL_USE, NULL, HOOK_PRIORITY_HIGH,
                                               builtin_append, "deny"),
                     0);
    assert_int_equal(hook_registry_add_builtin(reg, HOOK_PRE_TOOL_USE, "Read", 0, builtin_append,
                                               "b_read"),
                     0);
    assert_int_equal(hook_registry_add_builtin(reg, HOOK_PRE_TOOL_USE, "(", 0, builtin_append, "x"),
                     -LOOM_ERR_CONFIG);
    assert_int_equal(hook_registry_add_builtin(reg, HOOK_PRE_TOOL_USE, NULL, 0, NULL, NULL),
                     -LOOM_ERR_INVALID_REQUEST);
    hook_outcome o = run_tool(reg, HOOK_PRE_TOOL_USE, "Bash", "{\"command\": \"ls\"}");
    assert_log("deny b_lowest user_highest ");
    assert_int_equal(o.permission, PERM_DENY);
    assert_true(o.blocked);
    assert_string_equal(o.permission_reason, "built-in says no");
    assert_int_equal(o.results[0].type, HOOK_TYPE_BUILTIN);
    assert_string_equal(o.results[0].where, "builtin PreToolUse#1");
    hook_outcome_free(&o);

    /* A failing built-in is a non-blocking error. */
    assert_int_equal(hook_registry_add_builtin(reg, HOOK_STOP, NULL, 0, builtin_append, "fail"), 0);
    json_t *p = json_object();
    o = hooks_run(reg, HOOK_STOP, p, NULL);
    json_decref(p);
    assert_false(o.blocked);
    assert_int_equal(o.results[0].status, HOOK_STATUS_ERROR);
    assert_int_equal(o.n_notices, 1);
    assert_non_null(strstr(o.notices[0].text, "built-in broke"));
    hook_outcome_free(&o);
    hook_registry_free(reg);
}

typedef struct {
    int calls;
    char prompt[512];
    hook_type type;
} llm_probe;

static int fake_llm(void *ctx, const hook_llm_request *req, json_t **reply, loom_error *err)
{
    llm_probe *p = ctx;
    p->calls++;
    p->type = req->type;
    snprintf(p->prompt, sizeof p->prompt, "%s", req->prompt);
    *reply = json_pack("{s:b, s:s}", "ok", 0, "reason", "goal not met");
    return 0;
}

static void test_prompt_and_agent_hooks(void **state)
{
    hook_registry *reg = hook_registry_new();
    load_ok(reg,
            "{\"Stop\": [{\"hooks\": [{\"type\": \"prompt\", \"prompt\": \"Judge: $ARGUMENTS\"},"
            "                        {\"type\": \"agent\", \"prompt\": \"Verify the tests\"}]}]}",
            HOOK_SRC_USER, true);
    json_t *p = json_pack("{s:s, s:b}", "session_id", "s9", "stop_hook_active", 0);

    /* No runner: skipped, and said so. */
    hook_outcome o = hooks_run(reg, HOOK_STOP, p, NULL);
    assert_int_equal(o.ran, 0);
    assert_int_equal(o.n_notices, 2);
    assert_non_null(strstr(o.notices[0].text, "skipped 1 Stop hook(s) of type \"prompt\""));
    assert_non_null(strstr(o.notices[1].text, "of type \"agent\""));
    hook_outcome_free(&o);

    llm_probe pp = {0}, ap = {0};
    hook_run_opts opts = {.run_prompt = fake_llm, .prompt_ctx = &pp, .run_agent = fake_llm,
                          .agent_ctx = &ap};
    o = hooks_run(reg, HOOK_STOP, p, &opts);
    assert_int_equal(o.ran, 2);
    assert_int_equal(pp.calls, 1);
    assert_int_equal(ap.calls, 1);
    assert_int_equal(pp.type, HOOK_TYPE_PROMPT);
    assert_int_equal(ap.type, HOOK_TYPE_AGENT);
    assert_non_null(strstr(pp.prompt, "Judge: {"));
    assert_non_null(strstr(pp.prompt, "\"session_id\":\"s9\""));
    assert_non_null(strstr(pp.prompt, "\"hook_event_name\":\"Stop\""));
    assert_non_null(strstr(ap.prompt, "Verify the tests\n\n{")); /* no placeholder: appended */
    /* ok:false on Stop blocks the stop, with the reason for the model. */
    assert_true(o.blocked);
    assert_string_equal(o.block_reason, "goal not met\ngoal not met");
    hook_outcome_free(&o);
    json_decref(p);
    hook_registry_free(reg);
}

static void test_glob(void **state)
{
    assert_true(glob_star_match("a*c", "abbbc", false));
    assert_false(glob_star_match("a*c", "ab/c", false));
    assert_true(glob_star_match("a*c", "ab/c", true));
    assert_true(glob_star_match("a/**/c", "a/c", false));
    assert_true(glob_star_match("a/**/c", "a/x/y/c", false));
    assert_true(glob_star_match("a/**", "a/x/y", false));
    assert_false(glob_star_match("a?c", "abc", false)); /* only '*' is special */
    assert_true(glob_star_match("", "", false));
    assert_false(glob_star_match("", "x", false));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_events_table),
        cmocka_unit_test(test_load_claude_code_settings),
        cmocka_unit_test(test_load_errors),
        cmocka_unit_test(test_matcher_rules),
        cmocka_unit_test_setup(test_matcher_through_run, test_setup),
        cmocka_unit_test(test_if_conditions),
        cmocka_unit_test_setup(test_if_through_run, test_setup),
        cmocka_unit_test_setup(test_priority_order, test_setup),
        cmocka_unit_test_setup(test_dedupe, test_setup),
        cmocka_unit_test_setup(test_once, test_setup),
        cmocka_unit_test_setup(test_once_across_threads, test_setup),
        cmocka_unit_test_setup(test_untrusted_skipped_with_notice, test_setup),
        cmocka_unit_test_setup(test_builtin_first, test_setup),
        cmocka_unit_test(test_prompt_and_agent_hooks),
        cmocka_unit_test(test_glob),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
