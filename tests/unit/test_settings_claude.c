/* test_settings_claude.c — Claude Code's settings files as Loom reads them
 * (base/settings.h, api/config.c): each below Loom's file of the same
 * level, Loom winning a key both set while rules and hooks concatenate;
 * "compat": {"claude": false} (or LOOM_COMPAT_CLAUDE=0, or the option)
 * keeping only their deny and ask rules; only the user's own settings
 * deciding compat; a malformed .claude file an error naming it, as a
 * malformed .loom one is; Claude-only keys loading quietly; an untrusted
 * workspace filtering a .claude file under its own name; and the sources
 * list saying what was loaded, partly loaded or skipped. */
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
#include "base/settings.h"
#include "base/str.h"
#include "loom.h"
#include "sandbox/sandbox_policy.h"
#include "tmpdir.h"

static char tmpdir[256], home[300], userhome[300], proj[300];

static int setup(void **state)
{
    (void)state;
    if (tmpdir_make(tmpdir, sizeof tmpdir, "loom-claude", true) != 0)
        return -1;
    snprintf(home, sizeof home, "%s/home", tmpdir);
    snprintf(userhome, sizeof userhome, "%s/userhome", tmpdir);
    snprintf(proj, sizeof proj, "%s/proj", tmpdir);
    setenv("LOOM_HOME", home, 1);
    setenv("HOME", userhome, 1);
    unsetenv("CLAUDE_CONFIG_DIR");
    unsetenv("LOOM_COMPAT_CLAUDE");
    unsetenv("LOOM_TRUST_WORKSPACE");
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    return tmpdir_remove(tmpdir);
}

/* Writes (text) or removes (NULL) tmpdir/rel. */
static void put(const char *rel, const char *text)
{
    loom_str p = LOOM_STR_INIT;
    str_printf(&p, "%s/%s", tmpdir, rel);
    if (!text) {
        unlink(p.ptr);
    } else {
        char *dir = xstrdup(p.ptr);
        *strrchr(dir, '/') = '\0';
        assert_int_equal(file_mkdirs(dir, 0700, NULL), 0);
        assert_int_equal(file_write_atomic(p.ptr, text, strlen(text), 0600, NULL), 0);
        free(dir);
    }
    str_free(&p);
}

static void clear_all(void)
{
    static const char *const files[] = {
        "home/settings.json", "userhome/.claude/settings.json", "proj/.loom/settings.json",
        "proj/.claude/settings.json", "proj/.loom/settings.local.json",
        "proj/.claude/settings.local.json", "proj/.mcp.json", "proj/CLAUDE.md", "proj/AGENTS.md",
        "cfgdir/settings.json", NULL};
    for (size_t i = 0; files[i]; i++)
        put(files[i], NULL);
    unsetenv("LOOM_COMPAT_CLAUDE");
    unsetenv("CLAUDE_CONFIG_DIR");
}

static void assert_contains(const char *text, const char *part)
{
    if (!text || !strstr(text, part))
        fail_msg("[%s] does not contain [%s]", text ? text : "(null)", part);
}

/* The strings of doc's array at key.sub as one "a,b,c" text. */
static char *list_of(const json_t *doc, const char *key, const char *sub)
{
    const json_t *a = json_object_get(json_object_get(doc, key), sub);
    loom_str s = LOOM_STR_INIT;
    size_t i;
    json_t *v;
    json_array_foreach(a, i, v) {
        if (i)
            str_putc(&s, ',');
        str_puts(&s, json_is_string(v) ? json_string_value(v) : "?");
    }
    return str_steal(&s);
}

static void expect_list(const json_t *doc, const char *key, const char *sub, const char *want)
{
    char *got = list_of(doc, key, sub);
    if (strcmp(got, want) != 0)
        fail_msg("%s.%s should be [%s], but is [%s]", key, sub, want, got);
    free(got);
}

/* Loom's file wins a key both set; rules, hooks and the MCP approval
 * lists concatenate, Claude Code's first; objects merge one level. */
