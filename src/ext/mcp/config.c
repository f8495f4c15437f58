/* config.c — which MCP servers a session has (config.h): reading the
 * user settings, .mcp.json, the local settings and --mcp-config, expanding
 * ${VAR}, judging each entry, deciding approval; and rewriting those files
 * for `loom mcp add|add-json|remove` and the REPL's approval.
 *
 * Owns nothing beyond the sets it returns. Every bad entry is kept, with
 * its error, so the list commands can show why a server will not start;
 * only a file the user asked for that cannot be read as JSON stops a load.
 *
 * Pure apart from reading files and the environment; no state; distinct
 * sets may be used from distinct threads. */
#include "ext/mcp/config.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/fileio.h"
#include "base/json.h"
#include "base/settings.h"
#include "base/str.h"

const char *mcp_scope_name(mcp_scope s)
{
    static const char *const names[] = {"user", "project", "local", "cli", "plugin"};
    return (unsigned)s < 5 ? names[s] : "?";
}

const char *mcp_kind_name(mcp_kind k)
{
    static const char *const names[] = {"stdio", "http", "sse"};
    return (unsigned)k < 3 ? names[k] : "?";
}

/* ---- ${VAR} ------------------------------------------------------------------- */

static bool var_start(char c)
{
    return isalpha((unsigned char)c) || c == '_';
}

static bool var_char(char c)
{
    return isalnum((unsigned char)c) || c == '_';
}

char *mcp_expand_env(const char *s, char **missing)
{
    if (missing)
        *missing = NULL;
    if (!s)
        return NULL;
    loom_str out = LOOM_STR_INIT;
    str_puts(&out, ""); /* "" in, "" out (never NULL) */
    const char *p = s;
    while (*p) {
        /* ${NAME} or ${NAME:-default}; anything else stays as written. */
        if (p[0] != '$' || p[1] != '{' || !var_start(p[2])) {
            str_putc(&out, *p++);
            continue;
        }
        const char *name = p + 2, *q = name;
        while (var_char(*q))
            q++;
        const char *def = NULL, *end = NULL;
        if (q[0] == '}')
            end = q;
        else if (q[0] == ':' && q[1] == '-' && (end = strchr(q + 2, '}')))
            def = q + 2;
        if (!end) {
            str_putc(&out, *p++);
            continue;
        }
        char *var = xstrndup(name, (size_t)(q - name));
        const char *val = getenv(var);
        /* As the shell's ":-": an empty value takes the default too. */
        if (def && (!val || !*val))
            str_append(&out, def, (size_t)(end - def));
        else if (val)
            str_puts(&out, val);
        else {
            if (missing)
                *missing = var;
            else
                free(var);
            str_free(&out);
            return NULL;
        }
        free(var);
        p = end + 1;
    }
    return str_steal(&out);
}

/* ---- one entry ---------------------------------------------------------------- */

static void server_zero(mcp_server_config *c)
{
    memset(c, 0, sizeof *c);
}

void mcp_server_config_free(mcp_server_config *c)
{
    if (!c)
        return;
    free(c->name);
    free(c->command);
    for (char **a = c->args; a && *a; a++)
        free(*a);
    free(c->args);
    json_decref(c->env);
    free(c->cwd);
    free(c->url);
    json_decref(c->headers);
    free(c->instructions);
    free(c->source);
    free(c->error);
    server_zero(c);
}

void mcp_server_config_copy(mcp_server_config *dst, const mcp_server_config *src)
{
    *dst = *src;
    dst->name = xstrdup(src->name);
    dst->command = xstrdup(src->command);
    dst->args = NULL;
    if (src->args) {
        size_t n = 0;
        while (src->args[n])
            n++;
        dst->args = xcalloc(n + 1, sizeof *dst->args);
        for (size_t i = 0; i < n; i++)
            dst->args[i] = xstrdup(src->args[i]);
    }
    dst->env = src->env ? json_deep_copy(src->env) : NULL;
    dst->cwd = xstrdup(src->cwd);
    dst->url = xstrdup(src->url);
    dst->headers = src->headers ? json_deep_copy(src->headers) : NULL;
    dst->instructions = xstrdup(src->instructions);
    dst->source = xstrdup(src->source);
    dst->error = xstrdup(src->error);
}

