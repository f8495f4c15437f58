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
 * documents (policy/trust.h).
 *
 * Each layer also has Claude Code's file (base/settings.h): it is filtered
 * under its own name, its rules are checked here so a bad one is an error
 * naming it, and it is merged below Loom's file of the same level
 * (settings_merge), so the rest of Loom sees three documents as before.
 * What was read, and what counted of it, is kept for
 * loom_config_sources_json (api/sources.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api/internal.h"
#include "base/json.h"
#include "base/settings.h"
#include "base/str.h"
#include "policy/rules.h"
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
    json_decref(cfg->sources);
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
        if (strcmp(key, "outputStyle") == 0) /* Claude Code's name, docs/output-styles.md */
            target = "output_style";
        if (strcmp(key, "statusLine") == 0) /* Claude Code's, docs/repl.md */
            target = "status_line";
        /* add_dirs is --add-dir's; settings say permissions.additionalDirectories.
         * compat_claude is the caller's; settings say "compat": {"claude"},
         * and only the user's (base/settings.h). */
        if (!known(target) || json_object_get(explicit_keys, target) ||
            !strcmp(target, "add_dirs") || !strcmp(target, "compat_claude"))
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
                  strcmp(target, "status_line") == 0 ||
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

/* A Claude Code file's permission rules, each parsed as governance will:
 * a rule Loom cannot read is an error naming that file, not the Loom file
 * it is merged with (and never a deny rule silently lost). */
static int check_rules(const json_t *doc, const char *file, loom_error *err)
{
    static const struct {
        const char *key;
        perm_verdict v;
    } lists[] = {{"allow", PERM_ALLOW}, {"ask", PERM_ASK}, {"deny", PERM_DENY}};
    const json_t *perms = json_object_get(doc, "permissions");
    perm_rules *scratch = perm_rules_new();
    int rc = 0;
    for (size_t k = 0; k < 3 && rc == 0; k++) {
        size_t i;
        json_t *r;
        json_array_foreach(json_object_get(perms, lists[k].key), i, r) {
            if (!json_is_string(r))
                rc = loom_error_set(err, LOOM_ERR_CONFIG, "%s: permissions.%s[%zu] must be a string",
                                    file, lists[k].key, i);
            else if (perm_rules_add(scratch, lists[k].v, json_string_value(r), RULE_SRC_PROJECT,
                                    err) != 0) {
                loom_error_prefix(err, "%s: permissions.%s[%zu]", file, lists[k].key, i);
                rc = -1;
            }
            if (rc != 0)
                break;
        }
    }
    perm_rules_free(scratch);
    return rc;
}

/* The sources entry for path gets state "partial" and why (unless it
 * already says less counted). */
static void mark_partial(json_t *sources, const char *path, const char *why)
{
    size_t i;
    json_t *o;
    json_array_foreach(sources, i, o) {
        if (strcmp(json_string_value(json_object_get(o, "path")), path) != 0)
            continue;
        if (json_object_get(o, "why"))
            return;
        json_object_set_new(o, "state", json_string("partial"));
        json_object_set_new(o, "why", json_string(why));
    }
}

int loom_config_load_settings(loom_config *cfg, loom_status *st)
{
    API_CHECK_ARG(st, cfg, -1);
    char cwd_buf[4096];
    const char *cwd = api_value(cfg->values, "cwd");
    if (!cwd)
        cwd = getcwd(cwd_buf, sizeof cwd_buf) ? cwd_buf : ".";
    if (api_home_check(st) != 0)
        return -1;
    settings_files sf;
    loom_error err;
    if (settings_load_opts(cwd, api_value(cfg->values, "compat_claude"), &sf, &err) != 0) {
        api_status_from(st, &err);
        return -1;
    }
    for (int i = 0; i < SETTINGS_LAYERS; i++)
        if (sf.claude_doc[i] && check_rules(sf.claude_doc[i], sf.claude_path[i], &err) != 0) {
            settings_files_free(&sf);
            api_status_from(st, &err);
            return -1;
        }
    json_t **docs = sf.doc;

    free(cfg->workspace);
    free(cfg->user_path);
    char *real = realpath(cwd, NULL);
    cfg->workspace = real ? real : xstrdup(cwd);
    cfg->user_path = xstrdup(sf.path[SETTINGS_USER]);
    /* Trust is the user's word: their two user files, merged. */
    json_t *user = settings_merge(sf.claude_doc[SETTINGS_USER], docs[SETTINGS_USER]);
    cfg->trusted = trust_workspace_trusted(user, cfg->workspace);
    json_decref(user);
    /* The answer, for api_compat_claude: an "env" block exporting
     * LOOM_COMPAT_CLAUDE below must not change it after the fact. */
    if (!api_value(cfg->values, "compat_claude"))
        json_object_set_new(cfg->values, "compat_claude", json_string(sf.compat ? "true" : "false"));
    json_decref(cfg->warnings);
    cfg->warnings = json_incref(sf.warnings);
    json_decref(cfg->sources);
    cfg->sources = json_incref(sf.sources);
    json_decref(cfg->notices);
    cfg->notices = json_array();
    json_t *explicit_keys = json_deep_copy(cfg->values);
    if (!cfg->trusted) {
        json_t *base = user_limits(explicit_keys, docs[SETTINGS_USER]);
        for (int i = SETTINGS_PROJECT; i < SETTINGS_LAYERS; i++) {
            json_t **pair[2] = {&sf.claude_doc[i], &docs[i]};
            const char *names[2] = {settings_claude_name(i), settings_layer_name(i)};
            const char *paths[2] = {sf.claude_path[i], sf.path[i]};
            for (int k = 0; k < 2; k++) {
                if (!*pair[k])
                    continue;
                json_t *kept = trust_filter(*pair[k], names[k], base, cfg->notices);
                json_decref(*pair[k]);
                *pair[k] = kept;
                mark_partial(cfg->sources, paths[k],
                             "the workspace is not trusted: only what tightens the user's "
                             "limits counts (deny and ask rules, a stricter mode, …); its hooks "
                             "do not run");
            }
        }
        json_decref(base);
    }

    /* One document per layer: Claude Code's file below Loom's. */
    for (int i = 0; i < SETTINGS_LAYERS; i++) {
        json_t *merged = settings_merge(sf.claude_doc[i], docs[i]);
        json_decref(docs[i]);
        docs[i] = merged;
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

bool api_compat_claude(const json_t *values, json_t *const files[3])
{
    return settings_compat_claude(api_value(values, "compat_claude"), files ? files[0] : NULL);
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

int loom_agent_set_local_setting(loom_agent *agent, const char *key, const char *value_json,
                                 loom_status *st)
{
    API_CHECK_ARG(st, agent, -1);
    API_CHECK_ARG(st, key, -1);
    loom_error err;
    loom_error_clear(&err);
    json_t *value = NULL;
    if (value_json) {
        value = json_loads(value_json, JSON_DECODE_ANY, NULL);
        if (!value)
            return api_status_set(st, LOOM_ERR_INVALID_REQUEST,
                                  "the value of \"%s\" is not JSON: %s", key, value_json);
        /* The schema judges the key now, so what is written loads again. */
        json_t *probe = json_pack("{sO}", key, value);
        json_t *warnings = json_array();
        int rc = settings_check(probe, ".loom/settings.local.json", warnings, &err);
        json_decref(probe);
        json_decref(warnings);
        if (rc != 0) {
            json_decref(value);
            api_status_from(st, &err);
            return -1;
        }
    }
    char *path = settings_layer_path(SETTINGS_LOCAL, agent->cwd);
    int rc = settings_write_key(path, key, value, &err);
    free(path);
    json_decref(value);
    if (rc != 0) {
        api_status_from(st, &err);
        return -1;
    }
    api_status_ok(st);
    return 0;
}
