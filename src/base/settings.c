/* settings.c — the settings files (settings.h): loom_home, the three
 * layers and their Claude Code files, reading one file, the schema check,
 * and the merge of a layer's two documents.
 *
 * The schema is data: one table per object whose keys Loom knows, each row a
 * key and the JSON types it may hold. Loom's option names take text as well
 * as their natural type ("max_turns": "5"), because loom_config_set takes
 * strings and the option parsers judge the text (api/agent.c); objects whose
 * members another module parses and reports on (hooks, env, heartbeat,
 * models, …) are open here, so their own messages stay the ones users see.
 *
 * No state; thread-safe. */
#include "base/settings.h"

#include <pwd.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/fileio.h"
#include "base/json.h"
#include "base/str.h"

/* ---- where ------------------------------------------------------------------ */

/* The user's home directory: $HOME, else the password database's. */
static char *user_home(void)
{
    const char *home = getenv("HOME");
    /* HOME unset (cron, systemd units, `env -i`): the user's home still is
     * where their settings and sessions live. getpwuid_r: no shared buffer. */
    char buf[4096];
    struct passwd pw, *found = NULL;
    if ((!home || !*home) && getpwuid_r(getuid(), &pw, buf, sizeof buf, &found) == 0 && found &&
        found->pw_dir && *found->pw_dir)
        home = found->pw_dir;
    /* "" for "/", so "/.loom" when even the password database has no home. */
    return xstrdup(home && *home && strcmp(home, "/") ? home : "");
}

char *loom_home(void)
{
    const char *lh = getenv("LOOM_HOME");
    if (lh && *lh)
        return xstrdup(lh);
    char *home = user_home();
    loom_str s = LOOM_STR_INIT;
    str_printf(&s, "%s/.loom", home);
    free(home);
    return str_steal(&s);
}

char *settings_user_path(void)
{
    char *home = loom_home();
    loom_str s = LOOM_STR_INIT;
    str_printf(&s, "%s/settings.json", home);
    free(home);
    return str_steal(&s);
}

char *settings_layer_path(settings_layer layer, const char *cwd)
{
    if (layer == SETTINGS_USER)
        return settings_user_path();
    loom_str s = LOOM_STR_INIT;
    str_printf(&s, "%s/.loom/settings%s.json", cwd, layer == SETTINGS_LOCAL ? ".local" : "");
    return str_steal(&s);
}

char *settings_claude_home(void)
{
    const char *dir = getenv("CLAUDE_CONFIG_DIR");
    if (dir && *dir)
        return xstrdup(dir);
    char *home = user_home();
    loom_str s = LOOM_STR_INIT;
    str_printf(&s, "%s/.claude", home);
    free(home);
    return str_steal(&s);
}

char *settings_claude_path(settings_layer layer, const char *cwd)
{
    loom_str s = LOOM_STR_INIT;
    if (layer == SETTINGS_USER) {
        char *dir = settings_claude_home();
        str_printf(&s, "%s/settings.json", dir);
        free(dir);
    } else {
        str_printf(&s, "%s/.claude/settings%s.json", cwd, layer == SETTINGS_LOCAL ? ".local" : "");
    }
    return str_steal(&s);
}

const char *settings_claude_name(settings_layer layer)
{
    static const char *const names[SETTINGS_LAYERS] = {
        "~/.claude/settings.json", ".claude/settings.json", ".claude/settings.local.json"};
    return layer < SETTINGS_LAYERS ? names[layer] : "Claude Code settings";
}

/* true|false, 1|0, yes|no, on|off; -1 for anything else (not set). */
static int parse_switch(const char *v)
{
    static const char *const on[] = {"true", "1", "yes", "on", NULL};
    static const char *const off[] = {"false", "0", "no", "off", NULL};
    for (size_t i = 0; v && on[i]; i++) {
        if (strcasecmp(v, on[i]) == 0)
            return 1;
        if (strcasecmp(v, off[i]) == 0)
            return 0;
    }
    return -1;
}

