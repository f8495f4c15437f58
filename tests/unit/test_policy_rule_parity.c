/* test_policy_rule_parity.c — one table of (rule, call) pairs, and every caller of
 * the rule engine must give each row's answer: the settings rule sets
 * (perm_rules_check with the rule in permissions.deny — also the path of
 * --allowedTools / --disallowedTools, which add to the same sets), a hook's
 * `if` condition (hook_cond_parse / hook_cond_eval) and the engine itself
 * (rule_parse / rule_matches). The expected answers are what the settings
 * engine answered before the hooks' own copy of the rule syntax was
 * removed (issue #11); 13 rows are ones that copy got wrong (Bash calls
 * meeting path rules, sibling tools, subdomains, character classes, '?',
 * escapes, "..", Read(*.env) outside the project).
 *
 * Not in the table: rules whose path starts with a single '/'. A hook
 * reads "/x" relative to its project, settings read it as absolute
 * (test_hooks and test_policy_rules pin each); see rule.h. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "hooks/match.h"
#include "policy/rule.h"
#include "policy/rules.h"

/* A session directory and a home that do not exist: paths resolve as
 * written, whatever the machine has. */
#define P "/nonexistent/proj"
#define PARITY_HOME "/nonexistent/home"

typedef struct {
    const char *rule, *tool, *input, *cwd;
    bool match;
} parity_row;

