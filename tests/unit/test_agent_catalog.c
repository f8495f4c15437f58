/* test_agent_catalog.c — the agents catalog (agents/catalog.h): one agent
 * file's keys (tools as a comma string with rule forms or as a list, every
 * optional key, unknown keys ignored, a bad value a warning naming file and
 * key while the rest loads, fail-closed tool lists), what makes a file no
 * agent at all, the sources and which wins (.claude < ~/.loom < plugins <
 * .loom), an untrusted workspace's files skipped with a notice, a role
 * overridden with a warning, the listing order, and the five built-in
 * roles with their markers, limits and the verdict schema, which
 * tools/schema.c accepts and applies. */
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

#include "agents/catalog.h"
#include "base/fileio.h"
#include "base/str.h"
#include "tools/schema.h"
#include "tmpdir.h"

static char dir[256];      /* the test's root: ws/ the workspace, home/ the Loom home */
static char ws[300], home[300], plugin[300], plugin_root[300];

static int setup(void **state)
{
    if (tmpdir_make(dir, sizeof dir, "loom-agent-catalog", false) != 0)
        return -1;
    snprintf(ws, sizeof ws, "%s/ws", dir);
    snprintf(home, sizeof home, "%s/home", dir);
    snprintf(plugin, sizeof plugin, "%s/plugin/agents", dir);
    snprintf(plugin_root, sizeof plugin_root, "%s/plugin", dir);
    return 0;
}

static int teardown(void **state)
{
    tmpdir_remove(dir);
    return 0;
}

/* ---- one file ------------------------------------------------------------------ */

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

static agent_def *parse_ok(const char *text, warnings *w)
{
    loom_error err = {0};
    agent_def *d = agent_def_parse("/p/reviewer.md", text, collect, w, &err);
    if (!d)
        fail_msg("refused: %s", err.message);
    return d;
}

static void has_warning(const warnings *w, const char *needle)
{
    if (!strstr(str_cstr(&w->all), needle))
        fail_msg("no warning with \"%s\" in:\n%s", needle, str_cstr(&w->all));
}

static void a_good_file_gives_every_key(void **state)
{
    const char *text = "---\n"
                       "name: code-reviewer\n"
                       "description: Reviews a diff for bugs\n"
                       "tools: Bash(git:*), Read\n"
                       "model: sonnet\n"
                       "permissionMode: acceptEdits\n"
                       "maxTurns: 7\n"
                       "skills: lint, style\n"
                       "mcpServers: [github]\n"
                       "hooks:\n  PreToolUse:\n    - matcher: Bash\n      hooks: [{type: command, command: \"true\"}]\n"
                       "isolation: worktree\n"
                       "background: true\n"
                       "color: blue\n"                   /* Claude Code's; ignored */
                       "outputSchema: {type: object, required: [ok]}\n"
                       "---\n\n"
                       "You review code.\nBe terse.\n\n";
    warnings w = {LOOM_STR_INIT, 0};
    agent_def *d = parse_ok(text, &w);
    assert_int_equal(w.n, 0);
    assert_string_equal(d->name, "code-reviewer");
    assert_string_equal(d->description, "Reviews a diff for bugs");
    assert_string_equal(d->prompt, "You review code.\nBe terse.");
    assert_int_equal(d->role, AGENT_ROLE_CUSTOM);
    assert_string_equal(d->tools[0], "Bash(git:*)");
    assert_string_equal(d->tools[1], "Read");
    assert_null(d->tools[2]);
    assert_null(d->disallowed);
    assert_string_equal(d->model, "sonnet");
    assert_true(d->mode_set);
    assert_int_equal(d->mode, MODE_ACCEPT_EDITS);
    assert_int_equal(d->max_turns, 7);
    assert_string_equal(d->skills[0], "lint");
    assert_string_equal(d->skills[1], "style");
    assert_true(json_is_array(d->mcp_servers));
    assert_non_null(json_object_get(d->hooks, "PreToolUse"));
    assert_true(d->isolation_worktree);
    assert_true(d->background);
    assert_false(d->read_only);
    assert_string_equal(json_string_value(json_object_get(d->output_schema, "type")), "object");
    assert_string_equal(d->source, "/p/reviewer.md");
    agent_def_free(d);
    str_free(&w.all);
}

