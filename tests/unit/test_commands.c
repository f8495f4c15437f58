/* test_commands.c — custom slash commands (ext/commands/): telling
 * "/name args" from a goal, the shell-like split of the arguments and
 * their substitution ($ARGUMENTS, $1…$9, quotes, a missing $3, $10), one
 * file's frontmatter (every key, wrong types warned and dropped, bad YAML
 * skipping the file, Claude Code's loose spellings), the catalog (sources
 * and precedence, namespaces by sub-folder and plugin, a malformed file
 * warned while the rest loads, an untrusted workspace skipped with a
 * notice, a hostile repository's symlinks, big files and FIFOs), and the
 * expansion: !`cmd` and @file through the governed pipeline against a
 * fake Bash that echoes and a fake Read, allowed with no governance, and
 * with one: a deny rule holding over a grant, a grant letting a command
 * run headless, a denied read leaving its denial. */
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

#include "base/fileio.h"
#include "base/str.h"
#include "ext/commands/commands_internal.h"
#include "governance/governance.h"
#include "governance/pipeline.h"
#include "tmpdir.h"

static char dir[256];
static char ws[300], home[300], uhome[300], plug[300];

static int setup(void **state)
{
    (void)state;
    if (tmpdir_make(dir, sizeof dir, "loom-commands", false) != 0)
        return -1;
    snprintf(ws, sizeof ws, "%s/ws", dir);
    snprintf(home, sizeof home, "%s/loomhome", dir);
    snprintf(uhome, sizeof uhome, "%s/userhome", dir);
    snprintf(plug, sizeof plug, "%s/plugin", dir);
    setenv("LOOM_HOME", home, 1); /* the audit log of a governance lands here */
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    tmpdir_remove(dir);
    return 0;
}

/* ---- split -------------------------------------------------------------------- */

static void split_tells_a_command_from_a_goal(void **state)
{
    (void)state;
    char *name = NULL;
    const char *args = NULL;
    assert_true(command_split("/review src/a.c  ", &name, &args));
    assert_string_equal(name, "review");
    assert_string_equal(args, "src/a.c  ");
    free(name);
    assert_true(command_split("/frontend:component", &name, &args));
    assert_string_equal(name, "frontend:component");
    assert_string_equal(args, "");
    free(name);
    assert_true(command_split("/fix\n  the bug", &name, &args));
    assert_string_equal(name, "fix");
    assert_string_equal(args, "the bug");
    free(name);
    const char *not_commands[] = {"//x", "/", "/ x", "review", "", "/etc/passwd is empty",
                                  "/a\"b", " /x"};
    for (size_t i = 0; i < sizeof not_commands / sizeof *not_commands; i++) {
        name = (char *)0x1;
        if (command_split(not_commands[i], &name, &args))
            fail_msg("'%s' is not a slash command but split as one", not_commands[i]);
        assert_null(name);
    }
    assert_false(command_split(NULL, &name, &args));
}

/* ---- words and substitution ------------------------------------------------------ */

static void words_split_like_a_shell(void **state)
{
    (void)state;
    size_t n = 0;
    char **w = command_words("  one \"two words\" 'three \"q\"' fo\\ ur \"a\\\"b\" '' ", &n);
    assert_int_equal(n, 6);
    assert_string_equal(w[0], "one");
    assert_string_equal(w[1], "two words");
    assert_string_equal(w[2], "three \"q\"");
    assert_string_equal(w[3], "fo ur");
    assert_string_equal(w[4], "a\"b");
    assert_string_equal(w[5], "");
    assert_null(w[6]);
    command_words_free(w);
    w = command_words("x 'unclosed quote", &n);
    assert_int_equal(n, 2);
    assert_string_equal(w[1], "unclosed quote");
    command_words_free(w);
    w = command_words(NULL, &n);
    assert_int_equal(n, 0);
    assert_null(w[0]);
    command_words_free(w);
}

static void substitute_fills_arguments_and_positions(void **state)
{
    (void)state;
    char *s = command_substitute("Review $ARGUMENTS: first $1, second $2, third [$3].",
                                 "  src/a.c \"two words\"  ");
    assert_string_equal(s, "Review src/a.c \"two words\": first src/a.c, second two words, third [].");
    free(s);
    s = command_substitute("All: [$ARGUMENTS] one: [$1]", "");
    assert_string_equal(s, "All: [] one: []");
    free(s);
    s = command_substitute("All: [$ARGUMENTS]", NULL);
    assert_string_equal(s, "All: []");
    free(s);
    /* $10 is $1 followed by 0; $0 and a lone $ stay text. */
    s = command_substitute("$10 $0 $ $$ $x $9", "a b c d e f g h i");
    assert_string_equal(s, "a0 $0 $ $$ $x i");
    free(s);
    s = command_substitute("first=$ARGUMENTS[0] second=$ARGUMENTS[1] none=$ARGUMENTS[7] $ARGUMENTS[x]",
                           "p q");
    assert_string_equal(s, "first=p second=q none= p q[x]");
    free(s);
}

