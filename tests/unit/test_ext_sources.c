/* test_ext_sources.c — the folders every kind of extension is read from:
 * their precedence, the repository walk, plugins, compat, and an untrusted
 * workspace's folders skipped with a notice. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/str.h"
#include "ext/sources.h"
#include "tmpdir.h"

static char root[256];

static void mk(const char *rel)
{
    char path[512], *p = path;
    snprintf(path, sizeof path, "%s/%s", root, rel);
    for (p = path + 1; *p; p++)
        if (*p == '/') {
            *p = '\0';
            mkdir(path, 0700);
            *p = '/';
        }
    mkdir(path, 0700);
}

static int setup(void **state)
{
    (void)state;
    assert_int_equal(tmpdir_make(root, sizeof root, "loom-ext-sources", false), 0);
    mk("user/.claude/skills");
    mk("user/.agents/skills");
    mk("user/.claude/commands");
    mk("home/skills");
    mk("home/commands");
    mk("plug/skills");
    mk("repo/.git");
    mk("repo/.claude/skills");
    mk("repo/.agents/skills");
    mk("repo/sub/.claude/skills");
    mk("repo/sub/.loom/skills");
    mk("repo/sub/.loom/commands");
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    return tmpdir_remove(root);
}

/* The folder at i, relative to root. */
static const char *rel(const ext_dirs *d, size_t i)
{
    assert_true(i < d->n);
    size_t n = strlen(root);
    assert_memory_equal(d->v[i].path, root, n);
    return d->v[i].path + n + 1;
}

static ext_source_opts opts(bool trusted, bool compat, const ext_plugin_root *p, size_t np)
{
    static char cwd[300], home[300], uh[300];
    snprintf(cwd, sizeof cwd, "%s/repo/sub", root);
    snprintf(home, sizeof home, "%s/home", root);
    snprintf(uh, sizeof uh, "%s/user", root);
    return (ext_source_opts){.cwd = cwd, .home = home, .user_home = uh, .trusted = trusted,
                             .claude_compat = compat, .plugins = p, .n_plugins = np};
}

static void test_skills_come_user_then_plugin_then_project_nearest_last(void **state)
{
    (void)state;
    char proot[300];
    snprintf(proot, sizeof proot, "%s/plug", root);
    ext_plugin_root pr = {.name = "tools", .root = proot};
    ext_source_opts o = opts(true, true, &pr, 1);
    ext_dirs d;
    json_t *notices = json_array();
    ext_dirs_for("skills", &o, &d, notices);
    assert_int_equal(d.n, 8);
    assert_string_equal(rel(&d, 0), "user/.claude/skills");
    assert_string_equal(rel(&d, 1), "user/.agents/skills");
    assert_string_equal(rel(&d, 2), "home/skills");
    assert_string_equal(rel(&d, 3), "plug/skills");
    assert_int_equal(d.v[3].scope, EXT_SCOPE_PLUGIN);
    assert_string_equal(d.v[3].plugin, "tools");
    assert_string_equal(rel(&d, 4), "repo/.claude/skills");
    assert_string_equal(rel(&d, 5), "repo/.agents/skills");
    assert_string_equal(rel(&d, 6), "repo/sub/.claude/skills");
    assert_string_equal(rel(&d, 7), "repo/sub/.loom/skills");
    assert_int_equal(d.v[7].scope, EXT_SCOPE_PROJECT);
    assert_int_equal(json_array_size(notices), 0);
    ext_dirs_free(&d);
    json_decref(notices);
}

static void test_only_skills_read_the_agents_folders(void **state)
{
    (void)state;
    ext_source_opts o = opts(true, true, NULL, 0);
    ext_dirs d;
    ext_dirs_for("commands", &o, &d, NULL);
    assert_int_equal(d.n, 3);
    assert_string_equal(rel(&d, 0), "user/.claude/commands");
    assert_string_equal(rel(&d, 1), "home/commands");
    assert_string_equal(rel(&d, 2), "repo/sub/.loom/commands");
    ext_dirs_free(&d);
}

static void test_an_untrusted_workspace_keeps_only_the_users_folders_and_says_so(void **state)
{
    (void)state;
    ext_source_opts o = opts(false, true, NULL, 0);
    ext_dirs d;
    json_t *notices = json_array();
    ext_dirs_for("skills", &o, &d, notices);
    assert_int_equal(d.n, 3);
    for (size_t i = 0; i < d.n; i++)
        assert_int_equal(d.v[i].scope, EXT_SCOPE_USER);
    assert_int_equal(json_array_size(notices), 4);
    const char *first = json_string_value(json_array_get(notices, 0));
    assert_non_null(strstr(first, "repo/.claude/skills"));
    assert_non_null(strstr(first, "not trusted"));
    ext_dirs_free(&d);
    json_decref(notices);
}

static void test_a_folder_above_cwd_counts_only_when_it_is_trusted_itself(void **state)
{
    (void)state;
    ext_source_opts o = opts(true, true, NULL, 0);
    json_t *user = json_pack("{s:[s]}", "trustedWorkspaces", o.cwd);
    o.user_settings = user;
    ext_dirs d;
    json_t *notices = json_array();
    ext_dirs_for("skills", &o, &d, notices);
    for (size_t i = 0; i < d.n; i++)
        if (d.v[i].scope == EXT_SCOPE_PROJECT && !strstr(d.v[i].path, "/repo/sub/"))
            fail_msg("the repository root's %s counted though only repo/sub is trusted",
                     d.v[i].path);
    assert_int_equal(d.n, 5); /* the user's three, sub's .claude and .loom */
    assert_int_equal(json_array_size(notices), 2);
    assert_non_null(strstr(json_string_value(json_array_get(notices, 0)), "repo/.claude/skills"));
    ext_dirs_free(&d);
    json_decref(notices);
    json_decref(user);
}

static void test_compat_off_drops_every_claude_folder(void **state)
{
    (void)state;
    ext_source_opts o = opts(true, false, NULL, 0);
    ext_dirs d;
    ext_dirs_for("skills", &o, &d, NULL);
    for (size_t i = 0; i < d.n; i++)
        assert_null(strstr(d.v[i].path, ".claude"));
    assert_int_equal(d.n, 4);
    ext_dirs_free(&d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_skills_come_user_then_plugin_then_project_nearest_last),
        cmocka_unit_test(test_only_skills_read_the_agents_folders),
        cmocka_unit_test(test_an_untrusted_workspace_keeps_only_the_users_folders_and_says_so),
        cmocka_unit_test(test_a_folder_above_cwd_counts_only_when_it_is_trusted_itself),
        cmocka_unit_test(test_compat_off_drops_every_claude_folder),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