bool settings_compat_claude(const char *option, const json_t *user)
{
    int v = parse_switch(option);
    if (v < 0)
        v = parse_switch(getenv("LOOM_COMPAT_CLAUDE"));
    if (v < 0) {
        const json_t *c = json_object_get(json_object_get(user, "compat"), "claude");
        if (json_is_boolean(c))
            v = json_is_true(c);
    }
    return v != 0;
}

const char *settings_layer_name(settings_layer layer)
{
    static const char *const names[SETTINGS_LAYERS] = {
        "user settings", ".loom/settings.json", ".loom/settings.local.json"};
    return layer < SETTINGS_LAYERS ? names[layer] : "settings";
}

/* ---- the schema --------------------------------------------------------------- */

enum {
    T_STR = 1,
    T_NUM = 2,
    T_BOOL = 4,
    T_OBJ = 8,
    T_ARR = 16,
};

typedef struct settings_key {
    const char *name;
    unsigned types;
    const struct settings_key *members; /* known keys of an object value; NULL: open */
} settings_key;

/* seed 001 §4 / Claude Code: permissions {defaultMode, allow, ask, deny}. */
static const settings_key permissions_keys[] = {
    {"allow", T_ARR, NULL},
    {"ask", T_ARR, NULL},
    {"deny", T_ARR, NULL},
    {"defaultMode", T_STR, NULL},
    {"additionalDirectories", T_ARR, NULL},
    {NULL, 0, NULL},
};

/* sandbox/sandbox_policy.h's block; "network" and "allowUnixSockets" are
 * Claude Code's names too (sandbox_policy.c reads both forms). */
static const settings_key sandbox_keys[] = {
    {"enabled", T_BOOL, NULL},
    {"hooks", T_BOOL, NULL},
    {"writableTempDirs", T_BOOL, NULL},
    {"writablePaths", T_ARR, NULL},
    {"denyRead", T_ARR, NULL},
    {"network", T_STR | T_OBJ, NULL}, /* an object is Claude Code's network block */
    {"onUnsupported", T_STR, NULL},
    {"allowUnixSockets", T_ARR, NULL},
    {NULL, 0, NULL},
};

/* "compat": {"claude": false} turns Claude Code's files off (settings.h). */
static const settings_key compat_keys[] = {
    {"claude", T_BOOL, NULL},
    {NULL, 0, NULL},
};

