/* store.c — which plugins are installed and which count (plugins.h's
 * plugins_load, plugins_roots): $LOOM_HOME/plugins/installed.json, each
 * installed copy read again (plugin_read), and "enabledPlugins" of the
 * user settings — and of the project's, which may switch one off always
 * but on only in a trusted workspace (a repository does not get to turn
 * on code the user installed for other work). Also the writers of
 * installed.json and enabledPlugins (manage.h).
 *
 * A plugin that cannot be read is kept with its error and a warning, so
 * `loom plugin list` can show it; nothing of it counts. No state; any
 * thread. */
#include "ext/plugins/plugins.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/fileio.h"
#include "base/json.h"
#include "base/path.h"
#include "base/settings.h"
#include "base/str.h"
#include "ext/plugins/manage.h"
#include "ext/plugins/manifest.h"

char *plugins_dir(const char *home)
{
    char *h = home ? xstrdup(home) : loom_home();
    char *d = path_join(h, "plugins");
    free(h);
    return d;
}

static char *installed_path(const char *home)
{
    char *d = plugins_dir(home);
    char *p = path_join(d, "installed.json");
    free(d);
    return p;
}

int plugins_installed_read(const char *home, json_t **doc, loom_error *err)
{
    char *path = installed_path(home);
    int rc = plugin_json_file(path, PLUGIN_JSON_FILE_MAX_BYTES, doc, err);
    if (rc == 0 && !json_is_object(json_object_get(*doc, "plugins"))) {
        json_decref(*doc);
        *doc = NULL;
        rc = loom_error_set(err, LOOM_ERR_CONFIG, "%s: \"plugins\" must be an object", path);
    }
    free(path);
    if (rc < 0)
        return -1;
    if (rc == 1)
        *doc = json_pack("{s:i,s:{}}", "version", 1, "plugins");
    return 0;
}

/* Writes doc whole to path (its folder made), private to the user. */
static int write_json(const char *path, const json_t *doc, loom_error *err)
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
    int mode = stat(path, &st) == 0 ? (int)(st.st_mode & 07777) : 0600;
    char *text = json_dumps(doc, JSON_INDENT(2));
    loom_str body = LOOM_STR_INIT;
    str_printf(&body, "%s\n", text);
    free(text);
    int rc = file_replace(path, body.ptr, body.len, mode, NULL, err);
    str_free(&body);
    return rc == 0 ? 0 : -1;
}

int plugins_installed_write(const char *home, const json_t *doc, loom_error *err)
{
    char *path = installed_path(home);
    int rc = write_json(path, doc, err);
    free(path);
    return rc;
}

int plugins_settings_enable(const char *settings_path, const char *id, int state,
                            loom_error *err)
{
    char *path = settings_path ? xstrdup(settings_path) : settings_user_path();
    json_t *doc = NULL;
    int rc = settings_read(path, &doc, err);
    if (rc != 0) {
        loom_error_prefix(err, "not changed");
        free(path);
        return -1;
    }
    if (!doc)
        doc = json_object();
    json_t *map = json_object_get(doc, "enabledPlugins");
    if (map && !json_is_object(map)) {
        rc = loom_error_set(err, LOOM_ERR_CONFIG,
                            "%s: \"enabledPlugins\" is not an object; not changed", path);
    } else {
        if (!map) {
            map = json_object();
            json_object_set_new(doc, "enabledPlugins", map);
        }
        if (state < 0)
            json_object_del(map, id);
        else
            json_object_set_new(map, id, json_boolean(state > 0));
        rc = write_json(path, doc, err);
    }
    json_decref(doc);
    free(path);
    return rc == 0 ? 0 : -1;
}

/* ---- loading ------------------------------------------------------------------ */

static void warn(plugin_set *s, const char *fmt, const char *a, const char *b)
    __attribute__((format(printf, 2, 0)));
static void warn(plugin_set *s, const char *fmt, const char *a, const char *b)
{
    loom_str w = LOOM_STR_INIT;
    str_printf(&w, fmt, a, b);
    json_array_append_new(s->warnings, json_string(w.ptr));
    str_free(&w);
}

/* enabledPlugins of a settings document: NULL when absent or not an
 * object (a warning then). */
