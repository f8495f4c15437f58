/* sources.c — the folders each kind of extension is read from (sources.h):
 * user, then plugin, then project folders, lowest precedence first, with
 * the untrusted project folders named in notices instead of listed.
 *
 * A folder reached twice (the workspace is the home directory, a symbolic
 * link) is listed once, at its first, lower place: a user folder does not
 * become a project one by being the cwd. Owns the ext_dirs it fills.
 * Pure: reads the file system (stat, realpath), no state; any thread. */
#include "ext/sources.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/path.h"
#include "base/settings.h"
#include "base/str.h"

/* A repository nested deeper than this is treated as having no root. */
#define SOURCES_MAX_DEPTH 64

const char *ext_scope_name(ext_scope s)
{
    switch (s) {
    case EXT_SCOPE_USER:
        return "user";
    case EXT_SCOPE_PLUGIN:
        return "plugin";
    case EXT_SCOPE_PROJECT:
        return "project";
    }
    return "unknown";
}

static bool is_dir(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

/* Already listed (by real path)? */
static bool listed(const ext_dirs *d, const char *real)
{
    for (size_t i = 0; i < d->n; i++) {
        char *r = realpath(d->v[i].path, NULL);
        bool same = r && strcmp(r, real) == 0;
        free(r);
        if (same)
            return true;
    }
    return false;
}

/* Adds base/rel/kind when it is a folder not listed yet. A project folder of
 * an untrusted workspace becomes a notice instead. */
static void add(ext_dirs *d, const char *base, const char *rel, const char *kind, ext_scope scope,
                const char *plugin, bool trusted, json_t *notices)
{
    if (!base || !*base)
        return;
    loom_str p = LOOM_STR_INIT;
    str_puts(&p, base);
    if (rel)
        str_printf(&p, "/%s", rel);
    str_printf(&p, "/%s", kind);
    char *abs = path_fold(str_cstr(&p));
    str_free(&p);
    if (!abs || !is_dir(abs)) {
        free(abs);
        return;
    }
    char *real = realpath(abs, NULL);
    if (!real || listed(d, real)) {
        free(real);
        free(abs);
        return;
    }
    free(real);
    if (scope == EXT_SCOPE_PROJECT && !trusted) {
        if (notices) {
            loom_str n = LOOM_STR_INIT;
            str_printf(&n,
                       "skipped %s: the workspace is not trusted (trust it to use its %s; "
                       "LOOM_TRUST_WORKSPACE=1 or trustedWorkspaces in the user settings)",
                       abs, kind);
            json_array_append_new(notices, json_string(str_cstr(&n)));
            str_free(&n);
        }
        free(abs);
        return;
    }
    d->v = xrealloc(d->v, (d->n + 1) * sizeof *d->v);
    d->v[d->n].path = abs;
    d->v[d->n].scope = scope;
    d->v[d->n].plugin = xstrdup(plugin);
    d->n++;
}

/* The folders from the repository root (the nearest ancestor holding .git)
 * down to cwd, root first; just cwd outside a repository. */
static size_t project_chain(const char *cwd, char **chain, size_t cap)
{
    char *cur = xstrdup(cwd);
    size_t n = 0, root = SIZE_MAX;
    while (n < cap) {
        chain[n++] = xstrdup(cur);
        char *git = path_join(cur, ".git");
        struct stat st;
        bool found = stat(git, &st) == 0;
        free(git);
        if (found) {
            root = n - 1;
            break;
        }
        char *slash = strrchr(cur, '/');
        if (!slash || slash == cur)
            break;
        *slash = '\0';
    }
    free(cur);
    size_t keep = root == SIZE_MAX ? 1 : root + 1;
    for (size_t i = keep; i < n; i++)
        free(chain[i]);
    /* chain[0] is cwd: reverse so the root comes first. */
    for (size_t i = 0; i < keep / 2; i++) {
        char *t = chain[i];
        chain[i] = chain[keep - 1 - i];
        chain[keep - 1 - i] = t;
    }
    return keep;
}

void ext_dirs_for(const char *kind, const ext_source_opts *o, ext_dirs *out, json_t *notices)
{
    out->v = NULL;
    out->n = 0;
    if (!kind || !o)
        return;
    bool skills = strcmp(kind, "skills") == 0;
    const char *uh = o->user_home ? o->user_home : getenv("HOME");
    char *home = o->home ? xstrdup(o->home) : loom_home();

    if (o->claude_compat)
        add(out, uh, ".claude", kind, EXT_SCOPE_USER, NULL, true, notices);
    if (skills)
        add(out, uh, ".agents", kind, EXT_SCOPE_USER, NULL, true, notices);
    add(out, home, NULL, kind, EXT_SCOPE_USER, NULL, true, notices);

    for (size_t i = 0; i < o->n_plugins; i++)
        if (o->plugins[i].root && o->plugins[i].name)
            add(out, o->plugins[i].root, NULL, kind, EXT_SCOPE_PLUGIN, o->plugins[i].name, true,
                notices);

    if (o->cwd && o->cwd[0] == '/') {
        if (o->claude_compat)
            add(out, o->cwd, ".claude", kind, EXT_SCOPE_PROJECT, NULL, o->trusted, notices);
        if (skills) {
            char *chain[SOURCES_MAX_DEPTH];
            size_t n = project_chain(o->cwd, chain, SOURCES_MAX_DEPTH);
            for (size_t i = 0; i < n; i++) {
                add(out, chain[i], ".agents", kind, EXT_SCOPE_PROJECT, NULL, o->trusted, notices);
                free(chain[i]);
            }
        }
        add(out, o->cwd, ".loom", kind, EXT_SCOPE_PROJECT, NULL, o->trusted, notices);
    }
    free(home);
}

void ext_dirs_free(ext_dirs *d)
{
    if (!d)
        return;
    for (size_t i = 0; i < d->n; i++) {
        free(d->v[i].path);
        free(d->v[i].plugin);
    }
    free(d->v);
    d->v = NULL;
    d->n = 0;
}