static void arguments_a_body_does_not_use_are_appended(void **state)
{
    (void)state;
    char *s = command_substitute("Explain the code.\n\n", "src/a.c fast");
    assert_string_equal(s, "Explain the code.\n\nARGUMENTS: src/a.c fast");
    free(s);
    s = command_substitute("Explain the code.\n", "");
    assert_string_equal(s, "Explain the code.\n");
    free(s);
    s = command_substitute("", "x");
    assert_string_equal(s, "ARGUMENTS: x");
    free(s);
    s = command_substitute("Only $1.", "a b");
    assert_string_equal(s, "Only a.");
    free(s);
}

/* ---- one file --------------------------------------------------------------------- */

typedef struct warnings {
    char *v[16];
    size_t n;
} warnings;

static void collect(void *ctx, const char *msg)
{
    warnings *w = ctx;
    if (w->n < 16)
        w->v[w->n++] = strdup(msg);
}

static void warnings_free(warnings *w)
{
    for (size_t i = 0; i < w->n; i++)
        free(w->v[i]);
    w->n = 0;
}

static bool has_warning(const warnings *w, const char *needle)
{
    for (size_t i = 0; i < w->n; i++)
        if (strstr(w->v[i], needle))
            return true;
    return false;
}

static void a_file_gives_every_key(void **state)
{
    (void)state;
    warnings w = {0};
    loom_error err = {0};
    command_def *d = command_def_parse(
        "x/review.md", "review",
        "---\n"
        "description: Review a file\n"
        "argument-hint: [file] [focus]\n"
        "allowed-tools: Bash(git status:*), Bash(git diff:*) Read\n"
        "model: claude-haiku-4-5\n"
        "disable-model-invocation: true\n"
        "unknown-key: {a: 1}\n"
        "---\n"
        "Review $1.\n",
        collect, &w, &err);
    assert_non_null(d);
    assert_int_equal(w.n, 0);
    assert_string_equal(d->name, "review");
    assert_string_equal(d->description, "Review a file");
    assert_string_equal(d->argument_hint, "[file] [focus]");
    assert_non_null(d->allowed_tools);
    assert_string_equal(d->allowed_tools[0], "Bash(git status:*)");
    assert_string_equal(d->allowed_tools[1], "Bash(git diff:*)");
    assert_string_equal(d->allowed_tools[2], "Read");
    assert_null(d->allowed_tools[3]);
    assert_string_equal(d->model, "claude-haiku-4-5");
    assert_true(d->disable_model_invocation);
    assert_string_equal(d->body, "Review $1.\n");
    assert_string_equal(d->path, "x/review.md");
    command_def_free(d);

    /* A list of tools, a flow-sequence hint, a quoted boolean. */
    d = command_def_parse("y.md", "y",
                          "---\nallowed-tools:\n  - Read\n  - \"Bash(git add:*), Bash(git commit:*)\"\n"
                          "argument-hint: [message]\ndisable-model-invocation: \"false\"\n---\nGo\n",
                          collect, &w, &err);
    assert_non_null(d);
    assert_int_equal(w.n, 0);
    assert_string_equal(d->allowed_tools[0], "Read");
    assert_string_equal(d->allowed_tools[1], "Bash(git add:*)");
    assert_string_equal(d->allowed_tools[2], "Bash(git commit:*)");
    assert_string_equal(d->argument_hint, "[message]");
    assert_false(d->disable_model_invocation);
    assert_string_equal(d->description, "Go");
    command_def_free(d);
}

static void no_frontmatter_the_first_line_describes(void **state)
{
    (void)state;
    warnings w = {0};
    loom_error err = {0};
    command_def *d = command_def_parse("z.md", "z", "\n\n  # Fix the failing test  \nThen run it.\n",
                                       collect, &w, &err);
    assert_non_null(d);
    assert_string_equal(d->description, "Fix the failing test");
    assert_string_equal(d->body, "\n\n  # Fix the failing test  \nThen run it.\n");
    assert_null(d->allowed_tools);
    assert_null(d->model);
    assert_null(d->argument_hint);
    command_def_free(d);

    char long_line[400];
    memset(long_line, 'a', 300);
    strcpy(long_line + 300, "\nrest");
    d = command_def_parse("l.md", "l", long_line, collect, &w, &err);
    assert_int_equal(strlen(d->description), COMMAND_DESC_FROM_BODY);
    command_def_free(d);
    /* Cut by characters, never inside one. */
    loom_str u = LOOM_STR_INIT;
    for (int i = 0; i < 150; i++)
        str_puts(&u, "é");
    d = command_def_parse("u.md", "u", u.ptr, collect, &w, &err);
    assert_int_equal(strlen(d->description), 2 * COMMAND_DESC_FROM_BODY);
    command_def_free(d);
    str_free(&u);
    d = command_def_parse("e.md", "e", "", collect, &w, &err);
    assert_non_null(d);
    assert_string_equal(d->description, "");
    command_def_free(d);
    assert_int_equal(w.n, 0);
}