static const settings_key top_keys[] = {
    /* Loom's options (loom.h), by the names loom_config_set takes: api/options.c's
     * option table but add_dirs (settings say permissions.additionalDirectories). */
    {"provider", T_STR, NULL},
    {"model", T_STR, NULL},
    {"base_url", T_STR, NULL},
    {"api_key", T_STR, NULL},
    {"cassette", T_STR, NULL},
    {"fallback_model", T_STR, NULL},
    {"cwd", T_STR, NULL},
    {"system_prompt", T_STR, NULL},
    {"append_system_prompt", T_STR, NULL},
    {"permission_mode", T_STR, NULL},
    {"allowed_tools", T_STR, NULL},
    {"disallowed_tools", T_STR, NULL},
    {"max_turns", T_NUM | T_STR, NULL},
    {"max_retries", T_NUM | T_STR, NULL},
    {"loop_threshold", T_NUM | T_STR, NULL},
    {"max_tokens_total", T_NUM | T_STR, NULL},
    {"max_usd", T_NUM | T_STR, NULL},
    {"price_input_per_mtok", T_NUM | T_STR, NULL},
    {"price_output_per_mtok", T_NUM | T_STR, NULL},
    {"context_window", T_NUM | T_STR, NULL},
    {"max_output_tokens", T_NUM | T_STR, NULL},
    {"reasoning_effort", T_STR, NULL},
    {"token_budget", T_NUM | T_STR, NULL},
    {"renew_lambda", T_NUM | T_STR, NULL},
    {"stream", T_BOOL | T_STR, NULL},
    {"interactive", T_BOOL | T_STR, NULL},
    {"auto_compact", T_BOOL | T_STR, NULL},
    {"compaction", T_OBJ | T_STR, NULL}, /* context/ parses its members */
    {"heartbeat", T_OBJ | T_STR, NULL},  /* heartbeat/config.c parses its members */
    {"mcp_config", T_STR, NULL},         /* a JSON array of --mcp-config values */
    {"strict_mcp_config", T_BOOL | T_STR, NULL},
    {"thinking", T_NUM | T_BOOL | T_OBJ | T_STR, NULL}, /* api/options.c judges the value */
    {"agents", T_BOOL | T_OBJ | T_STR, NULL},  /* api/agent.c parses its members */
    {"output_style", T_STR, NULL},
    {"outputStyle", T_STR, NULL},  /* Claude Code's name of output_style */
    {"statusLine", T_OBJ, NULL},   /* Claude Code's: the REPL's footer command */
    {"status_line", T_OBJ | T_STR, NULL},
    {"runtime", T_OBJ, NULL},                  /* runtime.max_depth (sub-agents) */
    /* Structured settings, Loom's and Claude Code's. */
    {"env", T_OBJ, NULL},
    {"permissions", T_OBJ, permissions_keys},
    {"hooks", T_OBJ, NULL}, /* hooks/registry.c names a bad event or group */
    {"sandbox", T_OBJ, sandbox_keys},
    {"models", T_OBJ, NULL},
    /* Loom's own: helper model calls' routes (provider/helper.c judges the
     * members, naming file and key). */
    {"modelTiers", T_OBJ, NULL},
    {"helperModels", T_OBJ, NULL},
    {"trustedWorkspaces", T_ARR, NULL},
    /* MCP servers (ext/mcp/config.c judges each entry, naming its file)
     * and the approval of a project's .mcp.json servers: Claude Code's keys. */
    {"mcpServers", T_OBJ, NULL},
    {"enabledMcpjsonServers", T_ARR, NULL},
    {"disabledMcpjsonServers", T_ARR, NULL},
    {"enableAllProjectMcpServers", T_BOOL, NULL},
    /* Loom's own: servers' sampling requests served by the agent's model
     * (api/mcp_sampling.c; read from the user's settings only). */
    {"mcpSampling", T_BOOL, NULL},
    /* Loom's own: the search service WebSearch asks (api/web_search.c
     * judges the members; read from the user's settings only). */
    {"webSearch", T_OBJ, NULL},
    /* Loom's own: self-evolution E1–E4 (ext/evolve/ judges the members). */
    {"evolve", T_OBJ, NULL},
    /* Loom's own: recall and extraction (ext/memory/memory_config.c
     * judges the members). */
    {"memory", T_OBJ, NULL},
    /* Which other tools' files Loom reads (user settings only). */
    {"compat", T_OBJ, compat_keys},
    {NULL, 0, NULL},
};

/* Claude Code's documented settings that Loom does not use (its settings
 * reference, v2.1): known, so a user's ~/.claude/settings.json brought
 * along loads without a warning for each, and never judged, so whatever
 * shape Claude Code gives them (it changes between releases) is never an
 * error here. Loom's own keys above are the only ones with a type. */