/* What reading one entry needs to know and where it reports. */
typedef struct entry_ctx {
    const char *name;
    const char *source;
    bool expand;          /* false when validating an entry to be written */
    json_t *warnings;     /* may be NULL */
    loom_str why;         /* the first error (empty: none) */
} entry_ctx;

static void entry_fail(entry_ctx *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void entry_fail(entry_ctx *e, const char *fmt, ...)
{
    if (e->why.len)
        return; /* the first error is the one shown */
    va_list ap;
    va_start(ap, fmt);
    str_vprintf(&e->why, fmt, ap);
    va_end(ap);
}

/* One text field, expanded. NULL (with the error recorded) when it cannot be. */
static char *entry_text(entry_ctx *e, const char *field, const char *text)
{
    if (!e->expand)
        return xstrdup(text);
    char *missing = NULL;
    char *out = mcp_expand_env(text, &missing);
    if (!out) {
        entry_fail(e, "%s: ${%s} is not set (set it, or give a default: ${%s:-value})", field,
                   missing, missing);
        free(missing);
    }
    return out;
}

/* A string field: absent → NULL; not a string → error. */
static char *entry_string(entry_ctx *e, const json_t *entry, const char *field)
{
    const json_t *v = json_object_get(entry, field);
    if (!v || json_is_null(v))
        return NULL;
    if (!json_is_string(v)) {
        entry_fail(e, "\"%s\" must be a string", field);
        return NULL;
    }
    return entry_text(e, field, json_string_value(v));
}

/* env / headers: an object of strings, values expanded. */
static json_t *entry_map(entry_ctx *e, const json_t *entry, const char *field)
{
    const json_t *v = json_object_get(entry, field);
    if (!v || json_is_null(v))
        return NULL;
    if (!json_is_object(v)) {
        entry_fail(e, "\"%s\" must be an object of strings", field);
        return NULL;
    }
    json_t *out = json_object();
    const char *k;
    json_t *val;
    json_object_foreach((json_t *)v, k, val) {
        if (!json_is_string(val)) {
            entry_fail(e, "\"%s\".%s must be a string", field, k);
            continue;
        }
        loom_str where = LOOM_STR_INIT;
        str_printf(&where, "%s.%s", field, k);
        char *x = entry_text(e, where.ptr, json_string_value(val));
        str_free(&where);
        if (x)
            json_object_set_new(out, k, json_string(x));
        free(x);
    }
    return out;
}

static char **entry_args(entry_ctx *e, const json_t *entry)
{
    const json_t *v = json_object_get(entry, "args");
    size_t n = json_is_array(v) ? json_array_size(v) : 0;
    char **args = xcalloc(n + 1, sizeof *args);
    if (v && !json_is_null(v) && !json_is_array(v)) {
        entry_fail(e, "\"args\" must be an array of strings");
        return args;
    }
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        const json_t *a = json_array_get(v, i);
        char where[32];
        snprintf(where, sizeof where, "args[%zu]", i);
        if (!json_is_string(a)) {
            entry_fail(e, "%s must be a string", where);
            continue;
        }
        char *x = entry_text(e, where, json_string_value(a));
        if (x)
            args[k++] = x;
    }
    return args;
}

static bool entry_bool(entry_ctx *e, const json_t *entry, const char *field)
{
    const json_t *v = json_object_get(entry, field);
    if (v && !json_is_null(v) && !json_is_boolean(v))
        entry_fail(e, "\"%s\" must be true or false", field);
    return json_is_true(v);
}

/* A positive whole number of milliseconds from the environment, or fallback. */
static long env_ms(const char *var, long fallback, json_t *warnings)
{
    const char *v = getenv(var);
    if (!v || !*v)
        return fallback;
    char *end;
    errno = 0;
    long n = strtol(v, &end, 10);
    if (errno || *end || n <= 0) {
        if (warnings) {
            loom_str w = LOOM_STR_INIT;
            str_printf(&w, "%s=\"%s\" is not a positive number of milliseconds; using %ld", var,
                       v, fallback);
            json_array_append_new(warnings, json_string(w.ptr));
            str_free(&w);
        }
        return fallback;
    }
    return n;
}

