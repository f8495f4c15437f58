/* catalog.c — the skills of a workspace (skills.h): every <dir>/<name>/SKILL.md
 * of the folders ext_dirs_for("skills") lists, lowest precedence first, a
 * later folder's skill replacing an earlier one of the same name; a
 * plugin's skills are named "plugin:name" so they never shadow. Also the
 * listing of a skill's bundled files (never their contents).
 *
 * Malformed files are warnings naming the file; skipped folders (an
 * untrusted workspace's) are notices, listed after the warnings. The
 * catalog owns its entries and messages. Built by one thread, read-only
 * afterwards: any thread may read it. */
#include "ext/skills/skills_internal.h"

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/fileio.h"
#include "base/frontmatter.h"
#include "base/path.h"
#include "base/str.h"
#include "base/warn_list.h"

/* Most skill folders read from one source folder (a hostile checkout with
 * a million folders costs a warning, not the start-up). */
#define SKILL_DIRS_PER_SOURCE 1000
/* How deep skill_files walks a skill's folder. */
#define SKILL_FILES_DEPTH 4

struct skill_catalog {
    skill_entry **v;    /* sorted by name once loaded */
    size_t n;
    warn_list warnings;
};

/* Later wins by name; the replaced entry is freed. */
static void cat_add(skill_catalog *c, skill_entry *e)
{
    for (size_t i = 0; i < c->n; i++)
        if (strcmp(c->v[i]->def.name, e->def.name) == 0) {
            skill_entry_free(c->v[i]);
            c->v[i] = e;
            return;
        }
    c->v = xrealloc(c->v, (c->n + 1) * sizeof *c->v);
    c->v[c->n++] = e;
}

static int str_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int entry_cmp(const void *a, const void *b)
{
    return strcmp((*(skill_entry *const *)a)->def.name, (*(skill_entry *const *)b)->def.name);
}

/* The sub-folder names of dir (no dot folders), sorted; NULL-terminated. */
static char **list_subdirs(skill_catalog *c, const char *dir, size_t *n)
{
    *n = 0;
    DIR *dh = opendir(dir);
    if (!dh) {
        warn_list_addf(&c->warnings, "%s: cannot be read: %s", dir, strerror(errno));
        return NULL;
    }
    char **names = NULL;
    struct dirent *de;
    while ((de = readdir(dh)) != NULL) {
        /* proposed/ holds what `loom evolve` proposes (docs/evolve.md):
         * never loaded until a person accepts it, which moves it out. */
        if (de->d_name[0] == '.' || strcmp(de->d_name, "proposed") == 0)
            continue;
        char *p = path_join(dir, de->d_name);
        struct stat st;
        bool d = stat(p, &st) == 0 && S_ISDIR(st.st_mode);
        free(p);
        if (!d)
            continue;
        if (*n == SKILL_DIRS_PER_SOURCE) {
            warn_list_addf(&c->warnings, "%s: more than %d folders; the rest are not read", dir,
                           SKILL_DIRS_PER_SOURCE);
            break;
        }
        names = xrealloc(names, (*n + 1) * sizeof(char *));
        names[(*n)++] = xstrdup(de->d_name);
    }
    closedir(dh);
    if (*n)
        qsort(names, *n, sizeof(char *), str_cmp);
    return names;
}

static void load_source(skill_catalog *c, const ext_dir *src)
{
    size_t n = 0;
    char **names = list_subdirs(c, src->path, &n);
    for (size_t i = 0; i < n; i++) {
        char *dir = path_join(src->path, names[i]);
        char *path = path_join(dir, "SKILL.md");
        struct stat st;
        if (stat(path, &st) != 0) {
            /* A folder without SKILL.md is not a skill (a shared scripts/
             * folder beside the skills), not a fault. */
            free(path);
            free(dir);
            free(names[i]);
            continue;
        }
        loom_str why = LOOM_STR_INIT;
        char *text = file_read_text(path, FRONTMATTER_MAX_BYTES, 0, &why);
        if (!text) {
            warn_list_addf(&c->warnings, "%s: %s; skipped", path, str_cstr(&why));
        } else {
            loom_error perr = {0};
            skill_entry *e =
                skill_entry_parse(path, names[i], text, warn_list_sink, &c->warnings, &perr);
            if (!e) {
                warn_list_addf(&c->warnings, "%s; skipped", perr.message);
            } else {
                e->def.scope = src->scope;
                if (src->scope == EXT_SCOPE_PLUGIN && src->plugin) {
                    loom_str full = LOOM_STR_INIT;
                    str_printf(&full, "%s:%s", src->plugin, e->def.name);
                    free(e->def.name);
                    e->def.name = str_steal(&full);
                    e->def.plugin = xstrdup(src->plugin);
                }
                cat_add(c, e);
            }
        }
        free(text);
        str_free(&why);
        free(path);
        free(dir);
        free(names[i]);
    }
    free(names);
}