static const char *const claude_top_keys[] = {
    "$schema",
    "advisorModel", "agent", "agentPushNotifEnabled", "allowAllClaudeAiMcps",
    "allowedChannelPlugins", "allowedHttpHookUrls", "allowedMcpServers",
    "allowManagedHooksOnly", "allowManagedMcpServersOnly", "allowManagedPermissionRulesOnly",
    "alwaysThinkingEnabled", "apiKeyHelper", "askUserQuestionTimeout", "attribution",
    "autoCompactEnabled", "autoCompactWindow", "autoConnectIde", "autoInstallIdeExtension",
    "autoMemoryDirectory", "autoMemoryEnabled", "autoMode", "autoScrollEnabled", "autoUpdates",
    "autoUpdatesChannel", "availableModels", "awaySummaryEnabled", "awsAuthRefresh",
    "awsCredentialExport", "axScreenReader", "blockedMarketplaces", "browserExternalPageTools",
    "channelsEnabled", "claudeMd", "claudeMdExcludes", "cleanupPeriodDays",
    "companyAnnouncements", "defaultShell", "deniedMcpServers", "diffTool", "disableAgentView",
    "disableAllHooks", "disableArtifact", "disableAutoMode", "disableBrowserExternalNavigation",
    "disableBundledSkills", "disableClaudeAiConnectors", "disableDeepLinkRegistration",
    "disableMobileSimulatorTools", "disableRemoteControl",
    "disableSideloadFlags", "disableSkillShellExecution", "disableWorkflows",
    "dynamicWorkflowSize", "editorMode", "effortLevel", "emojiCompletionEnabled",
    "enableArtifact", "enabledPlugins",
    "enforceAvailableModels", "externalEditorContext", "extraKnownMarketplaces",
    "fallbackModel", "fastMode", "fastModePerSessionOptIn", "feedbackSurveyRate",
    "fileCheckpointingEnabled", "fileSuggestion", "footerLinksRegexes", "forceLoginGatewayUrl",
    "forceLoginMethod", "forceLoginOrgUUID", "forceRemoteSettingsRefresh", "gcpAuthRefresh",
    "httpHookAllowedEnvVars", "includeCoAuthoredBy", "includeGitInstructions",
    "inputNeededNotifEnabled", "language", "minimumVersion", "modelOverrides",
    "otelHeadersHelper", "parentSettingsBehavior", "permissionExplainerEnabled",
    "plansDirectory", "pluginConfigs", "pluginSuggestionMarketplaces", "pluginTrustMessage",
    "policyHelper", "preferredNotifChannel", "prefersReducedMotion", "processWrapper",
    "prUrlTemplate", "remote", "remoteControlAtStartup", "requiredMaximumVersion",
    "requiredMinimumVersion", "respectGitignore", "respondToBashCommands",
    "showClearContextOnPlanAccept", "showThinkingSummaries", "showTurnDuration",
    "skillListingBudgetFraction", "skillListingMaxDescChars", "skillOverrides",
    "skipDangerousModePermissionPrompt", "skippedMarketplaces", "skippedPlugins",
    "skipWebFetchPreflight", "spinnerTipsEnabled", "spinnerTipsOverride", "spinnerVerbs",
    "sshConfigs", "strictKnownMarketplaces", "strictPluginOnlyCustomization",
    "switchModelsOnFlag", "syntaxHighlightingDisabled", "teammateDefaultModel", "teammateMode",
    "terminalProgressBarEnabled", "theme", "thinkingBudgetTokens", "tui", "ultracode",
    "useAutoModeDuringPlan", "verbose", "viewMode", "vimInsertModeRemaps", "voice",
    "voiceEnabled", "wheelScrollAccelerationEnabled", "workflowKeywordTriggerEnabled",
    "workflowSizeGuideline", "worktree", "wslInheritsWindowsSettings",
    NULL,
};

static const char *const claude_permissions_keys[] = {
    "disableBypassPermissionsMode", "skipDangerousModePermissionPrompt", NULL,
};

static const char *const claude_sandbox_keys[] = {
    "allowAppleEvents", "allowNestedUserNamespaces", "allowUnsandboxedCommands",
    "autoAllowBashIfSandboxed", "bwrapPath", "credentials", "enabledPlatforms",
    "enableWeakerNestedSandbox", "enableWeakerNetworkIsolation", "excludedCommands",
    "failIfUnavailable", "filesystem", "ignoreViolations", "ripgrep", "socatPath", NULL,
};

/* The Claude Code names known beside an object's typed keys. */
static const char *const *claude_keys(const settings_key *keys)
{
    if (keys == top_keys)
        return claude_top_keys;
    if (keys == permissions_keys)
        return claude_permissions_keys;
    if (keys == sandbox_keys)
        return claude_sandbox_keys;
    return NULL;
}

static bool in_list(const char *const *list, const char *name)
{
    for (size_t i = 0; list && list[i]; i++)
        if (strcmp(list[i], name) == 0)
            return true;
    return false;
}