static const char *const KNOWN_FIELDS[] = {
    "type", "command", "args", "env", "cwd", "url", "headers", "timeout", "alwaysLoad",
    "instructions", "disabled", NULL,
};

static void warn_unknown_fields(entry_ctx *e, const json_t *entry)
{
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)entry, k, v) {
        bool known = false;
        for (size_t i = 0; KNOWN_FIELDS[i] && !known; i++)
            known = strcmp(KNOWN_FIELDS[i], k) == 0;
        if (!known && e->warnings) {
            loom_str w = LOOM_STR_INIT;
            str_printf(&w, "%s: MCP server \"%s\": unknown key \"%s\" (ignored)", e->source,
                       e->name, k);
            json_array_append_new(e->warnings, json_string(w.ptr));
            str_free(&w);
        }
    }
}

/* The transport an entry names, or says by its fields. -1: none (error set). */
static int entry_kind(entry_ctx *e, const json_t *entry)
{
    const json_t *t = json_object_get(entry, "type");
    if (t && !json_is_null(t)) {
        const char *s = json_string_value(t);
        if (s && !strcmp(s, "stdio"))
            return MCP_KIND_STDIO;
        if (s && (!strcmp(s, "http") || !strcmp(s, "streamable-http")))
            return MCP_KIND_HTTP;
        if (s && !strcmp(s, "sse"))
            return MCP_KIND_SSE;
        entry_fail(e, "\"type\" must be \"stdio\", \"http\" or \"sse\"");
        return -1;
    }
    if (json_object_get(entry, "command"))
        return MCP_KIND_STDIO;
    if (json_object_get(entry, "url"))
        return MCP_KIND_HTTP;
    entry_fail(e, "needs \"command\" (a stdio server) or \"url\" (an http or sse server)");
    return -1;
}

/* Reads entry into *c (always filled enough to be listed). The first
 * problem goes to c->error, "SOURCE: MCP server NAME: why". */
static void entry_read(entry_ctx *e, const json_t *entry, mcp_scope scope, mcp_server_config *c)
{
    server_zero(c);
    c->name = xstrdup(e->name);
    c->scope = scope;
    c->source = xstrdup(e->source);
    c->timeout_ms = env_ms("MCP_TOOL_TIMEOUT", MCP_DEFAULT_CALL_TIMEOUT_MS, NULL);
    c->connect_timeout_ms = env_ms("MCP_TIMEOUT", MCP_DEFAULT_CONNECT_TIMEOUT_MS, NULL);
    if (!json_is_object(entry)) {
        entry_fail(e, "must be an object");
    } else {
        warn_unknown_fields(e, entry);
        int kind = entry_kind(e, entry);
        c->kind = kind < 0 ? MCP_KIND_STDIO : (mcp_kind)kind;
        if (c->kind == MCP_KIND_STDIO) {
            c->command = entry_string(e, entry, "command");
            if (!c->command || !*c->command)
                entry_fail(e, "a stdio server needs a \"command\"");
            c->args = entry_args(e, entry);
            c->env = entry_map(e, entry, "env");
            c->cwd = entry_string(e, entry, "cwd");
        } else {
            c->url = entry_string(e, entry, "url");
            if (!c->url || !*c->url)
                entry_fail(e, "an %s server needs a \"url\"", mcp_kind_name(c->kind));
            else if (strncmp(c->url, "http://", 7) && strncmp(c->url, "https://", 8))
                entry_fail(e, "\"url\" must start with http:// or https://");
            c->headers = entry_map(e, entry, "headers");
        }
        const json_t *to = json_object_get(entry, "timeout");
        if (to && !json_is_null(to)) {
            double ms = json_is_number(to) ? json_number_value(to) : -1;
            if (ms <= 0 || ms > 1e12)
                entry_fail(e, "\"timeout\" must be a positive number of milliseconds");
            else
                c->timeout_ms = (long)ms;
        }
        c->always_load = entry_bool(e, entry, "alwaysLoad");
        c->disabled = entry_bool(e, entry, "disabled");
        c->instructions = entry_string(e, entry, "instructions");
    }
    if (!c->args)
        c->args = xcalloc(1, sizeof *c->args);
    if (e->why.len) {
        loom_str msg = LOOM_STR_INIT;
        str_printf(&msg, "%s: MCP server \"%s\": %s", e->source, e->name, e->why.ptr);
        c->error = str_steal(&msg);
    }
}

