/* test_base_settings.c — the settings loader (base/settings.h): the layers
 * in their order, loom_home's fallbacks, the schema's unknown-key warnings
 * (with the nearest known key) and wrong-type errors (naming file, key and
 * type), and torn or invalid files reported by name, never a crash. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <ftw.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/fileio.h"
#include "base/settings.h"
#include "base/str.h"

static char tmpdir[256], home[300], proj[300];
static char *saved_loom_home, *saved_home;

static int rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb, (void)flag, (void)ftw;
    return remove(path);
}

static int setup(void **state)
{
    (void)state;
    const char *base = getenv("TMPDIR");
    snprintf(tmpdir, sizeof tmpdir, "%s/loom-settings-XXXXXX", base && *base ? base : "/tmp");
    if (!mkdtemp(tmpdir))
        return -1;
    snprintf(home, sizeof home, "%s/home", tmpdir);
    snprintf(proj, sizeof proj, "%s/proj", tmpdir);
    char p[400];
    snprintf(p, sizeof p, "%s/.loom", proj);
    loom_error err;
    if (file_mkdirs(home, 0700, &err) != 0 || file_mkdirs(p, 0700, &err) != 0)
        return -1;
    saved_loom_home = getenv("LOOM_HOME") ? strdup(getenv("LOOM_HOME")) : NULL;
    saved_home = getenv("HOME") ? strdup(getenv("HOME")) : NULL;
    setenv("LOOM_HOME", home, 1);
    /* Claude Code's folder: none here (test_settings_claude.c has its own). */
    snprintf(p, sizeof p, "%s/claude", tmpdir);
    setenv("CLAUDE_CONFIG_DIR", p, 1);
    return 0;
}

static void restore(const char *name, const char *value)
{
    if (value)
        setenv(name, value, 1);
    else
        unsetenv(name);
}

