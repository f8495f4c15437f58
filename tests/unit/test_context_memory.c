/* test_context_memory.c — which instruction files memory_render picks up and in what
 * order, @imports (relative, ~/, cycles, missing, fenced, too deep), the
 * memory directory's resident index versus its on-demand files, and caps. */
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
#include "base/str.h"
#include "context/memory.h"

static char tmpdir[4096];

static int rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    return remove(path);
}

/* realpath'd, because memory_render names files by their resolved paths. */
static int setup(void **state)
{
    const char *base = getenv("TMPDIR");
    char tmpl[512];
    snprintf(tmpl, sizeof tmpl, "%s/loom-memory-XXXXXX", base && *base ? base : "/tmp");
    if (!mkdtemp(tmpl) || !realpath(tmpl, tmpdir))
        return -1;
    char p[4200];
    snprintf(p, sizeof p, "%s/home", tmpdir);
    setenv("LOOM_HOME", p, 1);
    snprintf(p, sizeof p, "%s/userhome", tmpdir);
    setenv("HOME", p, 1);
    unsetenv("CLAUDE_CONFIG_DIR"); /* ~/.claude is HOME's */
    return 0;
}

static int teardown(void **state)
{
    return nftw(tmpdir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

static char *at(const char *rel)
{
    loom_str s = LOOM_STR_INIT;
    str_printf(&s, "%s/%s", tmpdir, rel);
    return str_steal(&s);
}

/* Writes tmpdir/rel, creating its directories. */
static void put(const char *rel, const char *text)
{
    char *path = at(rel);
    char *dir = xstrdup(path);
    *strrchr(dir, '/') = '\0';
    assert_int_equal(file_mkdirs(dir, 0755, NULL), 0);
    assert_int_equal(file_write_atomic(path, text, strlen(text), 0644, NULL), 0);
    free(dir);
    free(path);
}

static void mkdir_at(const char *rel)
{
    char *path = at(rel);
    assert_int_equal(file_mkdirs(path, 0755, NULL), 0);
    free(path);
}

static int count(const char *hay, const char *needle)
{
    int n = 0;
    for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle))
        n++;
    return n;
}

static const char *pos(const char *hay, const char *needle)
{
    const char *p = strstr(hay, needle);
    if (!p)
        fail_msg("[%s] not in the block:\n%s", needle, hay);
    return p;
}

static char *render_in(const char *rel, memory_report *rep)
{
    char *cwd = at(rel);
    char *out = memory_render(cwd, true, true, NULL, rep);
    free(cwd);
    return out;
}

/* Every level's files load, Claude Code's before Loom's: a directory with
 * both gives both (an AGENTS.md no longer hides its CLAUDE.md). */
static void test_order_both_files(void **state)
{
    put("home/AGENTS.md", "USER-RULE\n");
    put("AGENTS.md", "OUTSIDE-THE-REPO\n");  /* above the root: not ours */
    mkdir_at("repo/.git");
    put("repo/AGENTS.md", "ROOT-RULE\n");
    put("repo/mid/CLAUDE.md", "MID-CLAUDE\n");
    put("repo/mid/sub/AGENTS.md", "SUB-RULE\n");
    put("repo/mid/sub/CLAUDE.md", "SUB-CLAUDE\n");
    mkdir_at("repo/mid/sub/leaf");

    memory_report rep;
    char *out = render_in("repo/mid/sub/leaf", &rep);
    const char *user = pos(out, "USER-RULE");
    const char *root = pos(out, "ROOT-RULE");
    const char *mid = pos(out, "MID-CLAUDE");
    const char *sub_claude = pos(out, "SUB-CLAUDE");
    const char *sub = pos(out, "SUB-RULE");
    assert_true(user < root && root < mid && mid < sub_claude && sub_claude < sub);
    assert_null(strstr(out, "OUTSIDE-THE-REPO"));
    char *heading = at("repo/mid/CLAUDE.md");
    assert_true(strstr(out, heading) && strstr(out, heading) < mid);
    free(heading);

    assert_int_equal(rep.count, 5);
    assert_int_equal(rep.files[0].kind, MEMORY_USER);
    assert_int_equal(rep.files[1].kind, MEMORY_PROJECT);
    assert_non_null(strstr(rep.files[3].path, "repo/mid/sub/CLAUDE.md"));
    assert_non_null(strstr(rep.files[4].path, "repo/mid/sub/AGENTS.md"));
    assert_int_equal(rep.nskipped, 0);
    assert_false(rep.truncated);
    assert_string_equal(memory_kind_name(rep.files[0].kind), "user");
    memory_report_free(&rep);
    free(out);

    /* With no repository, only cwd itself counts. */
    put("plain/AGENTS.md", "PLAIN-PARENT\n");
    put("plain/child/AGENTS.md", "PLAIN-CHILD\n");
    out = render_in("plain/child", NULL);
    pos(out, "PLAIN-CHILD");
    assert_null(strstr(out, "PLAIN-PARENT"));
    free(out);

    /* A .git file (worktree) marks the root as well as a .git directory. */
    put("wt/.git", "gitdir: /elsewhere\n");
    put("wt/AGENTS.md", "WT-ROOT\n");
    mkdir_at("wt/a");
    out = render_in("wt/a", NULL);
    pos(out, "WT-ROOT");
    free(out);
}

