/* test_skills.c — Agent Skills (ext/skills/skills.h): one SKILL.md's rules
 * (the name, the description, every optional key good and bad, the three
 * allowed-tools forms, unknown keys accepted), the catalog's sources and
 * precedence (user < plugin < project, plugins prefixed, an untrusted
 * workspace skipped with a notice, a malformed file a warning while the
 * rest load), the catalog text within its budget, the Skill tool's enum,
 * activation (the text, once, already_active, allowed-tools granted,
 * context: fork through the Agent tool, who may invoke what), paths
 * skills offered once a matching file is touched, the run report, and the
 * active text after a compaction took the activation away. */
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
#include "base/json.h"
#include "base/str.h"
#include "ext/skills/skills.h"
#include "ext/skills/skills_internal.h"
#include "governance/governance.h"
#include "tools/registry.h"
#include "tmpdir.h"

static char dir[256];
static char ws[300], home[300], uhome[300], plugin[300];

static int setup(void **state)
{
    (void)state;
    if (tmpdir_make(dir, sizeof dir, "loom-skills", false) != 0)
        return -1;
    snprintf(ws, sizeof ws, "%s/ws", dir);
    snprintf(home, sizeof home, "%s/loomhome", dir);
    snprintf(uhome, sizeof uhome, "%s/user", dir);
    snprintf(plugin, sizeof plugin, "%s/plugin", dir);
    mkdir(ws, 0700);
    mkdir(home, 0700);
    mkdir(uhome, 0700);
    setenv("LOOM_HOME", home, 1);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    tmpdir_remove(dir);
    return 0;
}

/* A skill folder <root>/<rel>/<name>/SKILL.md with a marker in its body. */
static void write_skill(const char *root, const char *rel, const char *name, const char *desc,
                        const char *extra)
{
    char path[600], text[4096];
    snprintf(path, sizeof path, "%s/%s/SKILL.md", rel, name);
    snprintf(text, sizeof text, "---\nname: %s\ndescription: %s\n%s---\nBODY-OF-%s\nargs=[$ARGUMENTS]\n",
             name, desc, extra ? extra : "", name);
    tmpdir_write(root, path, text);
}

typedef struct warnings {
    loom_str all;
    int n;
} warnings;

static void collect(void *ctx, const char *msg)
{
    warnings *w = ctx;
    str_puts(&w->all, msg);
    str_putc(&w->all, '\n');
    w->n++;
}

static skill_entry *parse(const char *text, warnings *w, loom_error *err)
{
    return skill_entry_parse("/s/pdf-tools/SKILL.md", "pdf-tools", text, collect, w, err);
}

static void assert_refused(const char *text, const char *needle)
{
    warnings w = {LOOM_STR_INIT, 0};
    loom_error err = {0};
    skill_entry *e = parse(text, &w, &err);
    if (e)
        fail_msg("a SKILL.md that should be refused (%s) was accepted", needle);
    if (!strstr(err.message, "/s/pdf-tools/SKILL.md: ") || !strstr(err.message, needle))
        fail_msg("the refusal names the file and '%s', but says: %s", needle, err.message);
    str_free(&w.all);
}

/* ---- one file ------------------------------------------------------------------ */

static void parse_every_key(void **state)
{
    (void)state;
    warnings w = {LOOM_STR_INIT, 0};
    loom_error err = {0};
    skill_entry *e = parse("---\n"
                           "name: pdf-tools\n"
                           "description: Fills and reads PDF forms. Use for any .pdf task.\n"
                           "license: Apache-2.0\n"
                           "compatibility: needs python3 and poppler\n"
                           "metadata:\n  author: someone\n  version: \"1.2\"\n"
                           "allowed-tools: Read Grep Bash(python3 scripts/fill.py *)\n"
                           "disable-model-invocation: false\n"
                           "user-invocable: false\n"
                           "context: fork\n"
                           "agent: Explore\n"
                           "model: haiku\n"
                           "argument-hint: \"[file.pdf]\"\n"
                           "paths: [\"**/*.pdf\", \"docs/**\"]\n"
                           "x-future-key: {anything: 1}\n"
                           "---\n\n\nThe body.\n\n",
                           &w, &err);
    if (!e)
        fail_msg("a SKILL.md with every key was refused: %s", err.message);
    const skill_def *d = &e->def;
    assert_string_equal(d->name, "pdf-tools");
    assert_string_equal(d->dir, "/s/pdf-tools");
    assert_string_equal(d->license, "Apache-2.0");
    assert_string_equal(d->compatibility, "needs python3 and poppler");
    assert_string_equal(json_string_value(json_object_get(d->metadata, "author")), "someone");
    assert_non_null(d->allowed_tools);
    assert_string_equal(d->allowed_tools[0], "Read");
    assert_string_equal(d->allowed_tools[1], "Grep");
    assert_string_equal(d->allowed_tools[2], "Bash(python3 scripts/fill.py *)");
    assert_null(d->allowed_tools[3]);
    assert_false(d->disable_model_invocation);
    assert_false(d->user_invocable);
    assert_true(d->context_fork);
    assert_string_equal(d->agent, "Explore");
    assert_string_equal(d->model, "haiku");
    assert_string_equal(d->argument_hint, "[file.pdf]");
    assert_string_equal(d->paths[0], "**/*.pdf");
    assert_string_equal(d->paths[1], "docs/**");
    assert_null(d->paths[2]);
    assert_string_equal(e->body, "The body.");
    if (w.n)
        fail_msg("a good file (with an unknown key) gave warnings: %s", str_cstr(&w.all));
    skill_entry_free(e);
    str_free(&w.all);
}

