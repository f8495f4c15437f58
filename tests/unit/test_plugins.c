/* test_plugins.c — plugins (ext/plugins): the manifest in both folders
 * (.loom-plugin first, Claude Code's .claude-plugin as is), components
 * inline and by path, the default layout, ${CLAUDE_PLUGIN_ROOT}; a
 * malformed manifest an error naming the file; installed.json and
 * enabledPlugins (a project switches one on only when trusted); a
 * marketplace's file; the install copy refusing a link that leaves the
 * plugin; install / disable / remove keeping the settings' other keys; a
 * git marketplace cloned from a local repository; a plugin's hooks in
 * governance (skipped, with a warning naming it, when untrusted) and its
 * MCP servers as plugin:<p>:<s> (waiting for approval when untrusted). */
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
#include "ext/mcp/config.h"
#include "ext/plugins/manage.h"
#include "ext/plugins/manifest.h"
#include "ext/plugins/plugins.h"
#include "governance/governance.h"
#include "tmpdir.h"

static char dir[256];
static char home[300];

/* Every file of these tests is under dir. */
#define write_file(rel, text) tmpdir_write(dir, (rel), (text))

static char *at(const char *rel)
{
    loom_str s = LOOM_STR_INIT;
    str_printf(&s, "%s/%s", dir, rel);
    return str_steal(&s);
}

static json_t *read_json(const char *path)
{
    char *text = NULL;
    size_t len;
    loom_error err;
    if (file_read_all(path, &text, &len, &err) != 0)
        return NULL;
    json_t *v = json_loads(text, 0, NULL);
    free(text);
    return v;
}

static bool warned(const json_t *warnings, const char *needle)
{
    size_t i;
    json_t *w;
    json_array_foreach(warnings, i, w) if (strstr(json_string_value(w), needle)) return true;
    return false;
}

static int setup(void **state)
{
    (void)state;
    /* The tests below compare resolved paths. */
    assert_int_equal(tmpdir_make(dir, sizeof dir, "loom-plugins", true), 0);
    snprintf(home, sizeof home, "%s/home", dir);
    mkdir(home, 0700);
    setenv("LOOM_HOME", home, 1);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    assert_int_equal(tmpdir_remove(dir), 0);
    return 0;
}

/* A plugin with one of every component, from Claude Code's folder. */
static void make_full_plugin(const char *rel)
{
    char p[400];
#define AT(x) (snprintf(p, sizeof p, "%s/%s", rel, x), p)
    write_file(AT(".claude-plugin/plugin.json"),
               "{\"name\": \"tools\", \"version\": \"1.2.0\", \"description\": \"Tools\", "
               "\"author\": {\"name\": \"A\"}, \"homepage\": \"https://x\", "
               "\"mcpServers\": {\"notes\": {\"command\": \"${CLAUDE_PLUGIN_ROOT}/srv\"}}}");
    write_file(AT("commands/hello.md"), "---\ndescription: hi\n---\nHello $ARGUMENTS\n");
    write_file(AT("agents/helper.md"), "---\nname: helper\ndescription: d\n---\nYou help.\n");
    write_file(AT("skills/greet/SKILL.md"), "---\nname: greet\ndescription: d\n---\nGreet.\n");
    write_file(AT("output-styles/terse.md"), "---\ndescription: t\n---\nBe terse.\n");
    write_file(AT("hooks/hooks.json"),
               "{\"description\": \"x\", \"hooks\": {\"PreToolUse\": [{\"matcher\": \"Bash\", "
               "\"hooks\": [{\"type\": \"command\", \"command\": "
               "\"${CLAUDE_PLUGIN_ROOT}/hooks/mark.sh\"}]}]}}");
    write_file(AT("hooks/mark.sh"), "#!/bin/sh\ntouch \"$CLAUDE_PROJECT_DIR/marker\"\n");
#undef AT
}