static void test_imports(void **state)
{
    mkdir_at("repo/.git");
    put("userhome/shared.md", "HOME-IMPORT\n");
    put("repo/docs/style.md", "STYLE-TEXT\n@../docs/nested.md\n");
    put("repo/docs/nested.md", "NESTED-TEXT\n");
    put("repo/cycle-a.md", "CYCLE-A\n@cycle-b.md\n");
    put("repo/cycle-b.md", "CYCLE-B\n@cycle-a.md\n");
    put("repo/AGENTS.md",
        "ROOT-RULE\n"
        "@docs/style.md\n"
        "  @~/shared.md  \n"
        "@missing.md\n"
        "@cycle-a.md\n"
        "mail me @docs/style.md inline is not an import\n"
        "```sh\n"
        "@docs/style.md\n"
        "```\n"
        "AFTER-FENCE\n");

    memory_report rep;
    char *out = render_in("repo", &rep);
    const char *root = pos(out, "ROOT-RULE");
    const char *style = pos(out, "STYLE-TEXT");
    const char *nested = pos(out, "NESTED-TEXT");
    const char *home = pos(out, "HOME-IMPORT");
    assert_true(root < style && style < nested && nested < home);
    /* Imported once; the fenced and the inline one stay as written. */
    assert_int_equal(count(out, "STYLE-TEXT"), 1);
    pos(out, "```sh\n@docs/style.md\n```\n");
    pos(out, "mail me @docs/style.md inline");
    pos(out, "AFTER-FENCE");
    /* A missing import is a note in place. */
    pos(out, "[@missing.md not imported:");
    pos(out, "not found]");
    /* The cycle is cut with a note, each file appearing once. */
    assert_int_equal(count(out, "CYCLE-A"), 1);
    assert_int_equal(count(out, "CYCLE-B"), 1);
    pos(out, "[@cycle-a.md not imported: import cycle");

    int imports = 0;
    for (size_t i = 0; i < rep.count; i++)
        imports += rep.files[i].kind == MEMORY_IMPORT;
    assert_int_equal(imports, 5);  /* style, nested, shared, cycle-a, cycle-b */
    memory_report_free(&rep);
    free(out);
}

/* Nothing under a credential store enters the block, however a repository
 * spells the way there: @imports (~/, absolute, relative, dot-dot, double
 * slash, a symlinked file or directory), an instructions file that is itself
 * a symlink to a key, a memory index that is one. */