static void allowed_tools_three_forms(void **state)
{
    (void)state;
    const char *forms[] = {
        "allowed-tools: Read Bash(git diff *)\n",
        "allowed-tools: Read, Bash(git diff *)\n",
        "allowed-tools:\n  - Read\n  - Bash(git diff *)\n",
    };
    for (size_t i = 0; i < 3; i++) {
        char text[512];
        snprintf(text, sizeof text, "---\nname: pdf-tools\ndescription: d\n%s---\nb\n", forms[i]);
        warnings w = {LOOM_STR_INIT, 0};
        loom_error err = {0};
        skill_entry *e = parse(text, &w, &err);
        assert_non_null(e);
        if (!e->def.allowed_tools || !e->def.allowed_tools[1] || e->def.allowed_tools[2] ||
            strcmp(e->def.allowed_tools[0], "Read") != 0 ||
            strcmp(e->def.allowed_tools[1], "Bash(git diff *)") != 0)
            fail_msg("allowed-tools form %zu is read as the two rules Read and Bash(git diff *)", i);
        assert_int_equal(w.n, 0);
        skill_entry_free(e);
        str_free(&w.all);
    }
}

static void parse_refusals(void **state)
{
    (void)state;
    assert_refused("just a body\n", "no frontmatter");
    assert_refused("---\nname: [unclosed\n---\nb\n", "line");
    /* A missing name is the folder's (Claude Code's rule): pdf-tools. */
    {
        warnings w = {LOOM_STR_INIT, 0};
        loom_error err = {0};
        skill_entry *e = parse("---\ndescription: d\n---\nb\n", &w, &err);
        if (!e || strcmp(e->def.name, "pdf-tools") != 0)
            fail_msg("a SKILL.md without a name is named after its folder: %s", err.message);
        skill_entry_free(e);
        str_free(&w.all);
    }
    assert_refused("---\nname: PDF-tools\ndescription: d\n---\nb\n", "key 'name'");
    assert_refused("---\nname: -pdf-tools\ndescription: d\n---\nb\n", "key 'name'");
    assert_refused("---\nname: pdf-tools-\ndescription: d\n---\nb\n", "key 'name'");
    assert_refused("---\nname: pdf--tools\ndescription: d\n---\nb\n", "key 'name'");
    assert_refused("---\nname: pdf_tools\ndescription: d\n---\nb\n", "key 'name'");
    assert_refused("---\nname: 12\ndescription: d\n---\nb\n", "key 'name'");
    assert_refused("---\nname: other-name\ndescription: d\n---\nb\n", "not the folder's name");
    assert_refused("---\nname: pdf-tools\n---\nb\n", "key 'description': missing");
    assert_refused("---\nname: pdf-tools\ndescription: \"  \"\n---\nb\n", "key 'description'");
    assert_refused("---\nname: pdf-tools\ndescription: [a, b]\n---\nb\n", "key 'description'");

    loom_str long_desc = LOOM_STR_INIT;
    str_puts(&long_desc, "---\nname: pdf-tools\ndescription: ");
    for (int i = 0; i < SKILL_DESCRIPTION_MAX + 1; i++)
        str_putc(&long_desc, 'x');
    str_puts(&long_desc, "\n---\nb\n");
    assert_refused(str_cstr(&long_desc), "more than 1024");
    /* Exactly the limit is fine. */
    str_clear(&long_desc);
    str_puts(&long_desc, "---\nname: pdf-tools\ndescription: ");
    for (int i = 0; i < SKILL_DESCRIPTION_MAX; i++)
        str_putc(&long_desc, 'x');
    str_puts(&long_desc, "\n---\nb\n");
    warnings w = {LOOM_STR_INIT, 0};
    loom_error err = {0};
    skill_entry *e = parse(str_cstr(&long_desc), &w, &err);
    if (!e)
        fail_msg("a description of exactly 1024 characters is allowed: %s", err.message);
    skill_entry_free(e);
    str_free(&long_desc);
    str_free(&w.all);

    /* 64 characters is the longest name. */
    char name64[65], text[400];
    memset(name64, 'a', 64);
    name64[64] = '\0';
    assert_true(skill_name_valid(name64));
    name64[63] = '\0';
    assert_true(skill_name_valid("a1-b2"));
    char name65[66];
    memset(name65, 'a', 65);
    name65[65] = '\0';
    assert_false(skill_name_valid(name65));
    snprintf(text, sizeof text, "---\nname: %s\ndescription: d\n---\nb\n", name65);
    e = skill_entry_parse("/s/x/SKILL.md", NULL, text, NULL, NULL, &err);
    assert_null(e);
}

