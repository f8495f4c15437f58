/* test_evolve.c — ext/evolve/ below the e2e scenarios (docs/evolve.md):
 * step keys and error classes, what a run's records distill into (pattern,
 * failure, the unresolved step, denials not counted), the entry file kept
 * one per signature, the settings block, and the task classes. Files under a temp dir; no model, no HTTP. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/fileio.h"
#include "base/str.h"
#include "ext/evolve/evolve.h"
#include "ext/evolve/evolve_internal.h"

static char *key(const char *tool, const char *input_json)
{
    json_t *in = json_loads(input_json, 0, NULL);
    char *k = evolve_step_key(tool, in);
    json_decref(in);
    return k;
}

static void expect_key(const char *tool, const char *in, const char *want)
{
    char *k = key(tool, in);
    assert_string_equal(k, want);
    free(k);
}

static void test_step_keys(void **state)
{
    (void)state;
    expect_key("Bash", "{\"command\":\"git push origin main\"}", "Bash(git push)");
    expect_key("Bash", "{\"command\":\"CC=clang make -j4 test\"}", "Bash(make)");
    expect_key("Bash", "{\"command\":\"cd build && make test\"}", "Bash(make test)");
    expect_key("Bash", "{\"command\":\"sudo apt-get install jq\"}", "Bash(apt-get install)");
    expect_key("Bash", "{\"command\":\"./deploy.sh --prod\"}", "Bash(./deploy.sh)");
    expect_key("Bash", "{\"command\":\"   \"}", "Bash");
    expect_key("Bash", "{}", "Bash");
    expect_key("Edit", "{\"file_path\":\"/a/b/main.c\"}", "Edit(*.c)");
    expect_key("Read", "{\"file_path\":\"/a/Makefile\"}", "Read(Makefile)");
    expect_key("Write", "{\"file_path\":\"/a/.env\"}", "Write(.env)");
    expect_key("Skill", "{\"name\":\"deploy-check\"}", "Skill(deploy-check)");
    expect_key("Skill", "{\"name\":\"bad name)\"}", "Skill");
    expect_key("Grep", "{\"pattern\":\"x\"}", "Grep");
    expect_key("", "{}", "?");
}

static void test_error_classes(void **state)
{
    (void)state;
    char b[32];
    evolve_error_class("Exit code 2\nmake: *** Error 3", b, sizeof b);
    assert_string_equal(b, "exit 2");
    evolve_error_class("bash: frob: command not found", b, sizeof b);
    assert_string_equal(b, "not-found");
    evolve_error_class("cat: x: No such file or directory", b, sizeof b);
    assert_string_equal(b, "no-such-file");
    evolve_error_class("the command timed out after 120 s", b, sizeof b);
    assert_string_equal(b, "timeout");
    evolve_error_class(NULL, b, sizeof b);
    assert_string_equal(b, "error");
}

/* Records: a list of (type, name/callId, arguments-or-output, isError). */
static json_t *call(const char *id, const char *tool, const char *args)
{
    return json_pack("{s:s,s:s,s:s,s:s}", "type", "function_call", "callId", id, "name", tool,
                     "arguments", args);
}

static json_t *result(const char *id, const char *out, bool err)
{
    return json_pack("{s:s,s:s,s:s,s:b}", "type", "function_call_result", "callId", id, "output",
                     out, "isError", err);
}

static void test_trace(void **state)
{
    (void)state;
    json_t *r = json_array();
    json_array_append_new(r, call("1", "Bash", "{\"command\":\"make build\"}"));
    json_array_append_new(r, result("1", "Exit code 1\nerror: x", true));
    json_array_append_new(r, call("2", "Bash", "{\"command\":\"make build\"}"));
    json_array_append_new(r, result("2", "ok", false));
    json_array_append_new(r, call("3", "Bash", "{\"command\":\"rm -rf build\"}"));
    json_array_append_new(r, result("3", "Permission to use Bash was denied: denied by settings "
                                         "rule Bash(rm -rf:*) (project settings).",
                                    true));
    json_array_append_new(r, call("4", "Bash", "{\"command\":\"make test\"}"));
    json_array_append_new(r, result("4", "ok", false));
    json_array_append_new(r, call("5", "Bash", "{\"command\":\"make test\"}"));
    json_array_append_new(r, result("5", "ok", false));
    evolve_trace t;
    evolve_trace_build(r, &t);
    assert_int_equal(t.n, 5);
    /* The failed build was redone: resolved. The denial is no failure. */
    assert_int_equal(t.unresolved, -1);
    assert_true(t.steps[2].denied);
    assert_null(t.steps[2].error_class);
    char *sig = evolve_trace_signature(&t);
    assert_string_equal(sig, "Bash(make build) > Bash(make test)");
    free(sig);
    evolve_trace_free(&t);

    /* A failure never redone is the root cause, the revealing line kept. */
    json_array_append_new(r, call("6", "Bash", "{\"command\":\"make deploy\"}"));
    json_array_append_new(r, result("6", "Exit code 2\nerror: no credentials", true));
    evolve_trace_build(r, &t);
    assert_int_equal(t.unresolved, 5);
    assert_string_equal(t.steps[5].error_class, "exit 2");
    assert_string_equal(t.steps[5].output, "error: no credentials");
    evolve_trace_free(&t);
    json_decref(r);

    /* Hostile records: wrong types everywhere, results with no call. */
    json_t *h = json_loads("[1, \"x\", {\"type\":\"function_call\"}, {\"type\":\"function_call_result\","
                           "\"callId\":\"zz\",\"isError\":true}, {\"type\":\"function_call\","
                           "\"callId\":7,\"name\":[1],\"arguments\":{}}]",
                           0, NULL);
    evolve_trace_build(h, &t);
    assert_int_equal(t.n, 2);
    assert_int_equal(t.unresolved, -1);
    evolve_trace_free(&t);
    json_decref(h);
}

