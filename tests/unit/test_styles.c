/* test_styles.c — output styles (ext/styles/styles.h) and the static
 * system prompt's style section (context/system_prompt.h): the three
 * built-ins, a style file's keys and defaults, the sources and which wins
 * (~/.claude < ~/.loom < plugins < .claude < .loom), a file replacing a
 * built-in, an untrusted workspace's files skipped with a notice, plugin
 * names, malformed files as warnings naming the file while the rest load,
 * and the prompt each style makes (the default byte for byte today's). */
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

#include "api/internal.h"
#include "base/fileio.h"
#include "base/str.h"
#include "loom.h"
#include "context/system_prompt.h"
#include "ext/styles/styles.h"
#include "tmpdir.h"

static char dir[256]; /* ws/ the workspace, home/ the Loom home, user/ $HOME, plug/ a plugin */
static char ws[300], home[300], user[300], plug[300];

static int setup(void **state)
{
    (void)state;
    if (tmpdir_make(dir, sizeof dir, "loom-styles", false) != 0)
        return -1;
    snprintf(ws, sizeof ws, "%s/ws", dir);
    snprintf(home, sizeof home, "%s/home", dir);
    snprintf(user, sizeof user, "%s/user", dir);
    snprintf(plug, sizeof plug, "%s/plug", dir);
    loom_error err;
    return file_mkdirs(ws, 0700, &err) == 0 && file_mkdirs(home, 0700, &err) == 0 &&
                   file_mkdirs(user, 0700, &err) == 0
               ? 0
               : -1;
}

static int teardown(void **state)
{
    (void)state;
    tmpdir_remove(dir);
    return 0;
}

static ext_source_opts opts(bool trusted)
{
    return (ext_source_opts){.cwd = ws, .home = home, .user_home = user, .trusted = trusted,
                             .claude_compat = true};
}

/* Every warning of the set, one a line. */
static char *all_warnings(const style_set *s)
{
    loom_str w = LOOM_STR_INIT;
    for (size_t i = 0; i < style_set_warning_count(s); i++) {
        str_puts(&w, style_set_warning(s, i));
        str_putc(&w, '\n');
    }
    return str_steal(&w);
}

/* The warnings name the file and the problem: needle must be among them. */
static void expect_warning(const char *all, const char *needle)
{
    if (!strstr(all, needle))
        fail_msg("no warning saying \"%s\"; the warnings were:\n%s", needle, all);
}

/* ---- built-ins ------------------------------------------------------------------ */

static void test_builtins(void **state)
{
    (void)state;
    ext_source_opts o = opts(true);
    loom_error err = {0};
    style_set *s = style_set_load(&o, &err);
    assert_non_null(s);
    assert_int_equal(style_set_count(s), 3);
    assert_int_equal(style_set_warning_count(s), 0);
    const output_style *d = style_set_at(s, 0), *e = style_set_at(s, 1), *l = style_set_at(s, 2);
    assert_string_equal(d->name, "default");
    assert_string_equal(e->name, "explanatory");
    assert_string_equal(l->name, "learning");
    assert_null(d->body); /* the default is Loom's own wording */
    assert_true(d->keep_coding_instructions && e->keep_coding_instructions &&
                l->keep_coding_instructions);
    assert_string_equal(e->source, "built-in");
    assert_non_null(strstr(e->body, "Insight"));
    assert_non_null(strstr(l->body, "TODO(human)"));
    assert_true(*d->description && *e->description && *l->description);
    /* Found by name whatever its case (Claude Code's settings say "Explanatory"). */
    assert_ptr_equal(style_set_find(s, "Explanatory"), e);
    assert_ptr_equal(style_set_find(s, "LEARNING"), l);
    assert_null(style_set_find(s, "pirate"));
    assert_null(style_set_find(s, NULL));
    style_set_free(s);

    /* No sources at all: the built-ins alone. */
    s = style_set_load(NULL, &err);
    assert_int_equal(style_set_count(s), 3);
    style_set_free(s);
}

/* ---- one file --------------------------------------------------------------------- */