static void bad_optional_keys_warn_and_drop(void **state)
{
    (void)state;
    loom_str t = LOOM_STR_INIT;
    str_puts(&t, "---\nname: pdf-tools\ndescription: d\ncompatibility: ");
    for (int i = 0; i < 501; i++)
        str_putc(&t, 'c');
    str_puts(&t, "\nmetadata: just text\n"
                 "allowed-tools: Read Bash(unclosed Grep\n"
                 "user-invocable: maybe\n"
                 "context: sideways\n"
                 "model: \"two\\nlines\"\n"
                 "---\nbody\n");
    warnings w = {LOOM_STR_INIT, 0};
    loom_error err = {0};
    skill_entry *e = parse(str_cstr(&t), &w, &err);
    if (!e)
        fail_msg("bad optional keys drop the key, not the skill: %s", err.message);
    const char *all = str_cstr(&w.all);
    const char *keys[] = {"key 'compatibility'", "key 'metadata'", "key 'user-invocable'",
                          "key 'context'", "key 'model'"};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        if (!strstr(all, keys[i]) || !strstr(all, "/s/pdf-tools/SKILL.md: "))
            fail_msg("a bad %s is a warning naming the file; warnings: %s", keys[i], all);
    assert_null(e->def.compatibility);
    assert_null(e->def.metadata);
    assert_true(e->def.user_invocable); /* the default stays */
    assert_false(e->def.context_fork);
    assert_null(e->def.model);
    skill_entry_free(e);
    str_free(&w.all);
    str_free(&t);

    /* An allowed-tools entry the rule engine cannot read is dropped and
     * named; the good ones stay (an allow list only loses). */
    warnings w2 = {LOOM_STR_INIT, 0};
    e = parse("---\nname: pdf-tools\ndescription: d\nallowed-tools: [Read, \"Bash(\"]\n---\nb\n", &w2,
              &err);
    assert_non_null(e);
    if (!strstr(str_cstr(&w2.all), "key 'allowed-tools'"))
        fail_msg("a bad allowed-tools entry is named in a warning: %s", str_cstr(&w2.all));
    assert_non_null(e->def.allowed_tools);
    assert_string_equal(e->def.allowed_tools[0], "Read");
    assert_null(e->def.allowed_tools[1]);
    skill_entry_free(e);
    str_free(&w2.all);

    /* An empty body loads with a warning. */
    warnings w3 = {LOOM_STR_INIT, 0};
    e = parse("---\nname: pdf-tools\ndescription: d\n---\n\n", &w3, &err);
    assert_non_null(e);
    assert_non_null(strstr(str_cstr(&w3.all), "body"));
    skill_entry_free(e);
    str_free(&w3.all);
}

/* ---- the catalog ------------------------------------------------------------------ */

static ext_source_opts opts(bool trusted)
{
    static ext_plugin_root roots[1];
    roots[0].name = "toolbox";
    roots[0].root = plugin;
    ext_source_opts o = {.cwd = ws, .home = home, .user_home = uhome, .trusted = trusted,
                         .claude_compat = true, .plugins = roots, .n_plugins = 1};
    return o;
}

static bool has_warning(const skill_catalog *c, const char *a, const char *b)
{
    for (size_t i = 0; i < skill_catalog_warning_count(c); i++) {
        const char *w = skill_catalog_warning(c, i);
        if (strstr(w, a) && (!b || strstr(w, b)))
            return true;
    }
    return false;
}

static void catalog_precedence(void **state)
{
    (void)state;
    write_skill(uhome, ".claude/skills", "dup", "from claude user", NULL);
    write_skill(home, "skills", "dup", "from loom home", NULL);
    write_skill(home, "skills", "solo-user", "only the user has it", NULL);
    write_skill(plugin, "skills", "dup", "from the plugin", NULL);
    write_skill(ws, ".claude/skills", "dup", "from claude project", NULL);
    write_skill(ws, ".loom/skills", "dup", "from loom project", NULL);
    write_skill(ws, ".agents/skills", "agents-one", "from .agents", NULL);
    tmpdir_write(ws, ".loom/skills/broken/SKILL.md", "---\nname: broken\n---\nno description\n");
    tmpdir_write(ws, ".loom/skills/not-a-skill/README.md", "no SKILL.md here\n");

    ext_source_opts o = opts(true);
    loom_error err = {0};
    skill_catalog *c = skill_catalog_load(&o, &err);
    assert_non_null(c);
    const skill_def *d = skill_catalog_find(c, "dup");
    assert_non_null(d);
    if (strcmp(d->description, "from loom project") != 0)
        fail_msg("the project's .loom/skills wins over every other source; got '%s'",
                 d->description);
    assert_int_equal(d->scope, EXT_SCOPE_PROJECT);
    const skill_def *p = skill_catalog_find(c, "toolbox:dup");
    if (!p || strcmp(p->description, "from the plugin") != 0 || strcmp(p->plugin, "toolbox") != 0)
        fail_msg("a plugin's skill is named plugin:name, so it never shadows another");
    assert_int_equal(p->scope, EXT_SCOPE_PLUGIN);
    assert_non_null(skill_catalog_find(c, "solo-user"));
    assert_int_equal(skill_catalog_find(c, "solo-user")->scope, EXT_SCOPE_USER);
    assert_non_null(skill_catalog_find(c, "agents-one"));
    assert_null(skill_catalog_find(c, "broken"));
    assert_null(skill_catalog_find(c, "not-a-skill"));
    if (!has_warning(c, "broken/SKILL.md: ", "description"))
        fail_msg("a malformed SKILL.md is a warning naming the file and the problem");
    assert_int_equal(skill_catalog_count(c), 4);
    /* Sorted by name. */
    for (size_t i = 1; i < skill_catalog_count(c); i++)
        assert_true(strcmp(skill_catalog_at(c, i - 1)->name, skill_catalog_at(c, i)->name) < 0);
    skill_catalog_free(c);

    /* Untrusted: the workspace's folders are skipped, each with a notice. */
    o = opts(false);
    c = skill_catalog_load(&o, &err);
    d = skill_catalog_find(c, "dup");
    if (!d || strcmp(d->description, "from the plugin") == 0 || d->scope != EXT_SCOPE_USER)
        fail_msg("in an untrusted workspace the user's dup is the one that loads");
    assert_string_equal(d->description, "from loom home");
    assert_null(skill_catalog_find(c, "agents-one"));
    if (!has_warning(c, "skipped", ".loom/skills") || !has_warning(c, "skipped", ".claude/skills") ||
        !has_warning(c, "not trusted", NULL))
        fail_msg("each untrusted project folder is named in a notice");
    /* Notices come after warnings: no warning of the broken project file,
     * which was never read. */
    assert_false(has_warning(c, "broken/SKILL.md", NULL));
    skill_catalog_free(c);

    /* compat off: no .claude folders. */
    o = opts(true);
    o.claude_compat = false;
    rmdir(ws); /* no-op when non-empty */
    c = skill_catalog_load(&o, &err);
    assert_string_equal(skill_catalog_find(c, "dup")->description, "from loom project");
    skill_catalog_free(c);
}