static char *tmpdir(void)
{
    char tmpl[] = "/tmp/loom-evolve-XXXXXX";
    char *d = mkdtemp(tmpl);
    assert_non_null(d);
    return strdup(d);
}

static void test_one_file_per_signature(void **state)
{
    (void)state;
    char *root = tmpdir();
    char *dir = evolve_path(root, ".loom/mf/patterns");
    mf_observation o = {"pattern", "Bash(make) > Bash(make test)", "Steps", "desc <b>", "sum",
                        "s1", "ev one"};
    loom_error err;
    mf_entry e;
    char *p1 = NULL, *p2 = NULL;
    assert_int_equal(mf_entry_observe(dir, &o, &e, &p1, &err), 0);
    assert_int_equal(e.seen, 1);
    mf_entry_free(&e);
    o.session_id = "s2";
    o.evidence = "ev\ntwo";
    assert_int_equal(mf_entry_observe(dir, &o, &e, &p2, &err), 0);
    assert_string_equal(p1, p2);
    assert_int_equal(e.seen, 2);
    assert_string_equal(e.sessions[0], "s1");
    assert_string_equal(e.sessions[1], "s2");
    assert_null(e.sessions[2]);
    assert_non_null(strstr(e.body, "- ev one\n- ev two\n"));
    mf_entry_free(&e);
    o.session_id = "s2";
    assert_int_equal(mf_entry_observe(dir, &o, &e, NULL, &err), 0);
    assert_int_equal(e.seen, 3);
    assert_null(e.sessions[2]); /* a session once */
    mf_entry_free(&e);
    json_t *list = mf_entry_list(dir, NULL);
    assert_int_equal(json_array_size(list), 1);
    json_decref(list);

    free(p1);
    free(p2);
    free(dir);
    char cmd[256];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    assert_int_equal(system(cmd), 0);
    free(root);
}

/* A root cause outside Bash is too coarse for a rule: an AGENTS.md line,
 * accepted with its id, which the audit finds again. */
static void test_agents_md_constraint(void **state)
{
    (void)state;
    char *root = tmpdir();
    char *dir = evolve_path(root, ".loom/mf/failures");
    mf_observation o = {"failure", "Edit(*.lock) -> error", "Edit(*.lock) fails: error", "d", "s",
                        "s1", "ev"};
    loom_error err;
    mf_entry e;
    assert_int_equal(mf_entry_observe(dir, &o, &e, NULL, &err), 0);
    char *id = NULL;
    assert_int_equal(evolve_propose_constraint(root, &e, &id, &err), 0);
    assert_non_null(id);
    json_t *shown = evolve_review_show(root, id, &err);
    assert_non_null(shown);
    assert_non_null(strstr(json_string_value(json_object_get(shown, "text")), "behavior: agents-md"));
    json_decref(shown);
    json_t *done = evolve_review_decide(root, id, true, &err);
    assert_non_null(done);
    const char *cid = json_string_value(json_object_get(done, "constraint"));
    char *md = evolve_path(root, "AGENTS.md");
    char *text = NULL;
    size_t n;
    assert_int_equal(file_read_all(md, &text, &n, &err), 0);
    assert_non_null(strstr(text, "Known failure in this project: Edit(*.lock) -> error"));
    assert_non_null(strstr(text, cid));
    evolve_config cfg = {true, 3, 20};
    json_t *audit = evolve_audit(&cfg, root, &err);
    assert_int_equal(json_array_size(audit), 1);
    assert_true(json_is_true(json_object_get(json_array_get(audit, 0), "present")));
    /* Decided: proposed again never. */
    char *again = NULL;
    assert_int_equal(evolve_propose_constraint(root, &e, &again, &err), 0);
    assert_null(again);
    json_decref(audit);
    json_decref(done);
    free(text);
    free(md);
    free(id);
    mf_entry_free(&e);
    free(dir);
    char cmd[256];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    assert_int_equal(system(cmd), 0);
    free(root);
}

static void test_config_and_classes(void **state)
{
    (void)state;
    json_t *user = json_loads("{\"evolve\":{\"enabled\":true,\"threshold\":5}}", 0, NULL);
    json_t *proj = json_loads("{\"evolve\":{\"threshold\":0,\"retireAfterSessions\":7,"
                              "\"enabled\":\"yes\"}}",
                              0, NULL);
    const json_t *docs[3] = {user, proj, NULL};
    json_t *warnings = json_array();
    evolve_config c;
    unsetenv("LOOM_EVOLVE");
    evolve_config_read(docs, 3, &c, warnings);
    assert_true(c.enabled);
    assert_int_equal(c.threshold, 5);      /* 0 is refused: the user's 5 stays */
    assert_int_equal(c.retire_after, 7);
    assert_int_equal(json_array_size(warnings), 2);
    setenv("LOOM_EVOLVE", "0", 1);
    evolve_config_read(docs, 3, &c, NULL);
    assert_false(c.enabled);
    unsetenv("LOOM_EVOLVE");
    json_decref(user);
    json_decref(proj);
    json_decref(warnings);

    char *k = evolve_task_class("Migrate the Schema: users");
    assert_string_equal(k, "migrate-schema");
    free(k);
    k = evolve_task_class("do it");
    assert_string_equal(k, "");
    free(k);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_step_keys),
        cmocka_unit_test(test_error_classes),
        cmocka_unit_test(test_trace),
        cmocka_unit_test(test_one_file_per_signature),
        cmocka_unit_test(test_agents_md_constraint),
        cmocka_unit_test(test_config_and_classes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