static void a_key_of_the_wrong_type_is_warned_and_dropped(void **state)
{
    (void)state;
    warnings w = {0};
    loom_error err = {0};
    command_def *d = command_def_parse("/p/bad.md", "bad",
                                       "---\n"
                                       "description: [1, 2]\n"
                                       "model: {name: x}\n"
                                       "argument-hint: {a: b}\n"
                                       "allowed-tools: 42\n"
                                       "disable-model-invocation: maybe\n"
                                       "---\n"
                                       "The body line\n",
                                       collect, &w, &err);
    assert_non_null(d);
    assert_int_equal(w.n, 5);
    assert_true(has_warning(&w, "/p/bad.md: key 'model': must be a string"));
    assert_true(has_warning(&w, "/p/bad.md: key 'description': must be a string"));
    assert_true(has_warning(&w, "/p/bad.md: key 'argument-hint': must be a string"));
    assert_true(has_warning(&w, "/p/bad.md: key 'allowed-tools': must be a string or a list"));
    assert_true(has_warning(&w, "/p/bad.md: key 'disable-model-invocation': must be true or false"));
    assert_null(d->model);
    assert_null(d->argument_hint);
    assert_null(d->allowed_tools);  /* fail closed: nothing pre-approved */
    assert_false(d->disable_model_invocation);
    assert_string_equal(d->description, "The body line");
    command_def_free(d);
    warnings_free(&w);

    /* One bad rule among good ones: named, dropped, the others kept. */
    d = command_def_parse("r.md", "r", "---\nallowed-tools: Read, Bash(), Grep\n---\nx\n", collect,
                          &w, &err);
    assert_non_null(d);
    assert_int_equal(w.n, 1);
    assert_true(has_warning(&w, "r.md: key 'allowed-tools': "));
    assert_true(has_warning(&w, "grants nothing"));
    assert_string_equal(d->allowed_tools[0], "Read");
    assert_string_equal(d->allowed_tools[1], "Grep");
    assert_null(d->allowed_tools[2]);
    command_def_free(d);
    warnings_free(&w);

    d = command_def_parse("m.md", "m", "---\nmodel: has blanks in it\n---\nx\n", collect, &w, &err);
    assert_null(d->model);
    assert_true(has_warning(&w, "m.md: key 'model': a model name"));
    command_def_free(d);
    warnings_free(&w);
}

static void bad_yaml_skips_the_command_naming_file_and_line(void **state)
{
    (void)state;
    warnings w = {0};
    loom_error err = {0};
    command_def *d = command_def_parse("/w/broken.md", "broken",
                                       "---\ndescription: ok\n  bad: [unclosed\n---\nbody\n",
                                       collect, &w, &err);
    assert_null(d);
    assert_int_equal(err.code, LOOM_ERR_CONFIG);
    assert_non_null(strstr(err.message, "/w/broken.md: "));
    assert_non_null(strstr(err.message, "line"));
    d = command_def_parse("/w/open.md", "open", "---\ndescription: never closed\nbody\n", collect,
                          &w, &err);
    assert_null(d);
    assert_non_null(strstr(err.message, "/w/open.md: "));
    assert_int_equal(w.n, 0);
}

/* Claude Code's documentation writes these; strict YAML refuses both. */
static void claude_codes_loose_spellings_load(void **state)
{
    (void)state;
    warnings w = {0};
    loom_error err = {0};
    command_def *d = command_def_parse("c.md", "c",
                                       "---\r\n"
                                       "argument-hint: [pr-number] [priority] [assignee]\r\n"
                                       "description: Fix: the issue's thing\r\n"
                                       "allowed-tools: Bash(git status:*)\r\n"
                                       "---\r\n"
                                       "Fix #$1 with priority $2.\r\n",
                                       collect, &w, &err);
    if (!d)
        fail_msg("the loose frontmatter was refused: %s", err.message);
    assert_string_equal(d->argument_hint, "[pr-number] [priority] [assignee]");
    assert_string_equal(d->description, "Fix: the issue's thing");
    assert_string_equal(d->allowed_tools[0], "Bash(git status:*)");
    assert_string_equal(d->body, "Fix #$1 with priority $2.\r\n");
    assert_int_equal(w.n, 0);
    command_def_free(d);
}

static void names_come_from_the_folders(void **state)
{
    (void)state;
    loom_str why = LOOM_STR_INIT;
    char *n = command_name_for("review.md", NULL, &why);
    assert_string_equal(n, "review");
    free(n);
    n = command_name_for("frontend/component.md", NULL, &why);
    assert_string_equal(n, "frontend:component");
    free(n);
    n = command_name_for("deploy.md", "ops", &why);
    assert_string_equal(n, "ops:deploy");
    free(n);
    n = command_name_for("a/b.md", "ops", &why);
    assert_string_equal(n, "ops:a:b");
    free(n);
    const char *bad[] = {"has space.md", "a/.hidden.md", ".md", "x.txt", "a//b.md", "\xc3\xa9.md"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        str_clear(&why);
        n = command_name_for(bad[i], NULL, &why);
        if (n)
            fail_msg("'%s' gave the command name '%s'", bad[i], n);
        assert_true(why.len > 0);
    }
    str_free(&why);
}

