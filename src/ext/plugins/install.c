/* install.c — installing, enabling, disabling and removing plugins
 * (manage.h): a spec resolved to a folder (a marketplace's entry — a
 * "./…" path under the marketplace, or a git repository cloned for the
 * purpose — or a folder's own path), the folder read (plugin_read) and
 * copied into $LOOM_HOME/plugins, its record in installed.json, its
 * "enabledPlugins" key in the user settings.
 *
 * The copy is the only place a repository's tree is walked: regular
 * files and folders are copied (execute bits kept, group/other write
 * dropped), a link is kept only when it stays inside the plugin, and a
 * link leaving it, a device, a socket or a cap reached stops the install
 * with the path named. The new copy is built beside the old one and
 * renamed into place, so a failed install leaves the old one working.
 *
 * No state; any thread (see manage.h about two processes). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/fileio.h"
#include "base/json.h"
#include "base/path.h"
#include "base/str.h"
#include "ext/plugins/manage.h"
#include "ext/plugins/manifest.h"
#include "ext/plugins/plugins.h"

/* ---- removing a tree ------------------------------------------------------------ */

static int remove_rec(const char *path, int depth, loom_error *err)
{
    struct stat st;
    if (lstat(path, &st) != 0)
        return errno == ENOENT ? 0 : loom_error_set(err, LOOM_ERR_CONFIG, "%s: %s", path,
                                                    strerror(errno));
    if (!S_ISDIR(st.st_mode) || depth > PLUGIN_COPY_MAX_DEPTH * 2)
        return unlink(path) == 0 || errno == ENOENT
                   ? 0
                   : loom_error_set(err, LOOM_ERR_CONFIG, "%s: %s", path, strerror(errno));
    DIR *d = opendir(path);
    if (!d)
        return loom_error_set(err, LOOM_ERR_CONFIG, "%s: %s", path, strerror(errno));
    int rc = 0;
    struct dirent *e;
    while (rc == 0 && (e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        char *child = path_join(path, e->d_name);
        rc = remove_rec(child, depth + 1, err);
        free(child);
    }
    closedir(d);
    if (rc == 0 && rmdir(path) != 0)
        rc = loom_error_set(err, LOOM_ERR_CONFIG, "%s: %s", path, strerror(errno));
    return rc;
}

int plugin_remove_tree(const char *below, const char *path, loom_error *err)
{
    char *b = path_fold(below), *p = path_fold(path);
    size_t n = strlen(b);
    bool ok = n > 1 && !strncmp(p, b, n) && p[n] == '/' && p[n + 1];
    free(b);
    free(p);
    if (!ok)
        return loom_error_set(err, LOOM_ERR_INVALID_REQUEST,
                              "refusing to remove %s: not under %s", path, below),
               -1;
    return remove_rec(path, 0, err) == 0 ? 0 : -1;
}

/* ---- copying a tree ------------------------------------------------------------- */

typedef struct copying {
    const char *root;     /* the source's real path */
    size_t files;
    unsigned long long bytes;
    loom_error *err;
} copying;

static bool inside(const char *root, const char *path)
{
    size_t n = strlen(root);
    return !strncmp(path, root, n) && (path[n] == '/' || path[n] == '\0');
}

static int copy_file(copying *c, const char *src, const char *dst)
{
    int in = open(src, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (in < 0)
        return loom_error_set(c->err, LOOM_ERR_CONFIG, "%s: %s", src, strerror(errno));
    struct stat st;
    int rc = 0;
    if (fstat(in, &st) != 0 || !S_ISREG(st.st_mode))
        rc = loom_error_set(c->err, LOOM_ERR_CONFIG, "%s: not a regular file", src);
    else if ((unsigned long long)st.st_size > PLUGIN_COPY_MAX_FILE_BYTES)
        rc = loom_error_set(c->err, LOOM_ERR_CONFIG, "%s: %lld bytes, more than the %llu a "
                            "plugin's file may have", src, (long long)st.st_size,
                            PLUGIN_COPY_MAX_FILE_BYTES);
    if (rc != 0) {
        close(in);
        return rc;
    }
    mode_t mode = (st.st_mode & 0755) | 0600;
    int out = open(dst, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
    if (out < 0) {
        close(in);
        return loom_error_set(c->err, LOOM_ERR_CONFIG, "%s: %s", dst, strerror(errno));
    }
    char buf[65536];
    unsigned long long done = 0;
    for (;;) {
        ssize_t n = read(in, buf, sizeof buf);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            rc = loom_error_set(c->err, LOOM_ERR_CONFIG, "%s: %s", src, strerror(errno));
            break;
        }
        if (n == 0)
            break;
        done += (unsigned long long)n;
        c->bytes += (unsigned long long)n;
        if (done > PLUGIN_COPY_MAX_FILE_BYTES || c->bytes > PLUGIN_COPY_MAX_BYTES) {
            rc = loom_error_set(c->err, LOOM_ERR_CONFIG,
                                "%s: the plugin is larger than the %llu bytes allowed", src,
                                PLUGIN_COPY_MAX_BYTES);
            break;
        }
        if (file_write_full(out, buf, (size_t)n) != 0) {
            rc = loom_error_set(c->err, LOOM_ERR_CONFIG, "%s: %s", dst, strerror(errno));
            break;
        }
    }
    close(in);
    if (close(out) != 0 && rc == 0)
        rc = loom_error_set(c->err, LOOM_ERR_CONFIG, "%s: %s", dst, strerror(errno));
    return rc;
}

/* A link is kept when what it names stays inside the plugin, both as
 * written (relative to its folder) and once resolved. */
static int copy_link(copying *c, const char *src, const char *dst)
{
    char target[PATH_MAX];
    ssize_t n = readlink(src, target, sizeof target - 1);
    if (n < 0)
        return loom_error_set(c->err, LOOM_ERR_CONFIG, "%s: %s", src, strerror(errno));
    target[n] = '\0';
    char *dir = xstrdup(src);
    char *slash = strrchr(dir, '/');
    if (slash)
        *slash = '\0';
    char *lexical = target[0] == '/' ? path_fold(target) : NULL;
    if (!lexical) {
        char *joined = path_join(dir, target);
        lexical = path_fold(joined);
        free(joined);
    }
    char real[PATH_MAX];
    bool resolves = realpath(src, real) != NULL;
    int rc = 0;
    if (target[0] == '/' || !inside(c->root, lexical) || (resolves && !inside(c->root, real)))
        rc = loom_error_set(c->err, LOOM_ERR_RUN_BLOCKED_BY_POLICY,
                            "%s: a link to %s, outside the plugin; not installed (copy the file "
                            "into the plugin instead)",
                            src, target);
    else if (symlink(target, dst) != 0)
        rc = loom_error_set(c->err, LOOM_ERR_CONFIG, "%s: %s", dst, strerror(errno));
    free(lexical);
    free(dir);
    return rc;
}

static int copy_rec(copying *c, const char *src, const char *dst, int depth)
{
    if (depth > PLUGIN_COPY_MAX_DEPTH)
        return loom_error_set(c->err, LOOM_ERR_CONFIG, "%s: folders nested deeper than %d", src,
                              PLUGIN_COPY_MAX_DEPTH);
    if (++c->files > PLUGIN_COPY_MAX_FILES)
        return loom_error_set(c->err, LOOM_ERR_CONFIG, "%s: the plugin has more than %d files",
                              c->root, PLUGIN_COPY_MAX_FILES);
    struct stat st;
    if (lstat(src, &st) != 0)
        return loom_error_set(c->err, LOOM_ERR_CONFIG, "%s: %s", src, strerror(errno));
    if (S_ISLNK(st.st_mode))
        return copy_link(c, src, dst);
    if (S_ISREG(st.st_mode))
        return copy_file(c, src, dst);
    if (!S_ISDIR(st.st_mode))
        return loom_error_set(c->err, LOOM_ERR_CONFIG,
                              "%s: not a file, a folder or a link; not installed", src);
    if (mkdir(dst, 0700) != 0)
        return loom_error_set(c->err, LOOM_ERR_CONFIG, "%s: %s", dst, strerror(errno));
    DIR *d = opendir(src);
    if (!d)
        return loom_error_set(c->err, LOOM_ERR_CONFIG, "%s: %s", src, strerror(errno));
    int rc = 0;
    struct dirent *e;
    while (rc == 0 && (e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..") ||
            (depth == 0 && !strcmp(e->d_name, ".git")))
            continue;
        char *s = path_join(src, e->d_name), *t = path_join(dst, e->d_name);
        rc = copy_rec(c, s, t, depth + 1);
        free(s);
        free(t);
    }
    closedir(d);
    if (rc == 0 && chmod(dst, (st.st_mode & 0755) | 0700) != 0)
        rc = loom_error_set(c->err, LOOM_ERR_CONFIG, "%s: %s", dst, strerror(errno));
    return rc;
}

int plugin_copy_tree(const char *src, const char *dst, loom_error *err)
{
    char real[PATH_MAX];
    if (!realpath(src, real))
        return loom_error_set(err, LOOM_ERR_CONFIG, "%s: %s", src, strerror(errno)), -1;
    if (file_exists(dst))
        return loom_error_set(err, LOOM_ERR_CONFIG, "%s: already exists", dst), -1;
    copying c = {real, 0, 0, err};
    int rc = copy_rec(&c, real, dst, 0);
    if (rc != 0) {
        loom_error ignore;
        char *parent = xstrdup(dst);
        char *slash = strrchr(parent, '/');
        if (slash)
            *slash = '\0';
        plugin_remove_tree(parent, dst, &ignore);
        free(parent);
        return -1;
    }
    return 0;
}

/* ---- resolving a spec --------------------------------------------------------- */

static bool has_manifest(const char *root)
{
    static const char *const files[] = {".loom-plugin/plugin.json",
                                        ".claude-plugin/plugin.json"};
    for (size_t i = 0; i < 2; i++) {
        char *p = path_join(root, files[i]);
        bool yes = file_exists(p);
        free(p);
        if (yes)
            return true;
    }
    return false;
}

/* The git URL an entry's source object names, *subdir its folder inside
 * (may stay NULL). NULL with err for a kind Loom does not fetch. */
static char *entry_git_url(const json_t *src, const char **subdir, loom_error *err)
{
    const char *kind = json_get_str(src, "source", "");
    *subdir = json_get_str(src, "path", NULL);
    const char *repo = json_get_str(src, "repo", NULL);
    const char *url = json_get_str(src, "url", NULL);
    loom_str u = LOOM_STR_INIT;
    if (!strcmp(kind, "github") && repo)
        str_printf(&u, "https://github.com/%s.git", repo);
    else if ((!strcmp(kind, "url") || !strcmp(kind, "git") || !strcmp(kind, "git-subdir")) &&
             url)
        str_puts(&u, url);
    else if (!strcmp(kind, "git-subdir") && repo)
        str_printf(&u, "https://github.com/%s.git", repo);
    else {
        loom_error_set(err, LOOM_ERR_CONFIG,
                       "source {\"source\": \"%s\"}: Loom fetches plugins from \"./…\" paths, "
                       "\"github\" (repo), \"url\" and \"git-subdir\" (url or repo, path) only",
                       kind);
        return NULL;
    }
    return str_steal(&u);
}

typedef struct resolved {
    char *src;          /* the folder to copy */
    char *clone;        /* a clone made for it (removed afterwards), or NULL */
    char *market;       /* NULL: installed from a path */
    char *name;         /* the name it is installed under */
    char *source;       /* what installed.json records as its source */
} resolved;

static void resolved_free(resolved *r, const char *pdir)
{
    if (r->clone && file_exists(r->clone)) {
        loom_error ignore;
        plugin_remove_tree(pdir, r->clone, &ignore);
    }
    free(r->src);
    free(r->clone);
    free(r->market);
    free(r->name);
    free(r->source);
    memset(r, 0, sizeof *r);
}

static int resolve_entry(const char *pdir, const json_t *entry, const char *mroot, resolved *r,
                         loom_error *err)
{
    const json_t *src = json_object_get(entry, "source");
    if (json_is_string(src)) {
        const char *rel = json_string_value(src);
        const char *proot = json_get_str(entry, "_pluginRoot", NULL);
        loom_str p = LOOM_STR_INIT;
        if (proot && strncmp(rel, "./", 2) != 0)
            str_printf(&p, "%s%s%s", proot, proot[strlen(proot) - 1] == '/' ? "" : "/", rel);
        else
            str_puts(&p, rel);
        const char *why;
        r->src = plugin_path_under(mroot, str_cstr(&p), &why);
        if (!r->src)
            loom_error_set(err, LOOM_ERR_CONFIG, "marketplace %s: plugin %s: source %s %s",
                           r->market, r->name, str_cstr(&p), why);
        str_free(&p);
        r->source = xstrdup(rel);
        return r->src ? 0 : -1;
    }
    const char *subdir;
    char *url = entry_git_url(src, &subdir, err);
    if (!url) {
        loom_error_prefix(err, "marketplace %s: plugin %s", r->market, r->name);
        return -1;
    }
    static unsigned counter;
    loom_str t = LOOM_STR_INIT;
    str_printf(&t, "%s/.clone-%ld-%u-%ld", pdir, (long)getpid(), counter++, (long)time(NULL));
    r->clone = str_steal(&t);
    r->source = url;
    if (file_mkdirs(pdir, 0700, err) != 0 || plugin_git_clone(url, r->clone, err) != 0)
        return -1;
    if (!subdir) {
        r->src = xstrdup(r->clone);
        return 0;
    }
    loom_str rel = LOOM_STR_INIT;
    str_printf(&rel, "%s%s", strncmp(subdir, "./", 2) ? "./" : "", subdir);
    const char *why;
    char real[PATH_MAX];
    r->src = realpath(r->clone, real) ? plugin_path_under(real, rel.ptr, &why) : NULL;
    if (!r->src)
        loom_error_set(err, LOOM_ERR_CONFIG, "%s: path %s %s", url, subdir,
                       why ? why : "does not exist");
    str_free(&rel);
    return r->src ? 0 : -1;
}

static int resolve(const char *home, const char *pdir, const char *spec, const char *cwd,
                   resolved *r, loom_error *err)
{
    memset(r, 0, sizeof *r);
    if (strchr(spec, '/') || !strcmp(spec, ".") || !strcmp(spec, "..")) {
        r->src = path_make_absolute(spec, cwd);
        r->source = xstrdup(r->src);
        return 0;
    }
    const char *at = strrchr(spec, '@');
    char *name = at ? xstrndup(spec, (size_t)(at - spec)) : xstrdup(spec);
    json_t *entry;
    char *mroot;
    int rc = marketplace_find(home, name, at ? at + 1 : NULL, &entry, &r->market, &mroot, err);
    if (rc == 0) {
        r->name = xstrdup(name);
        rc = resolve_entry(pdir, entry, mroot, r, err);
        json_decref(entry);
        free(mroot);
    }
    free(name);
    return rc;
}

/* ---- installing ----------------------------------------------------------------- */

static int install_copy(const char *pdir, const resolved *r, const char *name, char **dest,
                        loom_error *err)
{
    char *group = path_join(pdir, r->market ? r->market : "_local");
    *dest = path_join(group, name);
    loom_str t = LOOM_STR_INIT;
    str_printf(&t, "%s/.%s.new-%ld", group, name, (long)getpid());
    char *tmp = str_steal(&t);
    int rc = file_mkdirs(group, 0700, err) == 0 ? 0 : -1;
    if (rc == 0 && file_exists(tmp))
        rc = plugin_remove_tree(group, tmp, err);
    if (rc == 0)
        rc = plugin_copy_tree(r->src, tmp, err);
    if (rc == 0 && file_exists(*dest))
        rc = plugin_remove_tree(group, *dest, err);
    if (rc == 0 && rename(tmp, *dest) != 0)
        rc = loom_error_set(err, LOOM_ERR_CONFIG, "%s: %s", *dest, strerror(errno));
    if (rc != 0 && file_exists(tmp)) {
        loom_error ignore;
        plugin_remove_tree(group, tmp, &ignore);
    }
    free(tmp);
    free(group);
    return rc == 0 ? 0 : -1;
}

int plugin_install(const char *home, const char *settings_path, const char *spec,
                   const char *cwd, char **id_out, loom_error *err)
{
    if (id_out)
        *id_out = NULL;
    if (!spec || !*spec)
        return loom_error_set(err, LOOM_ERR_INVALID_REQUEST, "no plugin named"), -1;
    char *pdir = plugins_dir(home);
    resolved r;
    plugin p = {0};
    int rc = resolve(home, pdir, spec, cwd, &r, err);
    /* Read before copying: a broken plugin is refused with its manifest's
     * problem, and what it names must stay inside it. */
    if (rc == 0 && plugin_read(r.src, &p, err) != 0)
        rc = -1;
    const char *name = r.name ? r.name : p.name;
    if (rc == 0 && r.name && has_manifest(r.src) && strcmp(p.name, r.name) != 0)
        rc = loom_error_set(err, LOOM_ERR_CONFIG,
                            "marketplace %s lists the plugin \"%s\", but its manifest names it "
                            "\"%s\"",
                            r.market, r.name, p.name);
    /* Both name folders under the plugins folder (a hand-edited
     * known_marketplaces.json must not lead elsewhere). */
    if (rc == 0 && (!plugin_name_valid(name) || (r.market && !plugin_name_valid(r.market))))
        rc = loom_error_set(err, LOOM_ERR_CONFIG, "\"%s\"%s%s: not a valid plugin or "
                            "marketplace name", name, r.market ? " of " : "",
                            r.market ? r.market : "");
    char *dest = NULL;
    if (rc == 0)
        rc = install_copy(pdir, &r, name, &dest, err);
    loom_str id = LOOM_STR_INIT;
    if (rc == 0) {
        str_printf(&id, "%s%s%s", name, r.market ? "@" : "", r.market ? r.market : "");
        json_t *doc;
        rc = plugins_installed_read(home, &doc, err);
        if (rc == 0) {
            char at[32];
            time_t t = time(NULL);
            struct tm tm;
            gmtime_r(&t, &tm);
            strftime(at, sizeof at, "%Y-%m-%dT%H:%M:%SZ", &tm);
            json_t *rec = json_pack("{s:s,s:s,s:s,s:s}", "name", name, "root", dest, "source",
                                    r.source ? r.source : spec, "installedAt", at);
            if (r.market)
                json_object_set_new(rec, "marketplace", json_string(r.market));
            if (p.version)
                json_object_set_new(rec, "version", json_string(p.version));
            json_object_set_new(json_object_get(doc, "plugins"), id.ptr, rec);
            rc = plugins_installed_write(home, doc, err);
            json_decref(doc);
        }
        if (rc == 0)
            rc = plugins_settings_enable(settings_path, id.ptr, 1, err);
        if (rc == 0 && id_out)
            *id_out = str_steal(&id);
    }
    str_free(&id);
    free(dest);
    plugin_clear(&p);
    resolved_free(&r, pdir);
    free(pdir);
    return rc == 0 ? 0 : -1;
}

/* The installed record's id for name (an id, or a name one record has). */
static char *find_id(const json_t *doc, const char *name, loom_error *err)
{
    const json_t *plugins = json_object_get(doc, "plugins");
    if (name && json_object_get(plugins, name))
        return xstrdup(name);
    char *found = NULL;
    const char *id;
    json_t *rec;
    json_object_foreach((json_t *)plugins, id, rec) {
        if (!name || strcmp(json_get_str(rec, "name", ""), name) != 0)
            continue;
        if (found) {
            loom_error_set(err, LOOM_ERR_CONFIG,
                           "two installed plugins are named %s (%s and %s); give the whole id",
                           name, found, id);
            free(found);
            return NULL;
        }
        found = xstrdup(id);
    }
    if (!found)
        loom_error_set(err, LOOM_ERR_RESOURCE_NOT_FOUND,
                       "no installed plugin %s (loom plugin list)", name ? name : "");
    return found;
}

int plugin_set_enabled(const char *home, const char *settings_path, const char *name,
                       bool enabled, char **id_out, loom_error *err)
{
    if (id_out)
        *id_out = NULL;
    json_t *doc;
    if (plugins_installed_read(home, &doc, err) != 0)
        return -1;
    char *id = find_id(doc, name, err);
    json_decref(doc);
    if (!id)
        return -1;
    int rc = plugins_settings_enable(settings_path, id, enabled ? 1 : 0, err);
    if (rc == 0 && id_out)
        *id_out = id;
    else
        free(id);
    return rc;
}

int plugin_remove(const char *home, const char *settings_path, const char *name, char **id_out,
                  loom_error *err)
{
    if (id_out)
        *id_out = NULL;
    json_t *doc;
    if (plugins_installed_read(home, &doc, err) != 0)
        return -1;
    char *id = find_id(doc, name, err);
    int rc = id ? 0 : -1;
    if (rc == 0) {
        json_t *plugins = json_object_get(doc, "plugins");
        const char *root = json_get_str(json_object_get(plugins, id), "root", NULL);
        char *pdir = plugins_dir(home);
        if (root && file_exists(root))
            rc = plugin_remove_tree(pdir, root, err);
        if (rc == 0 && root) {
            /* The marketplace's folder goes too once it holds no plugin. */
            char *group = xstrdup(root);
            char *slash = strrchr(group, '/');
            size_t pl = strlen(pdir);
            if (slash && slash != group) {
                *slash = '\0';
                if (!strncmp(group, pdir, pl) && group[pl] == '/')
                    rmdir(group); /* fails, harmlessly, when not empty */
            }
            free(group);
        }
        free(pdir);
        if (rc == 0) {
            json_object_del(plugins, id);
            rc = plugins_installed_write(home, doc, err);
        }
        if (rc == 0)
            rc = plugins_settings_enable(settings_path, id, -1, err);
    }
    json_decref(doc);
    if (rc == 0 && id_out)
        *id_out = id;
    else
        free(id);
    return rc == 0 ? 0 : -1;
}
