/* plugins.c — plugins through loom.h (`loom plugin …`, /plugin): listing,
 * marketplaces, install, enable, disable, remove over ext/plugins, on the
 * config's user settings file and the Loom home; and the agent's side —
 * the installed plugins loaded when the agent is made, their hooks handed
 * to each session's governance and their MCP servers to its MCP
 * configuration.
 *
 * A change made here counts from the next agent (the next start, or the
 * REPL's reopen). No state; thread-safe for distinct configs. */
#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "api/internal.h"
#include "base/json.h"
#include "base/path.h"
#include "base/str.h"
#include "ext/plugins/manage.h"
#include "ext/plugins/plugins.h"

/* ---- the agent's plugins ------------------------------------------------------ */

int api_plugins_read(const json_t *user, const json_t *project, bool trusted, plugin_set *out,
                     loom_error *err)
{
    plugins_opts o = {.user_settings = user, .project_settings = project, .trusted = trusted};
    return plugins_load(&o, out, err);
}

void api_plugins_warn_untrusted(loom_agent *a)
{
    /* Said once per plugin when the agent is made; the MCP configuration
     * repeats it per server for `loom mcp list` and /mcp. */
    for (size_t i = 0; !a->trusted && i < a->plugins.n; i++) {
        const plugin *p = &a->plugins.v[i];
        if (!p->enabled || p->error || json_object_size(p->mcp_servers) == 0)
            continue;
        loom_str w = LOOM_STR_INIT;
        str_printf(&w, "plugin %s: its MCP servers wait for approval: the workspace is not "
                       "trusted (",
                   p->name);
        const char *k;
        json_t *v;
        size_t n = 0;
        json_object_foreach(p->mcp_servers, k, v)
            str_printf(&w, "%splugin:%s:%s", n++ ? ", " : "", p->name, k);
        str_puts(&w, "; trust the workspace, or /mcp approve NAME)");
        json_array_append_new(a->warnings, json_string(w.ptr));
        str_free(&w);
    }
}

json_t *api_plugin_hooks(const plugin_set *s)
{
    json_t *list = NULL;
    for (size_t i = 0; s && i < s->n; i++) {
        const plugin *p = &s->v[i];
        if (!p->enabled || p->error || !p->hooks)
            continue;
        if (!list)
            list = json_array();
        json_array_append_new(list, json_pack("{s:s,s:O}", "plugin", p->name, "hooks", p->hooks));
    }
    return list;
}

json_t *api_plugin_servers(const plugin_set *s)
{
    json_t *list = NULL;
    for (size_t i = 0; s && i < s->n; i++) {
        const plugin *p = &s->v[i];
        if (!p->enabled || p->error || !p->mcp_servers)
            continue;
        if (!list)
            list = json_array();
        json_array_append_new(list, json_pack("{s:s,s:O,s:s}", "plugin", p->name, "servers",
                                              p->mcp_servers, "source", p->root));
    }
    return list;
}

/* ---- listing ------------------------------------------------------------------ */

/* Markdown files under dir (commands are namespaced by sub-folder, so
 * those count too), or folders holding SKILL.md when skills. */
static long count_md(const char *dir, bool skills, int depth)
{
    DIR *d = dir && depth < 8 ? opendir(dir) : NULL;
    if (!d)
        return 0;
    long n = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        char *p = path_join(dir, e->d_name);
        struct stat st;
        if (stat(p, &st) == 0 && S_ISDIR(st.st_mode)) {
            if (skills) {
                char *sk = path_join(p, "SKILL.md");
                n += stat(sk, &st) == 0 && S_ISREG(st.st_mode);
                free(sk);
            } else {
                n += count_md(p, false, depth + 1);
            }
        } else if (!skills) {
            size_t len = strlen(e->d_name);
            n += len > 3 && !strcmp(e->d_name + len - 3, ".md");
        }
        free(p);
    }
    closedir(d);
    return n;
}

static long count_hooks(const json_t *hooks)
{
    long n = 0;
    const char *ev;
    json_t *groups;
    json_object_foreach((json_t *)hooks, ev, groups) {
        size_t i;
        json_t *g;
        json_array_foreach(groups, i, g) n += (long)json_array_size(json_object_get(g, "hooks"));
    }
    return n;
}

static json_t *plugin_json(const plugin *p)
{
    json_t *o = json_object();
    json_set_str(o, "name", p->name);
    json_set_str(o, "id", p->id);
    if (p->version)
        json_set_str(o, "version", p->version);
    if (p->description)
        json_set_str(o, "description", p->description);
    if (p->marketplace)
        json_set_str(o, "marketplace", p->marketplace);
    json_set_str(o, "root", p->root);
    json_object_set_new(o, "enabled", json_boolean(p->enabled));
    json_object_set_new(o, "commands", json_integer(count_md(p->commands_dir, false, 0)));
    json_object_set_new(o, "agents", json_integer(count_md(p->agents_dir, false, 0)));
    json_object_set_new(o, "skills", json_integer(count_md(p->skills_dir, true, 0)));
    json_object_set_new(o, "hooks", json_integer(count_hooks(p->hooks)));
    json_object_set_new(o, "mcp_servers", json_integer((json_int_t)json_object_size(p->mcp_servers)));
    json_object_set_new(o, "output_styles", json_integer(count_md(p->styles_dir, false, 0)));
    if (p->error)
        json_set_str(o, "error", p->error);
    return o;
}

