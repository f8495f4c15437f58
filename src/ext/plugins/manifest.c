/* manifest.c — one plugin folder read (plugins.h's plugin_read): the
 * manifest, .loom-plugin/plugin.json or Claude Code's
 * .claude-plugin/plugin.json taken as is, and the components it names or
 * the default layout holds (commands/, agents/, skills/, output-styles/,
 * hooks/hooks.json, .mcp.json).
 *
 * Everything here is a repository's words: every path is "./…" under the
 * plugin's root and stays there once links are resolved, every file is
 * read under a size cap, and a problem is an error naming the file and
 * the problem — the plugin then counts for nothing, the others still load.
 * Keys Loom does not use (author, homepage, keywords, lspServers, …) are
 * ignored without a word, as Claude Code ignores unknown keys.
 *
 * Owns nothing beyond the plugin it fills. No state; any thread. */
#include "ext/plugins/manifest.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/fileio.h"
#include "base/json.h"
#include "base/path.h"
#include "base/str.h"
#include "hooks/registry.h"

static const char *const ROOT_VARS[] = {"${CLAUDE_PLUGIN_ROOT}", "${LOOM_PLUGIN_ROOT}"};

bool plugin_name_valid(const char *name)
{
    if (!name || !*name || strlen(name) > PLUGIN_NAME_MAX || strstr(name, "__"))
        return false;
    if (!((name[0] >= 'a' && name[0] <= 'z') || (name[0] >= '0' && name[0] <= '9')))
        return false;
    for (const char *p = name; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '-' || *p == '_' ||
              *p == '.'))
            return false;
    return true;
}

/* Reads path whole when it is a regular file of at most cap bytes. 1: no
 * such file. */
static int read_capped(const char *path, size_t cap, char **text, size_t *len, loom_error *err)
{
    *text = NULL;
    struct stat st;
    if (stat(path, &st) != 0)
        return errno == ENOENT || errno == ENOTDIR
                   ? 1
                   : (loom_error_set(err, LOOM_ERR_CONFIG, "%s: %s", path, strerror(errno)), -1);
    if (!S_ISREG(st.st_mode))
        return loom_error_set(err, LOOM_ERR_CONFIG, "%s: not a regular file", path), -1;
    if ((unsigned long long)st.st_size > cap)
        return loom_error_set(err, LOOM_ERR_CONFIG, "%s: %lld bytes, more than the %zu allowed",
                              path, (long long)st.st_size, cap),
               -1;
    if (file_read_all(path, text, len, err) != 0)
        return -1;
    if (*len > cap) { /* grew since the stat */
        free(*text);
        *text = NULL;
        return loom_error_set(err, LOOM_ERR_CONFIG, "%s: more than the %zu bytes allowed", path,
                              cap),
               -1;
    }
    return 0;
}

int plugin_json_file(const char *path, size_t cap, json_t **doc, loom_error *err)
{
    *doc = NULL;
    char *text;
    size_t len;
    int rc = read_capped(path, cap, &text, &len, err);
    if (rc != 0)
        return rc;
    loom_error perr;
    json_t *v = json_parse(text, len, path, &perr);
    free(text);
    if (!v)
        return loom_error_set(err, LOOM_ERR_CONFIG, "%s", perr.message), -1;
    if (!json_is_object(v)) {
        json_decref(v);
        return loom_error_set(err, LOOM_ERR_CONFIG, "%s: must hold a JSON object", path), -1;
    }
    *doc = v;
    return 0;
}

static bool under(const char *dir, const char *path)
{
    size_t n = strlen(dir);
    return !strncmp(path, dir, n) && (path[n] == '/' || path[n] == '\0' || (n == 1 && *dir == '/'));
}

char *plugin_path_under(const char *root, const char *rel, const char **why)
{
    *why = NULL;
    if (!rel || strncmp(rel, "./", 2) != 0) {
        *why = "must be a path relative to the plugin, starting with \"./\"";
        return NULL;
    }
    if (strchr(rel, '\\')) {
        *why = "must use '/' between folders";
        return NULL;
    }
    for (const char *p = rel; (p = strstr(p, "..")); p += 2)
        if ((p == rel || p[-1] == '/') && (p[2] == '/' || p[2] == '\0')) {
            *why = "must not climb out of the plugin with \"..\"";
            return NULL;
        }
    char *joined = path_join(root, rel + 2);
    char real[PATH_MAX];
    char *out = NULL;
    if (!realpath(joined, real))
        *why = "does not exist";
    else if (!under(root, real))
        *why = "leads outside the plugin (a link)";
    else
        out = xstrdup(real);
    free(joined);
    return out;
}

/* ---- one plugin being read ---------------------------------------------------- */

typedef struct reading {
    plugin *p;
    const char *file;   /* the manifest, for messages */
    loom_error *err;
} reading;

