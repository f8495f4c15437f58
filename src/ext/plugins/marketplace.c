/* marketplace.c — marketplaces (manage.h): a folder or a git repository
 * holding .loom-plugin/marketplace.json or Claude Code's
 * .claude-plugin/marketplace.json ({"name", "owner", "plugins": [{"name",
 * "source", …}], "metadata": {"pluginRoot"}}), the record of the ones
 * added ($LOOM_HOME/plugins/known_marketplaces.json), and finding a
 * plugin in them.
 *
 * A marketplace file is a repository's words: it is read under a size
 * cap, and a problem is an error naming the file, the entry and what is
 * wrong. A folder is recorded where it is (edits show at the next
 * install); a git repository is cloned once (`git clone --depth 1`,
 * never a credential prompt) and refreshed by adding it again.
 *
 * No state; any thread (see manage.h about two processes). */
#include <errno.h>
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
#include "base/proc.h"
#include "base/str.h"
#include "ext/plugins/manage.h"
#include "ext/plugins/manifest.h"

extern char **environ;

static char *known_path(const char *home)
{
    char *d = plugins_dir(home);
    char *p = path_join(d, "known_marketplaces.json");
    free(d);
    return p;
}

static int check_entry(const char *file, size_t i, const json_t *e, loom_error *err)
{
    if (!json_is_object(e))
        return loom_error_set(err, LOOM_ERR_CONFIG, "%s: plugins[%zu] must be an object", file, i);
    const char *name = json_get_str(e, "name", NULL);
    if (!plugin_name_valid(name))
        return loom_error_set(err, LOOM_ERR_CONFIG,
                              "%s: plugins[%zu]: \"name\" must be a plugin name (lowercase "
                              "letters, digits, '-', '_', '.')",
                              file, i);
    const json_t *src = json_object_get(e, "source");
    if (!json_is_string(src) && !json_is_object(src))
        return loom_error_set(err, LOOM_ERR_CONFIG,
                              "%s: plugins[%zu] (%s): \"source\" must be a path (\"./…\") or an "
                              "object like {\"source\": \"url\", \"url\": …}",
                              file, i, name);
    return 0;
}

int marketplace_read(const char *root, json_t **doc, loom_error *err)
{
    *doc = NULL;
    static const char *const files[] = {".loom-plugin/marketplace.json",
                                        ".claude-plugin/marketplace.json"};
    for (size_t f = 0; f < 2; f++) {
        char *path = path_join(root, files[f]);
        json_t *d;
        int rc = plugin_json_file(path, PLUGIN_MANIFEST_MAX_BYTES, &d, err);
        if (rc == 1) {
            free(path);
            continue;
        }
        if (rc == 0 && !plugin_name_valid(json_get_str(d, "name", NULL)))
            rc = loom_error_set(err, LOOM_ERR_CONFIG,
                                "%s: \"name\" must be the marketplace's name (lowercase letters, "
                                "digits, '-', '_', '.'; at most %d)",
                                path, PLUGIN_NAME_MAX);
        const json_t *plugins = rc == 0 ? json_object_get(d, "plugins") : NULL;
        if (rc == 0 && !json_is_array(plugins))
            rc = loom_error_set(err, LOOM_ERR_CONFIG, "%s: \"plugins\" must be a list", path);
        size_t i;
        json_t *e;
        json_array_foreach(plugins, i, e) if (rc == 0) rc = check_entry(path, i, e, err);
        free(path);
        if (rc != 0) {
            json_decref(d);
            return -1;
        }
        *doc = d;
        return 0;
    }
    return loom_error_set(err, LOOM_ERR_CONFIG,
                          "%s: no .loom-plugin/marketplace.json or .claude-plugin/marketplace.json",
                          root),
           -1;
}

int marketplace_known(const char *home, json_t **doc, loom_error *err)
{
    char *path = known_path(home);
    int rc = plugin_json_file(path, PLUGIN_JSON_FILE_MAX_BYTES, doc, err);
    free(path);
    if (rc < 0)
        return -1;
    if (rc == 1)
        *doc = json_object();
    return 0;
}

