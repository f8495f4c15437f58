/* sources.c — the folders each kind of extension is read from (sources.h).
 *
 * The order is one table of rows walked in sequence, so the precedence of
 * every kind reads in one place. No state; thread-safe. */
#include "ext/sources.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/path.h"
#include "base/settings.h"
#include "base/str.h"
#include "policy/trust.h"

static bool is_dir(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

static void add(ext_dirs *d, const char *path, ext_scope scope, const char *plugin)
{
    for (size_t i = 0; i < d->n; i++)
        if (!strcmp(d->v[i].path, path))
            return; /* one folder reached two ways (cwd is the home) counts once */
    d->v = xrealloc(d->v, (d->n + 1) * sizeof *d->v);
    d->v[d->n++] = (ext_dir){.path = xstrdup(path), .scope = scope,
                             .plugin = plugin ? xstrdup(plugin) : NULL};
}

/* dir/sub/kind when it is a folder: added, or (an untrusted project's)
 * named in a notice. */
static void consider(ext_dirs *d, const char *dir, const char *sub, const char *kind,
                     ext_scope scope, const ext_source_opts *o, json_t *notices)
{
    loom_str p = LOOM_STR_INIT;
    str_printf(&p, "%s%s%s/%s", dir, sub[0] ? "/" : "", sub, kind);
    if (is_dir(p.ptr)) {
        if (scope != EXT_SCOPE_PROJECT || o->trusted) {
            add(d, p.ptr, scope, NULL);
        } else if (notices) {
            loom_str n = LOOM_STR_INIT;
            str_printf(&n, "skipped %s: %s", p.ptr, TRUST_HINT);
            json_array_append_new(notices, json_string(n.ptr));
            str_free(&n);
        }
    }
    str_free(&p);
}

void ext_dirs_for(const char *kind, const ext_source_opts *o, ext_dirs *out, json_t *notices)
{
    memset(out, 0, sizeof *out);
    bool skills = !strcmp(kind, "skills");
    const char *uh = o->user_home ? o->user_home : getenv("HOME");
    char *home = o->home ? xstrdup(o->home) : loom_home();

    if (o->claude_compat) {
        /* Claude Code's own folder: $CLAUDE_CONFIG_DIR when the caller
         * gave no home of its own (tests do), as the settings read it. */
        char *ch = o->user_home ? path_join(o->user_home, ".claude") : settings_claude_home();
        consider(out, ch, "", kind, EXT_SCOPE_USER, o, notices);
        free(ch);
    }
    if (uh && *uh == '/' && skills)
        consider(out, uh, ".agents", kind, EXT_SCOPE_USER, o, notices);
    consider(out, home, "", kind, EXT_SCOPE_USER, o, notices);

    for (size_t i = 0; i < o->n_plugins; i++) {
        const ext_plugin_root *r = &o->plugins[i];
        const char *own = !strcmp(kind, "skills")          ? r->skills
                          : !strcmp(kind, "commands")      ? r->commands
                          : !strcmp(kind, "agents")        ? r->agents
                          : !strcmp(kind, "output-styles") ? r->styles
                                                           : NULL;
        loom_str p = LOOM_STR_INIT;
        if (own)
            str_puts(&p, own);
        else
            str_printf(&p, "%s/%s", r->root, kind);
        if (is_dir(p.ptr))
            add(out, p.ptr, EXT_SCOPE_PLUGIN, r->name);
        str_free(&p);
    }

    if (o->cwd) {
        /* .claude and .agents from the repository root down to cwd, the
         * nearer folder later (it wins); .loom only at cwd. */
        char *root = path_repo_root(o->cwd);
        const char *top = root ? root : o->cwd;
        size_t tl = strlen(top);
        char *walk = xstrdup(o->cwd);
        for (size_t at = tl;; at++) {
            char c = walk[at];
            if (c == '/' || c == '\0') {
                walk[at] = '\0';
                const char *dir = at == 0 ? "/" : walk;
                /* Above cwd, the folder itself must be trusted. */
                ext_source_opts here = *o;
                if (c != '\0' && o->trusted && o->user_settings)
                    here.trusted = trust_workspace_trusted(o->user_settings, dir);
                if (o->claude_compat)
                    consider(out, dir, ".claude", kind, EXT_SCOPE_PROJECT, &here, notices);
                if (skills)
                    consider(out, dir, ".agents", kind, EXT_SCOPE_PROJECT, &here, notices);
                walk[at] = c;
            }
            if (c == '\0')
                break;
        }
        free(walk);
        free(root);
        consider(out, o->cwd, ".loom", kind, EXT_SCOPE_PROJECT, o, notices);
    }
    free(home);
}

void ext_dirs_free(ext_dirs *d)
{
    for (size_t i = 0; i < d->n; i++) {
        free(d->v[i].path);
        free(d->v[i].plugin);
    }
    free(d->v);
    memset(d, 0, sizeof *d);
}

const char *ext_scope_name(ext_scope s)
{
    switch (s) {
    case EXT_SCOPE_USER: return "user";
    case EXT_SCOPE_PLUGIN: return "plugin";
    case EXT_SCOPE_PROJECT: return "project";
    case EXT_SCOPE_BUILTIN: return "built-in";
    }
    return "?";
}