/* ---- sources ------------------------------------------------------------------ */

/* Adds (or, by name, replaces) one server in s. */
static void set_put(mcp_config_set *s, mcp_server_config *c)
{
    for (size_t i = 0; i < s->n; i++)
        if (!strcmp(s->servers[i].name, c->name)) {
            /* A later source wins; the server keeps its place in the list. */
            mcp_server_config_free(&s->servers[i]);
            s->servers[i] = *c;
            return;
        }
    s->servers = xrealloc(s->servers, (s->n + 1) * sizeof *s->servers);
    s->servers[s->n++] = *c;
}

static void warn(json_t *warnings, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void warn(json_t *warnings, const char *fmt, ...)
{
    loom_str w = LOOM_STR_INIT;
    va_list ap;
    va_start(ap, fmt);
    str_vprintf(&w, fmt, ap);
    va_end(ap);
    json_array_append_new(warnings, json_string(w.ptr));
    str_free(&w);
}

/* Every entry of doc's "mcpServers" into s, each name after prefix (a
 * plugin's "plugin:<name>:"; NULL: none). */
static void add_servers(mcp_config_set *s, const json_t *doc, mcp_scope scope, const char *source,
                        const char *prefix)
{
    const json_t *servers = json_object_get(doc, "mcpServers");
    if (!servers || json_is_null(servers))
        return;
    if (!json_is_object(servers)) {
        warn(s->warnings, "%s: \"mcpServers\" must be an object; ignored", source);
        return;
    }
    const char *key;
    json_t *entry;
    json_object_foreach((json_t *)servers, key, entry) {
        loom_str full = LOOM_STR_INIT;
        str_printf(&full, "%s%s", prefix ? prefix : "", key);
        const char *name = full.ptr;
        entry_ctx e = {name, source, true, s->warnings, LOOM_STR_INIT};
        mcp_server_config c;
        /* A name is shown in prompts, tables and the system prompt and
         * names a log file: one with control characters or a '/' is a
         * repository's trick, never a server's name. "__" would make
         * tool names ambiguous: mcp__a__b__c could be server a's tool b__c
         * or server a__b's tool c, and a rule mcp__a would match both. */
        bool bad_name = !*name || strchr(name, '/') || strstr(name, "__");
        for (const char *p = name; *p && !bad_name; p++)
            bad_name = (unsigned char)*p < 0x20 || *p == 0x7f;
        if (bad_name)
            entry_fail(&e, "the name must not be empty or hold control characters, '/' or "
                           "\"__\" (tool names are mcp__<server>__<tool>)");
        entry_read(&e, entry, scope, &c);
        str_free(&e.why);
        str_free(&full);
        set_put(s, &c);
    }
}

/* The enabled plugins' servers (mcp_config_inputs.plugin_servers). */
static void add_plugin_servers(mcp_config_set *s, const json_t *list)
{
    size_t i;
    json_t *item;
    json_array_foreach(list, i, item) {
        const char *plugin = json_string_value(json_object_get(item, "plugin"));
        const json_t *servers = json_object_get(item, "servers");
        if (!plugin || !json_is_object(servers))
            continue;
        loom_str prefix = LOOM_STR_INIT, source = LOOM_STR_INIT;
        str_printf(&prefix, "plugin:%s:", plugin);
        const char *where = json_string_value(json_object_get(item, "source"));
        str_printf(&source, "plugin %s (%s)", plugin, where ? where : "?");
        json_t *doc = json_pack("{s:O}", "mcpServers", servers);
        add_servers(s, doc, MCP_SCOPE_PLUGIN, source.ptr, prefix.ptr);
        json_decref(doc);
        str_free(&prefix);
        str_free(&source);
    }
}

/* A JSON file: 0 with *doc (NULL when absent), -1 with err when it exists
 * but is not a JSON object. */
static int read_doc(const char *path, json_t **doc, loom_error *err)
{
    return settings_read(path, doc, err) == 0 ? 0 : -1;
}

static char *join(const char *dir, const char *rest)
{
    loom_str s = LOOM_STR_INIT;
    str_printf(&s, "%s/%s", dir, rest);
    return str_steal(&s);
}

/* The file a scope is written to and read from; NULL when the scope needs
 * a project and there is none. */
static char *scope_path(const mcp_config_inputs *in, mcp_scope scope)
{
    switch (scope) {
    case MCP_SCOPE_USER:
        return in->user_settings_path ? xstrdup(in->user_settings_path) : settings_user_path();
    case MCP_SCOPE_PROJECT:
        return in->project_dir ? join(in->project_dir, ".mcp.json") : NULL;
    case MCP_SCOPE_LOCAL:
        return in->project_dir ? join(in->project_dir, ".loom/settings.local.json") : NULL;
    default:
        return NULL;
    }
}

/* One --mcp-config value: JSON text when it opens with '{', else a file. */
static int add_cli(mcp_config_set *s, const char *value, loom_error *err)
{
    const char *p = value;
    while (isspace((unsigned char)*p))
        p++;
    json_t *doc = NULL;
    const char *source = "--mcp-config";
    loom_error e;
    if (*p == '{') {
        doc = json_parse(p, strlen(p), "--mcp-config", &e);
        if (!doc)
            return loom_error_set(err, LOOM_ERR_CONFIG, "%s", e.message);
        if (!json_is_object(doc)) {
            json_decref(doc);
            return loom_error_set(err, LOOM_ERR_CONFIG, "--mcp-config: not a JSON object");
        }
    } else {
        if (!file_exists(value))
            return loom_error_set(err, LOOM_ERR_CONFIG,
                                  "--mcp-config %s: neither a readable file nor JSON", value);
        if (read_doc(value, &doc, &e) != 0)
            return loom_error_set(err, LOOM_ERR_CONFIG, "--mcp-config: %s", e.message);
        source = value;
    }
    if (!json_object_get(doc, "mcpServers"))
        warn(s->warnings, "%s: no \"mcpServers\" object; no servers taken from it", source);
    add_servers(s, doc, MCP_SCOPE_CLI, source, NULL);
    json_decref(doc);
    return 0;
}

/* ---- approval ----------------------------------------------------------------- */

static bool list_has(const json_t *list, const char *name)
{
    size_t i;
    json_t *v;
    json_array_foreach((json_t *)list, i, v) if (json_is_string(v) &&
                                                 !strcmp(json_string_value(v), name)) return true;
    return false;
}

/* The settings documents whose approval keys count: the user's and the
 * local ones always, the project's own only in a trusted workspace. */
static bool approval_counts(const mcp_config_inputs *in, int layer)
{
    return layer != SETTINGS_PROJECT || in->trusted;
}

/* A plugin's server runs only in a trusted workspace (a plugin's code
 * needs the trust the project's own would); elsewhere it waits for the
 * person, who may approve it by name in their own settings. */
static void decide_plugin_approval(const mcp_config_inputs *in, mcp_server_config *c,
                                   json_t *warnings)
{
    if (in->trusted || c->error || c->disabled)
        return;
    for (int i = 0; i < SETTINGS_LAYERS; i++)
        if (i != SETTINGS_PROJECT &&
            list_has(json_object_get(in->settings[i], "enabledMcpjsonServers"), c->name))
            return;
    c->needs_approval = true;
    warn(warnings, "%s: MCP server \"%s\" waits for approval: the workspace is not trusted "
                   "(trust it, or approve the server with /mcp approve %s)",
         c->source, c->name, c->name);
}

static void decide_approval(const mcp_config_inputs *in, mcp_server_config *c)
{
    /* Servers the repository brings: .mcp.json, and a local settings file
     * in an untrusted workspace (a repository can commit one too). */
    bool repo = c->scope == MCP_SCOPE_PROJECT || (c->scope == MCP_SCOPE_LOCAL && !in->trusted);
    if (!repo)
        return;
    bool all = false, enabled = false, disabled = false;
    for (int i = 0; i < SETTINGS_LAYERS; i++) {
        const json_t *d = in->settings[i];
        if (!d)
            continue;
        /* Keeping a server off only tightens: any file may say so. */
        disabled = disabled || list_has(json_object_get(d, "disabledMcpjsonServers"), c->name);
        if (!approval_counts(in, i))
            continue;
        all = all || json_is_true(json_object_get(d, "enableAllProjectMcpServers"));
        enabled = enabled || list_has(json_object_get(d, "enabledMcpjsonServers"), c->name);
    }
    if (disabled)
        c->disabled = true;
    c->needs_approval = !c->disabled && !all && !enabled;
}

/* ---- loading ------------------------------------------------------------------ */

int mcp_config_load(const mcp_config_inputs *in, mcp_config_set *out, loom_error *err)
{
    memset(out, 0, sizeof *out);
    out->warnings = json_array();
    env_ms("MCP_TOOL_TIMEOUT", 0, out->warnings); /* a bad value: one warning per load */
    env_ms("MCP_TIMEOUT", 0, out->warnings);
    if (!in->strict) {
        static const mcp_scope order[] = {MCP_SCOPE_USER, MCP_SCOPE_PROJECT, MCP_SCOPE_LOCAL};
        for (size_t i = 0; i < 3; i++) {
            char *path = scope_path(in, order[i]);
            json_t *doc = NULL;
            int rc = path ? read_doc(path, &doc, err) : 0;
            if (rc == 0 && doc)
                add_servers(out, doc, order[i], path, NULL);
            if (order[i] == MCP_SCOPE_USER)
                add_plugin_servers(out, in->plugin_servers);
            json_decref(doc);
            free(path);
            if (rc != 0) {
                mcp_config_set_free(out);
                return -1;
            }
        }
    }
    for (size_t i = 0; i < in->n_cli; i++)
        if (add_cli(out, in->cli_configs[i], err) != 0) {
            mcp_config_set_free(out);
            return -1;
        }
    for (size_t i = 0; i < out->n; i++) {
        if (out->servers[i].scope == MCP_SCOPE_PLUGIN)
            decide_plugin_approval(in, &out->servers[i], out->warnings);
        else
            decide_approval(in, &out->servers[i]);
    }
    /* Not a source (Claude Code reads no servers there either): say so
     * rather than ignore them in silence. */
    if (json_object_get(in->settings[SETTINGS_PROJECT], "mcpServers"))
        warn(out->warnings, ".loom/settings.json: \"mcpServers\" is not read there; a "
                            "project's servers go in .mcp.json, yours in .loom/settings.local.json");
    return 0;
}

void mcp_config_set_free(mcp_config_set *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->n; i++)
        mcp_server_config_free(&s->servers[i]);
    free(s->servers);
    json_decref(s->warnings);
    memset(s, 0, sizeof *s);
}