static void tools_as_a_list_and_commas_inside_parentheses_stay_one_rule(void **state)
{
    const char *text = "---\nname: a\ndescription: d\n"
                       "tools:\n  - Read\n  - \"Bash(echo a, b)\"\n  - mcp__fake__*\n"
                       "disallowedTools: [Write, Edit]\n"
                       "---\nbody\n";
    warnings w = {LOOM_STR_INIT, 0};
    agent_def *d = parse_ok(text, &w);
    assert_int_equal(w.n, 0);
    assert_string_equal(d->tools[0], "Read");
    assert_string_equal(d->tools[1], "Bash(echo a, b)");
    assert_string_equal(d->tools[2], "mcp__fake__*");
    assert_null(d->tools[3]);
    assert_string_equal(d->disallowed[0], "Write");
    assert_string_equal(d->disallowed[1], "Edit");
    assert_null(d->disallowed[2]);
    agent_def_free(d);
    str_free(&w.all);
}

static void no_tools_key_or_a_star_means_every_tool_and_an_empty_list_none(void **state)
{
    warnings w = {LOOM_STR_INIT, 0};
    agent_def *d = parse_ok("---\nname: a\ndescription: d\n---\nb", &w);
    assert_null(d->tools);
    agent_def_free(d);
    d = parse_ok("---\nname: a\ndescription: d\ntools: \"*\"\n---\nb", &w);
    assert_null(d->tools);
    agent_def_free(d);
    d = parse_ok("---\nname: a\ndescription: d\ntools: []\n---\nb", &w);
    assert_non_null(d->tools);
    assert_null(d->tools[0]);
    agent_def_free(d);
    d = parse_ok("---\nname: a\ndescription: d\ntools:\n---\nb", &w); /* empty: not given */
    assert_null(d->tools);
    agent_def_free(d);
    assert_int_equal(w.n, 0);
    str_free(&w.all);
}

static void a_bad_permission_mode_warns_naming_file_and_key_and_the_rest_loads(void **state)
{
    const char *text = "---\nname: a\ndescription: d\npermissionMode: sideways\nmodel: haiku\ntools: Read\n---\nb";
    warnings w = {LOOM_STR_INIT, 0};
    agent_def *d = parse_ok(text, &w);
    assert_int_equal(w.n, 1);
    has_warning(&w, "/p/reviewer.md: key 'permissionMode': unknown mode 'sideways' (one of default, acceptEdits");
    assert_false(d->mode_set);
    assert_string_equal(d->model, "haiku");
    assert_string_equal(d->tools[0], "Read");
    agent_def_free(d);
    str_free(&w.all);
}

static void each_bad_value_is_one_warning_and_its_key_dropped(void **state)
{
    const char *text = "---\nname: a\ndescription: d\n"
                       "model: \"two words\"\n"
                       "maxTurns: -1\n"
                       "skills: {a: 1}\n"
                       "mcpServers: 5\n"
                       "hooks: [x]\n"
                       "isolation: container\n"
                       "background: maybe\n"
                       "output_schema: {type: nonsense}\n"
                       "---\nb";
    warnings w = {LOOM_STR_INIT, 0};
    agent_def *d = parse_ok(text, &w);
    assert_int_equal(w.n, 8);
    has_warning(&w, "/p/reviewer.md: key 'model': ");
    has_warning(&w, "/p/reviewer.md: key 'maxTurns': expected a whole number from 1 to 10000");
    has_warning(&w, "/p/reviewer.md: key 'skills': ");
    has_warning(&w, "/p/reviewer.md: key 'mcpServers': ");
    has_warning(&w, "/p/reviewer.md: key 'hooks': ");
    has_warning(&w, "/p/reviewer.md: key 'isolation': ");
    has_warning(&w, "/p/reviewer.md: key 'background': expected true or false");
    has_warning(&w, "/p/reviewer.md: key 'output_schema': ");
    assert_null(d->model);
    assert_int_equal(d->max_turns, 0);
    assert_null(d->skills);
    assert_null(d->mcp_servers);
    assert_null(d->hooks);
    assert_false(d->isolation_worktree);
    assert_false(d->background);
    assert_null(d->output_schema);
    assert_null(d->tools); /* no tools key: untouched */
    agent_def_free(d);
    str_free(&w.all);
}