static void bundled_files_listed(void **state)
{
    (void)state;
    write_skill(home, "skills", "with-files", "has files", NULL);
    tmpdir_write(home, "skills/with-files/scripts/run.sh", "#!/bin/sh\necho hi\n");
    tmpdir_write(home, "skills/with-files/reference.md", "ref\n");
    tmpdir_write(home, "skills/with-files/.hidden", "x\n");
    ext_source_opts o = opts(true);
    loom_error err = {0};
    skill_catalog *c = skill_catalog_load(&o, &err);
    const skill_def *d = skill_catalog_find(c, "with-files");
    assert_non_null(d);
    char **files = skill_files(d);
    assert_non_null(files[0]);
    assert_string_equal(files[0], "reference.md");
    assert_string_equal(files[1], "scripts/run.sh");
    assert_null(files[2]);
    strv_free(files);
    skill_catalog_free(c);
}

/* ---- the session -------------------------------------------------------------------- */

static skill_catalog *load(bool trusted)
{
    ext_source_opts o = opts(trusted);
    loom_error err = {0};
    return skill_catalog_load(&o, &err);
}

static void catalog_text_budget(void **state)
{
    (void)state;
    char desc[900];
    memset(desc, 'w', sizeof desc - 1);
    desc[sizeof desc - 1] = '\0';
    for (int i = 0; i < 30; i++) {
        char name[32];
        snprintf(name, sizeof name, "skill-%02d", i);
        write_skill(home, "skills", name, desc, NULL);
    }
    skill_catalog *c = load(true);
    assert_int_equal(skill_catalog_count(c), 30);
    skill_session_opts so = {.skills = c, .window_tokens = 1000};
    skill_session *ss = skill_session_new(&so);
    loom_str out = LOOM_STR_INIT;
    int64_t tokens = 0;
    size_t offered = 0;
    skill_session_catalog_text(ss, &out, &tokens, &offered);
    const char *t = str_cstr(&out);
    assert_non_null(strstr(t, "# Skills"));
    if (offered == 0 || offered >= 30)
        fail_msg("a tiny budget lists some skills, not all 30 (listed %zu)", offered);
    char count[64];
    snprintf(count, sizeof count, "(%zu more not listed", 30 - offered);
    if (!strstr(t, count))
        fail_msg("the catalog names how many were cut: '%s' missing", count);
    if (tokens > SKILL_CATALOG_FLOOR_TOKENS)
        fail_msg("the catalog (%lld tokens) stays within its budget", (long long)tokens);
    assert_null(strstr(t, "BODY-OF-"));
    json_t *offer = skill_session_offer_json(ss);
    assert_true(json_is_true(json_object_get(offer, "truncated")));
    assert_int_equal(json_array_size(json_object_get(offer, "skills")), offered);
    assert_int_equal(json_integer_value(json_object_get(offer, "tokens")), tokens);
    assert_int_equal(json_integer_value(json_object_get(offer, "available")), 30);
    json_decref(offer);

    /* The tool's enum holds what was listed, no more. */
    const tool_def *tool = skill_session_tool(ss);
    assert_non_null(tool);
    json_t *schema = json_parse(tool->input_schema, strlen(tool->input_schema), "schema", NULL);
    json_t *en = json_object_get(json_object_get(json_object_get(schema, "properties"), "name"),
                                 "enum");
    assert_int_equal(json_array_size(en), offered);
    json_decref(schema);

    /* A big window lists every one, uncut. */
    skill_session_free(ss);
    so.window_tokens = 1000000;
    ss = skill_session_new(&so);
    str_clear(&out);
    skill_session_catalog_text(ss, &out, &tokens, &offered);
    assert_int_equal(offered, 30);
    assert_null(strstr(str_cstr(&out), "more not listed"));
    str_free(&out);
    skill_session_free(ss);
    skill_catalog_free(c);
}

static const char *const *enum_of(const tool_def *t, json_t **hold)
{
    static const char *names[64];
    *hold = json_parse(t->input_schema, strlen(t->input_schema), "schema", NULL);
    json_t *en = json_object_get(json_object_get(json_object_get(*hold, "properties"), "name"),
                                 "enum");
    size_t i;
    json_t *v;
    memset(names, 0, sizeof names);
    json_array_foreach(en, i, v) if (i < 63) names[i] = json_string_value(v);
    return names;
}

static bool in_enum(const tool_def *t, const char *name)
{
    json_t *hold = NULL;
    const char *const *names = enum_of(t, &hold);
    bool found = false;
    for (size_t i = 0; names[i]; i++)
        found |= strcmp(names[i], name) == 0;
    json_decref(hold);
    return found;
}