/* ---- the catalog ------------------------------------------------------------------- */

static ext_source_opts opts(bool trusted)
{
    static ext_plugin_root p = {.name = "ops", .root = NULL};
    p.root = plug;
    ext_source_opts o = {.cwd = ws, .home = home, .user_home = uhome, .trusted = trusted,
                         .claude_compat = true, .plugins = &p, .n_plugins = 1};
    return o;
}

static bool catalog_warns(const command_catalog *c, const char *a, const char *b)
{
    for (size_t i = 0; i < command_catalog_warning_count(c); i++) {
        const char *w = command_catalog_warning(c, i);
        if (strstr(w, a) && (!b || strstr(w, b)))
            return true;
    }
    return false;
}

/* Loom's own /init and /review: in every catalog, the user's to type (not
 * the model's), granting only what they need; /review's git lines expand
 * through the pipeline like any command's. */
static void builtins_are_in_every_catalog(void **state)
{
    (void)state;
    command_catalog *c = command_catalog_from_dirs(NULL, NULL);
    assert_non_null(c);
    assert_int_equal(command_catalog_warning_count(c), 0);
    const command_def *init = command_catalog_find(c, "init");
    const command_def *review = command_catalog_find(c, "review");
    assert_non_null(init);
    assert_non_null(review);
    assert_int_equal(init->scope, EXT_SCOPE_BUILTIN);
    assert_string_equal(ext_scope_name(init->scope), "built-in");
    assert_true(init->disable_model_invocation);
    assert_true(review->disable_model_invocation);
    assert_string_equal(init->allowed_tools[0], "Edit(./AGENTS.md)");
    assert_null(init->allowed_tools[1]);
    assert_string_equal(review->allowed_tools[0], "Bash(git status:*)");
    assert_string_equal(review->allowed_tools[1], "Bash(git diff:*)");
    assert_null(review->allowed_tools[2]);
    assert_non_null(strstr(init->body, "AGENTS.md"));
    assert_non_null(strstr(review->body, "!`git diff HEAD`"));
    char *text = command_substitute(review->body, "focus on the parser");
    assert_non_null(strstr(text, "focus on the parser"));
    free(text);
    command_catalog_free(c);
}

static void sources_precedence_and_namespaces(void **state)
{
    (void)state;
    tmpdir_write(uhome, ".claude/commands/review.md", "user claude review\n");
    tmpdir_write(uhome, ".claude/commands/mine.md", "---\ndescription: mine\n---\nmy own\n");
    tmpdir_write(home, "commands/review.md", "loom home review\n");
    tmpdir_write(plug, "commands/deploy.md", "deploy it\n");
    tmpdir_write(plug, "commands/db/migrate.md", "migrate\n");
    tmpdir_write(ws, ".claude/commands/review.md", "project claude review\n");
    tmpdir_write(ws, ".claude/commands/frontend/x.md", "---\ndescription: the x\n---\nx body\n");
    tmpdir_write(ws, ".loom/commands/review.md", "---\ndescription: project review\n---\nRR $1\n");
    tmpdir_write(ws, ".loom/commands/notes.txt", "not a command\n");
    tmpdir_write(ws, ".loom/commands/help.md", "a built-in's name: the REPL decides\n");

    ext_source_opts o = opts(true);
    loom_error err = {0};
    command_catalog *c = command_catalog_load(&o, &err);
    assert_non_null(c);
    /* The folders' six and the built-in init (review is the project's). */
    assert_int_equal(command_catalog_count(c), 7);
    /* Listed by name. */
    const char *names[] = {"frontend:x", "help",       "init",  "mine",
                           "ops:db:migrate", "ops:deploy", "review"};
    size_t k = 0;
    for (size_t i = 0; i < command_catalog_count(c); i++) {
        const char *n = command_catalog_at(c, i)->name;
        if (k < 7 && strcmp(n, names[k]) == 0)
            k++;
    }
    assert_int_equal(k, 7);
    const command_def *r = command_catalog_find(c, "review");
    assert_non_null(r);
    assert_string_equal(r->description, "project review");
    assert_int_equal(r->scope, EXT_SCOPE_PROJECT);
    assert_non_null(strstr(r->path, "/ws/.loom/commands/review.md"));
    const command_def *x = command_catalog_find(c, "frontend:x");
    assert_non_null(x);
    assert_string_equal(x->body, "x body\n");
    const command_def *dep = command_catalog_find(c, "ops:deploy");
    assert_non_null(dep);
    assert_int_equal(dep->scope, EXT_SCOPE_PLUGIN);
    assert_string_equal(dep->plugin, "ops");
    assert_non_null(command_catalog_find(c, "ops:db:migrate"));
    const command_def *mine = command_catalog_find(c, "MINE");
    assert_non_null(mine);
    assert_int_equal(mine->scope, EXT_SCOPE_USER);
    assert_null(mine->plugin);
    assert_non_null(command_catalog_find(c, "help"));
    assert_null(command_catalog_find(c, "notes"));
    assert_null(command_catalog_find(c, "deploy")); /* a plugin's is always namespaced */
    assert_int_equal(command_catalog_warning_count(c), 0);
    command_catalog_free(c);

    /* A project file in a folder named like a plugin does not replace the
     * plugin's command of that name: it is skipped with a warning. */
    tmpdir_write(ws, ".loom/commands/ops/deploy.md", "the repository's deploy\n");
    c = command_catalog_load(&o, &err);
    assert_string_equal(command_catalog_find(c, "ops:deploy")->body, "deploy it\n");
    assert_int_equal(command_catalog_warning_count(c), 1);
    assert_non_null(strstr(command_catalog_warning(c, 0), "is the plugin ops's command"));
    command_catalog_free(c);

    /* compat off: the .claude folders are not read. */
    o.claude_compat = false;
    c = command_catalog_load(&o, &err);
    assert_null(command_catalog_find(c, "mine"));
    assert_null(command_catalog_find(c, "frontend:x"));
    assert_string_equal(command_catalog_find(c, "review")->description, "project review");
    command_catalog_free(c);
}