static int known_write(const char *home, const json_t *doc, loom_error *err)
{
    char *path = known_path(home);
    char *text = json_dumps(doc, JSON_INDENT(2));
    loom_str body = LOOM_STR_INIT;
    str_printf(&body, "%s\n", text);
    free(text);
    char *dir = plugins_dir(home);
    int rc = file_mkdirs(dir, 0700, err) == 0 &&
                     file_replace(path, body.ptr, body.len, 0600, NULL, err) == 0
                 ? 0
                 : -1;
    free(dir);
    str_free(&body);
    free(path);
    return rc;
}

static void now_iso(char *buf, size_t n)
{
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(buf, n, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* ---- git ---------------------------------------------------------------------- */

int plugin_git_clone(const char *url, const char *dst, loom_error *err)
{
    /* The environment as it is, and never a prompt for a password: a
     * `loom plugin` run must not hang on a terminal it does not own. */
    size_t n = 0;
    while (environ && environ[n])
        n++;
    const char **envp = xcalloc(n + 2, sizeof *envp);
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (strncmp(environ[i], "GIT_TERMINAL_PROMPT=", 20) != 0)
            envp[k++] = environ[i];
    envp[k++] = "GIT_TERMINAL_PROMPT=0";
    const char *argv[] = {"git", "clone", "--quiet", "--depth", "1", "--", url, dst, NULL};
    proc_spec spec = {.argv = argv, .envp = envp, .timeout_ms = PLUGIN_GIT_TIMEOUT_MS,
                      .capture_cap = 64 * 1024};
    proc_result res;
    loom_error perr;
    int rc = proc_run(&spec, &res, &perr);
    free(envp);
    if (rc != 0)
        return loom_error_set(err, LOOM_ERR_TOOL_EXECUTION_FAILED, "git clone %s: %s", url,
                              perr.message),
               -1;
    if (res.exit_code != 0 || res.timed_out) {
        loom_str msg = LOOM_STR_INIT;
        str_append(&msg, res.err ? res.err : "", res.err_len);
        while (msg.len && (msg.ptr[msg.len - 1] == '\n' || msg.ptr[msg.len - 1] == ' '))
            str_truncate(&msg, msg.len - 1);
        loom_error_set(err, LOOM_ERR_TOOL_EXECUTION_FAILED, "git clone %s failed%s: %s", url,
                       res.timed_out ? " (timed out)" : "",
                       msg.len ? str_cstr(&msg) : "no message");
        str_free(&msg);
        proc_result_free(&res);
        return -1;
    }
    proc_result_free(&res);
    return 0;
}

/* A source that names a git repository rather than a folder on disk. */
static bool git_source(const char *s)
{
    static const char *const schemes[] = {"https://", "http://", "file://", "ssh://", "git://",
                                          "git@"};
    for (size_t i = 0; i < sizeof schemes / sizeof *schemes; i++)
        if (!strncmp(s, schemes[i], strlen(schemes[i])))
            return true;
    size_t n = strlen(s);
    return n > 4 && !strcmp(s + n - 4, ".git");
}

/* GitHub's "owner/repo" shorthand (Claude Code's), when no such folder exists. */
static char *github_shorthand(const char *s)
{
    const char *slash = strchr(s, '/');
    if (!slash || slash == s || !slash[1] || strchr(slash + 1, '/') || *s == '.')
        return NULL;
    for (const char *p = s; *p; p++)
        if (!(p == slash || (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
              (*p >= '0' && *p <= '9') || *p == '-' || *p == '_' || *p == '.'))
            return NULL;
    loom_str u = LOOM_STR_INIT;
    str_printf(&u, "https://github.com/%s.git", s);
    return str_steal(&u);
}

/* A fresh folder name beside the final one, for a clone in progress. */
static char *temp_beside(const char *dir, const char *what)
{
    static unsigned counter;
    loom_str p = LOOM_STR_INIT;
    str_printf(&p, "%s/.%s-%ld-%u-%ld", dir, what, (long)getpid(), counter++, (long)time(NULL));
    return str_steal(&p);
}

/* ---- adding ------------------------------------------------------------------- */

/* Records name → record, refusing a name taken by another source. */
static int record(const char *home, const char *name, const char *source, json_t *rec,
                  loom_error *err)
{
    json_t *known;
    if (marketplace_known(home, &known, err) != 0) {
        json_decref(rec);
        return -1;
    }
    const json_t *have = json_object_get(known, name);
    int rc = 0;
    if (have && strcmp(json_get_str(have, "source", ""), source) != 0)
        rc = loom_error_set(err, LOOM_ERR_CONFIG,
                            "a marketplace named \"%s\" is already added from %s (loom plugin "
                            "marketplace remove %s first)",
                            name, json_get_str(have, "source", "?"), name);
    if (rc == 0) {
        json_object_set(known, name, rec);
        rc = known_write(home, known, err);
    }
    json_decref(rec);
    json_decref(known);
    return rc == 0 ? 0 : -1;
}

static int add_git(const char *home, const char *url, const char *shown, char **name_out,
                   loom_error *err)
{
    char *pdir = plugins_dir(home);
    char *mdir = path_join(pdir, "_marketplaces");
    char *tmp = temp_beside(mdir, "clone");
    int rc = file_mkdirs(mdir, 0700, err) == 0 ? plugin_git_clone(url, tmp, err) : -1;
    json_t *doc = NULL;
    if (rc == 0)
        rc = marketplace_read(tmp, &doc, err);
    char *final = NULL;
    if (rc == 0) {
        const char *name = json_get_str(doc, "name", "");
        json_t *known = NULL;
        if (marketplace_known(home, &known, err) != 0)
            rc = -1;
        const json_t *have = known ? json_object_get(known, name) : NULL;
        if (rc == 0 && have && strcmp(json_get_str(have, "source", ""), shown) != 0)
            rc = loom_error_set(err, LOOM_ERR_CONFIG,
                                "a marketplace named \"%s\" is already added from %s (loom plugin "
                                "marketplace remove %s first)",
                                name, json_get_str(have, "source", "?"), name);
        json_decref(known);
        final = path_join(mdir, name);
        if (rc == 0 && file_exists(final))
            rc = plugin_remove_tree(mdir, final, err);
        if (rc == 0 && rename(tmp, final) != 0)
            rc = loom_error_set(err, LOOM_ERR_CONFIG, "%s: %s", final, strerror(errno));
        if (rc == 0) {
            char at[32];
            now_iso(at, sizeof at);
            json_t *rec = json_pack("{s:s,s:s,s:s,s:s}", "source", shown, "kind", "git", "root",
                                    final, "addedAt", at);
            rc = record(home, name, shown, rec, err);
        }
        if (rc == 0 && name_out)
            *name_out = xstrdup(name);
    }
    if (file_exists(tmp)) {
        loom_error ignore;
        plugin_remove_tree(mdir, tmp, &ignore);
    }
    json_decref(doc);
    free(final);
    free(tmp);
    free(mdir);
    free(pdir);
    return rc == 0 ? 0 : -1;
}

int marketplace_add(const char *home, const char *source, char **name_out, loom_error *err)
{
    if (name_out)
        *name_out = NULL;
    if (!source || !*source)
        return loom_error_set(err, LOOM_ERR_INVALID_REQUEST, "no marketplace source given"), -1;
    struct stat st;
    bool folder = stat(source, &st) == 0 && S_ISDIR(st.st_mode);
    char *bare = folder || git_source(source) ? NULL : github_shorthand(source);
    if (!folder && (git_source(source) || bare)) {
        int rc = add_git(home, bare ? bare : source, source, name_out, err);
        free(bare);
        return rc;
    }
    if (!folder)
        return loom_error_set(err, LOOM_ERR_RESOURCE_NOT_FOUND,
                              "%s: no such folder, and not a git URL (https://…, file://…, "
                              "git@…, a path ending in .git, or owner/repo)",
                              source),
               -1;
    char real[PATH_MAX];
    if (!realpath(source, real))
        return loom_error_set(err, LOOM_ERR_CONFIG, "%s: %s", source, strerror(errno)), -1;
    json_t *doc;
    if (marketplace_read(real, &doc, err) != 0)
        return -1;
    const char *name = json_get_str(doc, "name", "");
    char at[32];
    now_iso(at, sizeof at);
    json_t *rec = json_pack("{s:s,s:s,s:s,s:s}", "source", real, "kind", "directory", "root",
                            real, "addedAt", at);
    int rc = record(home, name, real, rec, err);
    if (rc == 0 && name_out)
        *name_out = xstrdup(name);
    json_decref(doc);
    return rc;
}

int marketplace_remove(const char *home, const char *name, loom_error *err)
{
    json_t *known;
    if (marketplace_known(home, &known, err) != 0)
        return -1;
    const json_t *rec = name ? json_object_get(known, name) : NULL;
    int rc = 0;
    if (!rec)
        rc = loom_error_set(err, LOOM_ERR_RESOURCE_NOT_FOUND, "no marketplace named \"%s\"",
                            name ? name : "");
    if (rc == 0 && !strcmp(json_get_str(rec, "kind", ""), "git")) {
        char *pdir = plugins_dir(home);
        char *mdir = path_join(pdir, "_marketplaces");
        const char *root = json_get_str(rec, "root", "");
        if (file_exists(root))
            rc = plugin_remove_tree(mdir, root, err);
        free(mdir);
        free(pdir);
    }
    if (rc == 0) {
        json_object_del(known, name);
        rc = known_write(home, known, err);
    }
    json_decref(known);
    return rc == 0 ? 0 : -1;
}

/* ---- finding ------------------------------------------------------------------ */

static const json_t *entry_named(const json_t *doc, const char *name)
{
    size_t i;
    json_t *e;
    json_array_foreach(json_object_get(doc, "plugins"), i, e) if (!strcmp(
        json_get_str(e, "name", ""), name)) return e;
    return NULL;
}

int marketplace_find(const char *home, const char *name, const char *market, json_t **entry,
                     char **market_out, char **mroot, loom_error *err)
{
    *entry = NULL;
    *market_out = *mroot = NULL;
    json_t *known;
    if (marketplace_known(home, &known, err) != 0)
        return -1;
    if (market && !json_object_get(known, market)) {
        json_decref(known);
        return loom_error_set(err, LOOM_ERR_RESOURCE_NOT_FOUND,
                              "no marketplace named \"%s\" (loom plugin marketplace add SOURCE)",
                              market),
               -1;
    }
    int rc = 0, found = 0;
    const char *mname;
    json_t *rec;
    json_object_foreach(known, mname, rec) {
        if (market && strcmp(mname, market) != 0)
            continue;
        json_t *doc;
        loom_error merr;
        if (marketplace_read(json_get_str(rec, "root", ""), &doc, &merr) != 0) {
            if (market) {
                rc = loom_error_set(err, merr.code, "%s", merr.message);
                break;
            }
            continue; /* a broken marketplace does not hide the others */
        }
        const json_t *e = entry_named(doc, name);
        if (e && found++) {
            rc = loom_error_set(err, LOOM_ERR_CONFIG,
                                "plugin \"%s\" is in the marketplaces %s and %s; say which: "
                                "%s@%s",
                                name, *market_out, mname, name, mname);
            json_decref(doc);
            break;
        }
        if (e) {
            *entry = json_deep_copy(e);
            /* metadata.pluginRoot: the folder relative sources are under. */
            const char *pr = json_get_str(json_object_get(doc, "metadata"), "pluginRoot", NULL);
            if (pr)
                json_object_set_new(*entry, "_pluginRoot", json_string(pr));
            *market_out = xstrdup(mname);
            *mroot = xstrdup(json_get_str(rec, "root", ""));
        }
        json_decref(doc);
    }
    json_decref(known);
    if (rc == 0 && !found)
        rc = market ? loom_error_set(err, LOOM_ERR_RESOURCE_NOT_FOUND,
                                     "marketplace %s lists no plugin \"%s\"", market, name)
                    : loom_error_set(err, LOOM_ERR_RESOURCE_NOT_FOUND,
                                     "no marketplace lists a plugin \"%s\" (loom plugin "
                                     "marketplace list)",
                                     name);
    if (rc != 0) {
        json_decref(*entry);
        free(*market_out);
        free(*mroot);
        *entry = NULL;
        *market_out = *mroot = NULL;
        return -1;
    }
    return 0;
}