static void tool_enum_and_paths(void **state)
{
    (void)state;
    write_skill(home, "skills", "always", "always offered", NULL);
    write_skill(home, "skills", "manual-only", "user only", "disable-model-invocation: true\n");
    write_skill(home, "skills", "pdf-forms", "pdf work", "paths: \"**/*.pdf\"\n");
    skill_catalog *c = load(true);
    skill_session_opts so = {.skills = c, .window_tokens = 200000};
    skill_session *ss = skill_session_new(&so);
    loom_str out = LOOM_STR_INIT;
    skill_session_catalog_text(ss, &out, NULL, NULL);
    const tool_def *t = skill_session_tool(ss);
    assert_non_null(t);
    assert_string_equal(t->name, "Skill");
    assert_ptr_equal(t->impl, ss);
    assert_true(in_enum(t, "always"));
    if (in_enum(t, "manual-only") || strstr(str_cstr(&out), "manual-only"))
        fail_msg("a disable-model-invocation skill is neither listed nor in the enum");
    if (in_enum(t, "pdf-forms") || strstr(str_cstr(&out), "pdf-forms"))
        fail_msg("a paths skill is not offered before a matching file was touched");
    /* The schema is one the registry accepts. */
    tool_registry *reg = tool_registry_new();
    loom_error err = {0};
    if (tool_registry_add(reg, t, &err) != 0)
        fail_msg("the registry takes the Skill tool: %s", err.message);
    tool_registry_free(reg);

    /* A Read of a non-matching file changes nothing; of a .pdf, it does. */
    json_t *in = json_pack("{s:s}", "file_path", "notes.txt");
    skill_session_observe_call(ss, "Read", in, ws);
    json_decref(in);
    str_clear(&out);
    skill_session_catalog_text(ss, &out, NULL, NULL);
    assert_null(strstr(str_cstr(&out), "pdf-forms"));
    in = json_pack("{s:s}", "file_path", "forms/tax.pdf");
    skill_session_observe_call(ss, "Read", in, ws);
    json_decref(in);
    str_clear(&out);
    skill_session_catalog_text(ss, &out, NULL, NULL);
    if (!strstr(str_cstr(&out), "- pdf-forms: pdf work"))
        fail_msg("once a .pdf was read the paths skill is listed at the next catalog text");
    const tool_def *t2 = skill_session_tool(ss);
    assert_true(t2 != t);
    assert_true(in_enum(t2, "pdf-forms"));
    /* The older def stays valid (a registry may still hold it). */
    assert_string_equal(t->name, "Skill");
    str_free(&out);
    skill_session_free(ss);
    skill_catalog_free(c);

    /* No skills: no tool, no text. */
    skill_session_opts none = {0};
    ss = skill_session_new(&none);
    assert_null(skill_session_tool(ss));
    loom_str empty = LOOM_STR_INIT;
    size_t n = 9;
    skill_session_catalog_text(ss, &empty, NULL, &n);
    assert_int_equal(empty.len, 0);
    assert_int_equal(n, 0);
    str_free(&empty);
    skill_session_free(ss);
}

static governance *make_gov(void)
{
    governance_settings gs = {0};
    gs.trust = GOVERNANCE_TRUSTED;
    loom_error err = {0};
    governance *g = governance_new(ws, "skills-session", NULL, &gs, &err);
    if (!g)
        fail_msg("%s", err.message);
    return g;
}