static void an_untrusted_workspace_is_skipped_with_a_notice(void **state)
{
    (void)state;
    tmpdir_write(ws, ".loom/commands/review.md", "project\n");
    tmpdir_write(ws, ".claude/commands/p.md", "project claude\n");
    tmpdir_write(home, "commands/review.md", "from the loom home\n");
    ext_source_opts o = opts(false);
    loom_error err = {0};
    command_catalog *c = command_catalog_load(&o, &err);
    const command_def *r = command_catalog_find(c, "review");
    assert_non_null(r);
    assert_string_equal(r->body, "from the loom home\n");
    assert_null(command_catalog_find(c, "p"));
    assert_true(catalog_warns(c, "ws/.loom/commands", "not trusted"));
    assert_true(catalog_warns(c, "ws/.claude/commands", "not trusted"));
    command_catalog_free(c);
}

static void a_malformed_file_warns_and_the_rest_load(void **state)
{
    (void)state;
    tmpdir_write(ws, ".loom/commands/good.md", "---\ndescription: good\n---\nok\n");
    tmpdir_write(ws, ".loom/commands/broken.md", "---\ndescription: [unclosed\n---\nx\n");
    tmpdir_write(ws, ".loom/commands/typed.md", "---\nmodel: 7\n---\ntyped body\n");
    tmpdir_write(ws, ".loom/commands/bad name.md", "x\n");
    loom_str big = LOOM_STR_INIT;
    while (big.len <= COMMAND_FILE_MAX)
        str_puts(&big, "0123456789abcdef0123456789abcdef\n");
    tmpdir_write(ws, ".loom/commands/big.md", big.ptr);
    str_free(&big);
    char fifo[600];
    snprintf(fifo, sizeof fifo, "%s/.loom/commands/fifo.md", ws);
    assert_int_equal(mkfifo(fifo, 0644), 0);
    tmpdir_write(ws, ".loom/commands/nul.md", "x");
    char nulpath[600];
    snprintf(nulpath, sizeof nulpath, "%s/.loom/commands/nul.md", ws);
    loom_error err = {0};
    assert_int_equal(file_write_atomic(nulpath, "a\0b", 3, 0644, &err), 0);

    ext_source_opts o = opts(true);
    command_catalog *c = command_catalog_load(&o, &err);
    assert_non_null(command_catalog_find(c, "good"));
    assert_null(command_catalog_find(c, "broken"));
    assert_null(command_catalog_find(c, "big"));
    assert_null(command_catalog_find(c, "fifo"));
    assert_null(command_catalog_find(c, "nul"));
    const command_def *t = command_catalog_find(c, "typed");
    assert_non_null(t);
    assert_null(t->model);
    assert_true(catalog_warns(c, "broken.md: line", "skipped"));
    assert_true(catalog_warns(c, "typed.md: key 'model': must be a string", NULL));
    assert_true(catalog_warns(c, "bad name.md: 'bad name' is not a command name", "skipped"));
    assert_true(catalog_warns(c, "big.md: larger than 256 KiB", "skipped"));
    assert_true(catalog_warns(c, "fifo.md: not a regular file", "skipped"));
    assert_true(catalog_warns(c, "nul.md: holds a NUL byte", "skipped"));
    command_catalog_free(c);
}