static void maxturns_and_background_also_read_from_quoted_text(void **state)
{
    warnings w = {LOOM_STR_INIT, 0};
    agent_def *d = parse_ok("---\nname: a\ndescription: d\nmaxTurns: \"12\"\nbackground: \"true\"\n"
                            "output_schema: '{\"type\":\"object\"}'\n---\nb", &w);
    assert_int_equal(w.n, 0);
    assert_int_equal(d->max_turns, 12);
    assert_true(d->background);
    assert_non_null(d->output_schema);
    agent_def_free(d);
    str_free(&w.all);
}

static void a_bad_tools_value_fails_closed(void **state)
{
    warnings w = {LOOM_STR_INIT, 0};
    /* the wrong type: no tools rather than all of them */
    agent_def *d = parse_ok("---\nname: a\ndescription: d\ntools: {Read: yes}\n---\nb", &w);
    assert_non_null(d->tools);
    assert_null(d->tools[0]);
    has_warning(&w, "/p/reviewer.md: key 'tools': expected a list or a comma-separated string; the agent gets no tools");
    agent_def_free(d);
    /* one malformed rule: that one dropped, the others kept */
    d = parse_ok("---\nname: a\ndescription: d\ntools: Read, Bash(git, Grep\n---\nb", &w);
    assert_string_equal(d->tools[0], "Read");
    assert_null(d->tools[1]);
    has_warning(&w, "key 'tools': ");
    agent_def_free(d);
    /* a deny list that cannot be applied: no tools at all */
    d = parse_ok("---\nname: a\ndescription: d\ntools: Read\ndisallowedTools: 7\n---\nb", &w);
    assert_non_null(d->tools);
    assert_null(d->tools[0]);
    has_warning(&w, "key 'disallowedTools': expected a list or a comma-separated string; the agent gets no tools");
    agent_def_free(d);
    /* denying '*' is a valid way to say no tools: no warning */
    int before = w.n;
    d = parse_ok("---\nname: a\ndescription: d\ndisallowedTools: \"*\"\n---\nb", &w);
    assert_int_equal(w.n, before);
    assert_null(d->tools[0]);
    agent_def_free(d);
    str_free(&w.all);
}

static void refused(const char *text, const char *needle)
{
    loom_error err = {0};
    warnings w = {LOOM_STR_INIT, 0};
    agent_def *d = agent_def_parse("/p/x.md", text, collect, &w, &err);
    if (d)
        fail_msg("accepted an agent named %s", d->name);
    if (!strstr(err.message, needle))
        fail_msg("message \"%s\" lacks \"%s\"", err.message, needle);
    str_free(&w.all);
}

static void a_file_that_cannot_be_an_agent_says_why(void **state)
{
    refused("Just a prompt.\n", "/p/x.md: no frontmatter");
    refused("---\ndescription: d\n---\nb", "/p/x.md: key 'name': missing");
    refused("---\nname: has space\ndescription: d\n---\nb", "/p/x.md: key 'name': 1 to 64 letters");
    refused("---\nname: [a]\ndescription: d\n---\nb", "/p/x.md: key 'name':");
    refused("---\nname: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\ndescription: d\n---\nb",
            "key 'name'");
    refused("---\nname: a\n---\nb", "/p/x.md: key 'description': missing");
    refused("---\nname: a\ndescription: [x]\n---\nb", "/p/x.md: key 'description': expected text");
    refused("---\nname: a\ndescription: \"open\n---\nb", "/p/x.md: line ");
}

