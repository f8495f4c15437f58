/* test_cli_complete.c — Tab completion's candidates (surfaces/cli/complete.c):
 * command names after a leading "/", paths after "@" (folders with "/",
 * hidden names only when asked for, never into .git), what is inserted for
 * one candidate and for several, and nothing for other words. */
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

#include "base/fileio.h"
#include "surfaces/cli/complete.h"

static char dir[256];
static const char *const names[] = {"help", "review", "review-pr", "resume", "rewind",
                                    "frontend:component", "mcp__docs__search", NULL};

static int rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb, (void)flag, (void)ftw;
    return remove(path);
}

static void touch(const char *rel)
{
    char path[600];
    snprintf(path, sizeof path, "%s/%s", dir, rel);
    loom_error err;
    char *slash = strrchr(path, '/');
    *slash = '\0';
    assert_int_equal(file_mkdirs(path, 0700, &err), 0);
    *slash = '/';
    assert_int_equal(file_write_atomic(path, "x", 1, 0644, &err), 0);
}

static int setup(void **state)
{
    (void)state;
    const char *base = getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%s/loom-complete-XXXXXX", base && *base ? base : "/tmp");
    if (!mkdtemp(dir))
        return -1;
    touch("src/main.c");
    touch("src/map.h");
    touch("src/util/strings.c");
    touch("README.md");
    touch(".env");
    touch(".git/HEAD");
    touch(".github/workflows/ci.yml");
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
    return 0;
}

/* Completes line with the cursor at its end; insert and the candidates
 * joined by spaces are checked. */
static const complete_args *args_now; /* test_arguments' lists; NULL elsewhere */

static void expect(const char *line, const char *insert, const char *cands)
{
    complete_result r;
    complete_line_args(line, strlen(line), names, args_now, dir, &r);
    char joined[1024] = "";
    for (size_t i = 0; i < r.n; i++) {
        strcat(joined, i ? " " : "");
        strcat(joined, r.cands[i]);
    }
    if (strcmp(r.insert, insert) != 0 || strcmp(joined, cands) != 0)
        fail_msg("completing \"%s\" inserted \"%s\" (expected \"%s\") with candidates \"%s\" "
                 "(expected \"%s\")", line, r.insert, insert, joined, cands);
    complete_result_free(&r);
}

static void test_command_names(void **state)
{
    (void)state;
    /* One candidate: completed whole, with a space for the arguments. */
    expect("/he", "lp ", "help");
    /* Several: extended as far as they agree, and listed. */
    expect("/rev", "iew", "review review-pr");
    expect("/re", "", "resume review review-pr rewind");
    expect("/front", "end:component ", "frontend:component");
    expect("/mcp__d", "ocs__search ", "mcp__docs__search");
    expect("  /hel", "p ", "help");
    expect("/nothing", "", "");
    /* Only the line's first word is a command; "//x" is text for the model. */
    expect("say /he", "", "");
    expect("//he", "", "");
    /* After "/name " nothing special. */
    expect("/review ", "", "");
    expect("/review fo", "", "");
}

/* A command's argument: the modes, the names the REPL gathers, the
 * subcommands and then their names; nothing past the argument. */
static void test_arguments(void **state)
{
    (void)state;
    static const char *const models[] = {"claude-sonnet-4-5", "claude-opus-4-1", NULL};
    static const char *const styles[] = {"default", "Explanatory", "Learning", NULL};
    static const char *const servers[] = {"docs", "db", NULL};
    static const char *const agents[] = {"ag_1234", NULL};
    complete_args a = {models, styles, servers, agents};
    args_now = &a;
    expect("/permissions a", "", "acceptEdits auto");
    expect("/permissions ac", "ceptEdits ", "acceptEdits");
    expect("/permissions ", "", "acceptEdits auto bypassPermissions default delegate dontAsk fullAccess plan");
    expect("/model claude-s", "onnet-4-5 ", "claude-sonnet-4-5");
    expect("/output-style Ex", "planatory ", "Explanatory");
    expect("/agents s", "", "show stop");
    expect("/agents m", "erge ", "merge");
    expect("/agents stop ag", "_1234 ", "ag_1234");
    expect("/mcp re", "connect ", "reconnect");
    expect("/mcp approve d", "", "db docs");
    expect("/mcp reconnect do", "cs ", "docs");
    /* Past the argument, and for commands without a list: nothing. */
    expect("/permissions plan x", "", "");
    expect("/mcp reconnect docs d", "", "");
    expect("/review a", "", "");
    expect("say /permissions a", "", "");
    args_now = NULL;
    /* Without the REPL's lists, the fixed ones still complete. */
    expect("/permissions pl", "an ", "plan");
    expect("/model c", "", "");
}

static void test_paths(void **state)
{
    (void)state;
    expect("@src/ma", "", "src/main.c src/map.h");
    expect("look at @src/mai", "n.c ", "src/main.c");
    /* A folder: completed with "/", no space, so Tab can go on into it. */
    expect("@sr", "c/", "src/");
    expect("@src/u", "til/", "src/util/");
    expect("@src/util/", "strings.c ", "src/util/strings.c");
    expect("@RE", "ADME.md ", "README.md");
    /* Hidden names only when the word asks for them, and never .git. */
    expect("@", "", "README.md src/");
    expect("@.", "", ".env .github/");
    expect("@.gi", "thub/", ".github/");
    expect("@.git/", "", "");
    expect("@.git/HE", "", "");
    expect("@nowhere/x", "", "");
}

static void test_cursor_inside_line(void **state)
{
    (void)state;
    complete_result r;
    /* The word before the cursor counts; no space is added before text. */
    const char *line = "/rev more";
    complete_line(line, 4, names, dir, &r);
    assert_string_equal(r.insert, "iew");
    complete_result_free(&r);
    line = "/he x";
    complete_line(line, 3, names, dir, &r);
    assert_string_equal(r.insert, "lp");
    complete_result_free(&r);
    /* No names at all. */
    complete_line("/he", 3, NULL, dir, &r);
    assert_int_equal(r.n, 0);
    assert_string_equal(r.insert, "");
    complete_result_free(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_command_names),
        cmocka_unit_test(test_paths),
        cmocka_unit_test(test_arguments),
        cmocka_unit_test(test_cursor_inside_line),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