static void a_repositorys_symlinks_stay_inside_its_folder(void **state)
{
    (void)state;
    tmpdir_write(dir, "outside/secret.md", "a file outside the repository\n");
    tmpdir_write(dir, "outside/sub/inner.md", "inner\n");
    tmpdir_write(ws, ".loom/commands/real.md", "real\n");
    char link[600], target[600];
    snprintf(link, sizeof link, "%s/.loom/commands/leak.md", ws);
    snprintf(target, sizeof target, "%s/outside/secret.md", dir);
    assert_int_equal(symlink(target, link), 0);
    snprintf(link, sizeof link, "%s/.loom/commands/leakdir", ws);
    snprintf(target, sizeof target, "%s/outside/sub", dir);
    assert_int_equal(symlink(target, link), 0);
    snprintf(link, sizeof link, "%s/.loom/commands/alias.md", ws);
    assert_int_equal(symlink("real.md", link), 0);
    /* A user's folder may link wherever its owner likes. */
    snprintf(link, sizeof link, "%s/commands/mine.md", home);
    tmpdir_write(home, "commands/placeholder.md", "p\n");
    snprintf(target, sizeof target, "%s/outside/secret.md", dir);
    assert_int_equal(symlink(target, link), 0);

    ext_source_opts o = opts(true);
    loom_error err = {0};
    command_catalog *c = command_catalog_load(&o, &err);
    assert_non_null(command_catalog_find(c, "real"));
    assert_non_null(command_catalog_find(c, "alias"));
    assert_null(command_catalog_find(c, "leak"));
    assert_null(command_catalog_find(c, "leakdir:inner"));
    assert_true(catalog_warns(c, "leak.md: a symlink leading out of the commands folder", "skipped"));
    assert_true(catalog_warns(c, "leakdir: a symlink leading out", NULL));
    assert_non_null(command_catalog_find(c, "mine"));
    command_catalog_free(c);

    /* The project's commands folder itself linking out of the project. */
    char cmds[600];
    snprintf(cmds, sizeof cmds, "%s/.claude/commands", ws);
    tmpdir_write(ws, ".claude/placeholder", "x");
    snprintf(target, sizeof target, "%s/outside", dir);
    assert_int_equal(symlink(target, cmds), 0);
    c = command_catalog_load(&o, &err);
    assert_null(command_catalog_find(c, "secret"));
    assert_true(catalog_warns(c, "/ws/.claude/commands: leads out of the workspace", "skipped"));
    assert_non_null(command_catalog_find(c, "real"));
    command_catalog_free(c);
    /* A link to a folder inside the project is fine. */
    assert_int_equal(unlink(cmds), 0);
    tmpdir_write(ws, "shared/cmds/inproj.md", "in the project\n");
    snprintf(target, sizeof target, "%s/shared/cmds", ws);
    assert_int_equal(symlink(target, cmds), 0);
    c = command_catalog_load(&o, &err);
    assert_non_null(command_catalog_find(c, "inproj"));
    command_catalog_free(c);
}

static void deep_trees_stop_with_a_warning(void **state)
{
    (void)state;
    char rel[400] = ".loom/commands";
    for (int i = 0; i < COMMAND_MAX_DEPTH + 2; i++)
        strcat(rel, "/d");
    strcat(rel, "/deep.md");
    tmpdir_write(ws, rel, "deep\n");
    tmpdir_write(ws, ".loom/commands/d/shallow.md", "shallow\n");
    ext_source_opts o = opts(true);
    loom_error err = {0};
    command_catalog *c = command_catalog_load(&o, &err);
    assert_non_null(command_catalog_find(c, "d:shallow"));
    assert_true(catalog_warns(c, "folders deep; skipped", NULL));
    for (size_t i = 0; i < command_catalog_count(c); i++)
        assert_null(strstr(command_catalog_at(c, i)->name, "deep"));
    command_catalog_free(c);
}

/* ---- expansion ---------------------------------------------------------------------- */

static int echo_bash(const json_t *input, tool_ctx *ctx, tool_result *out)
{
    (void)ctx;
    const char *cmd = json_string_value(json_object_get(input, "command"));
    if (strcmp(cmd, "fail") == 0)
        return tool_error(out, "Exit code 1\nfail: not found");
    str_printf(&out->text, "ran[%s]\n", cmd);
    return 0;
}

static int fake_read(const json_t *input, tool_ctx *ctx, tool_result *out)
{
    (void)ctx;
    const char *p = json_string_value(json_object_get(input, "file_path"));
    char *text = NULL;
    size_t len = 0;
    loom_error err;
    if (file_read_all(p, &text, &len, &err) != 0)
        return tool_error(out, "cannot read %s", p);
    str_append(&out->text, text, len);
    free(text);
    return 0;
}

static const tool_def bash_def = {.name = "Bash", .description = "runs",
                                  .input_schema = "{\"type\":\"object\",\"properties\":{\"command\":"
                                                  "{\"type\":\"string\"}},\"required\":[\"command\"]}",
                                  .run = echo_bash};