static void test_file_keys_and_defaults(void **state)
{
    (void)state;
    tmpdir_write(home, "output-styles/pirate.md",
                 "---\nname: Pirate Talk\ndescription: Arr\nkeep-coding-instructions: true\n"
                 "unknown-key: ignored\n---\n\n\n# Pirate\nTalk like a pirate.\n\n");
    tmpdir_write(home, "output-styles/terse.md", "Answer in one line.\n");
    tmpdir_write(home, "output-styles/quoted.md",
                 "---\ndescription: q\nkeep-coding-instructions: \"false\"\n---\nBe calm.\n");
    tmpdir_write(home, "output-styles/notes.txt", "not a style\n");
    tmpdir_write(home, "output-styles/.hidden.md", "---\nname: hidden\n---\nx\n");
    ext_source_opts o = opts(true);
    loom_error err = {0};
    style_set *s = style_set_load(&o, &err);
    char *w = all_warnings(s);
    if (*w)
        fail_msg("well-formed style files gave warnings:\n%s", w);
    assert_int_equal(style_set_count(s), 6);
    const output_style *p = style_set_find(s, "pirate talk");
    assert_non_null(p);
    assert_string_equal(p->name, "Pirate Talk");
    assert_string_equal(p->description, "Arr");
    assert_true(p->keep_coding_instructions);
    /* The body without the blank lines around it. */
    assert_string_equal(p->body, "# Pirate\nTalk like a pirate.");
    assert_non_null(strstr(p->source, "/home/output-styles/pirate.md"));
    /* No frontmatter: the name is the file's stem, no description, the
     * coding rules are dropped (Claude Code's default for a custom style). */
    const output_style *t = style_set_find(s, "terse");
    assert_non_null(t);
    assert_string_equal(t->description, "");
    assert_false(t->keep_coding_instructions);
    assert_string_equal(t->body, "Answer in one line.");
    const output_style *q = style_set_find(s, "quoted");
    assert_non_null(q);
    assert_false(q->keep_coding_instructions);
    assert_null(style_set_find(s, "hidden"));
    assert_null(style_set_find(s, "notes"));
    /* The files' styles follow the built-ins, by name. */
    assert_string_equal(style_set_at(s, 3)->name, "Pirate Talk");
    assert_string_equal(style_set_at(s, 4)->name, "quoted");
    assert_string_equal(style_set_at(s, 5)->name, "terse");
    free(w);
    style_set_free(s);
}

/* ---- sources and precedence -------------------------------------------------------- */

static void test_precedence(void **state)
{
    (void)state;
    tmpdir_write(user, ".claude/output-styles/a.md", "from ~/.claude\n");
    tmpdir_write(user, ".claude/output-styles/b.md", "b from ~/.claude\n");
    tmpdir_write(home, "output-styles/a.md", "from ~/.loom\n");
    tmpdir_write(ws, ".claude/output-styles/a.md", "from .claude\n");
    tmpdir_write(ws, ".claude/output-styles/c.md", "c from .claude\n");
    tmpdir_write(ws, ".loom/output-styles/a.md", "from .loom\n");
    ext_source_opts o = opts(true);
    loom_error err = {0};
    style_set *s = style_set_load(&o, &err);
    assert_string_equal(style_set_find(s, "a")->body, "from .loom");
    assert_string_equal(style_set_find(s, "b")->body, "b from ~/.claude");
    assert_string_equal(style_set_find(s, "c")->body, "c from .claude");
    assert_int_equal(style_set_count(s), 6);
    style_set_free(s);

    /* Without Claude Code compatibility the .claude folders are not read. */
    o.claude_compat = false;
    s = style_set_load(&o, &err);
    assert_null(style_set_find(s, "b"));
    assert_null(style_set_find(s, "c"));
    assert_string_equal(style_set_find(s, "a")->body, "from .loom");
    style_set_free(s);
}

static void test_untrusted_workspace(void **state)
{
    (void)state;
    tmpdir_write(home, "output-styles/mine.md", "the user's own\n");
    tmpdir_write(ws, ".loom/output-styles/theirs.md", "the repository's\n");
    tmpdir_write(ws, ".loom/output-styles/explanatory.md", "hijacked\n");
    ext_source_opts o = opts(false);
    loom_error err = {0};
    style_set *s = style_set_load(&o, &err);
    assert_non_null(style_set_find(s, "mine"));
    assert_null(style_set_find(s, "theirs"));
    assert_non_null(strstr(style_set_find(s, "explanatory")->body, "Insight"));
    char *w = all_warnings(s);
    expect_warning(w, "skipped");
    expect_warning(w, ".loom/output-styles");
    free(w);
    style_set_free(s);
}