static void test_merge(void **state)
{
    (void)state;
    json_t *claude = json_loads(
        "{\"model\": \"c\", \"env\": {\"X\": \"1\", \"Y\": \"c\"},"
        " \"permissions\": {\"allow\": [\"A\"], \"deny\": [\"D1\"], \"defaultMode\": \"plan\"},"
        " \"hooks\": {\"PreToolUse\": [{\"matcher\": \"c\"}]},"
        " \"mcpServers\": {\"s\": {\"command\": \"c\", \"args\": [\"x\"]}},"
        " \"enabledMcpjsonServers\": [\"one\"], \"statusLine\": {\"type\": \"command\"}}",
        0, NULL);
    json_t *loom = json_loads(
        "{\"model\": \"l\", \"env\": {\"Y\": \"l\"},"
        " \"permissions\": {\"deny\": [\"D2\"], \"ask\": [\"Q\"], \"defaultMode\": \"default\"},"
        " \"hooks\": {\"PreToolUse\": [{\"matcher\": \"l\"}], \"Stop\": [{\"matcher\": \"s\"}]},"
        " \"mcpServers\": {\"s\": {\"url\": \"http://l\"}}, \"enabledMcpjsonServers\": [\"two\"]}",
        0, NULL);
    assert_non_null(claude);
    assert_non_null(loom);
    json_t *m = settings_merge(claude, loom);
    assert_string_equal(json_string_value(json_object_get(m, "model")), "l");
    const json_t *env = json_object_get(m, "env");
    assert_string_equal(json_string_value(json_object_get(env, "X")), "1");
    assert_string_equal(json_string_value(json_object_get(env, "Y")), "l");
    expect_list(m, "permissions", "allow", "A");
    expect_list(m, "permissions", "deny", "D1,D2");
    expect_list(m, "permissions", "ask", "Q");
    assert_string_equal(
        json_string_value(json_object_get(json_object_get(m, "permissions"), "defaultMode")),
        "default");
    const json_t *pre = json_object_get(json_object_get(m, "hooks"), "PreToolUse");
    assert_int_equal(json_array_size(pre), 2);
    assert_string_equal(json_string_value(json_object_get(json_array_get(pre, 0), "matcher")), "c");
    assert_string_equal(json_string_value(json_object_get(json_array_get(pre, 1), "matcher")), "l");
    assert_int_equal(json_array_size(json_object_get(json_object_get(m, "hooks"), "Stop")), 1);
    /* A server entry is taken whole from one file, never mixed. */
    const json_t *s = json_object_get(json_object_get(m, "mcpServers"), "s");
    assert_null(json_object_get(s, "command"));
    assert_string_equal(json_string_value(json_object_get(s, "url")), "http://l");
    json_t *approvals = json_object_get(m, "enabledMcpjsonServers");
    assert_int_equal(json_array_size(approvals), 2);
    assert_non_null(json_object_get(m, "statusLine"));
    /* The inputs are not changed. */
    expect_list(loom, "permissions", "deny", "D2");
    expect_list(claude, "permissions", "deny", "D1");
    json_decref(m);

    m = settings_merge(NULL, loom);
    assert_true(json_equal(m, loom));
    json_decref(m);
    m = settings_merge(claude, NULL);
    assert_true(json_equal(m, claude));
    json_decref(m);
    assert_null(settings_merge(NULL, NULL));
    /* null is "not set": Loom's null never erases Claude Code's rules. */
    json_t *nulls = json_loads("{\"permissions\": null, \"model\": null}", 0, NULL);
    m = settings_merge(claude, nulls);
    expect_list(m, "permissions", "deny", "D1");
    assert_string_equal(json_string_value(json_object_get(m, "model")), "c");
    json_decref(m);
    json_decref(nulls);
    json_decref(claude);
    json_decref(loom);
}

/* Where the files are, and that each layer's two are read, checked and
 * listed as sources, Claude Code's first. */