static void an_empty_body_is_a_warning(void **state)
{
    warnings w = {LOOM_STR_INIT, 0};
    agent_def *d = parse_ok("---\nname: a\ndescription: d\n---\n\n  \n", &w);
    assert_string_equal(d->prompt, "");
    has_warning(&w, "/p/reviewer.md: the body (the agent's prompt) is empty");
    agent_def_free(d);
    str_free(&w.all);
}

/* ---- the catalog ------------------------------------------------------------------ */

static char *agent_text(const char *name, const char *body)
{
    loom_str s = LOOM_STR_INIT;
    str_printf(&s, "---\nname: %s\ndescription: the %s agent\n---\n%s\n", name, name, body);
    return str_steal(&s);
}

static void put_agent(const char *root, const char *rel, const char *name, const char *body)
{
    char *t = agent_text(name, body);
    tmpdir_write(root, rel, t);
    free(t);
}

static const char *prompt_of(const agent_catalog *c, const char *name)
{
    const agent_def *d = agent_catalog_find(c, name);
    assert_non_null(d);
    return d->prompt;
}

static bool any_warning(const agent_catalog *c, const char *needle)
{
    for (size_t i = 0; i < agent_catalog_warning_count(c); i++)
        if (strstr(agent_catalog_warning(c, i), needle))
            return true;
    return false;
}

static void dump_warnings(const agent_catalog *c)
{
    for (size_t i = 0; i < agent_catalog_warning_count(c); i++)
        fprintf(stderr, "warning: %s\n", agent_catalog_warning(c, i));
}

static void later_sources_win_user_then_plugins_then_the_project(void **state)
{
    put_agent(ws, ".claude/agents/a.md", "shared", "from claude");
    put_agent(home, "agents/a.md", "shared", "from home");
    put_agent(ws, ".loom/agents/a.md", "shared", "from loom");
    put_agent(ws, ".claude/agents/b.md", "claude-home", "from claude");
    put_agent(home, "agents/b.md", "claude-home", "from home");
    put_agent(ws, ".claude/agents/c.md", "claude-only", "from claude");
    put_agent(home, "agents/p.md", "home-plugin", "from home");
    put_agent(plugin, "p.md", "home-plugin", "from plugin");
    put_agent(plugin, "q.md", "plugin-loom", "from plugin");
    put_agent(ws, ".loom/agents/q.md", "plugin-loom", "from loom");
    ext_plugin_root plugins[] = {{.name = "tools", .root = plugin_root}};
    agent_catalog_opts o = {.cwd = ws, .home = home, .user_home = home, .trusted = true,
                            .plugins = plugins, .n_plugins = 1};
    loom_error err = {0};
    agent_catalog *c = agent_catalog_load(&o, &err);
    assert_non_null(c);
    assert_string_equal(prompt_of(c, "shared"), "from loom");
    /* The project's .claude/agents is the project's: it beats the user's. */
    assert_string_equal(prompt_of(c, "claude-home"), "from claude");
    assert_string_equal(prompt_of(c, "claude-only"), "from claude");
    /* A plugin's agents are its own names: they replace nobody's. */
    assert_string_equal(prompt_of(c, "home-plugin"), "from home");
    assert_string_equal(prompt_of(c, "tools:home-plugin"), "from plugin");
    assert_string_equal(prompt_of(c, "plugin-loom"), "from loom");
    assert_string_equal(prompt_of(c, "tools:plugin-loom"), "from plugin");
    if (agent_catalog_warning_count(c) != 0) {
        dump_warnings(c);
        fail_msg("warnings where none were expected");
    }
    agent_catalog_free(c);
}