static json_t *marketplaces_json(json_t *warnings)
{
    json_t *out = json_array(), *known;
    loom_error err;
    if (marketplace_known(NULL, &known, &err) != 0) {
        json_array_append_new(warnings, json_string(err.message));
        return out;
    }
    const char *name;
    json_t *rec;
    json_object_foreach(known, name, rec) {
        json_t *m = json_pack("{s:s,s:s,s:s,s:s}", "name", name, "source",
                              json_get_str(rec, "source", ""), "kind",
                              json_get_str(rec, "kind", ""), "root", json_get_str(rec, "root", ""));
        json_t *doc;
        if (marketplace_read(json_get_str(rec, "root", ""), &doc, &err) != 0) {
            json_set_str(m, "error", err.message);
        } else {
            json_t *names = json_array();
            size_t i;
            json_t *e;
            json_array_foreach(json_object_get(doc, "plugins"), i, e) {
                json_t *row = json_pack("{s:s}", "name", json_get_str(e, "name", ""));
                const char *d = json_get_str(e, "description", NULL);
                if (d)
                    json_set_str(row, "description", d);
                json_array_append_new(names, row);
            }
            json_object_set_new(m, "plugins", names);
            json_decref(doc);
        }
        json_array_append_new(out, m);
    }
    json_decref(known);
    return out;
}

static int loaded(const loom_config *cfg, loom_status *st)
{
    if (!cfg->workspace)
        return api_status_set(st, LOOM_ERR_INVALID_REQUEST,
                              "the settings have not been loaded yet");
    return 0;
}

char *loom_plugin_list_json(const loom_config *cfg, loom_status *st)
{
    API_CHECK_ARG(st, cfg, NULL);
    if (loaded(cfg, st) != 0)
        return NULL;
    plugin_set s;
    loom_error err;
    if (api_plugins_read(cfg->files[0], cfg->files[1], cfg->trusted, &s, &err) != 0) {
        api_status_from(st, &err);
        return NULL;
    }
    json_t *plugins = json_array();
    for (size_t i = 0; i < s.n; i++)
        json_array_append_new(plugins, plugin_json(&s.v[i]));
    json_t *warnings = json_deep_copy(s.warnings);
    json_t *doc = json_pack("{s:o,s:o}", "plugins", plugins, "marketplaces",
                            marketplaces_json(warnings));
    json_object_set_new(doc, "warnings", warnings);
    plugin_set_free(&s);
    char *text = json_dump_compact(doc);
    json_decref(doc);
    api_status_ok(st);
    return text;
}

/* ---- changing ----------------------------------------------------------------- */

int loom_plugin_marketplace_add(const loom_config *cfg, const char *source, char **name_out,
                                loom_status *st)
{
    if (name_out)
        *name_out = NULL;
    API_CHECK_ARG(st, cfg, -1);
    API_CHECK_ARG(st, source, -1);
    if (loaded(cfg, st) != 0)
        return -1;
    /* A relative folder is the workspace's; anything else (a URL,
     * owner/repo) goes on as written. */
    char *abs = source[0] != '/' ? path_make_absolute(source, cfg->workspace) : NULL;
    struct stat sb;
    const char *use = abs && stat(abs, &sb) == 0 && S_ISDIR(sb.st_mode) ? abs : source;
    loom_error err;
    int rc = marketplace_add(NULL, use, name_out, &err);
    free(abs);
    if (rc != 0)
        return api_status_from(st, &err), -1;
    api_status_ok(st);
    return 0;
}

int loom_plugin_marketplace_remove(const loom_config *cfg, const char *name, loom_status *st)
{
    API_CHECK_ARG(st, cfg, -1);
    API_CHECK_ARG(st, name, -1);
    if (loaded(cfg, st) != 0)
        return -1;
    loom_error err;
    if (marketplace_remove(NULL, name, &err) != 0)
        return api_status_from(st, &err), -1;
    api_status_ok(st);
    return 0;
}

int loom_plugin_install(const loom_config *cfg, const char *spec, loom_status *st)
{
    API_CHECK_ARG(st, cfg, -1);
    API_CHECK_ARG(st, spec, -1);
    if (loaded(cfg, st) != 0)
        return -1;
    loom_error err;
    if (plugin_install(NULL, cfg->user_path, spec, cfg->workspace, NULL, &err) != 0)
        return api_status_from(st, &err), -1;
    api_status_ok(st);
    return 0;
}

int loom_plugin_set_enabled(const loom_config *cfg, const char *name, bool enabled,
                            loom_status *st)
{
    API_CHECK_ARG(st, cfg, -1);
    API_CHECK_ARG(st, name, -1);
    if (loaded(cfg, st) != 0)
        return -1;
    loom_error err;
    if (plugin_set_enabled(NULL, cfg->user_path, name, enabled, NULL, &err) != 0)
        return api_status_from(st, &err), -1;
    api_status_ok(st);
    return 0;
}

int loom_plugin_remove(const loom_config *cfg, const char *name, loom_status *st)
{
    API_CHECK_ARG(st, cfg, -1);
    API_CHECK_ARG(st, name, -1);
    if (loaded(cfg, st) != 0)
        return -1;
    loom_error err;
    if (plugin_remove(NULL, cfg->user_path, name, NULL, &err) != 0)
        return api_status_from(st, &err), -1;
    api_status_ok(st);
    return 0;
}
