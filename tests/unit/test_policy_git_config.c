/* test_policy_git_config.c — a repository's git configuration that makes
 * git run a program (policy/git_config.h): which keys count, which values
 * turn a feature off, the .git file of a worktree, a FIFO planted as the
 * config, and which command lines run git. */
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

#include "policy/git_config.h"

static char root[256];

static void put(const char *rel, const char *text)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", root, rel);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static int setup(void **state)
{
    (void)state;
    snprintf(root, sizeof root, "/tmp/loom-gitcfg-XXXXXX");
    assert_non_null(mkdtemp(root));
    char p[400];
    snprintf(p, sizeof p, "%s/.git", root);
    assert_int_equal(mkdir(p, 0700), 0);
    snprintf(p, sizeof p, "%s/sub", root);
    assert_int_equal(mkdir(p, 0700), 0);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    return system(cmd) == 0 ? 0 : -1;
}

/* The key found for config text (from a folder below the root), or "". */
static const char *found(const char *config)
{
    static char why[128];
    put(".git/config", config);
    char sub[300];
    snprintf(sub, sizeof sub, "%s/sub", root);
    if (!git_config_runs_code(sub, why, sizeof why))
        return "";
    return why;
}

static void test_keys_that_run_a_program_are_named(void **state)
{
    (void)state;
    assert_string_equal(found("[core]\n\tfsmonitor = touch /tmp/x; false\n"), "core.fsmonitor");
    assert_string_equal(found("[core]\n  pager = less\n"), "core.pager");
    assert_string_equal(found("[CORE]\nHooksPath = hooks\n"), "CORE.HooksPath");
    assert_string_equal(found("[diff \"pdf\"]\n\ttextconv = sh -c x\n"), "diff.pdf.textconv");
    assert_string_equal(found("[filter \"lfs\"]\n\tsmudge = x\n"), "filter.lfs.smudge");
    assert_string_equal(found("[alias]\n\tst = !rm -rf .\n"), "alias.st");
    assert_string_equal(found("[include]\n\tpath = ../other\n"), "include.path");
    assert_string_equal(found("[credential]\n\thelper = !evil\n"), "credential.helper");
}

static void test_plain_settings_and_off_values_are_not_code(void **state)
{
    (void)state;
    assert_string_equal(found("[core]\n\tfsmonitor = false\n\tbare = false\n"), "");
    assert_string_equal(found("[core]\n\trepositoryformatversion = 0\n[remote \"origin\"]\n"
                              "\turl = x\n[alias]\n\tst = status\n"), "");
    assert_string_equal(found("# [core] pager = less\n; pager = less\n"), "");
    assert_string_equal(found(""), "");
}

static void test_a_worktree_gitfile_is_followed(void **state)
{
    (void)state;
    char p[400];
    snprintf(p, sizeof p, "%s/.git", root);
    assert_int_equal(rmdir(p), 0);
    snprintf(p, sizeof p, "%s/real", root);
    assert_int_equal(mkdir(p, 0700), 0);
    put(".git", "gitdir: real\n");
    put("real/config.worktree", "[core]\n\tsshCommand = x\n");
    char why[64];
    assert_true(git_config_runs_code(root, why, sizeof why));
    assert_string_equal(why, "core.sshCommand");
}

static void test_a_fifo_config_is_not_read_and_does_not_hang(void **state)
{
    (void)state;
    char p[400];
    snprintf(p, sizeof p, "%s/.git/config", root);
    unlink(p);
    assert_int_equal(mkfifo(p, 0600), 0);
    char why[64];
    assert_false(git_config_runs_code(root, why, sizeof why));
}

static void test_which_command_lines_run_git(void **state)
{
    (void)state;
    assert_true(git_command_runs_git("git status"));
    assert_true(git_command_runs_git("cd x && /usr/bin/git log"));
    assert_true(git_command_runs_git("env GIT_PAGER=cat git diff"));
    assert_true(git_command_runs_git("ls | xargs git add"));
    assert_false(git_command_runs_git("ls -la"));
    assert_false(git_command_runs_git("echo gitlab"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_keys_that_run_a_program_are_named, setup, teardown),
        cmocka_unit_test_setup_teardown(test_plain_settings_and_off_values_are_not_code, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_a_worktree_gitfile_is_followed, setup, teardown),
        cmocka_unit_test_setup_teardown(test_a_fifo_config_is_not_read_and_does_not_hang, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_which_command_lines_run_git, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