static void test_file_replaces_builtin(void **state)
{
    (void)state;
    tmpdir_write(ws, ".loom/output-styles/explanatory.md",
                 "---\ndescription: ours\n---\nExplain like our team does.\n");
    ext_source_opts o = opts(true);
    loom_error err = {0};
    style_set *s = style_set_load(&o, &err);
    assert_int_equal(style_set_count(s), 3);
    const output_style *e = style_set_at(s, 1); /* it keeps the built-in's place */
    assert_string_equal(e->name, "explanatory");
    assert_string_equal(e->body, "Explain like our team does.");
    assert_string_equal(e->description, "ours");
    assert_false(e->keep_coding_instructions);
    assert_ptr_equal(style_set_find(s, "explanatory"), e);
    style_set_free(s);
}

static void test_plugin_names(void **state)
{
    (void)state;
    tmpdir_write(plug, "output-styles/review.md", "Review like a hawk.\n");
    ext_plugin_root roots[] = {{.name = "hawk", .root = plug}};
    ext_source_opts o = opts(true);
    o.plugins = roots;
    o.n_plugins = 1;
    loom_error err = {0};
    style_set *s = style_set_load(&o, &err);
    assert_non_null(style_set_find(s, "hawk:review"));
    assert_null(style_set_find(s, "review"));
    style_set_free(s);

    /* A manifest naming another folder for its styles: that one is read. */
    tmpdir_write(plug, "looks/calm.md", "Stay calm.\n");
    char looks[400];
    snprintf(looks, sizeof looks, "%s/looks", plug);
    roots[0].styles = looks;
    s = style_set_load(&o, &err);
    assert_non_null(style_set_find(s, "hawk:calm"));
    style_set_free(s);
}

/* ---- malformed files --------------------------------------------------------------- */

static void test_malformed_files_warn(void **state)
{
    (void)state;
    const char *d = ".loom/output-styles";
    char rel[128];
#define PUT(name, text)                                                                      \
    do {                                                                                     \
        snprintf(rel, sizeof rel, "%s/%s", d, name);                                         \
        tmpdir_write(ws, rel, text);                                                         \
    } while (0)
    PUT("badyaml.md", "---\nname: [unclosed\n---\nbody\n");
    PUT("noclose.md", "---\nname: x\nbody without a closing line\n");
    PUT("empty.md", "---\nname: empty\n---\n\n  \n");
    PUT("badname.md", "---\nname: 42\n---\nbody\n");
    PUT("colon.md", "---\nname: \"other:thing\"\n---\nbody\n");
    PUT("badkeep.md", "---\nkeep-coding-instructions: maybe\ndescription: [1]\n---\nStill loads.\n");
    PUT("good.md", "Fine.\n");
    loom_str longdesc = LOOM_STR_INIT;
    str_puts(&longdesc, "---\ndescription: \"");
    for (int i = 0; i < OUTPUT_STYLE_DESCRIPTION_MAX; i++)
        str_puts(&longdesc, "\xc3\xa9"); /* é: two bytes each */
    str_puts(&longdesc, "\"\n---\nLong-winded.\n");
    PUT("longdesc.md", str_cstr(&longdesc));
    str_free(&longdesc);
    loom_str big = LOOM_STR_INIT;
    for (int i = 0; i < OUTPUT_STYLE_BODY_MAX / 10 + 10; i++)
        str_puts(&big, "0123456789");
    PUT("big.md", str_cstr(&big));
    str_free(&big);
    char fifo[700];
    snprintf(fifo, sizeof fifo, "%s/%s/fifo.md", ws, d);
    assert_int_equal(mkfifo(fifo, 0600), 0);
#undef PUT

    ext_source_opts o = opts(true);
    loom_error err = {0};
    style_set *s = style_set_load(&o, &err);
    char *w = all_warnings(s);
    /* Each fault is named with its file. */
    expect_warning(w, "badyaml.md: line");
    expect_warning(w, "noclose.md: ");
    expect_warning(w, "empty.md: the body is empty");
    expect_warning(w, "badname.md: key 'name'");
    expect_warning(w, "colon.md: key 'name'");
    expect_warning(w, "badkeep.md: key 'keep-coding-instructions'");
    expect_warning(w, "badkeep.md: key 'description'");
    expect_warning(w, "big.md: the body is larger than");
    expect_warning(w, "fifo.md: not a regular file");
    expect_warning(w, "longdesc.md: key 'description': longer than");
    /* The rest still load; a bad key's value is dropped, not the file. */
    assert_non_null(style_set_find(s, "good"));
    const output_style *k = style_set_find(s, "badkeep");
    assert_non_null(k);
    assert_false(k->keep_coding_instructions);
    assert_string_equal(k->description, "");
    assert_null(style_set_find(s, "empty"));
    assert_null(style_set_find(s, "other:thing"));
    assert_null(style_set_find(s, "big"));
    const output_style *ld = style_set_find(s, "longdesc");
    assert_non_null(ld);
    assert_int_equal(strlen(ld->description), OUTPUT_STYLE_DESCRIPTION_MAX);
    assert_int_equal(style_set_count(s), 6);
    free(w);
    style_set_free(s);
}