skill_catalog *skill_catalog_load(const ext_source_opts *o, loom_error *err)
{
    (void)err;
    skill_catalog *c = xcalloc(1, sizeof *c);
    if (!o)
        return c;
    json_t *notices = json_array();
    ext_dirs dirs;
    ext_dirs_for("skills", o, &dirs, notices);
    for (size_t i = 0; i < dirs.n; i++)
        load_source(c, &dirs.v[i]);
    ext_dirs_free(&dirs);
    warn_list_add_strings(&c->warnings, notices);
    json_decref(notices);
    if (c->n)
        qsort(c->v, c->n, sizeof *c->v, entry_cmp);
    return c;
}

void skill_catalog_free(skill_catalog *c)
{
    if (!c)
        return;
    for (size_t i = 0; i < c->n; i++)
        skill_entry_free(c->v[i]);
    free(c->v);
    warn_list_free(&c->warnings);
    free(c);
}

size_t skill_catalog_count(const skill_catalog *c)
{
    return c ? c->n : 0;
}

const skill_def *skill_catalog_at(const skill_catalog *c, size_t i)
{
    return c && i < c->n ? &c->v[i]->def : NULL;
}

const skill_def *skill_catalog_find(const skill_catalog *c, const char *name)
{
    if (!c || !name)
        return NULL;
    for (size_t i = 0; i < c->n; i++)
        if (strcmp(c->v[i]->def.name, name) == 0)
            return &c->v[i]->def;
    return NULL;
}

size_t skill_catalog_warning_count(const skill_catalog *c)
{
    return c ? warn_list_count(&c->warnings) : 0;
}

const char *skill_catalog_warning(const skill_catalog *c, size_t i)
{
    return c ? warn_list_at(&c->warnings, i) : NULL;
}

/* ---- bundled files ------------------------------------------------------------ */

static void walk(const char *root, const char *rel, int depth, char ***v, size_t *n)
{
    char *dir = rel[0] ? path_join(root, rel) : xstrdup(root);
    DIR *dh = opendir(dir);
    if (!dh) {
        free(dir);
        return;
    }
    struct dirent *de;
    while ((de = readdir(dh)) != NULL && *n < SKILL_FILES_MAX) {
        if (de->d_name[0] == '.')
            continue;
        if (!rel[0] && strcmp(de->d_name, "SKILL.md") == 0)
            continue;
        char *r = rel[0] ? path_join(rel, de->d_name) : xstrdup(de->d_name);
        char *full = path_join(dir, de->d_name);
        struct stat st;
        /* lstat: a symbolic link is listed as a file, never followed (a
         * link to / would make the listing endless). */
        if (lstat(full, &st) == 0) {
            if (S_ISDIR(st.st_mode)) {
                if (depth < SKILL_FILES_DEPTH)
                    walk(root, r, depth + 1, v, n);
            } else {
                *v = xrealloc(*v, (*n + 2) * sizeof(char *));
                (*v)[(*n)++] = xstrdup(r);
                (*v)[*n] = NULL;
            }
        }
        free(full);
        free(r);
    }
    closedir(dh);
    free(dir);
}

char **skill_files(const skill_def *d)
{
    char **v = xcalloc(1, sizeof(char *));
    size_t n = 0;
    if (d && d->dir)
        walk(d->dir, "", 1, &v, &n);
    if (n)
        qsort(v, n, sizeof(char *), str_cmp);
    return v;
}