static void compat_off_leaves_out_every_claude_folder(void **state)
{
    put_agent(ws, ".claude/agents/c.md", "claude-only", "from claude");
    put_agent(ws, ".loom/agents/l.md", "loom-only", "from loom");
    agent_catalog_opts o = {.cwd = ws, .home = home, .user_home = home, .trusted = true,
                            .claude_off = true};
    loom_error err = {0};
    agent_catalog *c = agent_catalog_load(&o, &err);
    assert_null(agent_catalog_find(c, "claude-only"));
    assert_string_equal(prompt_of(c, "loom-only"), "from loom");
    agent_catalog_free(c);
}

static void an_untrusted_workspace_is_skipped_with_a_notice_naming_its_folders(void **state)
{
    put_agent(ws, ".claude/agents/a.md", "ws-claude", "x");
    put_agent(ws, ".loom/agents/a.md", "ws-loom", "x");
    put_agent(home, "agents/h.md", "mine", "mine");
    agent_catalog_opts o = {.cwd = ws, .home = home, .user_home = home, .trusted = false};
    loom_error err = {0};
    agent_catalog *c = agent_catalog_load(&o, &err);
    assert_null(agent_catalog_find(c, "ws-claude"));
    assert_null(agent_catalog_find(c, "ws-loom"));
    assert_string_equal(prompt_of(c, "mine"), "mine");
    char want[400];
    snprintf(want, sizeof want, "skipped %s/.claude/agents: the workspace is not trusted", ws);
    assert_true(any_warning(c, want));
    snprintf(want, sizeof want, "skipped %s/.loom/agents: the workspace is not trusted", ws);
    assert_true(any_warning(c, want));
    assert_int_equal(agent_catalog_warning_count(c), 2);
    agent_catalog_free(c);
}

static void an_untrusted_workspace_without_agent_folders_says_nothing(void **state)
{
    agent_catalog_opts o = {.cwd = ws, .home = home, .user_home = home, .trusted = false};
    loom_error err = {0};
    agent_catalog *c = agent_catalog_load(&o, &err);
    assert_int_equal(agent_catalog_warning_count(c), 0);
    assert_int_equal(agent_catalog_count(c), 5);
    agent_catalog_free(c);
}

static void bad_files_warn_and_the_rest_of_the_catalog_loads(void **state)
{
    tmpdir_write(ws, ".loom/agents/bad-mode.md",
                 "---\nname: moody\ndescription: d\npermissionMode: sideways\n---\nstill loads\n");
    tmpdir_write(ws, ".loom/agents/plain.md", "No frontmatter at all.\n");
    tmpdir_write(ws, ".loom/agents/broken.md", "---\nname: x\ndescription: \"open\n---\n");
    tmpdir_write(ws, ".loom/agents/notes.txt", "---\nname: txt\ndescription: d\n---\nnot .md\n");
    tmpdir_write(ws, ".loom/agents/.hidden.md", "---\nname: hidden\ndescription: d\n---\nb\n");
    put_agent(ws, ".loom/agents/good.md", "good", "fine");
    char fifo[400];
    snprintf(fifo, sizeof fifo, "%s/.loom/agents/pipe.md", ws);
    assert_int_equal(mkfifo(fifo, 0600), 0);
    agent_catalog_opts o = {.cwd = ws, .home = home, .user_home = home, .trusted = true};
    loom_error err = {0};
    agent_catalog *c = agent_catalog_load(&o, &err);
    assert_string_equal(prompt_of(c, "moody"), "still loads");
    assert_string_equal(prompt_of(c, "good"), "fine");
    assert_null(agent_catalog_find(c, "txt"));
    assert_null(agent_catalog_find(c, "hidden"));
    assert_null(agent_catalog_find(c, "x"));
    char want[400];
    snprintf(want, sizeof want, "%s/.loom/agents/bad-mode.md: key 'permissionMode': unknown mode 'sideways'", ws);
    assert_true(any_warning(c, want));
    snprintf(want, sizeof want, "%s/.loom/agents/plain.md: no frontmatter", ws);
    assert_true(any_warning(c, want));
    assert_true(any_warning(c, "; skipped"));
    snprintf(want, sizeof want, "%s/.loom/agents/broken.md: line ", ws);
    assert_true(any_warning(c, want));
    snprintf(want, sizeof want, "%s/.loom/agents/pipe.md: not a regular file; skipped", ws);
    assert_true(any_warning(c, want));
    assert_int_equal(agent_catalog_warning_count(c), 4);
    agent_catalog_free(c);
}