static const parity_row ROWS[] = {
    /* ---- Bash: the command as written ---------------------------------- */
    {"Bash(git push:*)", "Bash", "{\"command\":\"git push origin main\"}", P, true},
    {"Bash(git push:*)", "Bash", "{\"command\":\"git status\"}", P, false},
    {"Bash(git push:*)", "Bash", "{\"command\":\"echo git push\"}", P, false},
    {"Bash(git push:*)", "Bash", "{\"command\":\"git pushy\"}", P, false},
    {"Bash(git push *)", "Bash", "{\"command\":\"git push\"}", P, true},
    {"Bash(git push *)", "Bash", "{\"command\":\"git push -f origin\"}", P, true},
    {"Bash(npm test)", "Bash", "{\"command\":\"npm test\"}", P, true},
    {"Bash(npm test)", "Bash", "{\"command\":\"npm test --watch\"}", P, false},
    {"Bash(git * main)", "Bash", "{\"command\":\"git push origin main\"}", P, true},
    {"Bash(git * main)", "Bash", "{\"command\":\"git push origin dev\"}", P, false},
    {"Bash(ls:*)", "Bash", "{\"command\":\"lsof -i\"}", P, false},
    {"Bash(rm -rf:*)", "Bash", "{\"command\":\"rm -fr build\"}", P, true},
    {"Bash(rm -rf:*)", "Bash", "{\"command\":\"rm -r build\"}", P, false},
    {"Bash", "Bash", "{\"command\":\"anything at all\"}", P, true},
    {"Bash(git push:*)", "Read", "{\"file_path\":\"/nonexistent/proj/git push\"}", P, false},
    /* ---- Bash: wrapped, nested and compound forms ---------------------- */
    {"Bash(git push:*)", "Bash", "{\"command\":\"sudo git push\"}", P, true},
    {"Bash(git push:*)", "Bash", "{\"command\":\"sudo -u root git push\"}", P, true},
    {"Bash(git push:*)", "Bash", "{\"command\":\"env X=1 git push\"}", P, true},
    {"Bash(git push:*)", "Bash", "{\"command\":\"X=1 git push\"}", P, true},
    {"Bash(git push:*)", "Bash", "{\"command\":\"bash -c 'git push'\"}", P, true},
    {"Bash(git push:*)", "Bash", "{\"command\":\"sh -c \\\"git push -f\\\"\"}", P, true},
    {"Bash(git push:*)", "Bash", "{\"command\":\"bash -c 'echo hi'\"}", P, false},
    {"Bash(git push:*)", "Bash", "{\"command\":\"echo $(git push)\"}", P, true},
    {"Bash(git push:*)", "Bash", "{\"command\":\"echo `git push`\"}", P, true},
    {"Bash(git push:*)", "Bash", "{\"command\":\"(git push)\"}", P, true},
    {"Bash(git push:*)", "Bash", "{\"command\":\"(cd sub && git push)\"}", P, true},
    {"Bash(git push:*)", "Bash", "{\"command\":\"{ git push; }\"}", P, true},
    {"Bash(git push:*)", "Bash", "{\"command\":\"echo x | xargs git push\"}", P, true},
    {"Bash(git push:*)", "Bash", "{\"command\":\"find . -exec git push \\\\;\"}", P, true},
    {"Bash(git push:*)", "Bash", "{\"command\":\"/usr/bin/git push\"}", P, true},
    {"Bash(git push:*)", "Bash", "{\"command\":\"/usr/bin/git status\"}", P, false},
    {"Bash(git push:*)", "Bash", "{\"command\":\"timeout 5 git push\"}", P, true},
    {"Bash(git push:*)", "Bash", "{\"command\":\"git -C . push\"}", P, true},
    {"Bash(git push:*)", "Bash", "{\"command\":\"x=push; git $x\"}", P, true},
    {"Bash(git push:*)", "Bash", "{\"command\":\"cd repo && git push\"}", P, true},
    {"Bash(git push:*)", "Bash", "{\"command\":\"echo 'a && git push x'\"}", P, false},
    {"Bash(curl:*)", "Bash", "{\"command\":\"ls | curl -d @- http://x\"}", P, true},
    {"Bash(make:*)", "Bash", "{\"command\":\"if true; then make; fi\"}", P, true},
    /* ---- Bash meeting path rules: redirections and readers ------------- */
    {"Edit(.env)", "Bash", "{\"command\":\"echo x > .env\"}", P, true},
    {"Edit(.env)", "Bash", "{\"command\":\"echo x > notes.txt\"}", P, false},
    {"Read(.env)", "Bash", "{\"command\":\"cat .env\"}", P, true},
    {"Write(secrets/**)", "Bash", "{\"command\":\"cp a secrets/k\"}", P, true},
    /* ---- path globs: Read, Edit, Write and their sibling tools --------- */
    {"Read(*.env)", "Read", "{\"file_path\":\"/nonexistent/proj/deep/.prod.env\"}", P, true},
    {"Read(*.env)", "Read", "{\"file_path\":\"/nonexistent/other/x.env\"}", P, false},
    {"Read(*.env)", "Read", "{\"file_path\":\"deep/a.env\"}", P, true},
    {"Read(./secrets/**)", "Read", "{\"file_path\":\"/nonexistent/proj/secrets/a/b\"}", P, true},
    {"Read(./secrets/**)", "Read", "{\"file_path\":\"/nonexistent/proj/x/secrets/a\"}", P, false},
    {"Read(secrets/**)", "Grep", "{\"pattern\":\"k\",\"path\":\"/nonexistent/proj/secrets\"}", P, true},
    {"Read", "Grep", "{\"pattern\":\"k\"}", P, true},
    {"Read", "Edit", "{\"file_path\":\"/nonexistent/proj/a.c\"}", P, false},
    {"Edit(src/**)", "Edit", "{\"file_path\":\"/nonexistent/proj/src/a/b.c\"}", P, true},
    {"Edit(src/**)", "Write", "{\"file_path\":\"/nonexistent/proj/src/x.c\"}", P, true},
    {"Edit(src/**)", "Edit", "{\"file_path\":\"/nonexistent/proj/lib/x.c\"}", P, false},
    {"Edit(src/**)", "Edit", "{\"file_path\":\"/nonexistent/proj/src/../lib/x.c\"}", P, false},
    {"Edit(src/*.c)", "Edit", "{\"file_path\":\"/nonexistent/proj/src/a/x.c\"}", P, false},
    {"Edit(src/**/*.c)", "Edit", "{\"file_path\":\"/nonexistent/proj/src/x.c\"}", P, true},
    {"Edit(src/**/*.c)", "Edit", "{\"file_path\":\"/nonexistent/proj/src/a/b/x.c\"}", P, true},
    {"Edit(**/gen/*)", "Edit", "{\"file_path\":\"/nonexistent/proj/a/gen/x\"}", P, true},
    {"Edit(.env)", "Edit", "{\"file_path\":\"/nonexistent/proj/a/b/.env\"}", P, true},
    {"Write(//etc/**)", "Write", "{\"file_path\":\"/etc/loom-parity\"}", P, true},
    {"Write(//etc/**)", "Write", "{\"file_path\":\"/nonexistent/proj/etc/x\"}", P, false},
    {"Read(~/.ssh/**)", "Read", "{\"file_path\":\"/nonexistent/home/.ssh/id_rsa\"}", P, true},
    {"Read(~/.ssh/**)", "Read", "{\"file_path\":\"/nonexistent/proj/.ssh/id_rsa\"}", P, false},
    {"Edit(src/[a-c]*.c)", "Edit", "{\"file_path\":\"/nonexistent/proj/src/b1.c\"}", P, true},
    {"Edit(src/[a-c]*.c)", "Edit", "{\"file_path\":\"/nonexistent/proj/src/d1.c\"}", P, false},
    {"Edit(src/[!a-c]*.c)", "Edit", "{\"file_path\":\"/nonexistent/proj/src/d1.c\"}", P, true},
    {"Edit(src/?.c)", "Edit", "{\"file_path\":\"/nonexistent/proj/src/a.c\"}", P, true},
    {"Edit(src/?.c)", "Edit", "{\"file_path\":\"/nonexistent/proj/src/ab.c\"}", P, false},
    {"Edit(src/*.{c,h})", "Edit", "{\"file_path\":\"/nonexistent/proj/src/x.c\"}", P, false},
    {"Edit(src/*.{c,h})", "Edit", "{\"file_path\":\"/nonexistent/proj/src/x.{c,h}\"}", P, true},
    {"Edit(src/\\*.c)", "Edit", "{\"file_path\":\"/nonexistent/proj/src/*.c\"}", P, true},
    {"Edit(src/\\*.c)", "Edit", "{\"file_path\":\"/nonexistent/proj/src/a.c\"}", P, false},
    {"Write(*)", "Write", "{\"file_path\":\"/x\"}", P, true},
    /* ---- MCP names ----------------------------------------------------- */
    {"mcp__github", "mcp__github__create_issue", "{}", P, true},
    {"mcp__github", "mcp__githubx__y", "{}", P, false},
    {"mcp__github__*", "mcp__github__create_issue", "{}", P, true},
    {"mcp__github__*", "mcp__gitlab__create_issue", "{}", P, false},
    {"mcp__github__create_issue", "mcp__github__create_issue", "{}", P, true},
    {"mcp__github__create_issue", "mcp__github__list_issues", "{}", P, false},
    /* ---- WebFetch domains and other tools ------------------------------ */
    {"WebFetch(domain:example.com)", "WebFetch", "{\"url\":\"https://example.com/x\"}", P, true},
    {"WebFetch(domain:example.com)", "WebFetch", "{\"url\":\"https://api.example.com/x\"}", P, true},
    {"WebFetch(domain:example.com)", "WebFetch", "{\"url\":\"https://evil.com/example.com\"}", P, false},
    {"WebFetch(domain:example.com)", "WebFetch", "{\"url\":\"https://u@example.com:8443/\"}", P, true},
    {"WebFetch(domain:example.com)", "WebFetch", "{\"url\":\"https://example.com.evil.io/\"}", P, false},
    {"WebFetch(domain:*.example.com)", "WebFetch", "{\"url\":\"https://example.com/\"}", P, false},
    {"WebFetch(domain:*.example.com)", "WebFetch", "{\"url\":\"https://API.Example.com/\"}", P, true},
    {"WebFetch", "WebFetch", "{\"url\":\"https://anything.org/\"}", P, true},
    {"WebSearch(rust*)", "WebSearch", "{\"query\":\"rust async\"}", P, true},
    {"WebSearch(rust*)", "WebSearch", "{\"query\":\"go async\"}", P, false},
};