static void test_manifest_claude_layout(void **state)
{
    (void)state;
    make_full_plugin("p/tools");
    char *root = at("p/tools");
    plugin p;
    loom_error err;
    assert_int_equal(plugin_read(root, &p, &err), 0);
    assert_string_equal(p.name, "tools");
    assert_string_equal(p.version, "1.2.0");
    assert_string_equal(p.root, root);
    char *cmds = at("p/tools/commands");
    assert_string_equal(p.commands_dir, cmds);
    free(cmds);
    assert_non_null(p.agents_dir);
    assert_non_null(p.skills_dir);
    assert_non_null(strstr(p.styles_dir, "/output-styles"));
    /* hooks/hooks.json's {"hooks": …} wrapper is taken off, the root expanded. */
    const json_t *groups = json_object_get(p.hooks, "PreToolUse");
    assert_int_equal(json_array_size(groups), 1);
    const char *cmd = json_string_value(json_object_get(
        json_array_get(json_object_get(json_array_get(groups, 0), "hooks"), 0), "command"));
    char want[600];
    snprintf(want, sizeof want, "%s/hooks/mark.sh", root);
    assert_string_equal(cmd, want);
    /* The manifest's inline MCP servers, the root expanded. */
    snprintf(want, sizeof want, "%s/srv", root);
    assert_string_equal(json_string_value(json_object_get(
                            json_object_get(p.mcp_servers, "notes"), "command")),
                        want);
    /* … and its process is told the root, as Claude Code tells it. */
    assert_string_equal(json_string_value(json_object_get(json_object_get(json_object_get(
                            p.mcp_servers, "notes"), "env"), "CLAUDE_PLUGIN_ROOT")),
                        root);
    assert_null(p.warnings);
    plugin_clear(&p);
    free(root);
}

static void test_manifest_loom_first_and_paths(void **state)
{
    (void)state;
    write_file("q/.loom-plugin/plugin.json",
               "{\"name\": \"mine\", \"commands\": [\"./cmds\", \"./more\"], "
               "\"hooks\": \"./conf/h.json\", \"mcpServers\": \"./conf/servers.json\", "
               "\"outputStyles\": \"./styles\"}");
    write_file("q/.claude-plugin/plugin.json", "{\"name\": \"theirs\"}");
    write_file("q/cmds/a.md", "A\n");
    write_file("q/more/b.md", "B\n");
    write_file("q/styles/s.md", "S\n");
    write_file("q/conf/h.json",
               "{\"Stop\": [{\"hooks\": [{\"type\": \"command\", \"command\": \"true\"}]}]}");
    write_file("q/conf/servers.json",
               "{\"mcpServers\": {\"db\": {\"command\": \"${LOOM_PLUGIN_ROOT}/db\"}}}");
    write_file("q/.mcp.json", "{\"mcpServers\": {\"files\": {\"command\": \"x\"}}}");
    char *root = at("q");
    plugin p;
    loom_error err;
    assert_int_equal(plugin_read(root, &p, &err), 0);
    assert_string_equal(p.name, "mine"); /* .loom-plugin wins */
    assert_non_null(strstr(p.commands_dir, "/q/cmds"));
    assert_non_null(strstr(p.styles_dir, "/q/styles"));
    assert_true(warned(p.warnings, "./more ignored: one folder per kind counts"));
    assert_non_null(json_object_get(p.hooks, "Stop"));
    /* The default .mcp.json and the manifest's file add up. */
    assert_non_null(json_object_get(p.mcp_servers, "files"));
    assert_non_null(strstr(json_string_value(json_object_get(
                               json_object_get(p.mcp_servers, "db"), "command")),
                           "/q/db"));
    plugin_clear(&p);
    free(root);
}

