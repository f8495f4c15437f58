/* mcp_config.c — the MCP configuration through loom.h (`loom mcp list|get|
 * add|add-json|remove`): a loom_config's values, trust-filtered settings
 * documents and workspace become ext/mcp/config.h's inputs, and its
 * servers become JSON for the surfaces.
 *
 * The settings documents handed on are the ones config.c filtered: in an
 * untrusted workspace neither the project's nor a committed local settings
 * file can approve a .mcp.json server (trust_filter dropped their keys).
 *
 * No state; thread-safe for distinct configs. */
#include <stdlib.h>
#include <string.h>

#include "api/internal.h"
#include "base/json.h"
#include "base/str.h"
#include "ext/mcp/config.h"

int api_mcp_config_inputs(const json_t *values, json_t *const files[3], bool trusted,
                          const char *workspace, const char *user_path,
                          struct mcp_config_inputs *in, loom_status *st)
{
    memset(in, 0, sizeof *in);
    in->project_dir = workspace;
    in->user_settings_path = user_path;
    for (int i = 0; i < 3; i++)
        in->settings[i] = files ? files[i] : NULL;
    in->trusted = trusted;
    if (api_option_bool(values, "strict_mcp_config", &in->strict, st) != 0)
        return -1;
    const char *text = api_value(values, "mcp_config");
    if (!text)
        return 0;
    const api_option *o = api_option_find("mcp_config");
    if (api_option_check(o, text, st) != 0)
        return -1;
    json_t *list = json_loads(text, 0, NULL);
    size_t n = json_array_size(list);
    char **v = xcalloc(n + 1, sizeof *v);
    for (size_t i = 0; i < n; i++)
        v[i] = xstrdup(json_string_value(json_array_get(list, i)));
    json_decref(list);
    in->cli_configs = (const char *const *)v;
    in->n_cli = n;
    return 0;
}

void api_mcp_config_inputs_free(struct mcp_config_inputs *in)
{
    if (!in)
        return;
    for (size_t i = 0; i < in->n_cli; i++)
        free((char *)in->cli_configs[i]);
    free((void *)in->cli_configs);
    in->cli_configs = NULL;
    in->n_cli = 0;
}

static int config_inputs(const loom_config *cfg, mcp_config_inputs *in, loom_status *st)
{
    memset(in, 0, sizeof *in);
    if (!cfg->workspace)
        return api_status_set(st, LOOM_ERR_INVALID_REQUEST,
                              "the settings have not been loaded yet");
    return api_mcp_config_inputs(cfg->values, cfg->files, cfg->trusted, cfg->workspace,
                                 cfg->user_path, in, st);
}

static json_t *server_json(const mcp_server_config *c)
{
    json_t *o = json_object();
    json_set_str(o, "name", c->name);
    json_set_str(o, "scope", mcp_scope_name(c->scope));
    json_set_str(o, "transport", mcp_kind_name(c->kind));
    if (c->kind == MCP_KIND_STDIO) {
        json_set_str(o, "command", c->command);
        json_t *args = json_array();
        for (char **a = c->args; a && *a; a++)
            json_array_append_new(args, json_string(*a));
        json_object_set_new(o, "args", args);
        if (c->env)
            json_object_set(o, "env", c->env);
        json_set_str(o, "cwd", c->cwd);
    } else {
        json_set_str(o, "url", c->url);
        if (c->headers)
            json_object_set(o, "headers", c->headers);
    }
    json_object_set_new(o, "timeout_ms", json_integer(c->timeout_ms));
    json_object_set_new(o, "connect_timeout_ms", json_integer(c->connect_timeout_ms));
    json_object_set_new(o, "alwaysLoad", json_boolean(c->always_load));
    json_set_str(o, "instructions", c->instructions);
    json_object_set_new(o, "needs_approval", json_boolean(c->needs_approval));
    json_object_set_new(o, "disabled", json_boolean(c->disabled));
    json_set_str(o, "error", c->error);
    json_set_str(o, "source", c->source);
    return o;
}