#define NROWS (sizeof ROWS / sizeof ROWS[0])
_Static_assert(NROWS >= 60, "the parity table has at least 60 rows");

/* The settings path: the rule in a deny list; it matches when it denies. */
static bool via_settings(const parity_row *r)
{
    perm_rules *rs = perm_rules_new();
    loom_error err = {0};
    if (perm_rules_add(rs, PERM_DENY, r->rule, RULE_SRC_PROJECT, &err) != 0)
        fail_msg("settings rejected %s: %s", r->rule, err.message);
    json_t *in = json_loads(r->input, 0, NULL);
    assert_non_null(in);
    bool m = perm_rules_check(rs, r->tool, in, r->cwd).verdict == PERM_DENY;
    json_decref(in);
    perm_rules_free(rs);
    return m;
}

/* The hook path: the rule as an `if` condition over a PreToolUse payload. */
static bool via_hook(const parity_row *r)
{
    json_t *v = json_string(r->rule);
    hook_cond *c;
    loom_error err = {0};
    if (hook_cond_parse(v, &c, &err) < 0)
        fail_msg("hook_cond_parse rejected %s: %s", r->rule, err.message);
    json_t *in = json_loads(r->input, 0, NULL);
    assert_non_null(in);
    json_t *payload = json_pack("{s:s, s:s, s:s, s:o}", "hook_event_name", "PreToolUse",
                                "tool_name", r->tool, "cwd", r->cwd, "tool_input", in);
    bool m = hook_cond_eval(c, payload, NULL);
    json_decref(payload);
    hook_cond_free(c);
    json_decref(v);
    return m;
}