static void activation_once(void **state)
{
    (void)state;
    write_skill(home, "skills", "git-helper", "git things",
                "allowed-tools: Bash(git status:*)\nargument-hint: \"[path]\"\n");
    tmpdir_write(home, "skills/git-helper/scripts/check.sh", "#!/bin/sh\n");
    skill_catalog *c = load(true);
    skill_session_opts so = {.skills = c, .window_tokens = 200000};
    skill_session *ss = skill_session_new(&so);
    governance *g = make_gov();
    tool_ctx ctx = {.cwd = ws, .gov = g};
    json_t *st = json_pack("{s:s}", "command", "git status");
    assert_false(governance_grant_allows(g, "Bash", st, ws, &(rule_match){0}));

    skill_session_run_begin(ss);
    skill_session_catalog_text(ss, NULL, NULL, NULL);
    skill_activation a;
    loom_error err = {0};
    if (skill_session_activate(ss, "git-helper", "src/main.c", "tool", "call-1", &ctx, &a, &err) != 0)
        fail_msg("activation failed: %s", err.message);
    const char *t = str_cstr(&a.text);
    char head[600];
    snprintf(head, sizeof head, "<skill name=\"git-helper\" dir=\"%s/skills/git-helper\">\n", home);
    if (strncmp(t, head, strlen(head)) != 0)
        fail_msg("the text opens with the skill's header line; got: %.200s", t);
    assert_non_null(strstr(t, "BODY-OF-git-helper"));
    if (!strstr(t, "args=[src/main.c]"))
        fail_msg("$ARGUMENTS is replaced by the arguments: %s", t);
    assert_non_null(strstr(t, "Base directory for this skill: "));
    assert_non_null(strstr(t, "- scripts/check.sh\n"));
    assert_null(strstr(t, "SKILL.md\n"));
    assert_true(a.text.len > 8 && strcmp(t + a.text.len - 8, "</skill>") == 0);
    assert_false(a.already_active);
    assert_ptr_equal(a.skill, skill_catalog_find(c, "git-helper"));
    assert_non_null(a.event);
    assert_string_equal(json_string_value(json_object_get(a.event, "name")), "git-helper");
    assert_string_equal(json_string_value(json_object_get(a.event, "via")), "tool");
    assert_string_equal(json_string_value(json_object_get(a.event, "source")), "skill");
    assert_string_equal(json_string_value(json_object_get(a.event, "scope")), "user");
    assert_string_equal(json_string_value(json_array_get(json_object_get(a.event, "allowed_tools"), 0)),
                        "Bash(git status:*)");
    assert_true(json_integer_value(json_object_get(a.event, "tokens")) > 0);
    skill_activation_free(&a);
    bool readable = false;
    for (size_t i = 0; i < g->n_additional_dirs; i++)
        readable |= strstr(g->additional_dirs[i], "skills/git-helper") != NULL;
    if (!readable)
        fail_msg("an active skill's folder is readable like the workspace (its bundled files)");
    if (!governance_grant_allows(g, "Bash", st, ws, &(rule_match){0}))
        fail_msg("the skill's allowed-tools are granted for the run once it is active");

    /* The same skill again: a short text, no body, no event. */
    if (skill_session_activate(ss, "git-helper", NULL, "tool", "call-2", &ctx, &a, &err) != 0)
        fail_msg("a second activation is not an error: %s", err.message);
    assert_true(a.already_active);
    assert_null(a.event);
    assert_null(strstr(str_cstr(&a.text), "BODY-OF-"));
    assert_non_null(strstr(str_cstr(&a.text), "already active"));
    skill_activation_free(&a);

    /* The report: offered 1, activated 1, used once a Bash git status ran. */
    json_t *r = skill_session_run_report(ss);
    assert_int_equal(json_integer_value(json_object_get(r, "offered_count")), 1);
    assert_int_equal(json_integer_value(json_object_get(r, "activated_count")), 1);
    assert_int_equal(json_integer_value(json_object_get(r, "used_count")), 0);
    json_decref(r);
    json_t *other = json_pack("{s:s}", "command", "ls");
    skill_session_observe_call(ss, "Bash", other, ws);
    r = skill_session_run_report(ss);
    if (json_integer_value(json_object_get(r, "used_count")) != 0)
        fail_msg("a call the skill's allowed-tools do not match, outside its folder, is no use of it");
    json_decref(r);
    skill_session_observe_call(ss, "Bash", st, ws);
    r = skill_session_run_report(ss);
    assert_int_equal(json_integer_value(json_object_get(r, "used_count")), 1);
    json_t *act = json_array_get(json_object_get(r, "activated"), 0);
    assert_string_equal(json_string_value(json_object_get(act, "name")), "git-helper");
    assert_string_equal(json_string_value(json_object_get(act, "via")), "tool");
    assert_true(json_is_true(json_object_get(act, "used")));
    assert_string_equal(json_string_value(json_array_get(json_object_get(r, "offered"), 0)),
                        "git-helper");
    json_decref(r);

    /* A new run starts a new report; the skill stays active in the session,
     * and asking for it again grants its tools for the new run. */
    governance_grants_clear(g);
    skill_session_run_begin(ss);
    r = skill_session_run_report(ss);
    assert_int_equal(json_integer_value(json_object_get(r, "activated_count")), 0);
    assert_int_equal(json_integer_value(json_object_get(r, "offered_count")), 0);
    json_decref(r);
    assert_false(governance_grant_allows(g, "Bash", st, ws, &(rule_match){0}));
    assert_int_equal(skill_session_activate(ss, "git-helper", NULL, "user", NULL, &ctx, &a, &err), 0);
    assert_true(a.already_active);
    skill_activation_free(&a);
    if (!governance_grant_allows(g, "Bash", st, ws, &(rule_match){0}))
        fail_msg("an already active skill asked for in a new run grants its tools again");

    json_decref(st);
    json_decref(other);
    governance_free(g);
    skill_session_free(ss);
    skill_catalog_free(c);
}

static void used_by_file_in_folder(void **state)
{
    (void)state;
    write_skill(home, "skills", "doc-kit", "docs", NULL);
    tmpdir_write(home, "skills/doc-kit/template.md", "t\n");
    write_skill(home, "skills", "plain", "plain instructions", NULL);
    skill_catalog *c = load(true);
    skill_session_opts so = {.skills = c, .window_tokens = 200000};
    skill_session *ss = skill_session_new(&so);
    tool_ctx ctx = {.cwd = ws};
    skill_session_run_begin(ss);
    skill_activation a;
    loom_error err = {0};
    assert_int_equal(skill_session_activate(ss, "doc-kit", NULL, "tool", "c1", &ctx, &a, &err), 0);
    skill_activation_free(&a);
    assert_int_equal(skill_session_activate(ss, "plain", NULL, "user", NULL, &ctx, &a, &err), 0);
    skill_activation_free(&a);
    /* The Skill call itself is no use. */
    json_t *sk = json_pack("{s:s}", "name", "doc-kit");
    skill_session_observe_call(ss, "Skill", sk, ws);
    json_decref(sk);
    json_t *r = skill_session_run_report(ss);
    assert_int_equal(json_integer_value(json_object_get(r, "used_count")), 0);
    json_decref(r);
    char path[700];
    snprintf(path, sizeof path, "%s/skills/doc-kit/template.md", home);
    json_t *rd = json_pack("{s:s}", "file_path", path);
    skill_session_observe_call(ss, "Read", rd, ws);
    json_decref(rd);
    r = skill_session_run_report(ss);
    if (json_integer_value(json_object_get(r, "used_count")) != 2)
        fail_msg("reading a skill's file uses it, and any call uses a skill of instructions only");
    json_decref(r);
    skill_session_free(ss);
    skill_catalog_free(c);
}

static bool never_present(void *ctx, const char *call_id)
{
    (void)ctx;
    (void)call_id;
    return false;
}

static bool always_present(void *ctx, const char *call_id)
{
    (void)ctx;
    (void)call_id;
    return true;
}