static unsigned type_of(const json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_STRING: return T_STR;
    case JSON_INTEGER:
    case JSON_REAL: return T_NUM;
    case JSON_TRUE:
    case JSON_FALSE: return T_BOOL;
    case JSON_OBJECT: return T_OBJ;
    case JSON_ARRAY: return T_ARR;
    default: return 0;
    }
}

static const char *type_name(unsigned t)
{
    switch (t) {
    case T_STR: return "a string";
    case T_NUM: return "a number";
    case T_BOOL: return "a boolean";
    case T_OBJ: return "an object";
    default: return "an array";
    }
}

/* "true or false", "a number or a string", "a number, a boolean or a
 * string": the natural type first, text (which the option parsers judge)
 * last. */
static void put_types(loom_str *s, unsigned types)
{
    if (types == T_BOOL) {
        str_puts(s, "true or false");
        return;
    }
    static const unsigned order[] = {T_NUM, T_BOOL, T_OBJ, T_ARR, T_STR};
    size_t n = 0, total = 0;
    for (size_t i = 0; i < 5; i++)
        total += (types & order[i]) != 0;
    for (size_t i = 0; i < 5; i++) {
        if (!(types & order[i]))
            continue;
        if (n)
            str_puts(s, n + 1 == total ? " or " : ", ");
        str_puts(s, type_name(order[i]));
        n++;
    }
}

/* A key as it can be shown: control bytes become '?'. */
static void put_key(loom_str *s, const char *key)
{
    for (const unsigned char *p = (const unsigned char *)key; *p; p++)
        str_putc(s, *p < 0x20 || *p == 0x7f ? '?' : (char)*p);
}

/* Edit distance with transpositions (optimal string alignment), cut off
 * at 9: only small distances matter. Keys longer than 63 bytes are far. */
static size_t distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la > 63 || lb > 63)
        return 9;
    size_t d[64][64];
    for (size_t i = 0; i <= la; i++)
        d[i][0] = i;
    for (size_t j = 0; j <= lb; j++)
        d[0][j] = j;
    for (size_t i = 1; i <= la; i++)
        for (size_t j = 1; j <= lb; j++) {
            size_t cost = a[i - 1] != b[j - 1];
            size_t best = d[i - 1][j] + 1;
            if (d[i][j - 1] + 1 < best)
                best = d[i][j - 1] + 1;
            if (d[i - 1][j - 1] + cost < best)
                best = d[i - 1][j - 1] + cost;
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
                d[i - 2][j - 2] + 1 < best)
                best = d[i - 2][j - 2] + 1;
            d[i][j] = best;
        }
    return d[la][lb] > 9 ? 9 : d[la][lb];
}

/* Is candidate near enough to key to be its typo? At most 2 edits, or a
 * quarter of the shorter name's length for long names: a long key is never
 * "near" a short one it shares little with. *best_d narrows as better
 * candidates are found. */
static bool nearer(const char *key, const char *candidate, size_t *best_d)
{
    size_t la = strlen(key), lc = strlen(candidate), shorter = la < lc ? la : lc;
    size_t limit = shorter / 4 > 2 ? shorter / 4 : 2;
    size_t d = distance(key, candidate);
    if (d > limit || d >= *best_d)
        return false;
    *best_d = d;
    return true;
}

/* The known key nearest to key, Loom's or Claude Code's, when it is near
 * enough to be a typo; NULL when none is. */
static const char *nearest(const settings_key *keys, const char *key)
{
    const char *best = NULL;
    size_t best_d = 10;
    for (size_t i = 0; keys[i].name; i++)
        if (nearer(key, keys[i].name, &best_d))
            best = keys[i].name;
    const char *const *also = claude_keys(keys);
    for (size_t i = 0; also && also[i]; i++)
        if (nearer(key, also[i], &best_d))
            best = also[i];
    return best;
}

static const settings_key *find_key(const settings_key *keys, const char *name)
{
    for (size_t i = 0; keys[i].name; i++)
        if (strcmp(keys[i].name, name) == 0)
            return &keys[i];
    return NULL;
}