static void test_manifest_errors_name_the_file(void **state)
{
    (void)state;
    static const struct {
        const char *manifest, *needle;
    } cases[] = {
        {"{\"name\": \"x\",", "plugin.json"},
        {"[1]", "must hold a JSON object"},
        {"{\"version\": \"1\"}", "\"name\" is missing"},
        {"{\"name\": \"Bad Name\"}", "plugin name \"Bad Name\""},
        {"{\"name\": \"a__b\"}", "no \"__\""},
        {"{\"name\": \"x\", \"commands\": \"../up\"}", "must be a path relative to the plugin"},
        {"{\"name\": \"x\", \"commands\": \"./a/../../up\"}", "must not climb out"},
        {"{\"name\": \"x\", \"agents\": \"./nowhere\"}", "does not exist"},
        {"{\"name\": \"x\", \"skills\": 3}", "must be a path or a list of paths"},
        {"{\"name\": \"x\", \"version\": 2}", "\"version\" must be a string"},
        {"{\"name\": \"x\", \"hooks\": {\"PreToolUse\": 1}}", "hooks.PreToolUse"},
        {"{\"name\": \"x\", \"mcpServers\": {\"s\": 1}}", "MCP server \"s\" must be an object"},
        {"{\"name\": \"x\", \"hooks\": \"./h.json\"}", "h.json"},
    };
    write_file("bad/h.json", "{not json");
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        write_file("bad/.claude-plugin/plugin.json", cases[i].manifest);
        char *root = at("bad");
        plugin p;
        loom_error err;
        memset(&err, 0, sizeof err);
        if (plugin_read(root, &p, &err) == 0)
            fail_msg("case %zu: a malformed manifest (%s) must be refused", i, cases[i].manifest);
        if (!strstr(err.message, cases[i].needle) || !strstr(err.message, "/bad/"))
            fail_msg("case %zu: the error must name the file and say \"%s\": %s", i,
                     cases[i].needle, err.message);
        assert_null(p.name);
        free(root);
    }
    /* A link out of the plugin is refused even when the path looks inside. */
    char *link = at("bad/etc");
    assert_int_equal(symlink("/etc", link), 0);
    free(link);
    write_file("bad/.claude-plugin/plugin.json", "{\"name\": \"x\", \"commands\": \"./etc\"}");
    plugin p;
    loom_error err;
    char *root = at("bad");
    assert_int_equal(plugin_read(root, &p, &err), -1);
    assert_non_null(strstr(err.message, "leads outside the plugin"));
    free(root);
}

static void test_manifest_absent(void **state)
{
    (void)state;
    write_file("plain-one/commands/x.md", "x\n");
    char *root = at("plain-one");
    plugin p;
    loom_error err;
    assert_int_equal(plugin_read(root, &p, &err), 0);
    assert_string_equal(p.name, "plain-one"); /* named after its folder */
    assert_non_null(p.commands_dir);
    assert_null(p.hooks);
    plugin_clear(&p);
    free(root);
}

/* installed.json naming three plugins: a good one, a second good one, and
 * one whose folder is gone. */
static void write_installed(void)
{
    make_full_plugin("home/plugins/mk/tools");
    write_file("home/plugins/mk/other/.loom-plugin/plugin.json", "{\"name\": \"other\"}");
    loom_str s = LOOM_STR_INIT;
    str_printf(&s,
               "{\"version\": 1, \"plugins\": {"
               "\"tools@mk\": {\"name\": \"tools\", \"marketplace\": \"mk\", \"root\": "
               "\"%s/plugins/mk/tools\"},"
               "\"other@mk\": {\"name\": \"other\", \"marketplace\": \"mk\", \"root\": "
               "\"%s/plugins/mk/other\"},"
               "\"gone@mk\": {\"name\": \"gone\", \"marketplace\": \"mk\", \"root\": "
               "\"%s/plugins/mk/gone\"}}}",
               home, home, home);
    write_file("home/plugins/installed.json", s.ptr);
    str_free(&s);
}

static const plugin *find(const plugin_set *s, const char *id)
{
    for (size_t i = 0; i < s->n; i++)
        if (!strcmp(s->v[i].id, id))
            return &s->v[i];
    return NULL;
}