const mcp_server_config *mcp_config_find(const mcp_config_set *s, const char *name)
{
    for (size_t i = 0; s && name && i < s->n; i++)
        if (!strcmp(s->servers[i].name, name))
            return &s->servers[i];
    return NULL;
}

/* ---- editing ------------------------------------------------------------------ */

/* Names a tool can carry in mcp__<server>__<tool>: Claude Code's rule. */
static bool good_name(const char *name)
{
    if (!name || !*name || strlen(name) > 64)
        return false;
    for (const char *p = name; *p; p++)
        if (!isalnum((unsigned char)*p) && *p != '-' && *p != '_')
            return false;
    return true;
}

/* Writes doc to path atomically, keeping an existing file's mode (a new
 * settings file is private: 0600; a new .mcp.json is meant to be shared). */
static int write_doc(const char *path, const json_t *doc, bool private_file, loom_error *err)
{
    char *slash = strrchr(path, '/');
    if (slash && slash != path) {
        char *parent = xstrndup(path, (size_t)(slash - path));
        int rc = file_mkdirs(parent, 0700, err);
        free(parent);
        if (rc != 0)
            return -1;
    }
    struct stat st;
    int mode = stat(path, &st) == 0 ? (int)(st.st_mode & 07777) : private_file ? 0600 : -1;
    char *text = json_dumps(doc, JSON_INDENT(2));
    loom_str body = LOOM_STR_INIT;
    str_printf(&body, "%s\n", text);
    free(text);
    int rc = file_replace(path, body.ptr, body.len, mode, NULL, err);
    str_free(&body);
    return rc == 0 ? 0 : -1;
}