static int check_object(const json_t *obj, const settings_key *keys, const char *prefix,
                        const char *file, json_t *warnings, loom_error *err)
{
    const char *name;
    json_t *v;
    json_object_foreach((json_t *)obj, name, v) {
        const settings_key *k = find_key(keys, name);
        if (!k && in_list(claude_keys(keys), name)) /* Claude Code's: not judged */
            continue;
        loom_str msg = LOOM_STR_INIT;
        if (!k) {
            str_printf(&msg, "%s: unknown key \"", file);
            if (prefix)
                str_printf(&msg, "%s.", prefix);
            put_key(&msg, name);
            str_putc(&msg, '"');
            const char *near = nearest(keys, name);
            if (near)
                str_printf(&msg, " (did you mean \"%s%s%s\"?)", prefix ? prefix : "",
                           prefix ? "." : "", near);
            if (warnings)
                json_array_append_new(warnings, json_string(msg.ptr));
            str_free(&msg);
            continue;
        }
        if (json_is_null(v)) /* not set */
            continue;
        unsigned t = type_of(v);
        if (!(k->types & t)) {
            str_printf(&msg, "%s: %s%s%s must be ", file, prefix ? prefix : "", prefix ? "." : "",
                       k->name);
            put_types(&msg, k->types);
            str_printf(&msg, ", not %s", type_name(t));
            int rc = loom_error_set(err, LOOM_ERR_CONFIG, "%s", msg.ptr);
            str_free(&msg);
            return rc;
        }
        if (k->members && t == T_OBJ) {
            loom_str path = LOOM_STR_INIT;
            str_printf(&path, "%s%s%s", prefix ? prefix : "", prefix ? "." : "", k->name);
            int rc = check_object(v, k->members, path.ptr, file, warnings, err);
            str_free(&path);
            if (rc != 0)
                return rc;
        }
    }
    return 0;
}

int settings_check(const json_t *doc, const char *file, json_t *warnings, loom_error *err)
{
    if (!json_is_object(doc))
        return loom_error_set(err, LOOM_ERR_CONFIG, "%s is not a JSON object", file);
    return check_object(doc, top_keys, NULL, file, warnings, err);
}

/* ---- reading ------------------------------------------------------------------ */

int settings_read(const char *path, json_t **doc, loom_error *err)
{
    *doc = NULL;
    char *text = NULL;
    size_t len = 0;
    loom_error e;
    loom_error_clear(&e);
    if (file_read_all(path, &text, &len, &e) != 0) {
        if (e.code == LOOM_ERR_RESOURCE_NOT_FOUND)
            return 0;
        if (err)
            *err = e;
        return -(int)e.code;
    }
    json_t *d = json_parse(text, len, path, &e);
    free(text);
    if (!d)
        return loom_error_set(err, LOOM_ERR_CONFIG, "%s", e.message);
    if (!json_is_object(d)) {
        json_decref(d);
        return loom_error_set(err, LOOM_ERR_CONFIG, "%s is not a JSON object", path);
    }
    *doc = d;
    return 0;
}

int settings_write_key(const char *path, const char *key, const json_t *value, loom_error *err)
{
    loom_error local;
    if (!err)
        err = &local;
    json_t *doc = NULL;
    if (settings_read(path, &doc, err) != 0) {
        loom_error_prefix(err, "not changed");
        return -(int)err->code;
    }
    if (!doc)
        doc = json_object();
    if (value)
        json_object_set(doc, key, (json_t *)value);
    else
        json_object_del(doc, key);
    char *text = json_dumps(doc, JSON_INDENT(2));
    json_decref(doc);
    loom_str body = LOOM_STR_INIT;
    str_printf(&body, "%s\n", text);
    free(text);
    /* An existing file keeps its mode; a new one is private, as settings
     * may hold keys. */
    struct stat st;
    int mode = stat(path, &st) == 0 ? (int)(st.st_mode & 07777) : 0600;
    int rc = 0;
    const char *slash = strrchr(path, '/');
    if (slash && slash != path) {
        char *parent = xstrndup(path, (size_t)(slash - path));
        rc = file_mkdirs(parent, 0755, err);
        free(parent);
    }
    if (rc == 0)
        rc = file_replace(path, body.ptr, body.len, mode, NULL, err);
    str_free(&body);
    return rc;
}