static void overriding_a_role_is_allowed_but_never_silent_and_keeps_its_place(void **state)
{
    put_agent(ws, ".loom/agents/explore.md", "Explore", "my own explorer");
    agent_catalog_opts o = {.cwd = ws, .home = home, .user_home = home, .trusted = true};
    loom_error err = {0};
    agent_catalog *c = agent_catalog_load(&o, &err);
    const agent_def *d = agent_catalog_find(c, "Explore");
    assert_string_equal(d->prompt, "my own explorer");
    assert_int_equal(d->role, AGENT_ROLE_CUSTOM);
    assert_ptr_equal(agent_catalog_at(c, 1), d);
    char want[400];
    snprintf(want, sizeof want, "%s/.loom/agents/explore.md: overrides the built-in agent Explore", ws);
    assert_true(any_warning(c, want));
    agent_catalog_free(c);
}

static void roles_come_first_in_fixed_order_then_customs_by_name(void **state)
{
    put_agent(ws, ".loom/agents/1.md", "zeta", "z");
    put_agent(home, "agents/2.md", "alpha", "a");
    put_agent(ws, ".claude/agents/3.md", "mid", "m");
    agent_catalog_opts o = {.cwd = ws, .home = home, .user_home = home, .trusted = true};
    loom_error err = {0};
    agent_catalog *c = agent_catalog_load(&o, &err);
    const char *want[] = {"general-purpose", "Explore", "Plan", "verification", "fork", "alpha", "mid", "zeta"};
    assert_int_equal(agent_catalog_count(c), 8);
    for (size_t i = 0; i < 8; i++)
        assert_string_equal(agent_catalog_at(c, i)->name, want[i]);
    assert_null(agent_catalog_at(c, 8));
    agent_catalog_free(c);
}

static void find_is_exact_first_then_ignores_case(void **state)
{
    put_agent(ws, ".loom/agents/e.md", "explore", "lowercase one");
    agent_catalog_opts o = {.cwd = ws, .home = home, .user_home = home, .trusted = true};
    loom_error err = {0};
    agent_catalog *c = agent_catalog_load(&o, &err);
    assert_int_equal(agent_catalog_find(c, "Explore")->role, AGENT_ROLE_EXPLORE);
    assert_string_equal(agent_catalog_find(c, "explore")->prompt, "lowercase one");
    assert_int_equal(agent_catalog_find(c, "PLAN")->role, AGENT_ROLE_PLAN);
    assert_null(agent_catalog_find(c, "nobody"));
    assert_null(agent_catalog_find(c, NULL));
    agent_catalog_free(c);
}

static void a_workspace_that_is_the_home_is_read_once(void **state)
{
    /* cwd = the user's home folder: <cwd>/.loom/agents is ~/.loom/agents. */
    char loomhome[400];
    snprintf(loomhome, sizeof loomhome, "%s/.loom", ws);
    put_agent(loomhome, "agents/a.md", "once", "x");
    agent_catalog_opts o = {.cwd = ws, .home = loomhome, .user_home = home, .trusted = true};
    loom_error err = {0};
    agent_catalog *c = agent_catalog_load(&o, &err);
    assert_int_equal(agent_catalog_count(c), 6);
    assert_int_equal(agent_catalog_warning_count(c), 0);
    agent_catalog_free(c);
}

static void the_home_defaults_to_loom_home(void **state)
{
    put_agent(home, "agents/a.md", "from-env-home", "x");
    setenv("LOOM_HOME", home, 1);
    agent_catalog *c = agent_catalog_load(NULL, NULL);
    assert_non_null(agent_catalog_find(c, "from-env-home"));
    agent_catalog_free(c);
    unsetenv("LOOM_HOME");
}