static void test_secret_paths_refused(void **state)
{
    put("userhome/.ssh/id_rsa", "SECRET-SSH-KEY\n");
    put("userhome/.aws/credentials", "SECRET-AWS-KEY\n");
    put("userhome/.netrc", "SECRET-NETRC\n");
    put("userhome/notes.md", "PLAIN-HOME-NOTE\n");
    mkdir_at("repo/.git");
    char *key = at("userhome/.ssh/id_rsa");
    char *ssh = at("userhome/.ssh");
    char *netrc = at("userhome/.netrc");
    char *link = at("repo/key.md");
    char *dlink = at("repo/sshdir");
    assert_int_equal(symlink(key, link), 0);
    assert_int_equal(symlink(ssh, dlink), 0);
    loom_str agents = LOOM_STR_INIT;
    str_printf(&agents,
               "ROOT-RULE\n"
               "@~/.ssh/id_rsa\n"
               "@%s\n"
               "@../userhome/.ssh//id_rsa\n"
               "@~/.ssh/../.ssh/./id_rsa\n"
               "@key.md\n"
               "@sshdir/id_rsa\n"
               "@~/.aws/credentials\n"
               "@~/.netrc\n"
               "@/proc/self/environ\n"
               "@/dev/stdin\n"
               "@~/notes.md\n",
               key);
    put("repo/AGENTS.md", agents.ptr);
    str_free(&agents);
    /* A nested directory whose AGENTS.md is a symlink to the key. */
    mkdir_at("repo/sub");
    char *sub_agents = at("repo/sub/AGENTS.md");
    assert_int_equal(symlink(key, sub_agents), 0);
    /* The project memory index is a symlink to ~/.netrc. */
    mkdir_at("repo/.loom/memory");
    char *index = at("repo/.loom/memory/MEMORY.md");
    assert_int_equal(symlink(netrc, index), 0);

    setenv("LOOM_TEST_ENV_MARK", "ENVIRON-MARKER", 1);
    memory_report rep;
    char *out = render_in("repo/sub", &rep);
    unsetenv("LOOM_TEST_ENV_MARK");
    pos(out, "ROOT-RULE");
    /* Not /proc/self/environ (the API keys), not a device that blocks. */
    assert_null(strstr(out, "ENVIRON-MARKER"));
    pos(out, "[@/dev/stdin not imported: /dev/stdin is in /dev");
    pos(out, "PLAIN-HOME-NOTE"); /* an ordinary file under $HOME still imports */
    assert_null(strstr(out, "SECRET-SSH-KEY"));
    assert_null(strstr(out, "SECRET-AWS-KEY"));
    assert_null(strstr(out, "SECRET-NETRC"));
    /* Each refused import is a note in place, naming the store. */
    assert_int_equal(count(out, "secret files never enter the prompt"), 8 + 2 + 1 + 1);
    pos(out, "[@~/.ssh/id_rsa not imported:");
    pos(out, "[@key.md not imported:");
    pos(out, "[@sshdir/id_rsa not imported:");
    pos(out, "~/.aws, a credential store");
    for (size_t i = 0; i < rep.count; i++)
        assert_null(strstr(rep.files[i].path, "/.ssh"));
    memory_report_free(&rep);
    free(out);
    free(key);
    free(ssh);
    free(netrc);
    free(link);
    free(dlink);
    free(sub_agents);
    free(index);
}

/* Untrusted, a project's files stay inside the repository: imports of ~/,
 * absolute and ../ paths outside it become notes; one inside still loads;
 * the user's own AGENTS.md imports as before. */
static void test_untrusted_confined(void **state)
{
    mkdir_at("repo/.git");
    put("userhome/shared.md", "HOME-SHARED\n");
    put("outside/x.md", "OUTSIDE-X\n");
    put("repo/docs/in.md", "INSIDE-DOC\n");
    put("home/AGENTS.md", "USER-RULE\n@~/shared.md\n");
    char *abs = at("outside/x.md");
    loom_str agents = LOOM_STR_INIT;
    str_printf(&agents, "PROJECT-RULE\n@docs/in.md\n@~/shared.md\n@%s\n@../outside/x.md\n", abs);
    put("repo/AGENTS.md", agents.ptr);
    str_free(&agents);
    char *cwd = at("repo");
    char *out = memory_render(cwd, false, true, NULL, NULL);
    pos(out, "USER-RULE");
    pos(out, "PROJECT-RULE");
    pos(out, "INSIDE-DOC");
    /* Once, from the user's file; the project's import of it is a note. */
    assert_int_equal(count(out, "HOME-SHARED"), 1);
    assert_true(pos(out, "HOME-SHARED") < pos(out, "PROJECT-RULE"));
    assert_null(strstr(out, "OUTSIDE-X"));
    assert_int_equal(count(out, "is outside the repository, and this folder is not trusted"), 3);
    free(out);
    /* Trusted, the same files import. */
    out = memory_render(cwd, true, true, NULL, NULL);
    pos(out, "OUTSIDE-X");
    free(out);
    free(cwd);
    free(abs);
}