static void test_store_enabled(void **state)
{
    (void)state;
    write_installed();
    json_t *user = json_loads("{\"enabledPlugins\": {\"tools@mk\": true, \"gone@mk\": true, "
                              "\"ghost@mk\": true}}", 0, NULL);
    json_t *project = json_loads("{\"enabledPlugins\": {\"other@mk\": true}}", 0, NULL);
    plugins_opts o = {.home = home, .user_settings = user, .project_settings = project};
    plugin_set s;
    loom_error err;
    assert_int_equal(plugins_load(&o, &s, &err), 0);
    assert_int_equal(s.n, 3);
    assert_true(find(&s, "tools@mk")->enabled);
    assert_string_equal(find(&s, "tools@mk")->marketplace, "mk");
    if (find(&s, "other@mk")->enabled)
        fail_msg("an untrusted project's settings must not switch a plugin on");
    assert_true(warned(s.warnings, "the project settings enable plugin other@mk; ignored"));
    const plugin *gone = find(&s, "gone@mk");
    assert_non_null(gone->error);
    assert_true(warned(s.warnings, "plugin gone@mk:"));
    assert_true(warned(s.warnings, "enabledPlugins names ghost@mk, which is not installed"));
    size_t n;
    ext_plugin_root *rows = plugins_roots(&s, &n);
    assert_int_equal(n, 1); /* a broken plugin counts for nothing */
    assert_string_equal(rows[0].name, "tools");
    assert_non_null(strstr(rows[0].commands, "/tools/commands"));
    free(rows);
    plugin_set_free(&s);

    /* Trusted: the project may switch one on; switching off always counts. */
    json_decref(project);
    project = json_loads("{\"enabledPlugins\": {\"other@mk\": true, \"tools@mk\": false}}", 0,
                         NULL);
    o.project_settings = project;
    o.trusted = true;
    assert_int_equal(plugins_load(&o, &s, &err), 0);
    assert_true(find(&s, "other@mk")->enabled);
    assert_false(find(&s, "tools@mk")->enabled);
    plugin_set_free(&s);
    json_decref(user);
    json_decref(project);

    /* An installed list that is not JSON is the one hard error. */
    write_file("home/plugins/installed.json", "{");
    assert_int_equal(plugins_load(&o, &s, &err), -1);
    assert_non_null(strstr(err.message, "installed.json"));
}

static void test_marketplace_file(void **state)
{
    (void)state;
    write_file("m/.claude-plugin/marketplace.json",
               "{\"name\": \"mk\", \"owner\": {\"name\": \"o\"}, \"plugins\": ["
               "{\"name\": \"tools\", \"source\": \"./tools\"},"
               "{\"name\": \"remote\", \"source\": {\"source\": \"github\", \"repo\": \"o/r\"}}]}");
    char *root = at("m");
    json_t *doc;
    loom_error err;
    assert_int_equal(marketplace_read(root, &doc, &err), 0);
    assert_string_equal(json_get_str(doc, "name", ""), "mk");
    json_decref(doc);
    static const struct {
        const char *text, *needle;
    } bad[] = {
        {"{\"plugins\": []}", "\"name\" must be the marketplace's name"},
        {"{\"name\": \"mk\", \"plugins\": {}}", "\"plugins\" must be a list"},
        {"{\"name\": \"mk\", \"plugins\": [{\"name\": \"a\"}]}", "plugins[0] (a): \"source\""},
        {"{\"name\": \"mk\", \"plugins\": [{\"name\": \"A B\", \"source\": \"./a\"}]}",
         "plugins[0]: \"name\""},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        write_file("m/.claude-plugin/marketplace.json", bad[i].text);
        if (marketplace_read(root, &doc, &err) == 0)
            fail_msg("case %zu: a malformed marketplace.json must be refused", i);
        if (!strstr(err.message, bad[i].needle) || !strstr(err.message, "marketplace.json"))
            fail_msg("case %zu: the error must name the file and say \"%s\": %s", i,
                     bad[i].needle, err.message);
    }
    free(root);
}

static void make_marketplace(void)
{
    write_file("market/.claude-plugin/marketplace.json",
               "{\"name\": \"mk\", \"owner\": {\"name\": \"o\"}, \"plugins\": ["
               "{\"name\": \"tools\", \"source\": \"./plugins/tools\", \"description\": \"T\"},"
               "{\"name\": \"leaky\", \"source\": \"./plugins/leaky\"},"
               "{\"name\": \"escape\", \"source\": \"./../outside\"}]}");
    make_full_plugin("market/plugins/tools");
    write_file("market/plugins/leaky/.claude-plugin/plugin.json", "{\"name\": \"leaky\"}");
    write_file("secret.txt", "secret\n");
    char *link = at("market/plugins/leaky/stolen");
    char *target = at("secret.txt");
    assert_int_equal(symlink(target, link), 0);
    free(link);
    free(target);
}