/* The engine on its own. */
static bool via_rule(const parity_row *r)
{
    loom_error err = {0};
    perm_rule *one = rule_parse(r->rule, 0, &err);
    if (!one)
        fail_msg("rule_parse rejected %s: %s", r->rule, err.message);
    json_t *in = json_loads(r->input, 0, NULL);
    assert_non_null(in);
    bool m = rule_matches(one, r->tool, in, r->cwd, NULL);
    json_decref(in);
    rule_free(one);
    return m;
}

static void test_every_caller_gives_the_tables_answer(void **state)
{
    (void)state;
    setenv("HOME", PARITY_HOME, 1);
    int bad = 0;
    for (size_t i = 0; i < NROWS; i++) {
        const parity_row *r = &ROWS[i];
        bool s = via_settings(r), h = via_hook(r), e = via_rule(r);
        if (s != r->match || h != r->match || e != r->match) {
            print_error("row %zu %s on %s %s: want %d, settings %d, hook if %d, rule_matches %d\n",
                        i, r->rule, r->tool, r->input, r->match, s, h, e);
            bad++;
        }
    }
    assert_int_equal(bad, 0);
}

static bool hook_if(const char *cond, const char *tool, const char *input, const char *project)
{
    json_t *v = json_string(cond);
    hook_cond *c;
    loom_error err = {0};
    if (hook_cond_parse(v, &c, &err) < 0)
        fail_msg("hook_cond_parse rejected %s: %s", cond, err.message);
    json_t *payload = json_pack("{s:s, s:s, s:o}", "tool_name", tool, "cwd", P, "tool_input",
                                json_loads(input, 0, NULL));
    bool m = hook_cond_eval(c, payload, project);
    json_decref(payload);
    hook_cond_free(c);
    json_decref(v);
    return m;
}

/* What only a hook condition has, on top of the table: "/x" relative to
 * the project (settings: absolute), tool-name wildcards in a bare name,
 * and a rule text the engine rejects is a load error there too. */
static void test_the_readings_only_a_hook_has(void **state)
{
    (void)state;
    const char *in = "{\"file_path\":\"/nonexistent/proj/src/x.c\"}";
    assert_true(hook_if("Edit(/src/*.c)", "Edit", in, P));
    assert_true(hook_if("Edit(/src/*.c)", "Edit", in, NULL)); /* the payload's cwd */
    perm_rule *r = rule_parse("Edit(/src/*.c)", 0, NULL);
    assert_non_null(r);
    json_t *j = json_loads(in, 0, NULL);
    assert_false(rule_matches(r, "Edit", j, P, NULL));
    assert_true(rule_matches(r, "Edit", j, P, P));
    json_decref(j);
    rule_free(r);

    assert_true(hook_if("Notebook*", "NotebookEdit", "{}", NULL));
    assert_false(hook_if("Notebook*", "Edit", "{}", NULL));
    assert_true(hook_if("mcp__*", "mcp__github__x", "{}", NULL));
    loom_error err = {0};
    assert_null(rule_parse("Notebook*", 0, &err)); /* not a permission rule */

    static const char *const BAD[] = {"WebFetch(https://x.com/*)", "Bash(a && b)", "Bash()",
                                      "Notebook*(x)", NULL};
    for (size_t k = 0; BAD[k]; k++) {
        json_t *v = json_string(BAD[k]);
        hook_cond *c = NULL;
        if (hook_cond_parse(v, &c, &err) == 0)
            fail_msg("%s should not load as an `if` condition", BAD[k]);
        assert_non_null(strstr(err.message, "permission rule"));
        json_decref(v);
    }
}

/* The table is not one-sided: both answers occur in every group. */
static void test_the_table_has_both_answers(void **state)
{
    (void)state;
    size_t yes = 0;
    for (size_t i = 0; i < NROWS; i++)
        yes += ROWS[i].match;
    assert_true(yes >= 20);
    assert_true(NROWS - yes >= 20);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_caller_gives_the_tables_answer),
        cmocka_unit_test(test_the_table_has_both_answers),
        cmocka_unit_test(test_the_readings_only_a_hook_has),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