static void warn(reading *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void warn(reading *r, const char *fmt, ...)
{
    loom_str w = LOOM_STR_INIT;
    va_list ap;
    va_start(ap, fmt);
    str_vprintf(&w, fmt, ap);
    va_end(ap);
    if (!r->p->warnings)
        r->p->warnings = json_array();
    json_array_append_new(r->p->warnings, json_string(w.ptr));
    str_free(&w);
}

/* A copy of v with both root variables replaced by root in every string. */
static json_t *expand_roots(const json_t *v, const char *root)
{
    if (json_is_string(v)) {
        loom_str s = LOOM_STR_INIT;
        str_puts(&s, "");
        for (const char *p = json_string_value(v); *p;) {
            bool hit = false;
            for (size_t i = 0; i < 2 && !hit; i++) {
                size_t n = strlen(ROOT_VARS[i]);
                if (!strncmp(p, ROOT_VARS[i], n)) {
                    str_puts(&s, root);
                    p += n;
                    hit = true;
                }
            }
            if (!hit)
                str_putc(&s, *p++);
        }
        json_t *out = json_stringn(s.ptr, s.len);
        str_free(&s);
        return out ? out : json_string("");
    }
    if (json_is_array(v)) {
        json_t *out = json_array();
        size_t i;
        json_t *x;
        json_array_foreach(v, i, x) json_array_append_new(out, expand_roots(x, root));
        return out;
    }
    if (json_is_object(v)) {
        json_t *out = json_object();
        const char *k;
        json_t *x;
        json_object_foreach((json_t *)v, k, x) json_object_set_new(out, k, expand_roots(x, root));
        return out;
    }
    return json_deep_copy(v);
}

/* The value of key as a list of path strings (a string is a list of one).
 * NULL when absent; -1 (err set) when of another type. */
static int path_list(reading *r, const json_t *m, const char *key, const json_t **list,
                     json_t **own)
{
    *list = NULL;
    *own = NULL;
    const json_t *v = json_object_get(m, key);
    if (!v || json_is_null(v))
        return 0;
    if (json_is_string(v)) {
        *own = json_pack("[O]", v);
        *list = *own;
        return 0;
    }
    if (json_is_array(v)) {
        size_t i;
        json_t *x;
        json_array_foreach(v, i, x) if (!json_is_string(x)) return loom_error_set(
            r->err, LOOM_ERR_CONFIG, "%s: \"%s\"[%zu] must be a path string", r->file, key, i),
                                                                   -1;
        *list = v;
        return 0;
    }
    return loom_error_set(r->err, LOOM_ERR_CONFIG, "%s: \"%s\" must be a path or a list of paths",
                          r->file, key),
           -1;
}

static bool is_dir(const char *path)
{
    struct stat st;
    return path && stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* A folder component (commands, agents, skills, output styles): the
 * manifest's path, else the default folder when it exists. The contract
 * holds one folder per kind: a second one is a warning. */
static int take_dir(reading *r, const json_t *m, const char *key, const char *deflt, char **out)
{
    const json_t *list;
    json_t *own;
    if (path_list(r, m, key, &list, &own) != 0)
        return -1;
    int rc = 0;
    size_t i;
    json_t *x;
    json_array_foreach(list, i, x) {
        const char *rel = json_string_value(x), *why;
        char *abs = plugin_path_under(r->p->root, rel, &why);
        if (!abs) {
            rc = loom_error_set(r->err, LOOM_ERR_CONFIG, "%s: \"%s\": %s %s", r->file, key, rel,
                                why);
            break;
        }
        if (!is_dir(abs))
            warn(r, "%s: \"%s\": %s is a file; only folders are read (ignored)", r->file, key,
                 rel);
        else if (*out)
            warn(r, "%s: \"%s\": %s ignored: one folder per kind counts (the first, %s)",
                 r->file, key, rel, *out);
        else {
            *out = abs;
            abs = NULL;
        }
        free(abs);
    }
    json_decref(own);
    if (rc == 0 && !*out) {
        char *d = path_join(r->p->root, deflt);
        char real[PATH_MAX];
        if (is_dir(d) && realpath(d, real) && under(r->p->root, real))
            *out = xstrdup(real);
        free(d);
    }
    return rc;
}

/* A hooks or MCP document: {"hooks": {…}} / {"mcpServers": {…}}, or the
 * map itself. */
static const json_t *unwrap(const json_t *doc, const char *key)
{
    const json_t *inner = json_object_get(doc, key);
    return json_is_object(inner) ? inner : doc;
}

/* Adds the events of one hooks document (checked with the hook loader
 * itself, so a malformed one names its file here, not at session start). */
static int merge_hooks(reading *r, json_t *acc, const json_t *doc, const char *where)
{
    const json_t *events = unwrap(doc, "hooks");
    json_t *expanded = expand_roots(events, r->p->root);
    hook_registry *scratch = hook_registry_new();
    loom_error herr;
    int rc = hook_registry_load(scratch, expanded, HOOK_SRC_PLUGIN, false, &herr);
    hook_registry_free(scratch);
    if (rc != 0) {
        json_decref(expanded);
        return loom_error_set(r->err, LOOM_ERR_CONFIG, "%s: %s", where, herr.message), -1;
    }
    const char *ev;
    json_t *groups;
    json_object_foreach(expanded, ev, groups) {
        if (!json_is_array(groups))
            continue; /* an unknown event's value: the loader skipped it too */
        json_t *have = json_object_get(acc, ev);
        if (!have)
            json_object_set(acc, ev, groups);
        else
            json_array_extend(have, groups);
    }
    json_decref(expanded);
    return 0;
}

static int merge_servers(reading *r, json_t *acc, const json_t *doc, const char *where)
{
    const json_t *servers = unwrap(doc, "mcpServers");
    const char *name;
    json_t *entry;
    json_object_foreach((json_t *)servers, name, entry) {
        if (!json_is_object(entry))
            return loom_error_set(r->err, LOOM_ERR_CONFIG,
                                  "%s: MCP server \"%s\" must be an object", where, name),
                   -1;
        if (json_object_get(acc, name))
            warn(r, "%s: MCP server \"%s\" is defined twice; the later one counts", where, name);
        json_t *e = expand_roots(entry, r->p->root);
        /* A stdio server's process gets the root as Claude Code gives it,
         * for scripts that read it from the environment. */
        json_t *env = json_object_get(e, "env");
        if (json_object_get(e, "command") && (!env || json_is_object(env))) {
            if (!env) {
                env = json_object();
                json_object_set_new(e, "env", env);
            }
            for (size_t i = 0; i < 2; i++) {
                char var[32];
                snprintf(var, sizeof var, "%.*s", (int)strlen(ROOT_VARS[i]) - 3, ROOT_VARS[i] + 2);
                if (!json_object_get(env, var))
                    json_object_set_new(env, var, json_string(r->p->root));
            }
        }
        json_object_set_new(acc, name, e);
    }
    return 0;
}

typedef int (*merge_fn)(reading *r, json_t *acc, const json_t *doc, const char *where);

/* hooks / mcpServers: the default file when it exists, then what the
 * manifest gives — inline objects, or paths to JSON files (a path naming
 * the default file again is read once). *out NULL when nothing. */
static int take_json(reading *r, const json_t *m, const char *key, const char *deflt,
                     merge_fn merge, json_t **out)
{
    json_t *acc = json_object();
    char *dpath = path_join(r->p->root, deflt);
    char dreal[PATH_MAX];
    bool have_default = realpath(dpath, dreal) != NULL;
    int rc = 0;
    if (have_default && !under(r->p->root, dreal)) {
        rc = loom_error_set(r->err, LOOM_ERR_CONFIG, "%s: leads outside the plugin (a link)",
                            dpath);
    } else if (have_default) {
        json_t *doc;
        int frc = plugin_json_file(dreal, PLUGIN_JSON_FILE_MAX_BYTES, &doc, r->err);
        if (frc < 0)
            rc = -1;
        else if (frc == 0)
            rc = merge(r, acc, doc, dpath);
        json_decref(doc);
    }
    const json_t *v = json_object_get(m, key);
    json_t *items = NULL;
    if (rc == 0 && v && !json_is_null(v))
        items = json_is_array(v) ? json_incref((json_t *)v) : json_pack("[O]", v);
    size_t i;
    json_t *x;
    json_array_foreach(items, i, x) {
        if (rc != 0)
            break;
        if (json_is_object(x)) {
            loom_str where = LOOM_STR_INIT;
            str_printf(&where, "%s: \"%s\"", r->file, key);
            rc = merge(r, acc, x, where.ptr);
            str_free(&where);
            continue;
        }
        if (!json_is_string(x)) {
            rc = loom_error_set(r->err, LOOM_ERR_CONFIG,
                                "%s: \"%s\" must be an object, a path or a list of them", r->file,
                                key);
            break;
        }
        const char *why;
        char *abs = plugin_path_under(r->p->root, json_string_value(x), &why);
        if (!abs) {
            rc = loom_error_set(r->err, LOOM_ERR_CONFIG, "%s: \"%s\": %s %s", r->file, key,
                                json_string_value(x), why);
            break;
        }
        if (!(have_default && !strcmp(abs, dreal))) {
            json_t *doc;
            int frc = plugin_json_file(abs, PLUGIN_JSON_FILE_MAX_BYTES, &doc, r->err);
            rc = frc < 0 ? -1 : frc == 0 ? merge(r, acc, doc, abs) : 0;
            json_decref(doc);
        }
        free(abs);
    }
    json_decref(items);
    free(dpath);
    if (rc != 0 || json_object_size(acc) == 0) {
        json_decref(acc);
        acc = NULL;
    }
    *out = acc;
    return rc;
}

static int take_string(reading *r, const json_t *m, const char *key, char **out)
{
    const json_t *v = json_object_get(m, key);
    if (!v || json_is_null(v))
        return 0;
    if (!json_is_string(v))
        return loom_error_set(r->err, LOOM_ERR_CONFIG, "%s: \"%s\" must be a string", r->file,
                              key),
               -1;
    *out = xstrdup(json_string_value(v));
    return 0;
}

int plugin_manifest_parse(const char *root, const char *file, const char *text, size_t len,
                          plugin *out, loom_error *err)
{
    memset(out, 0, sizeof *out);
    char real[PATH_MAX];
    if (!root || !realpath(root, real) || !is_dir(real))
        return loom_error_set(err, LOOM_ERR_CONFIG, "%s: not a folder", root ? root : "(null)"),
               -1;
    out->root = xstrdup(real);
    reading r = {out, file ? file : out->root, err};
    json_t *m = NULL;
    int rc = 0;
    if (text) {
        loom_error perr;
        m = json_parse(text, len, r.file, &perr);
        if (!m)
            rc = loom_error_set(err, LOOM_ERR_CONFIG, "%s", perr.message);
        else if (!json_is_object(m))
            rc = loom_error_set(err, LOOM_ERR_CONFIG, "%s: must hold a JSON object", r.file);
        else if (!json_is_string(json_object_get(m, "name")))
            rc = loom_error_set(err, LOOM_ERR_CONFIG, "%s: \"name\" is missing or not a string",
                                r.file);
        else
            rc = take_string(&r, m, "name", &out->name);
    } else {
        /* No manifest: the default layout, named after its folder (an
         * installed copy's folder is its name). */
        const char *slash = strrchr(out->root, '/');
        out->name = xstrdup(slash ? slash + 1 : out->root);
        m = json_object();
    }
    if (rc == 0 && !plugin_name_valid(out->name))
        rc = loom_error_set(err, LOOM_ERR_CONFIG,
                            "%s: plugin name \"%s\": use lowercase letters, digits, '-', '_' and "
                            "'.' (at most %d, no \"__\")",
                            r.file, out->name, PLUGIN_NAME_MAX);
    if (rc == 0)
        rc = take_string(&r, m, "version", &out->version);
    if (rc == 0)
        rc = take_string(&r, m, "description", &out->description);
    if (rc == 0)
        rc = take_dir(&r, m, "commands", "commands", &out->commands_dir);
    if (rc == 0)
        rc = take_dir(&r, m, "agents", "agents", &out->agents_dir);
    if (rc == 0)
        rc = take_dir(&r, m, "skills", "skills", &out->skills_dir);
    if (rc == 0)
        rc = take_dir(&r, m, "outputStyles", "output-styles", &out->styles_dir);
    if (rc == 0)
        rc = take_json(&r, m, "hooks", "hooks/hooks.json", merge_hooks, &out->hooks);
    if (rc == 0)
        rc = take_json(&r, m, "mcpServers", ".mcp.json", merge_servers, &out->mcp_servers);
    json_decref(m);
    if (rc != 0) {
        plugin_clear(out);
        return -1;
    }
    out->id = xstrdup(out->name);
    return 0;
}

int plugin_read(const char *root, plugin *out, loom_error *err)
{
    memset(out, 0, sizeof *out);
    static const char *const manifests[] = {".loom-plugin/plugin.json",
                                            ".claude-plugin/plugin.json"};
    for (size_t i = 0; i < 2; i++) {
        char *path = path_join(root, manifests[i]);
        char *text;
        size_t len;
        int rc = read_capped(path, PLUGIN_MANIFEST_MAX_BYTES, &text, &len, err);
        if (rc == 0)
            rc = plugin_manifest_parse(root, path, text, len, out, err);
        free(text);
        free(path);
        if (rc != 1)
            return rc == 0 ? 0 : -1;
    }
    return plugin_manifest_parse(root, NULL, NULL, 0, out, err);
}

void plugin_clear(plugin *p)
{
    if (!p)
        return;
    free(p->name);
    free(p->id);
    free(p->version);
    free(p->description);
    free(p->root);
    free(p->marketplace);
    free(p->commands_dir);
    free(p->agents_dir);
    free(p->skills_dir);
    free(p->styles_dir);
    json_decref(p->hooks);
    json_decref(p->mcp_servers);
    free(p->error);
    json_decref(p->warnings);
    memset(p, 0, sizeof *p);
}