static void test_import_depth(void **state)
{
    mkdir_at("deep/.git");
    put("deep/AGENTS.md", "LEVEL-0\n@i1.md\n");
    for (int i = 1; i <= 7; i++) {
        char name[32], text[64];
        snprintf(name, sizeof name, "deep/i%d.md", i);
        snprintf(text, sizeof text, "LEVEL-%d\n@i%d.md\n", i, i + 1);
        put(name, text);
    }
    char *out = render_in("deep", NULL);
    pos(out, "LEVEL-5");
    assert_null(strstr(out, "LEVEL-6"));
    pos(out, "[@i6.md not imported: imports nest deeper than 5 levels]");
    free(out);
}

static void test_memory_dirs(void **state)
{
    mkdir_at("repo/.git");
    put("home/memory/MEMORY.md", "- [deploy](deploy.md): USER-INDEX-ENTRY\n");
    put("home/memory/deploy.md", "USER-MEMORY-BODY\n");
    put("repo/.loom/memory/MEMORY.md", "PROJECT-INDEX-ENTRY\n");
    put("repo/.loom/memory/notes.md", "PROJECT-MEMORY-BODY\n");
    put("repo/.loom/memory/.hidden", "HIDDEN\n");
    mkdir_at("repo/src");

    memory_report rep;
    char *out = render_in("repo/src", &rep);
    pos(out, "USER-INDEX-ENTRY");
    pos(out, "PROJECT-INDEX-ENTRY");
    assert_null(strstr(out, "USER-MEMORY-BODY"));
    assert_null(strstr(out, "PROJECT-MEMORY-BODY"));
    assert_null(strstr(out, "HIDDEN"));
    char *deploy = at("home/memory/deploy.md");
    char *notes = at("repo/.loom/memory/notes.md");
    pos(out, deploy);
    pos(out, notes);
    pos(out, "loaded on demand");
    free(deploy);
    free(notes);
    assert_int_equal(rep.count, 2);
    assert_int_equal(rep.files[0].kind, MEMORY_INDEX);
    assert_int_equal(rep.files[1].kind, MEMORY_INDEX);
    memory_report_free(&rep);
    free(out);

    /* Nothing anywhere: an empty block, not NULL. */
    char *empty = at("empty");
    mkdir_at("empty");
    unsetenv("LOOM_HOME");
    char *saved_home = xstrdup(getenv("HOME"));
    setenv("HOME", empty, 1);
    out = memory_render(empty, true, true, NULL, &rep);
    assert_string_equal(out, "");
    assert_int_equal(rep.count, 0);
    memory_report_free(&rep);
    free(out);
    setenv("HOME", saved_home, 1);
    free(saved_home);
    free(empty);
    char *lh = at("home");
    setenv("LOOM_HOME", lh, 1);
    free(lh);
}

static char *filled(size_t n, const char *unit)
{
    loom_str s = LOOM_STR_INIT;
    while (s.len < n)
        str_puts(&s, unit);
    return str_steal(&s);
}

static void test_caps(void **state)
{
    mkdir_at("big/.git");
    /* Each file 40k: a 2-byte character straddling the cut is dropped whole. */
    char *e = filled(50000, "\xc3\xa9");
    loom_str shifted = LOOM_STR_INIT;  /* "a" first, so the cut lands inside one */
    str_printf(&shifted, "a%s", e);
    put("big/AGENTS.md", shifted.ptr);
    str_free(&shifted);
    free(e);
    char *index = filled(15000, "INDEX-LINE\n");
    put("home/memory/MEMORY.md", index);
    free(index);

    memory_report rep;
    char *out = render_in("big", &rep);
    assert_true(rep.truncated);
    assert_int_equal(count(out, "\xc3\xa9"), MEMORY_FILE_CAP / 2 - 1);
    pos(out, "[… truncated]");
    assert_true(count(out, "INDEX-LINE") <= MEMORY_INDEX_CAP / 11);
    assert_true(count(out, "INDEX-LINE") >= MEMORY_INDEX_CAP / 11 - 1);
    pos(out, "MEMORY.md is over 10000 chars");
    memory_report_free(&rep);
    free(out);

    /* The whole block: 40k per directory level over four levels is too much;
     * the resident index still makes it. */
    char *x = filled(45000, "x");
    put("big/AGENTS.md", x);
    put("big/a/AGENTS.md", x);
    put("big/a/b/AGENTS.md", x);
    put("big/a/b/c/AGENTS.md", x);
    free(x);
    out = render_in("big/a/b/c", NULL);
    assert_true(strlen(out) <= MEMORY_TOTAL_CAP);
    pos(out, "instructions exceed 100000 chars");
    pos(out, "INDEX-LINE");
    free(out);
}