/* Reads the scope's file for rewriting: *doc (an empty object when the
 * file is absent), *path. -1 with err when it cannot be. */
static int open_scope(const mcp_config_inputs *in, mcp_scope scope, char **path, json_t **doc,
                      loom_error *err)
{
    *doc = NULL;
    *path = scope_path(in, scope);
    if (!*path)
        return loom_error_set(err, LOOM_ERR_CONFIG,
                              "the %s scope needs a project directory", mcp_scope_name(scope));
    if (read_doc(*path, doc, err) != 0) {
        loom_error_prefix(err, "not changed");
        return -1;
    }
    if (!*doc)
        *doc = json_object();
    return 0;
}

static void close_scope(char *path, json_t *doc)
{
    free(path);
    json_decref(doc);
}

static int add_impl(const mcp_config_inputs *in, mcp_scope scope, const char *name,
                    const json_t *entry, bool replace, loom_error *err)
{
    if (scope == MCP_SCOPE_CLI)
        return loom_error_set(err, LOOM_ERR_INVALID_REQUEST,
                              "--mcp-config servers are not written anywhere");
    if (!good_name(name))
        return loom_error_set(err, LOOM_ERR_INVALID_REQUEST,
                              "MCP server name \"%s\": use letters, digits, - and _ only "
                              "(at most 64)",
                              name ? name : "");
    char *path;
    json_t *doc;
    if (open_scope(in, scope, &path, &doc, err) != 0) {
        close_scope(path, doc);
        return -1;
    }
    /* The rules of loading, ${VAR} kept as written: the file holds the
     * reference, the environment of each later run gives the value. */
    entry_ctx e = {name, path, false, NULL, LOOM_STR_INIT};
    mcp_server_config c;
    entry_read(&e, entry, scope, &c);
    str_free(&e.why);
    if (c.error) {
        int rc = loom_error_set(err, LOOM_ERR_CONFIG, "%s; not changed", c.error);
        mcp_server_config_free(&c);
        close_scope(path, doc);
        return rc;
    }
    mcp_server_config_free(&c);
    json_t *servers = json_object_get(doc, "mcpServers");
    int rc = 0;
    if (servers && !json_is_object(servers))
        rc = loom_error_set(err, LOOM_ERR_CONFIG,
                            "%s: \"mcpServers\" is not an object; not changed", path);
    else if (servers && json_object_get(servers, name) && !replace)
        rc = loom_error_set(err, LOOM_ERR_CONFIG,
                            "MCP server \"%s\" already exists in %s (the %s scope)", name, path,
                            mcp_scope_name(scope));
    if (rc == 0) {
        if (!servers) {
            servers = json_object();
            json_object_set_new(doc, "mcpServers", servers);
        }
        json_object_set_new(servers, name, json_deep_copy(entry));
        rc = write_doc(path, doc, scope != MCP_SCOPE_PROJECT, err);
    }
    close_scope(path, doc);
    return rc;
}