char *loom_mcp_list_json(const loom_config *cfg, loom_status *st)
{
    API_CHECK_ARG(st, cfg, NULL);
    mcp_config_inputs in;
    if (config_inputs(cfg, &in, st) != 0)
        return NULL;
    /* The enabled plugins' servers too: what a session here would start. */
    plugin_set plugins;
    loom_error err;
    json_t *plugin_servers = NULL;
    if (api_plugins_read(cfg->files[0], cfg->files[1], cfg->trusted, &plugins, &err) == 0) {
        plugin_servers = api_plugin_servers(&plugins);
        plugin_set_free(&plugins);
    }
    in.plugin_servers = plugin_servers;
    mcp_config_set set;
    int rc = mcp_config_load(&in, &set, &err);
    api_mcp_config_inputs_free(&in);
    json_decref(plugin_servers);
    if (rc != 0) {
        api_status_from(st, &err);
        return NULL;
    }
    json_t *servers = json_array();
    for (size_t i = 0; i < set.n; i++)
        json_array_append_new(servers, server_json(&set.servers[i]));
    json_t *doc = json_object();
    json_object_set_new(doc, "servers", servers);
    json_object_set(doc, "warnings", set.warnings);
    mcp_config_set_free(&set);
    char *text = json_dump_compact(doc);
    json_decref(doc);
    api_status_ok(st);
    return text;
}

/* "user" | "project" | "local" → scope; NULL: local (Claude Code's default). */
static int parse_scope(const char *name, mcp_scope *out, loom_status *st)
{
    static const mcp_scope scopes[] = {MCP_SCOPE_USER, MCP_SCOPE_PROJECT, MCP_SCOPE_LOCAL};
    if (!name) {
        *out = MCP_SCOPE_LOCAL;
        return 0;
    }
    for (size_t i = 0; i < 3; i++)
        if (!strcmp(name, mcp_scope_name(scopes[i]))) {
            *out = scopes[i];
            return 0;
        }
    return api_status_set(st, LOOM_ERR_INVALID_REQUEST,
                          "scope \"%s\" is not one of user, project, local", name);
}

int loom_mcp_add(const loom_config *cfg, const char *scope, const char *name,
                 const char *entry_json, bool replace, loom_status *st)
{
    API_CHECK_ARG(st, cfg, -1);
    API_CHECK_ARG(st, name, -1);
    API_CHECK_ARG(st, entry_json, -1);
    mcp_scope sc;
    if (parse_scope(scope, &sc, st) != 0)
        return -1;
    loom_error err;
    json_t *entry = json_parse(entry_json, strlen(entry_json), "the server entry", &err);
    if (!entry) {
        api_status_set(st, LOOM_ERR_CONFIG, "%s", err.message);
        return -1;
    }
    mcp_config_inputs in;
    int rc = config_inputs(cfg, &in, st);
    if (rc == 0) {
        rc = mcp_config_add(&in, sc, name, entry, replace, &err);
        if (rc != 0)
            api_status_from(st, &err);
        else
            api_status_ok(st);
    }
    api_mcp_config_inputs_free(&in);
    json_decref(entry);
    return rc == 0 ? 0 : -1;
}

int loom_mcp_remove(const loom_config *cfg, const char *scope_or_null, const char *name,
                    loom_status *st)
{
    API_CHECK_ARG(st, cfg, -1);
    API_CHECK_ARG(st, name, -1);
    mcp_scope sc = MCP_SCOPE_LOCAL;
    if (scope_or_null && parse_scope(scope_or_null, &sc, st) != 0)
        return -1;
    mcp_config_inputs in;
    if (config_inputs(cfg, &in, st) != 0)
        return -1;
    loom_error err;
    int rc = mcp_config_remove(&in, scope_or_null != NULL, sc, name, &err);
    api_mcp_config_inputs_free(&in);
    if (rc != 0) {
        api_status_from(st, &err);
        return -1;
    }
    api_status_ok(st);
    return 0;
}