static void test_load_paths_and_sources(void **state)
{
    (void)state;
    clear_all();
    put("userhome/.claude/settings.json", "{\"model\": \"claude-user\"}");
    put("proj/.claude/settings.json", "{\"permissions\": {\"deny\": [\"Read(./secret.txt)\"]}}");
    put("proj/.claude/settings.local.json", "{\"permissions\": {\"allow\": [\"Bash(ls)\"]}}");
    put("proj/.loom/settings.json", "{\"model\": \"loom-project\"}");
    settings_files sf;
    loom_error err;
    assert_int_equal(settings_load(proj, &sf, &err), 0);
    char want[512];
    snprintf(want, sizeof want, "%s/.claude/settings.json", userhome);
    assert_string_equal(sf.claude_path[SETTINGS_USER], want);
    snprintf(want, sizeof want, "%s/.claude/settings.local.json", proj);
    assert_string_equal(sf.claude_path[SETTINGS_LOCAL], want);
    assert_true(sf.compat);
    assert_string_equal(json_string_value(json_object_get(sf.claude_doc[SETTINGS_USER], "model")),
                        "claude-user");
    assert_null(sf.doc[SETTINGS_USER]);
    assert_int_equal(json_array_size(sf.warnings), 0);
    /* user claude, project claude, project loom, local claude. */
    assert_int_equal(json_array_size(sf.sources), 4);
    const char *origins[] = {"claude", "claude", "loom", "claude"};
    const char *levels[] = {"user", "project", "project", "local"};
    for (size_t i = 0; i < 4; i++) {
        const json_t *o = json_array_get(sf.sources, i);
        assert_string_equal(json_string_value(json_object_get(o, "origin")), origins[i]);
        assert_string_equal(json_string_value(json_object_get(o, "level")), levels[i]);
        assert_string_equal(json_string_value(json_object_get(o, "state")), "loaded");
        assert_string_equal(json_string_value(json_object_get(o, "kind")), "settings");
    }
    settings_files_free(&sf);

    /* $CLAUDE_CONFIG_DIR is Claude Code's own override of ~/.claude. */
    put("cfgdir/settings.json", "{\"model\": \"from-config-dir\"}");
    snprintf(want, sizeof want, "%s/cfgdir", tmpdir);
    setenv("CLAUDE_CONFIG_DIR", want, 1);
    assert_int_equal(settings_load(proj, &sf, &err), 0);
    assert_string_equal(json_string_value(json_object_get(sf.claude_doc[SETTINGS_USER], "model")),
                        "from-config-dir");
    settings_files_free(&sf);
    unsetenv("CLAUDE_CONFIG_DIR");
    assert_string_equal(settings_claude_name(SETTINGS_PROJECT), ".claude/settings.json");
    clear_all();
}

/* Claude Code's documented keys that Loom does not use load without a
 * warning from a .claude file too. */
static void test_claude_only_keys_quiet(void **state)
{
    (void)state;
    clear_all();
    put("userhome/.claude/settings.json",
        "{\"apiKeyHelper\": \"/bin/key\", \"statusLine\": {\"type\": \"command\", \"command\": "
        "\"x\"}, \"enabledPlugins\": {\"p@m\": true}, \"outputStyle\": \"Explanatory\", "
        "\"cleanupPeriodDays\": 20, \"includeCoAuthoredBy\": false, \"model\": \"opus\", "
        "\"env\": {\"FOO\": \"1\"}, \"permissions\": {\"allow\": [], \"deny\": [], "
        "\"defaultMode\": \"default\", \"disableBypassPermissionsMode\": \"disable\"}, "
        "\"hooks\": {}, \"$schema\": \"https://json.schemastore.org/claude-code-settings.json\"}");
    settings_files sf;
    loom_error err;
    if (settings_load(proj, &sf, &err) != 0)
        fail_msg("a Claude Code user's settings should load: %s", err.message);
    if (json_array_size(sf.warnings))
        fail_msg("no warning expected, got: %s", json_string_value(json_array_get(sf.warnings, 0)));
    settings_files_free(&sf);
    clear_all();
}

/* A malformed .claude file is an error naming it, as a malformed .loom
 * file is — with compat off as well (its deny rules must be read). A
 * wrong type is one too. */