/* Whether scope's file holds name: 1 yes, 0 no, -1 unreadable (err set). */
static int scope_holds(const mcp_config_inputs *in, mcp_scope scope, const char *name,
                       loom_error *err)
{
    char *path = scope_path(in, scope);
    json_t *doc = NULL;
    int rc = path ? read_doc(path, &doc, err) : 0;
    if (rc == 0)
        rc = json_object_get(json_get_obj(doc, "mcpServers"), name) != NULL;
    json_decref(doc);
    free(path);
    return rc;
}

static int remove_impl(const mcp_config_inputs *in, bool scope_given, mcp_scope scope,
                       const char *name, loom_error *err)
{
    if (!name || !*name)
        return loom_error_set(err, LOOM_ERR_INVALID_REQUEST, "no MCP server name given");
    if (!scope_given) {
        mcp_scope found[3];
        size_t n = 0;
        for (int s = MCP_SCOPE_USER; s <= MCP_SCOPE_LOCAL; s++) {
            int h = scope_holds(in, (mcp_scope)s, name, err);
            if (h < 0)
                return -1;
            if (h)
                found[n++] = (mcp_scope)s;
        }
        if (n == 0)
            return loom_error_set(err, LOOM_ERR_RESOURCE_NOT_FOUND,
                                  "no MCP server \"%s\" in the user, project or local "
                                  "configuration",
                                  name);
        if (n > 1)
            return loom_error_set(err, LOOM_ERR_CONFIG,
                                  "MCP server \"%s\" is in the %s and the %s%s%s configuration; "
                                  "name the scope to remove it from",
                                  name, mcp_scope_name(found[0]), mcp_scope_name(found[1]),
                                  n > 2 ? " and the " : "", n > 2 ? mcp_scope_name(found[2]) : "");
        scope = found[0];
    }
    if (scope == MCP_SCOPE_CLI)
        return loom_error_set(err, LOOM_ERR_INVALID_REQUEST,
                              "--mcp-config servers are not written anywhere");
    char *path;
    json_t *doc;
    if (open_scope(in, scope, &path, &doc, err) != 0) {
        close_scope(path, doc);
        return -1;
    }
    json_t *servers = json_get_obj(doc, "mcpServers");
    int rc;
    if (!json_object_get(servers, name))
        rc = loom_error_set(err, LOOM_ERR_RESOURCE_NOT_FOUND,
                            "no MCP server \"%s\" in %s (the %s scope)", name, path,
                            mcp_scope_name(scope));
    else {
        json_object_del(servers, name);
        rc = write_doc(path, doc, scope != MCP_SCOPE_PROJECT, err);
    }
    close_scope(path, doc);
    return rc;
}