static const char *const level_names[SETTINGS_LAYERS] = {"user", "project", "local"};

static void add_source(json_t *sources, const char *path, int layer, bool claude, bool full)
{
    json_t *o = json_pack("{s:s,s:s,s:s,s:s,s:s}", "path", path, "kind", "settings", "level",
                          level_names[layer], "origin", claude ? "claude" : "loom", "state",
                          full ? "loaded" : "partial");
    if (!full)
        json_object_set_new(o, "why", json_string("compat.claude is off: only its "
                                                  "permissions.deny and permissions.ask rules "
                                                  "(and sandbox.denyRead) apply"));
    json_array_append_new(sources, o);
}

/* What a Claude Code file still says with compat off: its deny and ask
 * rules, and the sandbox's denyRead list (a deny too), as written (the
 * schema check that follows judges their type). */
static json_t *deny_ask_only(const json_t *doc)
{
    json_t *out = json_object();
    const json_t *sandbox = json_object_get(doc, "sandbox");
    const json_t *deny_read = json_object_get(sandbox, "denyRead");
    if (deny_read)
        json_object_set_new(out, "sandbox", json_pack("{sO}", "denyRead", deny_read));
    else if (sandbox && !json_is_object(sandbox))
        json_object_set(out, "sandbox", (json_t *)sandbox); /* a type error, reported */
    const json_t *perms = json_object_get(doc, "permissions");
    if (perms && !json_is_object(perms)) {
        json_object_set(out, "permissions", (json_t *)perms); /* a type error, reported */
        return out;
    }
    json_t *keep = json_object();
    static const char *const keys[] = {"deny", "ask"};
    for (size_t i = 0; i < 2; i++) {
        json_t *v = json_object_get(perms, keys[i]);
        if (v)
            json_object_set(keep, keys[i], v);
    }
    if (json_object_size(keep))
        json_object_set(out, "permissions", keep);
    json_decref(keep);
    return out;
}

/* A "compat" block where only the user's Loom settings are asked: dropped,
 * with a warning that says so. */
static void drop_compat(json_t *doc, const char *file, json_t *warnings)
{
    if (!json_object_get(doc, "compat"))
        return;
    json_object_del(doc, "compat");
    loom_str m = LOOM_STR_INIT;
    str_printf(&m, "%s: \"compat\" is read from Loom's user settings only (%s); ignored here",
               file, "$LOOM_HOME/settings.json");
    json_array_append_new(warnings, json_string(m.ptr));
    str_free(&m);
}