/* ---- the built-in roles --------------------------------------------------------------- */

static bool has_tool(char **tools, const char *name)
{
    for (; tools && *tools; tools++)
        if (strcmp(*tools, name) == 0)
            return true;
    return false;
}

static void the_builtin_roles_carry_their_markers_and_limits(void **state)
{
    size_t n = 0;
    const agent_def *r = agent_roles_builtin(&n);
    assert_int_equal(n, 5);
    const struct {
        const char *name;
        agent_role role;
    } want[] = {{"general-purpose", AGENT_ROLE_GENERAL}, {"Explore", AGENT_ROLE_EXPLORE},
                {"Plan", AGENT_ROLE_PLAN},               {"verification", AGENT_ROLE_VERIFICATION},
                {"fork", AGENT_ROLE_FORK}};
    for (size_t i = 0; i < n; i++) {
        assert_string_equal(r[i].name, want[i].name);
        assert_int_equal(r[i].role, want[i].role);
        assert_string_equal(agent_role_name(r[i].role), want[i].name);
        assert_string_equal(r[i].source, "built-in");
        assert_non_null(r[i].description);
        if (r[i].role == AGENT_ROLE_FORK)
            continue;
        char marker[64];
        snprintf(marker, sizeof marker, "You are Loom's %s agent", want[i].name);
        if (strncmp(r[i].prompt, marker, strlen(marker)) != 0)
            fail_msg("%s's prompt does not open with \"%s\"", want[i].name, marker);
    }
    assert_string_equal(agent_role_name(AGENT_ROLE_CUSTOM), "custom");
    /* general-purpose and verification: every tool; Explore and Plan read only */
    assert_null(r[0].tools);
    assert_false(r[0].read_only);
    for (int i = 1; i <= 2; i++) {
        assert_true(r[i].read_only);
        assert_true(has_tool(r[i].tools, "Read") && has_tool(r[i].tools, "Glob") && has_tool(r[i].tools, "Grep"));
        assert_false(has_tool(r[i].tools, "Write") || has_tool(r[i].tools, "Edit") || has_tool(r[i].tools, "Bash"));
        assert_string_equal(r[i].model, "inherit");
    }
    assert_null(r[3].tools);
    assert_false(r[3].read_only);
    assert_non_null(r[3].output_schema);
    /* the fork: the parent's prompt and model, byte for byte */
    assert_null(r[4].prompt);
    assert_null(r[4].model);
    assert_null(r[4].tools);
    assert_null(r[4].output_schema);
}

static void the_plan_prompt_asks_for_steps_files_and_risks(void **state)
{
    const agent_def *r = agent_roles_builtin(NULL);
    assert_non_null(strstr(r[2].prompt, "Steps:"));
    assert_non_null(strstr(r[2].prompt, "Files:"));
    assert_non_null(strstr(r[2].prompt, "Risks:"));
}

static void the_verification_prompt_forbids_the_four_anti_patterns(void **state)
{
    const agent_def *r = agent_roles_builtin(NULL);
    const char *p = r[3].prompt;
    const char *must[] = {"Verification avoidance", "run the tests yourself", "first 80%",
                          "boundary conditions", "abnormal paths", "dev server", "browser",
                          "migration", "up and down", "rollback", "PASS", "FAIL", "PARTIAL",
                          "StructuredOutput"};
    for (size_t i = 0; i < sizeof must / sizeof must[0]; i++)
        if (!strstr(p, must[i]))
            fail_msg("the verification prompt lacks \"%s\"", must[i]);
}