static void test_parse_direct(void **state)
{
    (void)state;
    output_style st;
    loom_error err = {0};
    assert_int_equal(output_style_parse("/x/plain.md", "Just text.", &st, NULL, NULL, &err), 0);
    assert_string_equal(st.name, "plain");
    assert_string_equal(st.source, "/x/plain.md");
    output_style_clear(&st);
    assert_int_equal(output_style_parse(NULL, "---\nname: n\n---\n", &st, NULL, NULL, &err), -1);
    assert_non_null(strstr(err.message, "(output style): the body is empty"));
    assert_null(st.name);
}

/* ---- the prompt a style makes --------------------------------------------------------- */

static void test_prompt_sections(void **state)
{
    (void)state;
    /* The default: the same bytes as the unstyled static part (the cached
     * prefix of every request does not move). */
    char *def = system_prompt_static_styled(NULL, false);
    assert_string_equal(def, system_prompt_static());
    assert_non_null(strstr(def, "then you answer briefly"));
    assert_null(strstr(def, SYSTEM_PROMPT_STYLE_HEADING));
    free(def);

    char *kept = system_prompt_static_styled("Say Insight: often.", true);
    assert_null(strstr(kept, "answer briefly"));
    assert_non_null(strstr(kept, "Read a file before you edit it"));
    assert_non_null(strstr(kept, "# Tools\n"));
    assert_non_null(strstr(kept, SYSTEM_PROMPT_STYLE_HEADING "\nSay Insight: often.\n"));
    /* The style's section comes last. */
    size_t n = strlen(kept);
    assert_string_equal(kept + n - strlen("Say Insight: often.\n"), "Say Insight: often.\n");
    free(kept);

    char *dropped = system_prompt_static_styled("Write poems.", false);
    assert_null(strstr(dropped, "Read a file before you edit it"));
    assert_null(strstr(dropped, "no unrequested features"));
    /* Honesty and the user's data are not coding rules: every style keeps them. */
    assert_non_null(strstr(dropped, "Report honestly"));
    assert_non_null(strstr(dropped, "Keep the user's data safe"));
    assert_non_null(strstr(dropped, "You are Loom"));
    free(dropped);
}

/* ---- the agent: the active style, the warning, the local setting --------------------- */

static loom_agent *agent_with(const char *style, loom_status *st)
{
    char cassette[400];
    snprintf(cassette, sizeof cassette, "%s/cassette.json", dir);
    tmpdir_write(dir, "cassette.json", "{\"turns\":[{\"text\":\"Hi.\"}]}");
    loom_config *cfg = loom_config_new();
    assert_int_equal(loom_config_set(cfg, "provider", "replay", st), 0);
    assert_int_equal(loom_config_set(cfg, "cassette", cassette, st), 0);
    assert_int_equal(loom_config_set(cfg, "cwd", ws, st), 0);
    if (style)
        assert_int_equal(loom_config_set(cfg, "output_style", style, st), 0);
    loom_agent *a = loom_agent_new(cfg, st);
    loom_config_free(cfg);
    if (!a)
        fail_msg("the agent was not made: %s", st->message);
    return a;
}

static bool agent_warned(loom_agent *a, const char *needle)
{
    for (size_t i = 0; i < json_array_size(a->warnings); i++)
        if (strstr(json_string_value(json_array_get(a->warnings, i)), needle))
            return true;
    return false;
}