static void active_text_after_compaction(void **state)
{
    (void)state;
    write_skill(home, "skills", "keeper", "kept across compaction", NULL);
    skill_catalog *c = load(true);
    skill_session_opts so = {.skills = c, .window_tokens = 200000};
    skill_session *ss = skill_session_new(&so);
    tool_ctx ctx = {.cwd = ws};
    loom_str out = LOOM_STR_INIT;
    skill_session_active_text(ss, never_present, NULL, &out);
    assert_int_equal(out.len, 0);
    skill_activation a;
    loom_error err = {0};
    assert_int_equal(skill_session_activate(ss, "keeper", "x", "tool", "call-k", &ctx, &a, &err), 0);
    skill_activation_free(&a);
    skill_session_active_text(ss, always_present, NULL, &out);
    if (out.len)
        fail_msg("while the activation is in the conversation the body is not repeated");
    skill_session_active_text(ss, never_present, NULL, &out);
    const char *t = str_cstr(&out);
    if (!strstr(t, "# Active skills") || !strstr(t, "BODY-OF-keeper") || !strstr(t, "args=[x]"))
        fail_msg("once the activation left the chain, its text is in # Active skills: %s", t);
    str_free(&out);
    skill_session_free(ss);
    skill_catalog_free(c);
}

static void who_may_invoke(void **state)
{
    (void)state;
    write_skill(home, "skills", "manual-only", "user only", "disable-model-invocation: true\n");
    write_skill(home, "skills", "model-only", "model only", "user-invocable: false\n");
    skill_catalog *c = load(true);
    skill_session_opts so = {.skills = c, .window_tokens = 200000};
    skill_session *ss = skill_session_new(&so);
    tool_ctx ctx = {.cwd = ws};
    skill_activation a;
    loom_error err = {0};
    assert_int_equal(skill_session_activate(ss, "manual-only", NULL, "tool", "c", &ctx, &a, &err), -1);
    assert_non_null(strstr(err.message, "disable-model-invocation"));
    assert_int_equal(skill_session_activate(ss, "/manual-only", "a b", "user", NULL, &ctx, &a, &err), 0);
    assert_non_null(strstr(str_cstr(&a.text), "args=[a b]"));
    assert_string_equal(json_string_value(json_object_get(a.event, "via")), "user");
    skill_activation_free(&a);
    assert_int_equal(skill_session_activate(ss, "model-only", NULL, "user", NULL, &ctx, &a, &err), -1);
    assert_non_null(strstr(err.message, "user-invocable"));
    assert_int_equal(skill_session_activate(ss, "model-only", NULL, "tool", "c2", &ctx, &a, &err), 0);
    skill_activation_free(&a);
    assert_int_equal(skill_session_activate(ss, "nope", NULL, "tool", "c3", &ctx, &a, &err), -1);
    assert_non_null(strstr(err.message, "no skill named \"nope\""));
    skill_session_free(ss);
    skill_catalog_free(c);
}

static void body_cap_and_no_placeholder(void **state)
{
    (void)state;
    loom_str t = LOOM_STR_INIT;
    str_puts(&t, "---\nname: huge\ndescription: big body\n---\nSTART\n");
    while (t.len < SKILL_BODY_CAP + 5000)
        str_puts(&t, "0123456789abcdef\n");
    str_puts(&t, "TAIL-MARKER\n");
    tmpdir_write(home, "skills/huge/SKILL.md", str_cstr(&t));
    tmpdir_write(home, "skills/noargs/SKILL.md",
                 "---\nname: noargs\ndescription: d\n---\nNo placeholder.\n");
    str_free(&t);
    skill_catalog *c = load(true);
    skill_session_opts so = {.skills = c, .window_tokens = 200000};
    skill_session *ss = skill_session_new(&so);
    tool_ctx ctx = {.cwd = ws};
    skill_activation a;
    loom_error err = {0};
    assert_int_equal(skill_session_activate(ss, "huge", NULL, "tool", "c", &ctx, &a, &err), 0);
    assert_non_null(strstr(str_cstr(&a.text), "START"));
    assert_null(strstr(str_cstr(&a.text), "TAIL-MARKER"));
    if (!strstr(str_cstr(&a.text), "cut here"))
        fail_msg("a body over SKILL_BODY_CAP is cut with a note");
    assert_true(a.text.len < SKILL_BODY_CAP + 2000);
    skill_activation_free(&a);
    assert_int_equal(skill_session_activate(ss, "noargs", "file.txt", "tool", "c2", &ctx, &a, &err), 0);
    if (!strstr(str_cstr(&a.text), "ARGUMENTS: file.txt"))
        fail_msg("arguments to a body without placeholders are appended after it");
    skill_activation_free(&a);
    skill_session_free(ss);
    skill_catalog_free(c);
}

/* A stand-in for the Agent tool: answers with what it was asked. */
static int fake_agent_run(const json_t *input, tool_ctx *ctx, tool_result *out)
{
    (void)ctx;
    str_printf(&out->text, "sub-agent %s did: %.40s", json_get_str(input, "subagent_type", "?"),
               json_get_str(input, "prompt", ""));
    return 0;
}

static const tool_def fake_agent = {
    .name = "Agent",
    .description = "fake",
    .input_schema = "{\"type\":\"object\",\"properties\":{\"description\":{\"type\":\"string\"},"
                    "\"prompt\":{\"type\":\"string\"},\"subagent_type\":{\"type\":\"string\"},"
                    "\"model\":{\"type\":\"string\"}}}",
    .run = fake_agent_run,
};

