/* config.c — loom_config: options by name, and the settings files.
 *
 * Settings files use the names users know from Claude Code ("model",
 * "env", "permissions": {"defaultMode"}) plus Loom's own option names. A
 * value set by the caller always wins over a file; among files, the later
 * one (project over user, local over project) wins. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api/internal.h"
#include "base/fileio.h"
#include "base/json.h"

static const char *const known_keys[] = {
    "provider", "model", "base_url", "api_key", "cassette", "fallback_model", "cwd",
    "system_prompt", "append_system_prompt", "max_turns", "max_retries", "stream",
    "permission_mode", "loop_threshold", "max_tokens_total", "max_usd",
    "price_input_per_mtok", "price_output_per_mtok", "interactive", "allowed_tools",
    "disallowed_tools", "context_window", "max_output_tokens", "token_budget", "auto_compact",
    "compaction", "renew_lambda", "heartbeat", "add_dirs", NULL,
};

static bool known(const char *key)
{
    for (size_t i = 0; known_keys[i]; i++)
        if (strcmp(key, known_keys[i]) == 0)
            return true;
    return false;
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
    free(cfg);
}

int loom_config_set(loom_config *cfg, const char *key, const char *value, loom_status *st)
{
    if (!key || !known(key))
        return api_status_set(st, LOOM_ERR_INVALID_REQUEST, "unknown option \"%s\"",
                              key ? key : "(null)");
    if (!value)
        json_object_del(cfg->values, key);
    else
        json_object_set_new(cfg->values, key, json_string(value));
    api_status_ok(st);
    return 0;
}

/* Applies one settings object: only keys not yet set are taken. */
static void apply_settings(loom_config *cfg, json_t *explicit_keys, const json_t *doc)
{
    const char *key;
    json_t *v;
    json_object_foreach((json_t *)doc, key, v) {
        if (strcmp(key, "env") == 0 && json_is_object(v)) {
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
                 (strcmp(target, "compaction") == 0 || strcmp(target, "heartbeat") == 0)) {
            /* Structured settings travel as their JSON text. */
            char *js = json_dump_compact(value);
            json_object_set_new(cfg->values, target, json_string(js));
            free(js);
            continue;
        } else
            continue;
        json_object_set_new(cfg->values, target, json_string(text));
    }
}

int loom_config_load_settings(loom_config *cfg, loom_status *st)
{
    json_t *explicit_keys = json_deep_copy(cfg->values);
    char cwd_buf[4096];
    const char *cwd = api_value(cfg->values, "cwd");
    if (!cwd)
        cwd = getcwd(cwd_buf, sizeof cwd_buf) ? cwd_buf : ".";
    const char *home = getenv("LOOM_HOME");
    char paths[3][4200];
    if (home)
        snprintf(paths[0], sizeof paths[0], "%s/settings.json", home);
    else
        snprintf(paths[0], sizeof paths[0], "%s/.loom/settings.json",
                 getenv("HOME") ? getenv("HOME") : "/");
    snprintf(paths[1], sizeof paths[1], "%s/.loom/settings.json", cwd);
    snprintf(paths[2], sizeof paths[2], "%s/.loom/settings.local.json", cwd);
    /* Later files win: apply local first, so earlier ones only fill gaps. */
    json_t *taken = json_deep_copy(explicit_keys);
    for (int i = 2; i >= 0; i--) {
        char *text = NULL;
        size_t len = 0;
        loom_error err;
        if (file_read_all(paths[i], &text, &len, &err) != 0) {
            if (err.code == LOOM_ERR_RESOURCE_NOT_FOUND)
                continue;
            json_decref(explicit_keys);
            json_decref(taken);
            api_status_from(st, &err);
            return -1;
        }
        json_t *doc = json_parse(text, len, paths[i], &err);
        free(text);
        if (!json_is_object(doc)) {
            json_decref(doc);
            json_decref(explicit_keys);
            json_decref(taken);
            if (doc)
                return api_status_set(st, LOOM_ERR_CONFIG, "%s: settings must be a JSON object",
                                      paths[i]);
            err.code = LOOM_ERR_CONFIG;
            api_status_from(st, &err);
            return -1;
        }
        apply_settings(cfg, taken, doc);
        json_object_update(taken, cfg->values);
        /* Rules, hooks and the sandbox block are read from the documents. */
        json_decref(cfg->files[i]);
        cfg->files[i] = doc;
    }
    json_decref(explicit_keys);
    json_decref(taken);
    api_status_ok(st);
    return 0;
}