static void test_install_round_trip(void **state)
{
    (void)state;
    make_marketplace();
    /* An inner link and an executable survive the copy. */
    char *inner = at("market/plugins/tools/commands/again.md");
    assert_int_equal(symlink("hello.md", inner), 0);
    free(inner);
    char *script = at("market/plugins/tools/hooks/mark.sh");
    chmod(script, 0755);
    free(script);
    char *settings = at("home/settings.json");
    write_file("home/settings.json", "{\"model\": \"m\", \"enabledPlugins\": {\"x@y\": false}}");
    char *mroot = at("market");
    loom_error err;
    char *name = NULL;
    assert_int_equal(marketplace_add(home, mroot, &name, &err), 0);
    assert_string_equal(name, "mk");
    free(name);
    char *id = NULL;
    assert_int_equal(plugin_install(home, settings, "tools@mk", dir, &id, &err), 0);
    assert_string_equal(id, "tools@mk");
    free(id);
    struct stat st;
    char *copy = at("home/plugins/mk/tools/hooks/mark.sh");
    assert_int_equal(stat(copy, &st), 0);
    assert_true(st.st_mode & S_IXUSR);
    free(copy);
    copy = at("home/plugins/mk/tools/commands/again.md");
    assert_int_equal(lstat(copy, &st), 0);
    assert_true(S_ISLNK(st.st_mode));
    free(copy);
    json_t *doc = read_json(settings);
    assert_string_equal(json_get_str(doc, "model", ""), "m"); /* other keys kept */
    assert_true(json_is_true(json_object_get(json_object_get(doc, "enabledPlugins"), "tools@mk")));
    assert_true(json_is_false(json_object_get(json_object_get(doc, "enabledPlugins"), "x@y")));
    json_decref(doc);

    /* "tools" alone: the one marketplace listing it. */
    assert_int_equal(plugin_install(home, settings, "tools", dir, NULL, &err), 0);

    /* A link leaving the plugin stops the install, naming it, and leaves
     * nothing behind. */
    if (plugin_install(home, settings, "leaky@mk", dir, NULL, &err) == 0)
        fail_msg("a plugin with a link out of its folder must not be installed");
    assert_non_null(strstr(err.message, "/leaky/stolen"));
    assert_non_null(strstr(err.message, "outside the plugin"));
    char *leaky = at("home/plugins/mk/leaky");
    assert_false(file_exists(leaky));
    free(leaky);
    assert_int_equal(plugin_install(home, settings, "escape@mk", dir, NULL, &err), -1);
    assert_non_null(strstr(err.message, "must not climb out"));
    assert_int_equal(plugin_install(home, settings, "nosuch@mk", dir, NULL, &err), -1);
    assert_int_equal(err.code, LOOM_ERR_RESOURCE_NOT_FOUND);

    /* Disable by name, then remove: the copy, the record and the key go. */
    assert_int_equal(plugin_set_enabled(home, settings, "tools", false, &id, &err), 0);
    assert_string_equal(id, "tools@mk");
    free(id);
    doc = read_json(settings);
    assert_true(json_is_false(json_object_get(json_object_get(doc, "enabledPlugins"), "tools@mk")));
    json_decref(doc);
    assert_int_equal(plugin_remove(home, settings, "tools@mk", NULL, &err), 0);
    char *gone = at("home/plugins/mk/tools");
    assert_false(file_exists(gone));
    free(gone);
    doc = read_json(settings);
    assert_null(json_object_get(json_object_get(doc, "enabledPlugins"), "tools@mk"));
    json_decref(doc);
    json_t *installed;
    assert_int_equal(plugins_installed_read(home, &installed, &err), 0);
    assert_int_equal(json_object_size(json_object_get(installed, "plugins")), 0);
    json_decref(installed);
    assert_int_equal(plugin_remove(home, settings, "tools", NULL, &err), -1);
    assert_int_equal(err.code, LOOM_ERR_RESOURCE_NOT_FOUND);
    free(mroot);
    free(settings);
}

