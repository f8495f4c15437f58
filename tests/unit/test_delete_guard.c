/* test_delete_guard.c — delete protection (governance/delete_guard.h) on a
 * table of commands: which recursive deletes need a person (the workspace
 * root or everything in it, a .git, a path outside the workspace, a target
 * that cannot be placed) and which are the workspace's own business (a
 * build directory, a temp dir's contents, a filtered find, a dry run).
 * The workspace is a fresh directory with a .git, a build/ and a symlink
 * to outside. */
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

#include "governance/delete_guard.h"

static char base[256], ws[300], extra[300];

static int setup(void **state)
{
    (void)state;
    char cwd[200];
    if (!getcwd(cwd, sizeof cwd))
        return -1;
    snprintf(base, sizeof base, "%s/loom-dg-XXXXXX", cwd);
    if (!mkdtemp(base))
        return -1;
    snprintf(ws, sizeof ws, "%s/w", base);
    snprintf(extra, sizeof extra, "%s/extra", base);
    mkdir(ws, 0700);
    mkdir(extra, 0700);
    char p[400];
    snprintf(p, sizeof p, "%s/.git", ws);
    mkdir(p, 0700);
    snprintf(p, sizeof p, "%s/build", ws);
    mkdir(p, 0700);
    snprintf(p, sizeof p, "%s/sub", ws);
    mkdir(p, 0700);
    snprintf(p, sizeof p, "%s/out-link", ws);
    if (symlink("/usr", p) != 0)
        return -1;
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf %s", base);
    return system(cmd) == 0 ? 0 : -1;
}

static void test_table(void **state)
{
    (void)state;
    static const struct {
        const char *cmd;
        bool asks;
        const char *word; /* in the reason */
    } rows[] = {
        /* the workspace root, or everything in it */
        {"rm -rf .", true, "workspace root"},
        {"rm -rf ./", true, "workspace root"},
        {"rm -r -f *", true, "everything in the workspace"},
        {"rm -fr ./*", true, "everything in the workspace"},
        {"rm --recursive --force \"$PWD\"", true, "cannot be placed"},
        {"cd sub && rm -rf ..", true, "workspace root"},
        {"find . -delete", true, "workspace root"},
        {"find -delete", true, "workspace root"},
        {"git clean -fdx", true, "workspace root"},
        {"git clean -f -d -x -- .", true, "workspace root"},
        {"sudo rm -rf .", true, "workspace root"},
        {"timeout 5 env rm -rf .", true, "workspace root"},
        {"sh -c 'rm -rf .'", true, "workspace root"},
        /* .git */
        {"rm -rf .git", true, ".git"},
        {"rm -rf sub/../.git/", true, ".git"},
        {"rm -rf .g*", true, ".git"},
        {"rm -rf */.git", true, ".git"},
        {"rm -rf .git/refs/heads", true, ".git"},
        {"find .git -exec rm -rf {} +", true, ".git"},
        {"rm -rf {build,.git}", true, ".git"},
        /* outside the workspace */
        {"rm -rf ../extra2", true, "outside"},
        {"rm -rf ../*", true, "workspace root"},
        {"cd .. && rm -rf w2", true, "outside"},
        {"rm -rf /usr/local/share/x", true, "outside"},
        {"rm -rf out-link/", true, "outside"},
        {"find .. -name '*.o' -delete", true, "outside"},
        {"git -C .. clean -fd", true, "outside"},
        {"git clean -fd ../other", true, "outside"},
        {"rsync -a --delete src/ ../mirror/", true, "outside"},
        {"find .. -print0 | xargs -0 rm -rf", true, "run time"},
        {"rm -rf $BUILD_DIR", true, "cannot be placed"},
        {"rm -rf \"$(pwd)/x\"", true, "cannot be placed"},
        {"cd \"$X\" && rm -rf build", true, "cannot be placed"},
        {"cd - && rm -rf build", true, "cannot be placed"},
        {"rm -rf /tmp", true, "outside"},
        {"rm -rf /tmp/loom-build-123", true, "outside"},
        {"eval 'rm -rf ..'", true, "read for sure"},
        /* the workspace's own business */
        {"rm -rf build", false, NULL},
        {"rm -rf ./build/ sub", false, NULL},
        {"rm -rf build/*", false, NULL},
        {"rm -f *.o", false, NULL},
        {"rm .git/index.lock", false, NULL},
        {"rm -rf out-link", false, NULL},
        {"rm -rf .github", false, NULL},
        {"find . -name '*.o' -delete", false, NULL},
        {"find build -delete", false, NULL},
        {"git clean -ndx", false, NULL},
        {"git clean -fd build", false, NULL},
        {"git status && git clean -n", false, NULL},
        {"echo 'rm -rf /'", false, NULL},
        {"rsync -a --delete src/ build/", false, NULL},
        {"rsync -a --delete src/ host:/srv/x", false, NULL},
        {"cd sub && rm -rf tmp", false, NULL},
        {"rm -rf ../extra/cache", false, NULL}, /* an additional directory */
        {"ls -R .", false, NULL},
    };
    const char *dirs[] = {extra};
    for (size_t i = 0; i < sizeof rows / sizeof *rows; i++) {
        char why[768];
        bool asks = delete_guard_check(rows[i].cmd, ws, dirs, 1, why, sizeof why);
        if (asks != rows[i].asks)
            fail_msg("row %zu `%s`: %s, want %s (%s)", i, rows[i].cmd, asks ? "asks" : "passes",
                     rows[i].asks ? "asks" : "passes", why);
        if (rows[i].word && !strstr(why, rows[i].word))
            fail_msg("row %zu `%s`: [%s] does not say [%s]", i, rows[i].cmd, why, rows[i].word);
    }
}

static void test_home_and_null(void **state)
{
    (void)state;
    char why[768];
    setenv("HOME", base, 1);
    assert_true(delete_guard_check("rm -rf ~/other", ws, NULL, 0, why, sizeof why));
    assert_non_null(strstr(why, "outside"));
    assert_false(delete_guard_check("rm -rf ~/w/build", ws, NULL, 0, why, sizeof why));
    assert_true(delete_guard_check("rm -rf $HOME/w", ws, NULL, 0, why, sizeof why));
    assert_false(delete_guard_check(NULL, ws, NULL, 0, why, sizeof why));
    assert_false(delete_guard_check("rm -rf .", "relative", NULL, 0, why, sizeof why));
    assert_true(delete_guard_check("rm -rf .", ws, NULL, 0, NULL, 0));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_table),
        cmocka_unit_test(test_home_and_null),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