static void the_verdict_schema_is_one_schema_c_applies(void **state)
{
    const agent_def *r = agent_roles_builtin(NULL);
    const json_t *schema = r[3].output_schema;
    loom_error err = {0};
    assert_int_equal(schema_check(schema, &err), 0);
    json_error_t je;
    json_t *good = json_loads("{\"verdict\":\"FAIL\",\"steps\":[{\"command\":\"make test\",\"exit_code\":2,"
                              "\"result\":\"1 test failed\"}]}", 0, &je);
    assert_int_equal(schema_validate(schema, good, NULL), 0);
    json_t *bad_verdict = json_loads("{\"verdict\":\"LOOKS_FINE\",\"steps\":[]}", 0, &je);
    loom_str why = LOOM_STR_INIT;
    assert_int_equal(schema_validate(schema, bad_verdict, &why), -1);
    assert_non_null(strstr(str_cstr(&why), "verdict"));
    str_clear(&why);
    json_t *bad_step = json_loads("{\"verdict\":\"PASS\",\"steps\":[{\"command\":\"make\",\"exit_code\":\"0\","
                                  "\"result\":\"ok\"}]}", 0, &je);
    assert_int_equal(schema_validate(schema, bad_step, &why), -1);
    assert_non_null(strstr(str_cstr(&why), "steps[0].exit_code"));
    json_t *no_steps = json_loads("{\"verdict\":\"PASS\"}", 0, &je);
    assert_int_equal(schema_validate(schema, no_steps, NULL), -1);
    str_free(&why);
    json_decref(good);
    json_decref(bad_verdict);
    json_decref(bad_step);
    json_decref(no_steps);
}


/* docs/agents.md's roles table names every role, in catalog order. */
static void the_docs_roles_table_matches_the_rows(void **state)
{
    const char *data = getenv("LOOM_TEST_DATA");
    if (!data)
        skip();
    char path[600];
    snprintf(path, sizeof path, "%s/../docs/agents.md", data);
    char *doc = NULL;
    size_t len = 0;
    loom_error err = {0};
    assert_int_equal(file_read_all(path, &doc, &len, &err), 0);
    size_t n = 0;
    const agent_def *r = agent_roles_builtin(&n);
    const char *at = doc;
    for (size_t i = 0; i < n; i++) {
        char row[96];
        snprintf(row, sizeof row, "\n| `%s` |", r[i].name);
        const char *hit = strstr(at, row);
        if (!hit)
            fail_msg("docs/agents.md: no roles-table row for %s after the previous one", r[i].name);
        at = hit + 1;
    }
    free(doc);
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

int main(void)
{
    const struct CMUnitTest tests[] = {
        T(a_good_file_gives_every_key),
        T(tools_as_a_list_and_commas_inside_parentheses_stay_one_rule),
        T(no_tools_key_or_a_star_means_every_tool_and_an_empty_list_none),
        T(a_bad_permission_mode_warns_naming_file_and_key_and_the_rest_loads),
        T(each_bad_value_is_one_warning_and_its_key_dropped),
        T(maxturns_and_background_also_read_from_quoted_text),
        T(a_bad_tools_value_fails_closed),
        T(a_file_that_cannot_be_an_agent_says_why),
        T(an_empty_body_is_a_warning),
        T(later_sources_win_user_then_plugins_then_the_project),
        T(compat_off_leaves_out_every_claude_folder),
        T(an_untrusted_workspace_is_skipped_with_a_notice_naming_its_folders),
        T(an_untrusted_workspace_without_agent_folders_says_nothing),
        T(bad_files_warn_and_the_rest_of_the_catalog_loads),
        T(overriding_a_role_is_allowed_but_never_silent_and_keeps_its_place),
        T(roles_come_first_in_fixed_order_then_customs_by_name),
        T(find_is_exact_first_then_ignores_case),
        T(a_workspace_that_is_the_home_is_read_once),
        T(the_home_defaults_to_loom_home),
        T(the_builtin_roles_carry_their_markers_and_limits),
        T(the_plan_prompt_asks_for_steps_files_and_risks),
        T(the_verification_prompt_forbids_the_four_anti_patterns),
        T(the_verdict_schema_is_one_schema_c_applies),
        T(the_docs_roles_table_matches_the_rows),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