static const tool_def read_def = {.name = "Read", .description = "reads", .read_only = true,
                                  .concurrency_safe = true,
                                  .input_schema = "{\"type\":\"object\",\"properties\":{\"file_path\":"
                                                  "{\"type\":\"string\"}},\"required\":[\"file_path\"]}",
                                  .run = fake_read};

static tool_registry *fake_registry(void)
{
    tool_registry *reg = tool_registry_new();
    loom_error err;
    assert_int_equal(tool_registry_add(reg, &bash_def, &err), 0);
    assert_int_equal(tool_registry_add(reg, &read_def, &err), 0);
    return reg;
}

typedef struct events {
    int started, finished, failed;
} events;

static void count_event(void *ctx, loom_event_type type, json_t *payload)
{
    events *e = ctx;
    if (type == LOOM_EV_TOOL_STARTED)
        e->started++;
    else if (type == LOOM_EV_TOOL_FINISHED)
        e->finished++;
    else if (type == LOOM_EV_TOOL_FAILED)
        e->failed++;
    json_decref(payload);
}

static command_def *def_of(const char *name, const char *text)
{
    loom_error err = {0};
    command_def *d = command_def_parse("t.md", name, text, NULL, NULL, &err);
    if (!d)
        fail_msg("%s", err.message);
    return d;
}

static void expand_runs_commands_and_includes_files(void **state)
{
    (void)state;
    tmpdir_write(ws, "src/a.c", "int main(void) { return 0; }\n");
    tmpdir_write(ws, "fence.md", "has ``` inside\n");
    tool_registry *reg = fake_registry();
    events ev = {0};
    tool_ctx ctx = {.cwd = ws, .emit = count_event, .emit_ctx = &ev};
    command_def *d = def_of("review",
                            "Review $1 ($ARGUMENTS).\n"
                            "Status: !`git status --short` and !`fail` [!`pwd`]\n"
                            "Not a command: x!`no` or !`` or !`unclosed\n"
                            "Read @$1, then @src/a.c. again and @fence.md\n"
                            "Mail me at a@b.c or @nobody or email@src/a.c\n");
    loom_str out = LOOM_STR_INIT;
    loom_error err = {0};
    assert_int_equal(command_expand(d, "src/a.c", reg, &ctx, &out, &err), 0);
    const char *s = str_cstr(&out);
    assert_non_null(strstr(s, "Review src/a.c (src/a.c).\n"));
    assert_non_null(strstr(s, "Status: ran[git status --short] and Exit code 1\nfail: not found [ran[pwd]]\n"));
    assert_non_null(strstr(s, "Not a command: x!`no` or !`` or !`unclosed\n"));
    assert_non_null(strstr(s, "Read @src/a.c, then @src/a.c. again and @fence.md\n"
                              "\nContents of src/a.c:\n```\nint main(void) { return 0; }\n```\n"));
    /* The same file once; a fence longer than any run inside the file. */
    const char *first = strstr(s, "Contents of src/a.c");
    assert_null(strstr(first + 1, "Contents of src/a.c"));
    assert_non_null(strstr(s, "\nContents of fence.md:\n````\nhas ``` inside\n````\n"));
    assert_non_null(strstr(s, "Mail me at a@b.c or @nobody or email@src/a.c\n"));
    assert_null(strstr(s, "Contents of nobody"));
    assert_int_equal(ev.started, 5);
    assert_int_equal(ev.finished, 4);
    assert_int_equal(ev.failed, 1);
    str_free(&out);
    command_def_free(d);
    tool_registry_free(reg);
}

/* A command's output is not scanned for @words; its length is capped. */
static void command_output_is_capped_and_never_includes(void **state)
{
    (void)state;
    tmpdir_write(ws, "src/a.c", "SECRET-ish\n");
    tool_registry *reg = fake_registry();
    tool_ctx ctx = {.cwd = ws};
    loom_str body = LOOM_STR_INIT;
    str_puts(&body, "!`echo @src/a.c` and !`");
    for (int i = 0; i < COMMAND_OUTPUT_CAP; i++)
        str_putc(&body, 'x');
    str_puts(&body, "`\n");
    command_def *d = def_of("c", body.ptr);
    loom_str out = LOOM_STR_INIT;
    loom_error err = {0};
    assert_int_equal(command_expand(d, NULL, reg, &ctx, &out, &err), 0);
    assert_non_null(strstr(out.ptr, "ran[echo @src/a.c]"));
    assert_null(strstr(out.ptr, "SECRET-ish"));
    assert_true(out.len < COMMAND_OUTPUT_CAP + 2000);
    assert_non_null(strstr(out.ptr, "cut"));
    str_free(&out);
    str_free(&body);
    command_def_free(d);
    tool_registry_free(reg);
}

static governance *make_gov(const char *settings_json)
{
    json_t *user = json_loads(settings_json, 0, NULL);
    assert_non_null(user);
    governance_settings gs = {.user = user, .mode = "default", .interactive = false,
                              .trust = GOVERNANCE_TRUSTED};
    loom_error err = {0};
    governance *g = governance_new(ws, "cmd-session", NULL, &gs, &err);
    json_decref(user);
    if (!g)
        fail_msg("%s", err.message);
    return g;
}