static void test_malformed_claude_file_is_an_error(void **state)
{
    (void)state;
    for (int off = 0; off < 2; off++) {
        clear_all();
        if (off)
            put("home/settings.json", "{\"compat\": {\"claude\": false}}");
        put("proj/.claude/settings.json", "{\"permissions\": {\"deny\": [");
        settings_files sf;
        loom_error err;
        loom_error_clear(&err);
        assert_true(settings_load(proj, &sf, &err) < 0);
        assert_int_equal(err.code, LOOM_ERR_CONFIG);
        assert_contains(err.message, "/proj/.claude/settings.json");
        assert_null(sf.claude_doc[SETTINGS_PROJECT]);
        assert_null(sf.sources);

        put("proj/.claude/settings.json", "{\"permissions\": {\"deny\": \"Read\"}}");
        loom_error_clear(&err);
        assert_true(settings_load(proj, &sf, &err) < 0);
        assert_contains(err.message, "/proj/.claude/settings.json: permissions.deny must be");
    }
    /* The same file under .loom gives the same kind of message. */
    clear_all();
    put("proj/.loom/settings.json", "{\"permissions\": {\"deny\": [");
    settings_files sf;
    loom_error err;
    assert_true(settings_load(proj, &sf, &err) < 0);
    assert_contains(err.message, "/proj/.loom/settings.json");
    clear_all();
}

/* compat off: a .claude file gives only its deny and ask rules, marked
 * partial; from the user settings, the environment or the option, the
 * option first. */
static void test_compat_off_keeps_deny_and_ask(void **state)
{
    (void)state;
    clear_all();
    put("userhome/.claude/settings.json", "{\"model\": \"claude-user\", \"permissions\": "
                                          "{\"deny\": [\"Bash(rm:*)\"]}}");
    put("proj/.claude/settings.json",
        "{\"permissions\": {\"allow\": [\"Bash(ls)\"], \"deny\": [\"Read(./secret.txt)\"], "
        "\"ask\": [\"Bash(git push:*)\"], \"defaultMode\": \"bypassPermissions\"}, \"hooks\": "
        "{\"PreToolUse\": [{\"matcher\": \"Bash\", \"hooks\": [{\"type\": \"command\", "
        "\"command\": \"true\"}]}]}, \"env\": {\"EVIL\": \"1\"}, \"unknownThing\": 1, "
        "\"sandbox\": {\"enabled\": false, \"denyRead\": [\"~/private\"]}}");
    for (int how = 0; how < 3; how++) {
        const char *option = NULL;
        if (how == 0)
            put("home/settings.json", "{\"compat\": {\"claude\": false}}");
        else if (how == 1)
            setenv("LOOM_COMPAT_CLAUDE", "0", 1);
        else
            option = "false";
        settings_files sf;
        loom_error err;
        assert_int_equal(settings_load_opts(proj, option, &sf, &err), 0);
        assert_false(sf.compat);
        const json_t *p = sf.claude_doc[SETTINGS_PROJECT];
        expect_list(p, "permissions", "deny", "Read(./secret.txt)");
        expect_list(p, "permissions", "ask", "Bash(git push:*)");
        expect_list(p, "permissions", "allow", "");
        assert_null(json_object_get(json_object_get(p, "permissions"), "defaultMode"));
        assert_null(json_object_get(p, "hooks"));
        /* The sandbox's denyRead is a deny too: kept; the rest of the block is not. */
        expect_list(p, "sandbox", "denyRead", "~/private");
        assert_null(json_object_get(json_object_get(p, "sandbox"), "enabled"));
        assert_null(json_object_get(p, "env"));
        assert_null(json_object_get(sf.claude_doc[SETTINGS_USER], "model"));
        expect_list(sf.claude_doc[SETTINGS_USER], "permissions", "deny", "Bash(rm:*)");
        /* What was dropped is not judged: no unknown-key warning. */
        assert_int_equal(json_array_size(sf.warnings), 0);
        const json_t *src = NULL;
        size_t k;
        json_t *o;
        json_array_foreach(sf.sources, k, o) if (!strcmp(json_string_value(json_object_get(o,
                                                         "level")), "project")) src = o;
        assert_non_null(src);
        assert_string_equal(json_string_value(json_object_get(src, "state")), "partial");
        assert_contains(json_string_value(json_object_get(src, "why")), "compat.claude is off");
        settings_files_free(&sf);
        put("home/settings.json", NULL);
        unsetenv("LOOM_COMPAT_CLAUDE");
    }
    /* The option wins over the environment, the environment over the file. */
    put("home/settings.json", "{\"compat\": {\"claude\": false}}");
    setenv("LOOM_COMPAT_CLAUDE", "1", 1);
    assert_true(settings_compat_claude(NULL, NULL));
    assert_false(settings_compat_claude("no", NULL));
    unsetenv("LOOM_COMPAT_CLAUDE");
    json_t *user = json_loads("{\"compat\": {\"claude\": false}}", 0, NULL);
    assert_false(settings_compat_claude(NULL, user));
    assert_true(settings_compat_claude("yes", user));
    assert_true(settings_compat_claude("maybe", NULL)); /* not a switch: not set */
    json_decref(user);
    clear_all();
}

