/* config.c — loom_config: options by name, and the settings files.
 *
 * Settings files use the names users know from Claude Code ("model",
 * "env", "permissions": {"defaultMode"}) plus Loom's own option names. A
 * value set by the caller always wins over a file; among files, the later
 * one (project over user, local over project) wins.
 *
 * base/settings.c finds, reads and checks the files (its schema warns of
 * unknown keys, refuses wrong types); the warnings travel with the config
 * to the session's warnings, where the trust notices go.
 *
 * The project and local files belong to the repository. Unless the user
 * trusts the workspace they pass through trust_filter here, once, before
 * anything reads them: the options below, the rules and hooks (governance),
 * the sandbox block (agent.c) and the model table all see the filtered
 * documents (policy/trust.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api/internal.h"
#include "base/json.h"
#include "base/settings.h"
#include "base/str.h"
#include "policy/trust.h"
#include "runtime/loop.h"

static bool known(const char *key)
{
    return api_option_find(key) != NULL;
}

loom_config *loom_config_new(void)
{
    loom_config *cfg = xcalloc(1, sizeof *cfg);
    cfg->values = json_object();
    return cfg;
}

void loom_config_free(loom_config *cfg)
{
    if (!cfg)
        return;
    json_decref(cfg->values);
    for (int i = 0; i < 3; i++)
        json_decref(cfg->files[i]);
    json_decref(cfg->notices);
    json_decref(cfg->warnings);
    free(cfg->workspace);
    free(cfg->user_path);
    free(cfg);
}

int loom_config_set(loom_config *cfg, const char *key, const char *value, loom_status *st)
{
    API_CHECK_ARG(st, cfg, -1);
    const api_option *o = api_option_find(key);
    if (!o)
        return api_status_set(st, LOOM_ERR_INVALID_REQUEST, "unknown option \"%s\"",
                              key ? key : "(null)");
    /* A bad value is refused now, naming the key and what it takes, not
     * later by loom_agent_new (which checks values from settings files). */
    if (value && api_option_check(o, value, st) != 0)
        return -1;
    if (!value)
        json_object_del(cfg->values, key);
    else
        json_object_set_new(cfg->values, key, json_string(value));
    api_status_ok(st);
    return 0;
}

/* Applies one settings object to values: only keys not yet set are taken.
 * with_env: also export its "env" block. */
static void apply_settings(json_t *values, json_t *explicit_keys, const json_t *doc,
                           bool with_env)
{
    const char *key;
    json_t *v;
    json_object_foreach((json_t *)doc, key, v) {
        if (strcmp(key, "env") == 0 && json_is_object(v)) {
            if (!with_env)
                continue;
            const char *name;
            json_t *val;
            json_object_foreach(v, name, val) {
                if (json_is_string(val))
                    setenv(name, json_string_value(val), 0);
            }
            continue;
        }
        const char *target = key;
        json_t *value = v;
        if (strcmp(key, "permissions") == 0) {
            target = "permission_mode";
            value = json_object_get(v, "defaultMode");
        }
        /* add_dirs is --add-dir's; settings say permissions.additionalDirectories. */
        if (!known(target) || json_object_get(explicit_keys, target) ||
            !strcmp(target, "add_dirs"))
            continue;
        char buf[64];
        const char *text = buf;
        if (json_is_string(value))
            text = json_string_value(value);
        else if (json_is_integer(value))
            snprintf(buf, sizeof buf, "%lld", (long long)json_integer_value(value));
        else if (json_is_real(value))
            snprintf(buf, sizeof buf, "%g", json_real_value(value));
        else if (json_is_boolean(value))
            text = json_is_true(value) ? "true" : "false";
        else if (json_is_object(value) &&
                 (strcmp(target, "compaction") == 0 || strcmp(target, "heartbeat") == 0 ||
                  strcmp(target, "thinking") == 0)) {
            /* Structured settings travel as their JSON text. */
            char *js = json_dump_compact(value);
            json_object_set_new(values, target, json_string(js));
            free(js);
            continue;
        } else
            continue;
        json_object_set_new(values, target, json_string(text));
    }
}

/* The limits the user set (the caller's options, then the user settings),
 * which an untrusted document may only tighten (trust_filter's base). */