static void test_agent_active_style(void **state)
{
    (void)state;
    setenv("LOOM_HOME", home, 1);
    loom_status st;
    loom_agent *a = agent_with(NULL, &st);
    assert_string_equal(a->system_static, system_prompt_static());
    loom_agent_free(a);

    a = agent_with("LEARNING", &st);
    if (!strstr(a->system_static, "TODO(human)"))
        fail_msg("the learning style's section is not in the static prompt:\n%s", a->system_static);
    assert_null(strstr(a->system_static, "then you answer briefly"));
    char *ext = loom_agent_extensions_json(a);
    assert_non_null(strstr(ext, "\"name\":\"learning\""));
    json_t *doc = json_loads(ext, 0, NULL);
    json_t *styles = json_object_get(doc, "output_styles");
    assert_int_equal(json_array_size(styles), 3);
    assert_true(json_is_true(json_object_get(json_array_get(styles, 2), "active")));
    assert_true(json_is_false(json_object_get(json_array_get(styles, 0), "active")));
    json_decref(doc);
    free(ext);
    loom_agent_free(a);

    a = agent_with("no-such-style", &st);
    assert_string_equal(a->system_static, system_prompt_static());
    if (!agent_warned(a, "output style \"no-such-style\" not found"))
        fail_msg("an unknown style name gave no warning naming it");
    loom_agent_free(a);
}

static void test_set_local_setting(void **state)
{
    (void)state;
    setenv("LOOM_HOME", home, 1);
    loom_status st;
    loom_agent *a = agent_with(NULL, &st);
    char path[700];
    snprintf(path, sizeof path, "%s/.loom/settings.local.json", ws);
    /* A missing file (and folder) is made, private. */
    assert_int_equal(loom_agent_set_local_setting(a, "outputStyle", "\"explanatory\"", &st), 0);
    struct stat sb;
    assert_int_equal(stat(path, &sb), 0);
    assert_int_equal(sb.st_mode & 0777, 0600);
    /* Other keys are kept; the key is replaced. */
    tmpdir_write(ws, ".loom/settings.local.json", "{\"permissions\": {\"allow\": [\"Read\"]}}\n");
    chmod(path, 0640);
    assert_int_equal(loom_agent_set_local_setting(a, "outputStyle", "\"learning\"", &st), 0);
    char *text = NULL;
    loom_error err;
    assert_int_equal(file_read_all(path, &text, NULL, &err), 0);
    assert_non_null(strstr(text, "\"learning\""));
    assert_non_null(strstr(text, "\"Read\""));
    free(text);
    assert_int_equal(stat(path, &sb), 0);
    assert_int_equal(sb.st_mode & 0777, 0640); /* an existing file keeps its mode */
    /* A value of the wrong type, or not JSON, is refused and nothing changes. */
    assert_int_equal(loom_agent_set_local_setting(a, "outputStyle", "5", &st), -1);
    if (!strstr(st.message, "outputStyle"))
        fail_msg("the refusal does not name the key: %s", st.message);
    assert_int_equal(loom_agent_set_local_setting(a, "outputStyle", "{nope", &st), -1);
    assert_int_equal(file_read_all(path, &text, NULL, &err), 0);
    assert_non_null(strstr(text, "\"learning\""));
    free(text);
    /* NULL removes the key. */
    assert_int_equal(loom_agent_set_local_setting(a, "outputStyle", NULL, &st), 0);
    assert_int_equal(file_read_all(path, &text, NULL, &err), 0);
    assert_null(strstr(text, "outputStyle"));
    free(text);
    /* A file that is not a settings object is left as it is. */
    tmpdir_write(ws, ".loom/settings.local.json", "not json");
    assert_int_equal(loom_agent_set_local_setting(a, "outputStyle", "\"learning\"", &st), -1);
    assert_non_null(strstr(st.message, "not changed"));
    assert_int_equal(file_read_all(path, &text, NULL, &err), 0);
    assert_string_equal(text, "not json");
    free(text);
    assert_int_equal(loom_agent_set_local_setting(NULL, "k", "1", &st), -1);
    loom_agent_free(a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_builtins, setup, teardown),
        cmocka_unit_test_setup_teardown(test_file_keys_and_defaults, setup, teardown),
        cmocka_unit_test_setup_teardown(test_precedence, setup, teardown),
        cmocka_unit_test_setup_teardown(test_untrusted_workspace, setup, teardown),
        cmocka_unit_test_setup_teardown(test_file_replaces_builtin, setup, teardown),
        cmocka_unit_test_setup_teardown(test_plugin_names, setup, teardown),
        cmocka_unit_test_setup_teardown(test_malformed_files_warn, setup, teardown),
        cmocka_unit_test(test_parse_direct),
        cmocka_unit_test(test_prompt_sections),
        cmocka_unit_test_setup_teardown(test_agent_active_style, setup, teardown),
        cmocka_unit_test_setup_teardown(test_set_local_setting, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