static void test_install_from_path(void **state)
{
    (void)state;
    make_full_plugin("src/tools");
    char *settings = at("home/settings.json");
    loom_error err;
    char *id = NULL;
    assert_int_equal(plugin_install(home, settings, "./src/tools", dir, &id, &err), 0);
    assert_string_equal(id, "tools");
    free(id);
    plugins_opts o = {.home = home};
    json_t *user = read_json(settings);
    o.user_settings = user;
    plugin_set s;
    assert_int_equal(plugins_load(&o, &s, &err), 0);
    assert_int_equal(s.n, 1);
    assert_true(s.v[0].enabled);
    assert_non_null(strstr(s.v[0].root, "/plugins/_local/tools"));
    plugin_set_free(&s);
    json_decref(user);
    free(settings);
}

static void test_git_marketplace(void **state)
{
    (void)state;
    if (system("git --version >/dev/null 2>&1") != 0)
        skip();
    make_marketplace();
    char cmd[1200];
    snprintf(cmd, sizeof cmd,
             "cd '%s/market' && rm -f plugins/leaky/stolen && git init -q && git add -A && "
             "git -c user.name=t -c user.email=t@t commit -qm m",
             dir);
    assert_int_equal(system(cmd), 0);
    char url[600];
    snprintf(url, sizeof url, "file://%s/market", dir);
    loom_error err;
    char *name = NULL;
    assert_int_equal(marketplace_add(home, url, &name, &err), 0);
    assert_string_equal(name, "mk");
    free(name);
    json_t *known;
    assert_int_equal(marketplace_known(home, &known, &err), 0);
    const json_t *rec = json_object_get(known, "mk");
    assert_string_equal(json_get_str(rec, "kind", ""), "git");
    assert_non_null(strstr(json_get_str(rec, "root", ""), "/plugins/_marketplaces/mk"));
    json_decref(known);
    /* Adding it again refreshes the clone; another source under the name is refused. */
    assert_int_equal(marketplace_add(home, url, NULL, &err), 0);
    char *folder = at("market");
    assert_int_equal(marketplace_add(home, folder, NULL, &err), -1);
    assert_non_null(strstr(err.message, "already added from"));
    free(folder);
    char *settings = at("home/settings.json");
    assert_int_equal(plugin_install(home, settings, "tools@mk", dir, NULL, &err), 0);
    char *copy = at("home/plugins/mk/tools/.claude-plugin/plugin.json");
    assert_true(file_exists(copy));
    free(copy);
    assert_int_equal(marketplace_remove(home, "mk", &err), 0);
    char *clone = at("home/plugins/_marketplaces/mk");
    assert_false(file_exists(clone));
    free(clone);
    snprintf(url, sizeof url, "file://%s/no-such-repo", dir);
    assert_int_equal(marketplace_add(home, url, NULL, &err), -1);
    assert_non_null(strstr(err.message, "git clone"));
    free(settings);
}

static void test_governance_hooks(void **state)
{
    (void)state;
    json_t *hooks = json_loads(
        "[{\"plugin\": \"tools\", \"hooks\": {\"PreToolUse\": [{\"matcher\": \"Bash\", "
        "\"hooks\": [{\"type\": \"command\", \"command\": \"true\"}]}]}},"
        "{\"plugin\": \"broken\", \"hooks\": {\"PreToolUse\": [{\"hooks\": 5}]}}]",
        0, NULL);
    for (int trusted = 0; trusted < 2; trusted++) {
        governance_settings gs = {.trust = trusted ? GOVERNANCE_TRUSTED : GOVERNANCE_UNTRUSTED,
                                  .plugin_hooks = hooks};
        loom_error err;
        governance *g = governance_new(dir, "s1", "/dev/null", &gs, &err);
        assert_non_null(g);
        assert_int_equal(hook_registry_count(g->hooks, HOOK_PRE_TOOL_USE), 1);
        bool skipped = false, broken = false;
        for (size_t i = 0; i < g->n_warnings; i++) {
            skipped = skipped || strstr(g->warnings[i], "plugin tools: its hooks will not run");
            broken = broken || strstr(g->warnings[i], "plugin broken: its hooks were not loaded");
        }
        if (skipped != !trusted)
            fail_msg("an untrusted workspace must skip a plugin's hooks with a warning naming "
                     "the plugin (trusted %d)", trusted);
        assert_true(broken);
        governance_free(g);
    }
    json_decref(hooks);
}