/* ~/.claude/CLAUDE.md before $LOOM_HOME/AGENTS.md, a directory's
 * .claude/CLAUDE.md between its CLAUDE.md and AGENTS.md, and a CLAUDE.md
 * that is a symlink to AGENTS.md loaded once (reported as skipped). */
static void test_claude_files_everywhere(void **state)
{
    put("userhome/.claude/CLAUDE.md", "CLAUDE-USER\n");
    put("home/AGENTS.md", "LOOM-USER\n");
    mkdir_at("proj/.git");
    put("proj/CLAUDE.md", "PROJ-CLAUDE\n");
    put("proj/.claude/CLAUDE.md", "PROJ-DOT-CLAUDE\n");
    put("proj/AGENTS.md", "PROJ-AGENTS\n");
    put("proj/sub/AGENTS.md", "SUB-AGENTS\n");
    char *target = at("proj/sub/AGENTS.md"), *link = at("proj/sub/CLAUDE.md");
    assert_int_equal(symlink(target, link), 0);

    memory_report rep;
    char *out = render_in("proj/sub", &rep);
    const char *order[] = {"CLAUDE-USER", "LOOM-USER", "PROJ-CLAUDE", "PROJ-DOT-CLAUDE",
                           "PROJ-AGENTS", "SUB-AGENTS"};
    for (size_t i = 1; i < sizeof order / sizeof *order; i++)
        if (!(pos(out, order[i - 1]) < pos(out, order[i])))
            fail_msg("%s should come before %s in the block:\n%s", order[i - 1], order[i], out);
    assert_int_equal(count(out, "SUB-AGENTS"), 1);
    assert_int_equal(rep.count, 6);
    assert_int_equal(rep.files[0].kind, MEMORY_USER);
    assert_int_equal(rep.files[1].kind, MEMORY_USER);
    assert_int_equal(rep.nskipped, 1);
    /* CLAUDE.md comes first, so it is the name the file loads under. */
    assert_string_equal(rep.skipped[0].path, target);
    assert_non_null(strstr(rep.skipped[0].why, "the same file as"));
    memory_report_free(&rep);
    free(out);
    free(target);
    free(link);
}

/* compat off: no CLAUDE.md of any level loads; each one found is
 * reported skipped, and the AGENTS.md files still load. */
static void test_compat_off_only_agents(void **state)
{
    put("userhome/.claude/CLAUDE.md", "CLAUDE-USER\n");
    put("home/AGENTS.md", "LOOM-USER\n");
    mkdir_at("p/.git");
    put("p/CLAUDE.md", "PROJ-CLAUDE\n");
    put("p/.claude/CLAUDE.md", "PROJ-DOT-CLAUDE\n");
    put("p/AGENTS.md", "PROJ-AGENTS\n");
    char *cwd = at("p");
    memory_report rep;
    char *out = memory_render(cwd, true, false, NULL, &rep);
    pos(out, "LOOM-USER");
    pos(out, "PROJ-AGENTS");
    assert_null(strstr(out, "CLAUDE-USER"));
    assert_null(strstr(out, "PROJ-CLAUDE"));
    assert_null(strstr(out, "PROJ-DOT-CLAUDE"));
    assert_int_equal(rep.count, 2);
    assert_int_equal(rep.nskipped, 3);
    for (size_t i = 0; i < rep.nskipped; i++)
        assert_non_null(strstr(rep.skipped[i].why, "compat.claude is off"));
    memory_report_free(&rep);
    free(out);
    free(cwd);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_order_both_files, setup, teardown),
        cmocka_unit_test_setup_teardown(test_claude_files_everywhere, setup, teardown),
        cmocka_unit_test_setup_teardown(test_compat_off_only_agents, setup, teardown),
        cmocka_unit_test_setup_teardown(test_imports, setup, teardown),
        cmocka_unit_test_setup_teardown(test_import_depth, setup, teardown),
        cmocka_unit_test_setup_teardown(test_secret_paths_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(test_untrusted_confined, setup, teardown),
        cmocka_unit_test_setup_teardown(test_memory_dirs, setup, teardown),
        cmocka_unit_test_setup_teardown(test_caps, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