static int teardown(void **state)
{
    (void)state;
    restore("LOOM_HOME", saved_loom_home);
    restore("HOME", saved_home);
    free(saved_loom_home);
    free(saved_home);
    return nftw(tmpdir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* Writes text to the layer's file (NULL: removes it). */
static void put(settings_layer layer, const char *text)
{
    char p[400];
    if (layer == SETTINGS_USER)
        snprintf(p, sizeof p, "%s/settings.json", home);
    else
        snprintf(p, sizeof p, "%s/.loom/settings%s.json", proj,
                 layer == SETTINGS_LOCAL ? ".local" : "");
    if (!text) {
        unlink(p);
        return;
    }
    FILE *f = fopen(p, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static void clear_all(void)
{
    put(SETTINGS_USER, NULL);
    put(SETTINGS_PROJECT, NULL);
    put(SETTINGS_LOCAL, NULL);
}

static void assert_contains(const char *text, const char *part)
{
    if (!text || !strstr(text, part))
        fail_msg("[%s] does not contain [%s]", text ? text : "(null)", part);
}

/* The one warning the files give, which must be exactly want (with the
 * file's path in front). */
static void expect_warning(settings_layer layer, const char *text, const char *want)
{
    clear_all();
    put(layer, text);
    settings_files sf;
    loom_error err;
    assert_int_equal(settings_load(proj, &sf, &err), 0);
    assert_int_equal(json_array_size(sf.warnings), 1);
    loom_str full = LOOM_STR_INIT;
    str_printf(&full, "%s: %s", sf.path[layer], want);
    assert_string_equal(json_string_value(json_array_get(sf.warnings, 0)), full.ptr);
    str_free(&full);
    settings_files_free(&sf);
}

/* The files give no warning and no error. */
static void expect_clean(const char *text)
{
    clear_all();
    put(SETTINGS_PROJECT, text);
    settings_files sf;
    loom_error err;
    if (settings_load(proj, &sf, &err) != 0)
        fail_msg("%s: %s", text, err.message);
    if (json_array_size(sf.warnings))
        fail_msg("%s: %s", text, json_string_value(json_array_get(sf.warnings, 0)));
    settings_files_free(&sf);
}

/* Loading fails with an error whose message is exactly "<path of layer>: want". */
static void expect_error(settings_layer layer, const char *text, const char *want)
{
    clear_all();
    put(layer, text);
    settings_files sf;
    loom_error err;
    loom_error_clear(&err);
    assert_true(settings_load(proj, &sf, &err) < 0);
    assert_int_equal(err.code, LOOM_ERR_CONFIG);
    /* On error nothing is handed out. */
    for (int i = 0; i < SETTINGS_LAYERS; i++) {
        assert_null(sf.doc[i]);
        assert_null(sf.path[i]);
    }
    assert_null(sf.warnings);
    char *path = NULL;
    if (layer == SETTINGS_USER) {
        path = settings_user_path();
    } else {
        loom_str p = LOOM_STR_INIT;
        str_printf(&p, "%s/.loom/settings%s.json", proj, layer == SETTINGS_LOCAL ? ".local" : "");
        path = str_steal(&p);
    }
    loom_str full = LOOM_STR_INIT;
    str_printf(&full, "%s: %s", path, want);
    assert_string_equal(err.message, full.ptr);
    str_free(&full);
    free(path);
}

static void test_layers_in_order(void **state)
{
    (void)state;
    clear_all();
    put(SETTINGS_USER, "{\"model\": \"user\"}");
    put(SETTINGS_PROJECT, "{\"model\": \"project\"}");
    put(SETTINGS_LOCAL, "{\"model\": \"local\"}");
    settings_files sf;
    loom_error err;
    assert_int_equal(settings_load(proj, &sf, &err), 0);
    char want[400];
    snprintf(want, sizeof want, "%s/settings.json", home);
    assert_string_equal(sf.path[SETTINGS_USER], want);
    snprintf(want, sizeof want, "%s/.loom/settings.json", proj);
    assert_string_equal(sf.path[SETTINGS_PROJECT], want);
    snprintf(want, sizeof want, "%s/.loom/settings.local.json", proj);
    assert_string_equal(sf.path[SETTINGS_LOCAL], want);
    static const char *const models[] = {"user", "project", "local"};
    for (int i = 0; i < SETTINGS_LAYERS; i++)
        assert_string_equal(json_string_value(json_object_get(sf.doc[i], "model")), models[i]);
    assert_int_equal(json_array_size(sf.warnings), 0);
    settings_files_free(&sf);

    /* A missing file is an absent layer, not an error. */
    put(SETTINGS_PROJECT, NULL);
    assert_int_equal(settings_load(proj, &sf, &err), 0);
    assert_non_null(sf.doc[SETTINGS_USER]);
    assert_null(sf.doc[SETTINGS_PROJECT]);
    assert_non_null(sf.doc[SETTINGS_LOCAL]);
    settings_files_free(&sf);

    /* The names notices use, lowest layer first. */
    assert_string_equal(settings_layer_name(SETTINGS_USER), "user settings");
    assert_string_equal(settings_layer_name(SETTINGS_PROJECT), ".loom/settings.json");
    assert_string_equal(settings_layer_name(SETTINGS_LOCAL), ".loom/settings.local.json");

    /* Every layer's warnings, the user's first. */
    put(SETTINGS_USER, "{\"usr\": 1}");
    put(SETTINGS_PROJECT, "{\"prj\": 1}");
    put(SETTINGS_LOCAL, "{\"lcl\": 1}");
    assert_int_equal(settings_load(proj, &sf, &err), 0);
    assert_int_equal(json_array_size(sf.warnings), 3);
    assert_contains(json_string_value(json_array_get(sf.warnings, 0)), "\"usr\"");
    assert_contains(json_string_value(json_array_get(sf.warnings, 1)), "\"prj\"");
    assert_contains(json_string_value(json_array_get(sf.warnings, 2)), "\"lcl\"");
    settings_files_free(&sf);

    /* Of two bad files the local one is reported (config.c's old order). */
    put(SETTINGS_PROJECT, "{");
    put(SETTINGS_LOCAL, "{");
    loom_error_clear(&err);
    assert_true(settings_load(proj, &sf, &err) < 0);
    assert_contains(err.message, "settings.local.json");
    clear_all();
}

static void test_loom_home_fallbacks(void **state)
{
    (void)state;
    char *h;
    setenv("LOOM_HOME", "/srv/loom", 1);
    setenv("HOME", "/home/someone", 1);
    assert_string_equal(h = loom_home(), "/srv/loom");
    free(h);
    assert_string_equal(h = settings_user_path(), "/srv/loom/settings.json");
    free(h);

    /* An empty LOOM_HOME is no LOOM_HOME: not "/settings.json". */
    setenv("LOOM_HOME", "", 1);
    assert_string_equal(h = loom_home(), "/home/someone/.loom");
    free(h);
    unsetenv("LOOM_HOME");
    assert_string_equal(h = loom_home(), "/home/someone/.loom");
    free(h);
    assert_string_equal(h = settings_user_path(), "/home/someone/.loom/settings.json");
    free(h);

    /* No HOME (or an empty one): the password database's home. */
    struct passwd *pw = getpwuid(getuid());
    loom_str want = LOOM_STR_INIT;
    if (pw && pw->pw_dir && *pw->pw_dir && strcmp(pw->pw_dir, "/"))
        str_printf(&want, "%s/.loom", pw->pw_dir);
    else
        str_puts(&want, "/.loom");
    unsetenv("HOME");
    assert_string_equal(h = loom_home(), want.ptr);
    free(h);
    setenv("HOME", "", 1);
    assert_string_equal(h = loom_home(), want.ptr);
    free(h);
    str_free(&want);

    /* HOME=/ gives /.loom, not //.loom. */
    setenv("HOME", "/", 1);
    assert_string_equal(h = loom_home(), "/.loom");
    free(h);

    restore("HOME", saved_home);
    setenv("LOOM_HOME", home, 1);
}

static void test_unknown_key_warns_with_nearest(void **state)
{
    (void)state;
    expect_warning(SETTINGS_PROJECT, "{\"permisions\": {}}",
                   "unknown key \"permisions\" (did you mean \"permissions\"?)");
    expect_warning(SETTINGS_USER, "{\"modle\": \"x\"}",
                   "unknown key \"modle\" (did you mean \"model\"?)");
    expect_warning(SETTINGS_LOCAL, "{\"maxTurns\": 3}",
                   "unknown key \"maxTurns\" (did you mean \"max_turns\"?)");
    /* Inside a known object: the whole path, and the nearest member. */
    expect_warning(SETTINGS_PROJECT, "{\"permissions\": {\"alow\": [\"Read\"]}}",
                   "unknown key \"permissions.alow\" (did you mean \"permissions.allow\"?)");
    expect_warning(SETTINGS_PROJECT, "{\"sandbox\": {\"enabeld\": true}}",
                   "unknown key \"sandbox.enabeld\" (did you mean \"sandbox.enabled\"?)");
    /* Nothing near: no guess. */
    expect_warning(SETTINGS_PROJECT, "{\"zzzzzz\": 1}", "unknown key \"zzzzzz\"");
    /* A key is shown without its control bytes. */
    expect_warning(SETTINGS_PROJECT, "{\"a\\u001b]0;x\\u0007\": 1}", "unknown key \"a?]0;x?\"");

    /* What Loom and Claude Code know loads quietly; open objects' members
     * are their own modules' business. */
    expect_clean("{\"model\": \"m\", \"env\": {\"ANY_NAME\": \"1\"}, \"apiKeyHelper\": \"x\", "
                 "\"statusLine\": {\"type\": \"command\"}, \"$schema\": \"s\", "
                 "\"permissions\": {\"allow\": [], \"ask\": [], \"deny\": [], "
                 "\"defaultMode\": \"plan\", \"additionalDirectories\": []}, "
                 "\"hooks\": {\"PreToolUse\": []}, \"models\": {\"m\": {\"contextWindow\": 1}}, "
                 "\"sandbox\": {\"enabled\": true, \"network\": {\"allowUnixSockets\": []}, "
                 "\"excludedCommands\": [\"docker\"]}, \"heartbeat\": {\"T_hb\": 5}, "
                 "\"compaction\": \"{}\", \"trustedWorkspaces\": [\"/w\"]}");
    expect_clean("{\"max_turns\": \"5\", \"stream\": \"false\", \"token_budget\": \"500k\", "
                 "\"auto_compact\": true, \"max_usd\": 0.5}");
    /* null is "not set", whatever the key's type. */
    expect_clean("{\"model\": null, \"sandbox\": null, \"permissions\": {\"allow\": null}}");
}

/* A Claude Code user's settings come along: every key Claude Code documents
 * and Loom does not read loads without a warning, whatever shape it has (a
 * key Loom does not read never stops it), and a long unknown key is not
 * "corrected" to a short known one it barely resembles. */
static void test_claude_code_keys_load_quietly(void **state)
{
    (void)state;
    expect_clean("{\"$schema\": 1, \"cleanupPeriodDays\": \"20\", \"includeCoAuthoredBy\": \"no\", "
                 "\"attribution\": {\"commit\": \"\", \"pr\": \"\"}, \"language\": \"en\", "
                 "\"theme\": \"dark\", \"verbose\": true, \"autoUpdatesChannel\": \"stable\", "
                 "\"fallbackModel\": [\"sonnet\"], \"availableModels\": [\"haiku\"], "
                 "\"allowManagedHooksOnly\": true, \"worktree\": {\"baseRef\": \"main\"}, "
                 "\"permissions\": {\"disableBypassPermissionsMode\": \"disable\", "
                 "\"skipDangerousModePermissionPrompt\": true}, "
                 "\"sandbox\": {\"enabled\": true, \"autoAllowBashIfSandboxed\": true, "
                 "\"excludedCommands\": [\"docker\"], \"filesystem\": {\"denyRead\": [\"~/.ssh\"]}, "
                 "\"network\": {\"allowUnixSockets\": [\"/var/run/docker.sock\"], "
                 "\"allowLocalBinding\": true, \"httpProxyPort\": 8080}, "
                 "\"ignoreViolations\": {\"file_access\": [\"/tmp/*\"]}, \"failIfUnavailable\": 1}}");
    /* A typo of a Claude Code key is named, with that key as the guess. */
    expect_warning(SETTINGS_USER, "{\"cleanupPeriodDay\": 3}",
                   "unknown key \"cleanupPeriodDay\" (did you mean \"cleanupPeriodDays\"?)");
    /* No far-fetched guesses for long keys. */
    expect_warning(SETTINGS_USER, "{\"allowManagedPermissionRules\": true}",
                   "unknown key \"allowManagedPermissionRules\" (did you mean "
                   "\"allowManagedPermissionRulesOnly\"?)");
    expect_warning(SETTINGS_PROJECT, "{\"permissions\": {\"skipDangerousModeFoo\": true}}",
                   "unknown key \"permissions.skipDangerousModeFoo\"");
    expect_warning(SETTINGS_PROJECT, "{\"zzSomeVeryLongMadeUpSettingName\": true}",
                   "unknown key \"zzSomeVeryLongMadeUpSettingName\"");
}

static void test_wrong_type_is_an_error(void **state)
{
    (void)state;
    expect_error(SETTINGS_PROJECT, "{\"max_turns\": []}",
                 "max_turns must be a number or a string, not an array");
    expect_error(SETTINGS_USER, "{\"model\": 5}", "model must be a string, not a number");
    expect_error(SETTINGS_LOCAL, "{\"permissions\": \"allow all\"}",
                 "permissions must be an object, not a string");
    expect_error(SETTINGS_PROJECT, "{\"permissions\": {\"allow\": \"Bash\"}}",
                 "permissions.allow must be an array, not a string");
    expect_error(SETTINGS_PROJECT, "{\"sandbox\": {\"enabled\": \"yes\"}}",
                 "sandbox.enabled must be true or false, not a string");
    expect_error(SETTINGS_PROJECT, "{\"sandbox\": {\"network\": false}}",
                 "sandbox.network must be an object or a string, not a boolean");
    expect_error(SETTINGS_PROJECT, "{\"stream\": {}}",
                 "stream must be a boolean or a string, not an object");
    expect_error(SETTINGS_USER, "{\"trustedWorkspaces\": \"/w\"}",
                 "trustedWorkspaces must be an array, not a string");
    expect_error(SETTINGS_USER, "{\"hooks\": [1]}", "hooks must be an object, not an array");

    /* settings_check alone, for a document from elsewhere. */
    json_t *doc = json_pack("{s:i}", "env", 1);
    loom_error err;
    assert_true(settings_check(doc, "inline", NULL, &err) < 0);
    assert_string_equal(err.message, "inline: env must be an object, not a number");
    json_decref(doc);
}

static void test_torn_or_invalid_files_name_the_file(void **state)
{
    (void)state;
    static const char *const torn[] = {
        "{\"model\": \"x\"", "{\"permissions\": {\"allow\": [\"Bash", "", "   ", "{,}",
        "\xff\xfe{}", "{\"a\": 1} trailing", "{\"a\": \"\\u12\"}",
    };
    for (size_t i = 0; i < sizeof torn / sizeof torn[0]; i++) {
        for (int layer = 0; layer < SETTINGS_LAYERS; layer++) {
            clear_all();
            put((settings_layer)layer, torn[i]);
            settings_files sf;
            loom_error err;
            loom_error_clear(&err);
            assert_true(settings_load(proj, &sf, &err) < 0);
            assert_int_equal(err.code, LOOM_ERR_CONFIG);
            assert_contains(err.message, "invalid JSON in ");
            assert_contains(err.message, layer == SETTINGS_USER    ? "/home/settings.json"
                                         : layer == SETTINGS_LOCAL ? "/.loom/settings.local.json"
                                                                   : "/.loom/settings.json");
        }
    }
    clear_all();
    put(SETTINGS_LOCAL, "\"a string\"");
    settings_files sf;
    loom_error err;
    assert_true(settings_load(proj, &sf, &err) < 0);
    assert_contains(err.message, "settings.local.json is not a JSON object");

    /* A directory where the file should be: unreadable, named. */
    clear_all();
    char p[400];
    snprintf(p, sizeof p, "%s/.loom/settings.json", proj);
    assert_int_equal(mkdir(p, 0700), 0);
    loom_error_clear(&err);
    assert_true(settings_load(proj, &sf, &err) < 0);
    assert_contains(err.message, p);
    rmdir(p);

    /* settings_read: absent is fine (NULL), a torn file an error. */
    json_t *doc = (json_t *)1;
    assert_int_equal(settings_read(p, &doc, &err), 0);
    assert_null(doc);
    put(SETTINGS_PROJECT, "{\"model\":");
    assert_true(settings_read(p, &doc, &err) < 0);
    assert_null(doc);
    assert_contains(err.message, p);
    clear_all();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_layers_in_order),
        cmocka_unit_test(test_loom_home_fallbacks),
        cmocka_unit_test(test_unknown_key_warns_with_nearest),
        cmocka_unit_test(test_claude_code_keys_load_quietly),
        cmocka_unit_test(test_wrong_type_is_an_error),
        cmocka_unit_test(test_torn_or_invalid_files_name_the_file),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
