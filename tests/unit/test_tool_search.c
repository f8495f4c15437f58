/* test_tool_search.c — Glob, Grep and the walker under them: .gitignore
 * (root and nested files, negation, directory-only, anchored and **
 * patterns, ignored directories), .git always skipped, hidden files kept,
 * brace/?/[...] patterns, newest-first order, truncation; Grep's three
 * output modes, -i, context with "--" separators, glob and type filters,
 * head_limit, multiline.
 *
 * Every Grep assertion runs on both engines, ripgrep and the PCRE2 walker
 * (LOOM_GREP_ENGINE=pcre2), and their outputs must be byte-identical. The
 * ripgrep half is skipped, with a message, where rg is not installed. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <limits.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/fileio.h"
#include "base/glob.h"
#include "base/json.h"
#include "base/str.h"
#include "tools/builtin/builtin.h"
#include "tools/builtin/walk.h"

static char root[PATH_MAX];
static bool have_rg;
static time_t mtime_base;
static int mtime_step;

static int rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    return remove(path);
}

/* Creates root/rel with data; each file written gets a later mtime than
 * the one before, one second apart, so newest-first order is known. */
static void put(const char *rel, const char *data)
{
    loom_str path = LOOM_STR_INIT;
    str_printf(&path, "%s/%s", root, rel);
    char *slash = strrchr(path.ptr, '/');
    *slash = '\0';
    loom_error err;
    assert_int_equal(file_mkdirs(path.ptr, 0755, &err), 0);
    *slash = '/';
    int fd = open(path.ptr, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    assert_true(fd >= 0);
    assert_int_equal(file_write_full(fd, data, strlen(data)), 0);
    close(fd);
    struct timespec ts[2] = {{mtime_base + mtime_step, 0}, {mtime_base + mtime_step, 0}};
    mtime_step++;
    assert_int_equal(utimensat(AT_FDCWD, path.ptr, ts, 0), 0);
    str_free(&path);
}

static void put_bytes(const char *rel, const char *data, size_t len)
{
    loom_str path = LOOM_STR_INIT;
    str_printf(&path, "%s/%s", root, rel);
    int fd = open(path.ptr, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    assert_true(fd >= 0);
    assert_int_equal(file_write_full(fd, data, len), 0);
    close(fd);
    struct timespec ts[2] = {{mtime_base + mtime_step, 0}, {mtime_base + mtime_step, 0}};
    mtime_step++;
    assert_int_equal(utimensat(AT_FDCWD, path.ptr, ts, 0), 0);
    str_free(&path);
}

static int group_setup(void **state)
{
    const char *base = getenv("TMPDIR");
    snprintf(root, sizeof root, "%s/loom-search-XXXXXX", base && *base ? base : "/tmp");
    if (!mkdtemp(root))
        return -1;
    /* mkdtemp's path may run through a symlink (macOS /tmp); the tools
     * print what they were given, so use the real path throughout. */
    char real[PATH_MAX];
    if (!realpath(root, real))
        return -1;
    snprintf(root, sizeof root, "%s", real);
    mtime_base = time(NULL) - 100000;

    /* Oldest first. */
    put(".gitignore", "# comment\n*.log\n!keep.log\nbuild/\n/top_only.txt\nsecret/**\n"
                      "\\#hash.txt\n");
    put("a.c", "int main(void)\n{\n    return FOO;\n}\n");
    put("b.h", "#define foo 1\n");
    put("top_only.txt", "FOO at the top, ignored\n");
    put("x.log", "FOO in an ignored log\n");
    put("keep.log", "FOO in a re-included log\n");
    put("build/out.c", "FOO in an ignored directory\n");
    put("build.c", "a file named like the ignored directory: FOO\n");
    put("src/.gitignore", "gen_*.c\n");
    put("src/gen_x.c", "FOO generated, ignored by the nested .gitignore\n");
    put("src/main.c", "#include \"util.h\"\nint x = FOO;\n");
    put("src/util.c", "static int util(void) { return 0; }\n");
    put("src/top_only.txt", "FOO below the top: not ignored\n");
    put("src/deep/a1.c", "alpha\n");
    put("src/deep/b2.c", "beta\n");
    put("src/deep/ab.c", "gamma\n");
    put("src/deep/x.h", "delta\n");
    put("secret/data.txt", "FOO secret\n");
    put("secret/inner/more.c", "FOO secret\n");
    put(".hidden/h.c", "hidden FOO\n");
    /* A sub-agent's worktree (agents/worktree.h): never walked, so no
     * expected list below names it. */
    put(".loom/worktrees/agent_1-0a1b2c3d/copy.c", "FOO in a worktree copy\n");
    put(".git/x.c", "FOO inside .git\n");
    put("#hash.txt", "FOO in an escaped-hash name\n");
    put("ctx.txt", "l1\nmatch two\nl3\nl4\nl5\nl6\nl7\nmatch eight\nl9\nl10\n");
    put_bytes("bin.c", "FOO\0binary\n", 11);
    loom_str longline = LOOM_STR_INIT;
    str_puts(&longline, "short LONGMATCH\n");
    for (int i = 0; i < 600; i++)
        str_putc(&longline, 'x');
    str_puts(&longline, " LONGMATCH\n");
    put("long.txt", longline.ptr);
    str_free(&longline);
    for (int i = 0; i < 150; i++) {
        char name[64];
        snprintf(name, sizeof name, "many/f%03d.txt", i);
        put(name, "many\n");
    }

    char *rg = NULL;
    const char *path = getenv("PATH");
    for (const char *p = path; p && *p;) {
        size_t n = strcspn(p, ":");
        loom_str cand = LOOM_STR_INIT;
        str_append(&cand, p, n);
        str_puts(&cand, "/rg");
        if (access(cand.ptr, X_OK) == 0)
            rg = str_steal(&cand);
        str_free(&cand);
        if (rg)
            break;
        p += n;
        if (*p == ':')
            p++;
    }
    have_rg = rg != NULL;
    if (!have_rg)
        print_message("rg is not installed: the ripgrep half of the Grep tests is skipped\n");
    free(rg);
    return 0;
}

static int group_teardown(void **state)
{
    return nftw(root, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

static tool_ctx make_ctx(void)
{
    tool_ctx ctx;
    memset(&ctx, 0, sizeof ctx);
    ctx.cwd = root;
    return ctx;
}

static tool_result run(const tool_def *def, json_t *input)
{
    assert_non_null(input);
    tool_ctx ctx = make_ctx();
    tool_result r;
    tool_result_init(&r);
    assert_int_equal(def->run(input, &ctx, &r), 0);
    json_decref(input);
    assert_non_null(r.text.ptr);
    return r;
}

/* Expected text: a template with "@/" standing for the root's path. */
static char *expand(const char *tmpl)
{
    loom_str s = LOOM_STR_INIT;
    for (const char *p = tmpl; *p; p++) {
        if (p[0] == '@' && p[1] == '/') {
            str_puts(&s, root);
            str_putc(&s, '/');
            p++;
        } else {
            str_putc(&s, *p);
        }
    }
    return str_steal(&s);
}

static void assert_text(const tool_result *r, const char *tmpl)
{
    char *want = expand(tmpl);
    if (strcmp(r->text.ptr, want) != 0)
        fail_msg("expected:\n%s\n--- got:\n%s", want, r->text.ptr);
    free(want);
}

static tool_result glob(const char *pattern, const char *path)
{
    json_t *in = json_pack("{s:s}", "pattern", pattern);
    if (path)
        json_object_set_new(in, "path", json_string(path));
    return run(&tool_glob, in);
}

static void check_glob(const char *pattern, const char *path, const char *tmpl)
{
    tool_result r = glob(pattern, path);
    assert_false(r.is_error);
    assert_text(&r, tmpl);
    tool_result_free(&r);
}

/* ---- matcher and walker --------------------------------------------------------- */

static void test_glob_path_match(void **state)
{
    assert_true(glob_path_match("*.c", "a.c"));
    assert_false(glob_path_match("*.c", "src/a.c"));
    assert_true(glob_path_match("**/*.c", "a.c"));
    assert_true(glob_path_match("**/*.c", "src/deep/a.c"));
    assert_true(glob_path_match("src/**/x.h", "src/x.h"));
    assert_true(glob_path_match("src/**/x.h", "src/a/b/x.h"));
    assert_false(glob_path_match("src/**/x.h", "lib/x.h"));
    assert_true(glob_path_match("src/**", "src/a"));
    assert_false(glob_path_match("src/**", "src"));
    assert_true(glob_path_match("?.c", "a.c"));
    assert_false(glob_path_match("?.c", "ab.c"));
    assert_false(glob_path_match("a?c", "a/c"));
    assert_true(glob_path_match("[ab]*.c", "b2.c"));
    assert_false(glob_path_match("[!ab]*.c", "b2.c"));
    assert_true(glob_path_match("[a-c]1.c", "a1.c"));
    assert_true(glob_path_match("[]x]", "]"));
    assert_true(glob_path_match("\\*.c", "*.c"));
    assert_false(glob_path_match("\\*.c", "a.c"));
    assert_true(glob_path_match("*a*a*a*b", "aaaaaaaaaaaaaaaaaaaaaaaaab"));
    assert_false(glob_path_match("*a*a*a*b", "aaaaaaaaaaaaaaaaaaaaaaaaaa"));
    assert_true(glob_path_match("a**b", "axxb")); /* not a whole component: like * */
    assert_false(glob_path_match("a**b", "ax/xb"));
    assert_true(glob_path_match("{x}", "{x}")); /* braces are not special here */

    char **l = glob_expand_braces("src/*.{c,h}");
    assert_string_equal(l[0], "src/*.c");
    assert_string_equal(l[1], "src/*.h");
    assert_null(l[2]);
    glob_free_list(l);
    l = glob_expand_braces("{a,b{1,2}}/{x}/\\{y,z}");
    assert_string_equal(l[0], "a/{x}/\\{y,z}");
    assert_string_equal(l[1], "b1/{x}/\\{y,z}");
    assert_string_equal(l[2], "b2/{x}/\\{y,z}");
    assert_null(l[3]);
    glob_free_list(l);
    l = glob_expand_braces("unbalanced{a,b");
    assert_string_equal(l[0], "unbalanced{a,b");
    assert_null(l[1]);
    glob_free_list(l);
}

/* ---- Glob ----------------------------------------------------------------------------- */

static void test_glob_gitignore_and_order(void **state)
{
    /* Newest first; ignored: build/, src/gen_x.c (nested), all of secret/, .git,
     * .loom/worktrees/;
     * kept: hidden files, build.c (build/ is directory-only). */
    check_glob("**/*.c", NULL,
               "@/bin.c\n@/.hidden/h.c\n@/src/deep/ab.c\n@/src/deep/b2.c\n@/src/deep/a1.c\n"
               "@/src/util.c\n@/src/main.c\n@/build.c\n@/a.c");
    check_glob("*.c", NULL, "@/bin.c\n@/build.c\n@/a.c");
    /* Negation re-includes keep.log; the anchored /top_only.txt only
     * ignores the top one; an escaped # is a name, not a comment. */
    check_glob("*.log", NULL, "@/keep.log");
    check_glob("**/top_only.txt", NULL, "@/src/top_only.txt");
    check_glob("#*", NULL, "No files found");
    check_glob("secret/**", NULL, "No files found");
    check_glob(".git/*", NULL, "No files found");
}

static void test_glob_patterns(void **state)
{
    check_glob("src/**/*.{c,h}", NULL,
               "@/src/deep/x.h\n@/src/deep/ab.c\n@/src/deep/b2.c\n@/src/deep/a1.c\n"
               "@/src/util.c\n@/src/main.c");
    check_glob("src/deep/??.c", NULL, "@/src/deep/ab.c\n@/src/deep/b2.c\n@/src/deep/a1.c");
    check_glob("src/deep/a?.c", NULL, "@/src/deep/ab.c\n@/src/deep/a1.c");
    check_glob("**/[ab]?.c", NULL, "@/src/deep/ab.c\n@/src/deep/b2.c\n@/src/deep/a1.c");
    check_glob("./*.h", NULL, "@/b.h");
    check_glob("nothing*", NULL, "No files found");

    /* path: relative to the session's cwd, or absolute; patterns relative
     * to it. */
    check_glob("*.c", "src", "@/src/util.c\n@/src/main.c");
    loom_str abs = LOOM_STR_INIT;
    str_printf(&abs, "%s/src/deep", root);
    check_glob("*1.c", abs.ptr, "@/src/deep/a1.c");
    /* An absolute pattern carries its own directory. */
    str_clear(&abs);
    str_printf(&abs, "%s/src/deep/b*.c", root);
    check_glob(abs.ptr, NULL, "@/src/deep/b2.c");
    check_glob("../deep/a1.c", "src/deep", "@/src/deep/a1.c");
    str_free(&abs);

    tool_result r = glob("*.c", "no/such/dir");
    assert_true(r.is_error);
    assert_non_null(strstr(r.text.ptr, "does not exist"));
    tool_result_free(&r);
    r = glob("*.c", "a.c");
    assert_true(r.is_error);
    assert_non_null(strstr(r.text.ptr, "not a directory"));
    tool_result_free(&r);
    assert_true(tool_glob.read_only);
    assert_true(tool_glob.concurrency_safe);
}

static void test_glob_truncates_at_100(void **state)
{
    tool_result r = glob("many/*.txt", NULL);
    assert_false(r.is_error);
    /* 150 files, newest (f149) first, 100 shown, then the note. */
    const char *text = r.text.ptr;
    char *first = expand("@/many/f149.txt\n");
    assert_true(strncmp(text, first, strlen(first)) == 0);
    free(first);
    size_t lines = 1;
    for (const char *p = text; *p; p++)
        lines += *p == '\n';
    assert_int_equal(lines, 101);
    char *last = expand("@/many/f050.txt\n(Results are truncated. Consider using a more "
                        "specific path or pattern.)");
    assert_non_null(strstr(text, last));
    free(last);
    assert_int_equal(json_get_int(r.raw, "numFiles", 0), 150);
    assert_true(json_get_bool(r.raw, "truncated", false));
    tool_result_free(&r);
}

/* ---- Grep on both engines ------------------------------------------------------------- */

/* Runs Grep with the PCRE2 engine and, when rg is installed, with rg;
 * asserts both give the same text and error flag, and returns the PCRE2
 * result. */
static tool_result grep_both(json_t *input)
{
    setenv("LOOM_GREP_ENGINE", "pcre2", 1);
    json_incref(input);
    tool_result p = run(&tool_grep, input);
    if (!p.is_error && !json_get_bool(p.raw, "binary", false))
        assert_string_equal(json_get_str(p.raw, "engine", ""), "pcre2");
    if (have_rg) {
        setenv("LOOM_GREP_ENGINE", "rg", 1);
        json_incref(input);
        tool_result g = run(&tool_grep, input);
        if (!g.is_error && !json_get_bool(g.raw, "binary", false))
            assert_string_equal(json_get_str(g.raw, "engine", ""), "rg");
        assert_int_equal(p.is_error, g.is_error);
        /* Error wording is each engine's own; results must match exactly. */
        if (!p.is_error && strcmp(p.text.ptr, g.text.ptr) != 0)
            fail_msg("engines differ.\n--- pcre2:\n%s\n--- rg:\n%s", p.text.ptr, g.text.ptr);
        tool_result_free(&g);
    }
    unsetenv("LOOM_GREP_ENGINE");
    json_decref(input);
    return p;
}

static void check_grep(json_t *input, const char *tmpl)
{
    tool_result r = grep_both(input);
    if (r.is_error)
        fail_msg("Grep failed: %s", r.text.ptr);
    assert_text(&r, tmpl);
    tool_result_free(&r);
}

static void test_grep_files_with_matches(void **state)
{
    /* Newest first; not in ignored files, .git, or the binary bin.c. */
    check_grep(json_pack("{s:s}", "pattern", "FOO"),
               "Found 6 files\n@/.hidden/h.c\n@/src/top_only.txt\n@/src/main.c\n@/build.c\n"
               "@/keep.log\n@/a.c");
    check_grep(json_pack("{s:s, s:s}", "pattern", "FOO", "path", "src"),
               "Found 2 files\n@/src/top_only.txt\n@/src/main.c");
    check_grep(json_pack("{s:s}", "pattern", "no such text anywhere"), "No matches found");
    /* A file named explicitly is searched even when ignored. */
    check_grep(json_pack("{s:s, s:s}", "pattern", "FOO", "path", "x.log"),
               "Found 1 file\n@/x.log");
    check_grep(json_pack("{s:s, s:s, s:s}", "pattern", "FOO", "path", "bin.c", "output_mode",
                         "content"),
               "Binary file @/bin.c matches");
    check_grep(json_pack("{s:s, s:s}", "pattern", "nope", "path", "bin.c"), "No matches found");
    check_grep(json_pack("{s:s, s:i}", "pattern", "FOO", "head_limit", 2),
               "Found 6 files\n@/.hidden/h.c\n@/src/top_only.txt\n\n"
               "[Showing 2 of 6 entries (offset 0, head_limit 2)]");
    assert_true(tool_grep.read_only);
    assert_true(tool_grep.concurrency_safe);
}

static void test_grep_content(void **state)
{
    /* As with rg --glob, a glob naming files wins over .gitignore in the
     * directories that are searched (src/gen_x.c), not in pruned ones
     * (build/, secret/). */
    check_grep(json_pack("{s:s, s:s, s:s}", "pattern", "FOO", "output_mode", "content", "glob",
                         "*.c"),
               "@/.hidden/h.c:1:hidden FOO\n"
               "@/a.c:3:    return FOO;\n"
               "@/build.c:1:a file named like the ignored directory: FOO\n"
               "@/src/gen_x.c:1:FOO generated, ignored by the nested .gitignore\n"
               "@/src/main.c:2:int x = FOO;");
    /* -n false, case-insensitive, type filter. */
    check_grep(json_pack("{s:s, s:s, s:b, s:b, s:s}", "pattern", "foo", "output_mode", "content",
                         "-n", 0, "-i", 1, "type", "c"),
               "@/.hidden/h.c:hidden FOO\n"
               "@/a.c:    return FOO;\n"
               "@/b.h:#define foo 1\n"
               "@/build.c:a file named like the ignored directory: FOO\n"
               "@/src/main.c:int x = FOO;");
    /* Braces and path-anchored globs, several at once. */
    check_grep(json_pack("{s:s, s:s, s:s}", "pattern", "a", "output_mode", "content", "glob",
                         "src/deep/*.{c,h} *.h"),
               "@/src/deep/a1.c:1:alpha\n"
               "@/src/deep/ab.c:1:gamma\n"
               "@/src/deep/b2.c:1:beta\n"
               "@/src/deep/x.h:1:delta");
    /* An excluding glob. */
    check_grep(json_pack("{s:s, s:s, s:s}", "pattern", "FOO", "output_mode", "content", "glob",
                         "!*.c"),
               "@/keep.log:1:FOO in a re-included log\n"
               "@/src/top_only.txt:1:FOO below the top: not ignored");
    /* Lines longer than 500 bytes are replaced, as rg --max-columns 500. */
    check_grep(json_pack("{s:s, s:s}", "pattern", "LONGMATCH", "output_mode", "content"),
               "@/long.txt:1:short LONGMATCH\n@/long.txt:2:[Omitted long matching line]");
    check_grep(json_pack("{s:s, s:s, s:i}", "pattern", "x+ LONG", "output_mode", "content", "-B",
                         1),
               "@/long.txt-1-short LONGMATCH\n@/long.txt:2:[Omitted long matching line]");
}

static void test_grep_context(void **state)
{
    check_grep(json_pack("{s:s, s:s, s:i, s:s}", "pattern", "match", "output_mode", "content",
                         "-C", 1, "path", "ctx.txt"),
               "@/ctx.txt-1-l1\n@/ctx.txt:2:match two\n@/ctx.txt-3-l3\n--\n"
               "@/ctx.txt-7-l7\n@/ctx.txt:8:match eight\n@/ctx.txt-9-l9");
    /* Overlapping windows merge: no separator between them. */
    check_grep(json_pack("{s:s, s:s, s:i, s:s}", "pattern", "match", "output_mode", "content",
                         "-A", 5, "path", "ctx.txt"),
               "@/ctx.txt:2:match two\n@/ctx.txt-3-l3\n@/ctx.txt-4-l4\n@/ctx.txt-5-l5\n"
               "@/ctx.txt-6-l6\n@/ctx.txt-7-l7\n@/ctx.txt:8:match eight\n@/ctx.txt-9-l9\n"
               "@/ctx.txt-10-l10");
    /* -B alone, and the separator between files. */
    check_grep(json_pack("{s:s, s:s, s:i, s:s}", "pattern", "^(alpha|beta)", "output_mode",
                         "content", "-B", 2, "path", "src"),
               "@/src/deep/a1.c:1:alpha\n--\n@/src/deep/b2.c:1:beta");
    /* head_limit counts separators too, like | head -N. */
    check_grep(json_pack("{s:s, s:s, s:i, s:s, s:i}", "pattern", "match", "output_mode",
                         "content", "-C", 1, "path", "ctx.txt", "head_limit", 4),
               "@/ctx.txt-1-l1\n@/ctx.txt:2:match two\n@/ctx.txt-3-l3\n--\n\n"
               "[Showing 4 of 7 lines (offset 0, head_limit 4)]");
    check_grep(json_pack("{s:s, s:s, s:s, s:i, s:i}", "pattern", "match", "output_mode",
                         "content", "path", "ctx.txt", "head_limit", 1, "offset", 1),
               "@/ctx.txt:8:match eight\n\n[Showing 1 of 2 lines (offset 1, head_limit 1)]");
}

static void test_grep_count(void **state)
{
    check_grep(json_pack("{s:s, s:s, s:s}", "pattern", "l[0-9]|match", "output_mode", "count",
                         "path", "ctx.txt"),
               "@/ctx.txt:10\n\nFound 10 matching lines across 1 file.");
    check_grep(json_pack("{s:s, s:s, s:b}", "pattern", "foo", "output_mode", "count", "-i", 1),
               "@/.hidden/h.c:1\n@/a.c:1\n@/b.h:1\n@/build.c:1\n@/keep.log:1\n@/src/main.c:1\n"
               "@/src/top_only.txt:1\n\nFound 7 matching lines across 7 files.");
    check_grep(json_pack("{s:s, s:s, s:s, s:i}", "pattern", "FOO", "output_mode", "count", "glob",
                         "*.c", "head_limit", 1),
               "@/.hidden/h.c:1\n\n[Showing 1 of 5 entries (offset 0, head_limit 1)]\n\n"
               "Found 5 matching lines across 5 files.");
}

static void test_grep_multiline(void **state)
{
    /* Without multiline a pattern never crosses a line end. */
    check_grep(json_pack("{s:s, s:s, s:s}", "pattern", "FOO;\\s+}", "output_mode", "content",
                         "path", "a.c"),
               "No matches found");
    check_grep(json_pack("{s:s, s:s, s:s, s:b}", "pattern", "FOO;\\s+}", "output_mode",
                         "content", "path", "a.c", "multiline", 1),
               "@/a.c:3:    return FOO;\n@/a.c:4:}");
    /* multiline-dotall: . crosses lines too. */
    check_grep(json_pack("{s:s, s:s, s:s, s:b}", "pattern", "main.*return", "output_mode",
                         "content", "path", "a.c", "multiline", 1),
               "@/a.c:1:int main(void)\n@/a.c:2:{\n@/a.c:3:    return FOO;");
    check_grep(json_pack("{s:s, s:b, s:s}", "pattern", "two\\nl3", "multiline", 1, "output_mode",
                         "count"),
               "@/ctx.txt:2\n\nFound 2 matching lines across 1 file.");
}

static void test_grep_errors(void **state)
{
    tool_result r = grep_both(json_pack("{s:s}", "pattern", "(unclosed"));
    assert_true(r.is_error);
    tool_result_free(&r);
    r = grep_both(json_pack("{s:s, s:s}", "pattern", "x", "path", "no/such/path"));
    assert_true(r.is_error);
    assert_non_null(strstr(r.text.ptr, "does not exist"));
    tool_result_free(&r);
    r = grep_both(json_pack("{s:s, s:s}", "pattern", "x", "output_mode", "lines"));
    assert_true(r.is_error);
    tool_result_free(&r);
    r = grep_both(json_pack("{s:s, s:s}", "pattern", "x", "type", "no-such-type"));
    assert_true(r.is_error);
    assert_non_null(strstr(r.text.ptr, "no-such-type"));
    tool_result_free(&r);
    /* A line end outside multiline mode is refused, not silently unmatched. */
    r = grep_both(json_pack("{s:s}", "pattern", "two\\nl3"));
    assert_true(r.is_error);
    assert_non_null(strstr(r.text.ptr, "multiline"));
    tool_result_free(&r);
    r = grep_both(json_pack("{s:s}", "pattern", "a\\\\n")); /* an escaped backslash, then n */
    assert_false(r.is_error);
    tool_result_free(&r);
    r = grep_both(json_pack("{s:s, s:i}", "pattern", "x", "-C", -1));
    assert_true(r.is_error);
    tool_result_free(&r);
}

/* FIFOs, devices and pseudo filesystems (issue #10): nothing blocks. A FIFO
 * without a writer would hang any blocking open for ever, so each call here
 * returning at all is half the assertion. */
static void test_fifos_and_devices_never_block(void **state)
{
    loom_str dir = LOOM_STR_INIT, path = LOOM_STR_INIT;
    str_printf(&dir, "%s/pipes", root);
    str_printf(&path, "%s/pipes/named.txt", root);
    assert_int_equal(mkdir(dir.ptr, 0755), 0);
    assert_int_equal(mkfifo(path.ptr, 0644), 0);
    put("pipes/real.txt", "PIPEMATCH\n");

    /* Named directly: a clear error on both engines. */
    tool_result r = grep_both(json_pack("{s:s, s:s}", "pattern", "x", "path", "pipes/named.txt"));
    assert_true(r.is_error);
    assert_non_null(strstr(r.text.ptr, "not a regular file"));
    tool_result_free(&r);
    r = grep_both(json_pack("{s:s, s:s}", "pattern", "x", "path", "/dev/null"));
    assert_true(r.is_error);
    assert_non_null(strstr(r.text.ptr, "not a regular file"));
    tool_result_free(&r);
    /* Inside a directory: skipped, the real file found, engines agree. */
    check_grep(json_pack("{s:s, s:s}", "pattern", "PIPEMATCH", "path", "pipes"),
               "Found 1 file\n@/pipes/real.txt");
    check_grep(json_pack("{s:s, s:s, s:s}", "pattern", "PIPEMATCH", "path", "pipes", "glob",
                         "*.txt"),
               "Found 1 file\n@/pipes/real.txt");
    /* Glob lists files only. */
    r = run(&tool_glob, json_pack("{s:s, s:s}", "pattern", "*", "path", dir.ptr));
    assert_false(r.is_error);
    assert_null(strstr(r.text.ptr, "named.txt"));
    assert_non_null(strstr(r.text.ptr, "real.txt"));
    tool_result_free(&r);
    /* Searches rooted in /proc or /dev finish, on the PCRE2 walk whatever
     * engine was asked for (rg would open /proc/kmsg blocking). */
    const char *const pseudo[] = {"/proc/self", "/dev", "/sys/kernel"};
    for (size_t i = 0; i < 3; i++) {
        setenv("LOOM_GREP_ENGINE", "rg", 1);
        r = run(&tool_grep, json_pack("{s:s, s:s}", "pattern", "zz9-nothing-qq", "path", pseudo[i]));
        unsetenv("LOOM_GREP_ENGINE");
        assert_false(r.is_error);
        assert_string_equal(json_get_str(r.raw, "engine", ""), "pcre2");
        tool_result_free(&r);
    }

    remove(path.ptr);
    str_clear(&path);
    str_printf(&path, "%s/pipes/real.txt", root);
    remove(path.ptr);
    rmdir(dir.ptr);
    str_free(&dir);
    str_free(&path);
}

static void test_walk_pseudo_fs(void **state)
{
    assert_true(walk_pseudo_fs("/proc"));
    assert_true(walk_pseudo_fs("/proc/self/task"));
    assert_true(walk_pseudo_fs("/sys"));
    assert_true(walk_pseudo_fs("/sys/kernel"));
    assert_true(walk_pseudo_fs("/dev"));
    assert_true(walk_pseudo_fs("/dev/shm"));
    assert_false(walk_pseudo_fs("/"));
    assert_false(walk_pseudo_fs("/devices-not-dev"));
    assert_false(walk_pseudo_fs("/processes"));
    assert_false(walk_pseudo_fs(root));
}

/* A walk from "/" never enters /proc, /sys or /dev. The visit skips every
 * directory, so only the top level is seen. */
static int top_visit(void *ud, const walk_entry *e)
{
    int *bad = ud;
    if (e->is_dir && (!strcmp(e->path, "/proc") || !strcmp(e->path, "/sys") ||
                      !strcmp(e->path, "/dev")))
        (*bad)++;
    return e->is_dir ? WALK_SKIP : WALK_CONTINUE;
}

static void test_walk_from_root_skips_pseudo(void **state)
{
    int bad = 0;
    walk_opts wo = {.root = "/", .visit = top_visit, .ud = &bad};
    loom_error err;
    loom_error_clear(&err);
    assert_int_equal(walk_tree(&wo, &err), 0);
    assert_int_equal(bad, 0);
}

/* A raised cancel flag stops Glob and both Grep engines with a clear result. */
static void test_search_honours_cancel(void **state)
{
    loom_cancel flag = CANCEL_RUN;
    tool_ctx ctx = make_ctx();
    ctx.cancel = &flag;
    tool_result r;
    tool_result_init(&r);
    json_t *in = json_pack("{s:s}", "pattern", "**/*");
    assert_int_equal(tool_glob.run(in, &ctx, &r), 0);
    json_decref(in);
    assert_true(r.is_error);
    assert_non_null(strstr(r.text.ptr, "interrupted"));
    tool_result_free(&r);
    const char *const engines[] = {"pcre2", "rg"};
    for (size_t i = 0; i < (have_rg ? 2u : 1u); i++) {
        setenv("LOOM_GREP_ENGINE", engines[i], 1);
        tool_result_init(&r);
        in = json_pack("{s:s}", "pattern", "FOO");
        assert_int_equal(tool_grep.run(in, &ctx, &r), 0);
        json_decref(in);
        assert_true(r.is_error);
        assert_non_null(strstr(r.text.ptr, "interrupted"));
        tool_result_free(&r);
    }
    unsetenv("LOOM_GREP_ENGINE");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_glob_path_match),
        cmocka_unit_test(test_glob_gitignore_and_order),
        cmocka_unit_test(test_glob_patterns),
        cmocka_unit_test(test_glob_truncates_at_100),
        cmocka_unit_test(test_grep_files_with_matches),
        cmocka_unit_test(test_grep_content),
        cmocka_unit_test(test_grep_context),
        cmocka_unit_test(test_grep_count),
        cmocka_unit_test(test_grep_multiline),
        cmocka_unit_test(test_grep_errors),
        cmocka_unit_test(test_fifos_and_devices_never_block),
        cmocka_unit_test(test_walk_pseudo_fs),
        cmocka_unit_test(test_walk_from_root_skips_pseudo),
        cmocka_unit_test(test_search_honours_cancel),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