/* A repository's settings (Loom's or Claude Code's) cannot turn compat
 * off: the key is dropped with a warning saying where it is read. */
static void test_project_cannot_turn_compat_off(void **state)
{
    (void)state;
    clear_all();
    put("proj/.loom/settings.json", "{\"compat\": {\"claude\": false}}");
    put("proj/.claude/settings.json", "{\"compat\": {\"claude\": false}, \"permissions\": "
                                      "{\"allow\": [\"Bash(ls)\"]}}");
    put("userhome/.claude/settings.json", "{\"compat\": {\"claude\": false}}");
    settings_files sf;
    loom_error err;
    assert_int_equal(settings_load(proj, &sf, &err), 0);
    assert_true(sf.compat);
    expect_list(sf.claude_doc[SETTINGS_PROJECT], "permissions", "allow", "Bash(ls)");
    assert_null(json_object_get(sf.doc[SETTINGS_PROJECT], "compat"));
    assert_null(json_object_get(sf.claude_doc[SETTINGS_PROJECT], "compat"));
    assert_int_equal(json_array_size(sf.warnings), 3);
    for (size_t i = 0; i < 3; i++)
        assert_contains(json_string_value(json_array_get(sf.warnings, i)),
                        "\"compat\" is read from Loom's user settings only");
    settings_files_free(&sf);
    clear_all();
}

/* The sandbox block of a .claude file counts below Loom's: its denyRead
 * paths add to Loom's (`loom sandbox` and the agent read the same). */
static void test_sandbox_blocks_merge(void **state)
{
    (void)state;
    clear_all();
    put("proj/.claude/settings.json", "{\"sandbox\": {\"denyRead\": [\"/claude-secret\"], "
                                      "\"enabled\": true}}");
    put("proj/.loom/settings.json", "{\"sandbox\": {\"denyRead\": [\"/loom-secret\"]}}");
    for (int trusted = 0; trusted < 2; trusted++) {
        if (trusted)
            setenv("LOOM_TRUST_WORKSPACE", "1", 1);
        loom_error err;
        json_t *block = sandbox_settings_load(proj, NULL, &err);
        assert_non_null(block);
        json_t *wrap = json_pack("{sO}", "s", block);
        expect_list(wrap, "s", "denyRead", "/claude-secret,/loom-secret");
        assert_true(json_is_true(json_object_get(block, "enabled")));
        json_decref(wrap);
        json_decref(block);
    }
    unsetenv("LOOM_TRUST_WORKSPACE");
    clear_all();
}

static char *cfg_load(loom_config **out, loom_status *st)
{
    loom_config *cfg = loom_config_new();
    loom_config_set(cfg, "cwd", proj, st);
    if (loom_config_load_settings(cfg, st) != 0) {
        loom_config_free(cfg);
        *out = NULL;
        return NULL;
    }
    *out = cfg;
    return loom_config_sources_json(cfg);
}

/* Through the config: the merged documents, the trust filter naming the
 * .claude file, a bad .claude rule named, the model from ~/.claude, and
 * the sources document. */