static int approve_impl(const mcp_config_inputs *in, const char *name, loom_error *err)
{
    if (!name || !*name)
        return loom_error_set(err, LOOM_ERR_INVALID_REQUEST, "no MCP server name given");
    char *path;
    json_t *doc;
    if (open_scope(in, MCP_SCOPE_LOCAL, &path, &doc, err) != 0) {
        close_scope(path, doc);
        return -1;
    }
    json_t *list = json_object_get(doc, "enabledMcpjsonServers");
    int rc = 0;
    if (list && !json_is_array(list))
        rc = loom_error_set(err, LOOM_ERR_CONFIG,
                            "%s: \"enabledMcpjsonServers\" is not a list; not changed", path);
    else {
        if (!list) {
            list = json_array();
            json_object_set_new(doc, "enabledMcpjsonServers", list);
        }
        if (!list_has(list, name))
            json_array_append_new(list, json_string(name));
        rc = write_doc(path, doc, true, err);
    }
    close_scope(path, doc);
    return rc;
}

int mcp_config_add(const mcp_config_inputs *in, mcp_scope scope, const char *name,
                   const json_t *entry, bool replace, loom_error *err)
{
    /* loom_error_set's -code inside; the header promises -1. */
    return add_impl(in, scope, name, entry, replace, err) == 0 ? 0 : -1;
}

int mcp_config_remove(const mcp_config_inputs *in, bool scope_given, mcp_scope scope,
                      const char *name, loom_error *err)
{
    /* loom_error_set's -code inside; the header promises -1. */
    return remove_impl(in, scope_given, scope, name, err) == 0 ? 0 : -1;
}

int mcp_config_approve(const mcp_config_inputs *in, const char *name, loom_error *err)
{
    /* loom_error_set's -code inside; the header promises -1. */
    return approve_impl(in, name, err) == 0 ? 0 : -1;
}