static json_t *user_limits(const json_t *explicit_keys, const json_t *user)
{
    json_t *base = json_deep_copy(explicit_keys);
    json_t *taken = json_deep_copy(explicit_keys);
    if (user)
        apply_settings(base, taken, user, false);
    json_decref(taken);
    if (!json_object_get(base, "max_turns")) {
        char n[32];
        snprintf(n, sizeof n, "%d", LOOP_DEFAULT_MAX_TURNS);
        json_object_set_new(base, "max_turns", json_string(n));
    }
    return base;
}

int loom_config_load_settings(loom_config *cfg, loom_status *st)
{
    API_CHECK_ARG(st, cfg, -1);
    char cwd_buf[4096];
    const char *cwd = api_value(cfg->values, "cwd");
    if (!cwd)
        cwd = getcwd(cwd_buf, sizeof cwd_buf) ? cwd_buf : ".";
    settings_files sf;
    loom_error err;
    if (settings_load(cwd, &sf, &err) != 0) {
        api_status_from(st, &err);
        return -1;
    }
    json_t **docs = sf.doc;

    free(cfg->workspace);
    free(cfg->user_path);
    char *real = realpath(cwd, NULL);
    cfg->workspace = real ? real : xstrdup(cwd);
    cfg->user_path = xstrdup(sf.path[SETTINGS_USER]);
    cfg->trusted = trust_workspace_trusted(docs[SETTINGS_USER], cfg->workspace);
    json_decref(cfg->warnings);
    cfg->warnings = json_incref(sf.warnings);
    json_decref(cfg->notices);
    cfg->notices = json_array();
    json_t *explicit_keys = json_deep_copy(cfg->values);
    if (!cfg->trusted && (docs[SETTINGS_PROJECT] || docs[SETTINGS_LOCAL])) {
        json_t *base = user_limits(explicit_keys, docs[SETTINGS_USER]);
        for (int i = SETTINGS_PROJECT; i < SETTINGS_LAYERS; i++) {
            if (!docs[i])
                continue;
            json_t *kept = trust_filter(docs[i], settings_layer_name(i), base, cfg->notices);
            json_decref(docs[i]);
            docs[i] = kept;
        }
        json_decref(base);
    }

    /* Later files win: apply local first, so earlier ones only fill gaps. */
    json_t *taken = json_deep_copy(explicit_keys);
    for (int i = SETTINGS_LAYERS - 1; i >= 0; i--) {
        if (docs[i]) {
            apply_settings(cfg->values, taken, docs[i], true);
            json_object_update(taken, cfg->values);
        }
        /* Rules, hooks and the sandbox block are read from the documents. */
        json_decref(cfg->files[i]);
        cfg->files[i] = docs[i];
        docs[i] = NULL;
    }
    json_decref(explicit_keys);
    json_decref(taken);
    settings_files_free(&sf);
    api_status_ok(st);
    return 0;
}

bool loom_config_workspace_trusted(const loom_config *cfg)
{
    return cfg && cfg->trusted;
}

size_t loom_config_notice_count(const loom_config *cfg)
{
    return cfg ? json_array_size(cfg->notices) : 0;
}

const char *loom_config_notice(const loom_config *cfg, size_t i)
{
    return cfg ? json_string_value(json_array_get(cfg->notices, i)) : NULL;
}

const char *loom_config_workspace(const loom_config *cfg)
{
    return cfg ? cfg->workspace : NULL;
}

const char *loom_config_user_settings_path(const loom_config *cfg)
{
    return cfg ? cfg->user_path : NULL;
}

int loom_config_trust_workspace(const loom_config *cfg, loom_status *st)
{
    if (!cfg || !cfg->workspace || !cfg->user_path)
        return api_status_set(st, LOOM_ERR_INVALID_REQUEST,
                              "the settings have not been loaded yet");
    loom_error err;
    if (trust_remember(cfg->user_path, cfg->workspace, &err) != 0) {
        api_status_from(st, &err);
        return -1;
    }
    api_status_ok(st);
    return 0;
}

bool api_compat_claude(const json_t *values, json_t *const files[3])
{
    const char *v = api_value(values, "compat_claude");
    if (v)
        return strcmp(v, "false") != 0 && strcmp(v, "0") != 0;
    const json_t *c = json_object_get(json_object_get(files[0], "compat"), "claude");
    return !json_is_false(c);
}