static void test_mcp_plugin_servers(void **state)
{
    (void)state;
    json_t *servers = json_loads("[{\"plugin\": \"tools\", \"source\": \"/p/tools\", "
                                 "\"servers\": {\"notes\": {\"command\": \"srv\"}, "
                                 "\"bad/name\": {\"command\": \"x\"}}}]",
                                 0, NULL);
    char *user = at("home/settings.json");
    mcp_config_inputs in = {.user_settings_path = user, .plugin_servers = servers};
    mcp_config_set set;
    loom_error err;
    assert_int_equal(mcp_config_load(&in, &set, &err), 0);
    const mcp_server_config *c = mcp_config_find(&set, "plugin:tools:notes");
    assert_non_null(c);
    assert_int_equal(c->scope, MCP_SCOPE_PLUGIN);
    assert_string_equal(mcp_scope_name(c->scope), "plugin");
    if (!c->needs_approval)
        fail_msg("a plugin's server must wait for approval in an untrusted workspace");
    assert_true(warned(set.warnings, "\"plugin:tools:notes\" waits for approval"));
    assert_non_null(mcp_config_find(&set, "plugin:tools:bad/name")->error);
    mcp_config_set_free(&set);

    json_t *local = json_loads("{\"enabledMcpjsonServers\": [\"plugin:tools:notes\"]}", 0, NULL);
    in.settings[2] = local;
    assert_int_equal(mcp_config_load(&in, &set, &err), 0);
    assert_false(mcp_config_find(&set, "plugin:tools:notes")->needs_approval);
    mcp_config_set_free(&set);
    in.settings[2] = NULL;
    in.trusted = true;
    assert_int_equal(mcp_config_load(&in, &set, &err), 0);
    assert_false(mcp_config_find(&set, "plugin:tools:notes")->needs_approval);
    mcp_config_set_free(&set);
    in.strict = true;
    assert_int_equal(mcp_config_load(&in, &set, &err), 0);
    assert_null(mcp_config_find(&set, "plugin:tools:notes"));
    mcp_config_set_free(&set);
    json_decref(local);
    json_decref(servers);
    free(user);
}

static void test_names(void **state)
{
    (void)state;
    assert_true(plugin_name_valid("git-tools"));
    assert_true(plugin_name_valid("a1.b_c"));
    assert_false(plugin_name_valid("Git"));
    assert_false(plugin_name_valid("-x"));
    assert_false(plugin_name_valid("_local"));
    assert_false(plugin_name_valid("a__b"));
    assert_false(plugin_name_valid("a/b"));
    assert_false(plugin_name_valid(""));
    char longname[80];
    memset(longname, 'a', 65);
    longname[65] = '\0';
    assert_false(plugin_name_valid(longname));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_manifest_claude_layout, setup, teardown),
        cmocka_unit_test_setup_teardown(test_manifest_loom_first_and_paths, setup, teardown),
        cmocka_unit_test_setup_teardown(test_manifest_errors_name_the_file, setup, teardown),
        cmocka_unit_test_setup_teardown(test_manifest_absent, setup, teardown),
        cmocka_unit_test_setup_teardown(test_store_enabled, setup, teardown),
        cmocka_unit_test_setup_teardown(test_marketplace_file, setup, teardown),
        cmocka_unit_test_setup_teardown(test_install_round_trip, setup, teardown),
        cmocka_unit_test_setup_teardown(test_install_from_path, setup, teardown),
        cmocka_unit_test_setup_teardown(test_git_marketplace, setup, teardown),
        cmocka_unit_test_setup_teardown(test_governance_hooks, setup, teardown),
        cmocka_unit_test_setup_teardown(test_mcp_plugin_servers, setup, teardown),
        cmocka_unit_test(test_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