static void governance_decides_and_grants_count(void **state)
{
    (void)state;
    tmpdir_write(ws, "ok.txt", "fine to read\n");
    tmpdir_write(ws, "secret.txt", "do not read\n");
    tool_registry *reg = fake_registry();
    governance *g = make_gov("{\"permissions\":{\"deny\":[\"Bash(git push:*)\",\"Read(./secret.txt)\"]}}");
    tool_ctx ctx = {.cwd = ws, .gov = g};
    loom_error err = {0};

    /* Headless default mode, no grant: a command that is not plainly
     * read-only is denied and its output replaced by the denial (git
     * status is read-only: it runs without a grant). */
    command_def *plain = def_of("plain", "S: !`npm run build`\nG: !`git status`\n");
    loom_str out = LOOM_STR_INIT;
    assert_int_equal(command_expand(plain, "", reg, &ctx, &out, &err), 0);
    assert_null(strstr(out.ptr, "ran[npm run build]"));
    assert_non_null(strstr(out.ptr, "S: "));
    assert_non_null(strstr(out.ptr, "denied"));
    assert_non_null(strstr(out.ptr, "G: ran[git status]\n"));
    str_clear(&out);

    /* The command's allowed-tools let it run; the deny rule still holds
     * over a grant that covers it; a denied read leaves its denial. */
    command_def *granted = def_of("granted",
                                  "---\nallowed-tools: Bash(npm run:*), Bash(git push:*)\n---\n"
                                  "S: !`npm run build`\nP: !`git push origin main`\n"
                                  "Files: @ok.txt @secret.txt\n");
    assert_int_equal(command_expand(granted, "", reg, &ctx, &out, &err), 0);
    assert_non_null(strstr(out.ptr, "S: ran[npm run build]\n"));
    assert_null(strstr(out.ptr, "ran[git push"));
    assert_non_null(strstr(out.ptr, "P: "));
    assert_non_null(strstr(out.ptr, "denied"));
    assert_non_null(strstr(out.ptr, "fine to read"));
    assert_null(strstr(out.ptr, "do not read"));
    assert_non_null(strstr(out.ptr, "(@secret.txt was not included: "));
    /* The grant is the run's now, named by the command. */
    rule_match m;
    json_t *in = json_pack("{s:s}", "command", "npm run test");
    assert_true(governance_grant_allows(g, "Bash", in, ws, &m));
    json_decref(in);
    str_clear(&out);

    /* Grants lapse at run end: the plain command is denied again. */
    governance_grants_clear(g);
    assert_int_equal(command_expand(plain, "", reg, &ctx, &out, &err), 0);
    assert_null(strstr(out.ptr, "ran[npm run build]"));
    str_free(&out);
    command_def_free(plain);
    command_def_free(granted);
    governance_free(g);
    tool_registry_free(reg);
}

static void a_cancelled_run_sends_nothing(void **state)
{
    (void)state;
    tool_registry *reg = fake_registry();
    loom_cancel cancel = 1; /* base/cancel.h: nonzero is a cancel */
    tool_ctx ctx = {.cwd = ws, .cancel = &cancel};
    command_def *d = def_of("c", "!`git status`\n");
    loom_str out = LOOM_STR_INIT;
    loom_error err = {0};
    assert_int_equal(command_expand(d, "", reg, &ctx, &out, &err), -1);
    assert_int_equal(err.code, LOOM_ERR_RUN_CANCELLED);
    assert_int_equal(out.len, 0);
    assert_int_equal(command_expand(NULL, "", reg, &ctx, &out, &err) < 0, 1);
    command_def_free(d);
    tool_registry_free(reg);
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

int main(void)
{
    const struct CMUnitTest tests[] = {
        T(split_tells_a_command_from_a_goal),
        T(words_split_like_a_shell),
        T(substitute_fills_arguments_and_positions),
        T(arguments_a_body_does_not_use_are_appended),
        T(a_file_gives_every_key),
        T(no_frontmatter_the_first_line_describes),
        T(a_key_of_the_wrong_type_is_warned_and_dropped),
        T(bad_yaml_skips_the_command_naming_file_and_line),
        T(claude_codes_loose_spellings_load),
        T(names_come_from_the_folders),
        T(builtins_are_in_every_catalog),
        T(sources_precedence_and_namespaces),
        T(an_untrusted_workspace_is_skipped_with_a_notice),
        T(a_malformed_file_warns_and_the_rest_load),
        T(a_repositorys_symlinks_stay_inside_its_folder),
        T(deep_trees_stop_with_a_warning),
        T(expand_runs_commands_and_includes_files),
        T(command_output_is_capped_and_never_includes),
        T(governance_decides_and_grants_count),
        T(a_cancelled_run_sends_nothing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