int settings_load_opts(const char *cwd, const char *compat_option, settings_files *out,
                       loom_error *err)
{
    memset(out, 0, sizeof *out);
    char cwd_buf[4096];
    if (!cwd)
        cwd = getcwd(cwd_buf, sizeof cwd_buf) ? cwd_buf : ".";
    for (int i = 0; i < SETTINGS_LAYERS; i++) {
        out->path[i] = settings_layer_path((settings_layer)i, cwd);
        out->claude_path[i] = settings_claude_path((settings_layer)i, cwd);
    }

    /* Per layer, Claude Code's warnings before Loom's (the order of the merge). */
    json_t *warned[SETTINGS_LAYERS][2] = {{NULL, NULL}, {NULL, NULL}, {NULL, NULL}};
    int rc = 0;
    for (int i = SETTINGS_LAYERS - 1; i >= 0 && rc == 0; i--) {
        warned[i][1] = json_array();
        rc = settings_read(out->path[i], &out->doc[i], err);
        if (rc == 0 && out->doc[i])
            rc = settings_check(out->doc[i], out->path[i], warned[i][1], err);
        if (rc == 0 && i != SETTINGS_USER)
            drop_compat(out->doc[i], out->path[i], warned[i][1]);
    }
    /* Only now: whether compat is on is the user's Loom file's to say. */
    out->compat = rc == 0 && settings_compat_claude(compat_option, out->doc[SETTINGS_USER]);
    for (int i = SETTINGS_LAYERS - 1; i >= 0 && rc == 0; i--) {
        warned[i][0] = json_array();
        json_t *doc = NULL;
        rc = settings_read(out->claude_path[i], &doc, err);
        if (rc == 0 && doc && !out->compat) {
            json_t *kept = deny_ask_only(doc);
            json_decref(doc);
            doc = kept;
        }
        if (rc == 0 && doc) {
            rc = settings_check(doc, out->claude_path[i], warned[i][0], err);
            drop_compat(doc, out->claude_path[i], warned[i][0]);
        }
        out->claude_doc[i] = doc;
    }
    out->warnings = json_array();
    out->sources = json_array();
    for (int i = 0; i < SETTINGS_LAYERS; i++) {
        for (int k = 0; k < 2; k++) {
            if (warned[i][k])
                json_array_extend(out->warnings, warned[i][k]);
            json_decref(warned[i][k]);
        }
        if (out->claude_doc[i])
            add_source(out->sources, out->claude_path[i], i, true, out->compat);
        if (out->doc[i])
            add_source(out->sources, out->path[i], i, false, true);
    }
    if (rc != 0)
        settings_files_free(out);
    return rc;
}

int settings_load(const char *cwd, settings_files *out, loom_error *err)
{
    return settings_load_opts(cwd, NULL, out, err);
}

void settings_files_free(settings_files *f)
{
    if (!f)
        return;
    for (int i = 0; i < SETTINGS_LAYERS; i++) {
        free(f->path[i]);
        json_decref(f->doc[i]);
        free(f->claude_path[i]);
        json_decref(f->claude_doc[i]);
    }
    json_decref(f->warnings);
    json_decref(f->sources);
    memset(f, 0, sizeof *f);
}

/* ---- merging a layer's two files ------------------------------------------------- */

/* Does the list at this place concatenate? parent: the key holding the
 * object the list is in (NULL at the top). */
static bool concatenates(const char *parent, const char *key)
{
    if (!parent)
        return !strcmp(key, "enabledMcpjsonServers") || !strcmp(key, "disabledMcpjsonServers");
    if (!strcmp(parent, "hooks"))
        return true; /* every event's groups */
    if (!strcmp(parent, "permissions"))
        return !strcmp(key, "allow") || !strcmp(key, "ask") || !strcmp(key, "deny") ||
               !strcmp(key, "additionalDirectories");
    if (!strcmp(parent, "sandbox"))
        return !strcmp(key, "writablePaths") || !strcmp(key, "denyRead") ||
               !strcmp(key, "allowUnixSockets");
    return false;
}

static void merge_into(json_t *acc, const json_t *over, const char *parent)
{
    const char *key;
    json_t *v;
    json_object_foreach((json_t *)over, key, v) {
        /* null is "not set" (the schema's rule): it never erases the
         * other file's value — nor its deny rules. */
        if (json_is_null(v))
            continue;
        json_t *have = json_object_get(acc, key);
        if (have && json_is_array(have) && json_is_array(v) && concatenates(parent, key)) {
            json_t *both = json_deep_copy(have);
            json_t *add = json_deep_copy(v);
            json_array_extend(both, add);
            json_decref(add);
            json_object_set_new(acc, key, both);
        } else if (!parent && have && json_is_object(have) && json_is_object(v)) {
            /* One level only: an entry of mcpServers or models is replaced
             * whole, never mixed from two files. */
            json_t *sub = json_deep_copy(have);
            merge_into(sub, v, key);
            json_object_set_new(acc, key, sub);
        } else {
            json_object_set_new(acc, key, json_deep_copy(v));
        }
    }
}

json_t *settings_merge(const json_t *claude, const json_t *loom)
{
    if (!claude && !loom)
        return NULL;
    json_t *acc = claude ? json_deep_copy(claude) : json_object();
    if (loom)
        merge_into(acc, loom, NULL);
    return acc;
}