static void fork_through_agent(void **state)
{
    (void)state;
    write_skill(home, "skills", "forked", "runs apart", "context: fork\nagent: Explore\n");
    skill_catalog *c = load(true);
    skill_session_opts so = {.skills = c, .window_tokens = 200000};
    skill_session *ss = skill_session_new(&so);
    tool_ctx ctx = {.cwd = ws};
    skill_activation a;
    loom_error err = {0};
    /* No registry, no Agent tool: a clear error. */
    assert_int_equal(skill_session_activate(ss, "forked", NULL, "tool", "c", &ctx, &a, &err), -1);
    assert_non_null(strstr(err.message, "sub-agent"));
    tool_registry *reg = tool_registry_new();
    assert_int_equal(tool_registry_add(reg, &fake_agent, &err), 0);
    skill_session_set_registry(ss, reg);
    skill_session_run_begin(ss);
    if (skill_session_activate(ss, "forked", NULL, "tool", "c", &ctx, &a, &err) != 0)
        fail_msg("a fork skill runs through the Agent tool: %s", err.message);
    const char *t = str_cstr(&a.text);
    if (!strstr(t, "sub-agent Explore did: <skill name=\"forked\""))
        fail_msg("the result is the sub-agent's, which got the skill's text and agent: %s", t);
    assert_true(json_is_true(json_object_get(a.event, "fork")));
    skill_activation_free(&a);
    /* Nothing of it stays to be kept across compaction. */
    loom_str out = LOOM_STR_INIT;
    skill_session_active_text(ss, never_present, NULL, &out);
    assert_int_equal(out.len, 0);
    json_t *r = skill_session_run_report(ss);
    assert_int_equal(json_integer_value(json_object_get(r, "used_count")), 1);
    json_decref(r);
    tool_registry_free(reg);
    skill_session_free(ss);
    skill_catalog_free(c);
}


/* Model-invocable commands are offered and activated through the same
 * catalog and tool; a skill of the same name is the one offered. */
static void commands_through_the_catalog(void **state)
{
    (void)state;
    tmpdir_write(home, "commands/review.md",
                 "---\ndescription: Reviews code for bugs\n---\nREVIEW-BODY of $ARGUMENTS\n");
    tmpdir_write(home, "commands/secret.md",
                 "---\ndescription: Not for the model\ndisable-model-invocation: true\n"
                 "---\nSECRET-BODY\n");
    tmpdir_write(home, "commands/dup.md", "---\ndescription: the command dup\n---\nCOMMAND-DUP\n");
    write_skill(home, "skills", "dup", "the skill dup", NULL);
    ext_source_opts o = opts(true);
    loom_error err = {0};
    command_catalog *cc = command_catalog_load(&o, &err);
    assert_non_null(command_catalog_find(cc, "review"));
    skill_catalog *c = skill_catalog_load(&o, &err);
    skill_session_opts so = {.skills = c, .commands = cc, .window_tokens = 200000};
    skill_session *ss = skill_session_new(&so);
    loom_str out = LOOM_STR_INIT;
    skill_session_catalog_text(ss, &out, NULL, NULL);
    const char *t = str_cstr(&out);
    if (!strstr(t, "- review: Reviews code for bugs"))
        fail_msg("a command with a description is offered like a skill: %s", t);
    if (strstr(t, "secret"))
        fail_msg("a disable-model-invocation command is not offered");
    if (!strstr(t, "- dup: the skill dup") || strstr(t, "the command dup"))
        fail_msg("a skill and a command of one name: the skill is offered");
    const tool_def *tool = skill_session_tool(ss);
    assert_true(in_enum(tool, "review"));
    assert_false(in_enum(tool, "secret"));
    tool_registry *reg = tool_registry_new();
    skill_session_set_registry(ss, reg);
    tool_ctx ctx = {.cwd = ws};
    skill_activation a;
    skill_session_run_begin(ss);
    if (skill_session_activate(ss, "review", "src/a.c", "tool", "c1", &ctx, &a, &err) != 0)
        fail_msg("the model activates a command: %s", err.message);
    assert_non_null(strstr(str_cstr(&a.text), "REVIEW-BODY of src/a.c"));
    assert_null(a.skill);
    assert_non_null(a.command);
    assert_string_equal(json_string_value(json_object_get(a.event, "source")), "command");
    skill_activation_free(&a);
    assert_int_equal(skill_session_activate(ss, "secret", NULL, "tool", "c2", &ctx, &a, &err), -1);
    assert_int_equal(skill_session_activate(ss, "secret", NULL, "user", NULL, &ctx, &a, &err), 0);
    assert_non_null(strstr(str_cstr(&a.text), "SECRET-BODY"));
    skill_activation_free(&a);
    assert_int_equal(skill_session_activate(ss, "dup", NULL, "tool", "c3", &ctx, &a, &err), 0);
    assert_non_null(a.skill);
    skill_activation_free(&a);
    json_t *r = skill_session_run_report(ss);
    assert_int_equal(json_integer_value(json_object_get(r, "activated_count")), 3);
    json_decref(r);
    str_free(&out);
    skill_session_free(ss);
    skill_catalog_free(c);
    command_catalog_free(cc);
    tool_registry_free(reg);
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

int main(void)
{
    const struct CMUnitTest tests[] = {
        T(parse_every_key),
        T(allowed_tools_three_forms),
        T(parse_refusals),
        T(bad_optional_keys_warn_and_drop),
        T(catalog_precedence),
        T(bundled_files_listed),
        T(catalog_text_budget),
        T(tool_enum_and_paths),
        T(activation_once),
        T(used_by_file_in_folder),
        T(active_text_after_compaction),
        T(who_may_invoke),
        T(body_cap_and_no_placeholder),
        T(fork_through_agent),
        T(commands_through_the_catalog),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