static const json_t *enabled_map(plugin_set *s, const json_t *doc, const char *which)
{
    const json_t *m = json_object_get(doc, "enabledPlugins");
    if (m && !json_is_object(m)) {
        warn(s, "%s settings: \"enabledPlugins\" must be an object of \"name@marketplace\": "
                "true|false; ignored%s",
             which, "");
        return NULL;
    }
    return m;
}

static bool is_enabled(plugin_set *s, const plugins_opts *o, const json_t *user,
                       const json_t *project, const char *id)
{
    bool on = json_is_true(json_object_get(user, id));
    const json_t *pv = json_object_get(project, id);
    if (json_is_false(pv))
        on = false; /* switching off only tightens: it always counts */
    else if (json_is_true(pv) && !on) {
        if (o->trusted)
            on = true;
        else
            warn(s, "the project settings enable plugin %s; ignored: the workspace is not "
                    "trusted (enable it yourself with `loom plugin enable %s`)",
                 id, id);
    }
    return on;
}

/* One installed record into p (always filled enough to be listed). */
static void load_one(plugin_set *s, const char *id, const json_t *rec, plugin *p)
{
    memset(p, 0, sizeof *p);
    const char *root = json_get_str(rec, "root", NULL);
    const char *name = json_get_str(rec, "name", NULL);
    loom_error e;
    loom_str why = LOOM_STR_INIT;
    if (!root || !name)
        str_printf(&why, "installed.json: plugin %s has no \"root\" or \"name\"", id);
    else if (plugin_read(root, p, &e) != 0)
        str_puts(&why, e.message);
    else if (strcmp(p->name, name) != 0)
        str_printf(&why, "%s: the manifest names the plugin \"%s\", installed as \"%s\"",
                   p->root, p->name, name);
    if (why.len) {
        plugin_clear(p);
        p->root = xstrdup(root ? root : "");
        p->name = xstrdup(name ? name : id);
        p->error = str_steal(&why);
        warn(s, "plugin %s: %s", id, p->error);
    }
    str_free(&why);
    free(p->id);
    p->id = xstrdup(id);
    const char *market = json_get_str(rec, "marketplace", NULL);
    p->marketplace = market ? xstrdup(market) : NULL;
    size_t i;
    json_t *w;
    json_array_foreach(p->warnings, i, w) json_array_append(s->warnings, w);
}

int plugins_load(const plugins_opts *o, plugin_set *out, loom_error *err)
{
    memset(out, 0, sizeof *out);
    json_t *doc;
    if (plugins_installed_read(o->home, &doc, err) != 0)
        return -1;
    out->warnings = json_array();
    const json_t *user = enabled_map(out, o->user_settings, "user");
    const json_t *project = enabled_map(out, o->project_settings, "project");
    const json_t *installed = json_object_get(doc, "plugins");
    out->v = xcalloc(json_object_size(installed) + 1, sizeof *out->v);
    const char *id;
    json_t *rec;
    json_object_foreach((json_t *)installed, id, rec) {
        plugin *p = &out->v[out->n++];
        load_one(out, id, rec, p);
        p->enabled = is_enabled(out, o, user, project, id);
    }
    /* An id switched on that is not installed: say so, rather than leave
     * the user wondering where its commands went. */
    const json_t *maps[2] = {user, o->trusted ? project : NULL};
    for (int m = 0; m < 2; m++) {
        json_t *v;
        json_object_foreach((json_t *)maps[m], id, v) if (json_is_true(v) &&
                                                          !json_object_get(installed, id))
            warn(out, "enabledPlugins names %s, which is not installed (loom plugin install %s)",
                 id, id);
    }
    json_decref(doc);
    return 0;
}

void plugin_set_free(plugin_set *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->n; i++)
        plugin_clear(&s->v[i]);
    free(s->v);
    json_decref(s->warnings);
    memset(s, 0, sizeof *s);
}

ext_plugin_root *plugins_roots(const plugin_set *s, size_t *n)
{
    *n = 0;
    ext_plugin_root *rows = xcalloc((s ? s->n : 0) + 1, sizeof *rows);
    for (size_t i = 0; s && i < s->n; i++)
        if (s->v[i].enabled && !s->v[i].error) {
            const plugin *p = &s->v[i];
            rows[*n] = (ext_plugin_root){.name = p->name, .root = p->root,
                                         .commands = p->commands_dir, .agents = p->agents_dir,
                                         .skills = p->skills_dir, .styles = p->styles_dir};
            (*n)++;
        }
    return rows;
}