static void test_config_merges_filters_and_lists(void **state)
{
    (void)state;
    clear_all();
    put("userhome/.claude/settings.json", "{\"model\": \"claude-user-model\"}");
    put("proj/.claude/settings.json",
        "{\"permissions\": {\"allow\": [\"Bash(ls)\"], \"deny\": [\"Read(./secret.txt)\"]}}");
    put("proj/.loom/settings.json", "{\"permissions\": {\"deny\": [\"Bash(rm:*)\"]}}");
    put("proj/CLAUDE.md", "claude instructions\n");
    put("proj/AGENTS.md", "agents instructions\n");
    put("proj/.mcp.json", "{\"mcpServers\": {}}");
    loom_config *cfg;
    loom_status st;
    char *text = cfg_load(&cfg, &st);
    assert_non_null(cfg);
    assert_false(loom_config_workspace_trusted(cfg));
    assert_string_equal(api_value(cfg->values, "model"), "claude-user-model");
    /* Untrusted: the .claude allow is dropped under its own name; both denies stay. */
    expect_list(cfg->files[SETTINGS_PROJECT], "permissions", "deny",
                "Read(./secret.txt),Bash(rm:*)");
    expect_list(cfg->files[SETTINGS_PROJECT], "permissions", "allow", "");
    bool named = false;
    for (size_t i = 0; i < loom_config_notice_count(cfg); i++)
        named |= strstr(loom_config_notice(cfg, i), "ignored .claude/settings.json: "
                                                    "permissions.allow[0]") != NULL;
    assert_true(named);
    assert_true(api_compat_claude(cfg->values, cfg->files));
    json_t *doc = json_loads(text, 0, NULL);
    assert_non_null(doc);
    assert_true(json_is_true(json_object_get(doc, "compat_claude")));
    assert_true(json_is_false(json_object_get(doc, "trusted")));
    const json_t *files = json_object_get(doc, "files");
    /* user claude, project claude, project loom, .mcp.json, CLAUDE.md, AGENTS.md */
    assert_int_equal(json_array_size(files), 6);
    const json_t *pc = json_array_get(files, 1);
    assert_string_equal(json_string_value(json_object_get(pc, "state")), "partial");
    assert_contains(json_string_value(json_object_get(pc, "why")), "not trusted");
    assert_string_equal(json_string_value(json_object_get(json_array_get(files, 3), "kind")),
                        "mcp");
    const json_t *cm = json_array_get(files, 4);
    assert_string_equal(json_string_value(json_object_get(cm, "kind")), "memory");
    assert_string_equal(json_string_value(json_object_get(cm, "origin")), "claude");
    assert_string_equal(json_string_value(json_object_get(cm, "state")), "loaded");
    json_decref(doc);
    free(text);
    loom_config_free(cfg);

    /* compat off by the option: no model from ~/.claude, no allow, the deny
     * kept; CLAUDE.md listed as skipped. */
    setenv("LOOM_TRUST_WORKSPACE", "1", 1);
    cfg = loom_config_new();
    loom_config_set(cfg, "cwd", proj, &st);
    assert_int_equal(loom_config_set(cfg, "compat_claude", "false", &st), 0);
    assert_int_equal(loom_config_load_settings(cfg, &st), 0);
    assert_null(api_value(cfg->values, "model"));
    expect_list(cfg->files[SETTINGS_PROJECT], "permissions", "deny",
                "Read(./secret.txt),Bash(rm:*)");
    expect_list(cfg->files[SETTINGS_PROJECT], "permissions", "allow", "");
    assert_false(api_compat_claude(cfg->values, cfg->files));
    text = loom_config_sources_json(cfg);
    assert_contains(text, "\"state\":\"skipped\"");
    assert_contains(text, "compat.claude is off: only AGENTS.md files load");
    free(text);
    loom_config_free(cfg);

    /* Trusted, compat on: the allow counts. */
    text = cfg_load(&cfg, &st);
    expect_list(cfg->files[SETTINGS_PROJECT], "permissions", "allow", "Bash(ls)");
    free(text);
    loom_config_free(cfg);
    unsetenv("LOOM_TRUST_WORKSPACE");

    /* A rule Loom cannot parse in a .claude file: an error naming it. */
    put("proj/.claude/settings.json", "{\"permissions\": {\"deny\": [\"Read(\"]}}");
    text = cfg_load(&cfg, &st);
    assert_null(cfg);
    assert_contains(st.message, ".claude/settings.json: permissions.deny[0]");
    clear_all();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_merge),
        cmocka_unit_test(test_load_paths_and_sources),
        cmocka_unit_test(test_claude_only_keys_quiet),
        cmocka_unit_test(test_malformed_claude_file_is_an_error),
        cmocka_unit_test(test_compat_off_keeps_deny_and_ask),
        cmocka_unit_test(test_project_cannot_turn_compat_off),
        cmocka_unit_test(test_sandbox_blocks_merge),
        cmocka_unit_test(test_config_merges_filters_and_lists),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
