/* catalog.c — the custom commands of a workspace (commands.h): every .md
 * file under the folders ext_dirs_for("commands") names, sub-folders
 * giving namespaces ("frontend/component.md" is "frontend:component"), a
 * plugin's prefixed with its name, later folders winning by name.
 *
 * The folders of a project are a repository's, so hostile: a symlink that
 * leads out of its commands folder is skipped with a warning there (a
 * repository does not get to make ~/.ssh/id_rsa.md a prompt), a FIFO or
 * device named x.md is never opened for a blocking read, files over
 * COMMAND_FILE_MAX, trees deeper than COMMAND_MAX_DEPTH and folders with
 * more than COMMAND_MAX_FILES files cost a warning each, not a hang. A
 * user's or a plugin's folder may link wherever its owner likes.
 *
 * Names that are REPL built-ins (help, clear, model, …) are kept: the
 * REPL decides that its own commands win (docs/commands.md).
 *
 * The catalog owns its defs and warnings. Built by one thread, read-only
 * afterwards: any thread may read it. */
#include "ext/commands/commands_internal.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "base/fileio.h"
#include "base/path.h"
#include "base/warn_list.h"

struct command_catalog {
    command_def **defs;
    size_t n;
    warn_list warnings;      /* the files' warnings, then the skipped folders' notices */
    char **dirs_read;        /* real paths already loaded (cwd may be the home) */
    size_t ndirs;
};

/* A later folder wins by name; the replaced def goes. */
/* A later folder wins by name — except over a plugin's command: a
 * plugin's names are its own ("tools:hello"), and a folder tools/hello.md
 * elsewhere does not get to replace what the plugin says (sources.h). */
static void cat_add(command_catalog *c, command_def *d)
{
    for (size_t i = 0; i < c->n; i++)
        if (strcmp(c->defs[i]->name, d->name) == 0) {
            if (c->defs[i]->plugin && !d->plugin) {
                warn_list_addf(&c->warnings,
                               "%s: /%s is the plugin %s's command; this file is skipped",
                               d->path, d->name, c->defs[i]->plugin);
                command_def_free(d);
                return;
            }
            command_def_free(c->defs[i]);
            c->defs[i] = d;
            return;
        }
    c->defs = xrealloc(c->defs, (c->n + 1) * sizeof *c->defs);
    c->defs[c->n++] = d;
}

static bool seen_dir(command_catalog *c, const char *real)
{
    for (size_t i = 0; i < c->ndirs; i++)
        if (strcmp(c->dirs_read[i], real) == 0)
            return true;
    c->dirs_read = xrealloc(c->dirs_read, (c->ndirs + 1) * sizeof(char *));
    c->dirs_read[c->ndirs++] = xstrdup(real);
    return false;
}

/* Is path (real) root itself or inside it? */
static bool inside(const char *path, const char *root)
{
    size_t n = strlen(root);
    if (strncmp(path, root, n) != 0)
        return false;
    return path[n] == '\0' || path[n] == '/' || (n == 1 && root[0] == '/');
}

static int name_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* One folder being walked. */
typedef struct walk {
    command_catalog *c;
    const ext_dir *dir;
    const char *real_root;   /* the folder's real path */
    size_t files;            /* .md files seen so far in this folder */
    bool capped;             /* COMMAND_MAX_FILES reached (warned) */
} walk;

static void load_file(walk *w, const char *path, const char *rel, bool nofollow)
{
    command_catalog *c = w->c;
    if (++w->files > COMMAND_MAX_FILES) {
        if (!w->capped)
            warn_list_addf(&c->warnings, "%s: more than %d command files; the rest are skipped",
                           w->dir->path, COMMAND_MAX_FILES);
        w->capped = true;
        return;
    }
    loom_str why = LOOM_STR_INIT;
    char *name = command_name_for(rel, w->dir->plugin, &why);
    if (!name) {
        warn_list_addf(&c->warnings, "%s: %s; skipped", path, str_cstr(&why));
        str_free(&why);
        return;
    }
    char *text = file_read_text(path, COMMAND_FILE_MAX,
                                FILE_TEXT_NO_NUL | (nofollow ? FILE_TEXT_NOFOLLOW : 0), &why);
    if (!text) {
        warn_list_addf(&c->warnings, "%s: %s; skipped", path, str_cstr(&why));
    } else {
        loom_error perr = {0};
        command_def *d = command_def_parse(path, name, text, warn_list_sink, &c->warnings, &perr);
        if (d) {
            d->scope = w->dir->scope;
            d->plugin = xstrdup(w->dir->plugin);
            cat_add(c, d);
        } else {
            warn_list_addf(&c->warnings, "%s; skipped", perr.message);
        }
    }
    free(text);
    free(name);
    str_free(&why);
}

static void walk_dir(walk *w, const char *dir, const char *rel, int depth)
{
    command_catalog *c = w->c;
    DIR *dh = opendir(dir);
    if (!dh) {
        warn_list_addf(&c->warnings, "%s: cannot be read: %s", dir, strerror(errno));
        return;
    }
    char **names = NULL;
    size_t n = 0;
    struct dirent *e;
    while ((e = readdir(dh)) != NULL) {
        if (e->d_name[0] == '.')
            continue; /* hidden files and folders, "." and ".." */
        names = xrealloc(names, (n + 1) * sizeof(char *));
        names[n++] = xstrdup(e->d_name);
    }
    closedir(dh);
    if (n)
        qsort(names, n, sizeof(char *), name_cmp);
    bool project = w->dir->scope == EXT_SCOPE_PROJECT;
    for (size_t i = 0; i < n; i++) {
        if (w->capped) { /* the rest are named in the one warning */
            free(names[i]);
            continue;
        }
        char *path = path_join(dir, names[i]);
        char *sub = xmalloc(strlen(rel) + strlen(names[i]) + 2);
        sprintf(sub, "%s%s", rel, names[i]);
        struct stat st;
        bool ok = lstat(path, &st) == 0;
        bool link = ok && S_ISLNK(st.st_mode);
        if (link)
            ok = stat(path, &st) == 0; /* a dangling link or a loop is no command */
        if (link && project && ok) {
            char *real = realpath(path, NULL);
            if (!real || !inside(real, w->real_root)) {
                warn_list_addf(&c->warnings,
                               "%s: a symlink leading out of the commands folder (to %s); skipped: "
                               "a workspace's commands stay inside it",
                               path, real ? real : "nowhere");
                ok = false;
            }
            free(real);
        }
        if (ok && S_ISDIR(st.st_mode)) {
            if (depth + 1 >= COMMAND_MAX_DEPTH) {
                warn_list_addf(&c->warnings, "%s: more than %d folders deep; skipped", path, COMMAND_MAX_DEPTH);
            } else {
                strcat(sub, "/");
                walk_dir(w, path, sub, depth + 1);
            }
        } else if (ok) {
            size_t len = strlen(names[i]);
            if (len > 3 && strcmp(names[i] + len - 3, ".md") == 0)
                load_file(w, path, sub, project && !link);
        }
        free(sub);
        free(path);
        free(names[i]);
    }
    free(names);
}

static void load_dir(command_catalog *c, const ext_dir *d)
{
    char *real = realpath(d->path, NULL);
    struct stat st;
    if (!real || stat(real, &st) != 0 || !S_ISDIR(st.st_mode)) {
        if (real || (errno != ENOENT && errno != ENOTDIR))
            warn_list_addf(&c->warnings, "%s: not a readable folder; skipped", d->path);
        free(real);
        return;
    }
    if (d->scope == EXT_SCOPE_PROJECT) {
        /* <project>/.loom/commands itself may be a link; it must stay in
         * the project (a repository's .claude/commands -> ~/.ssh is not a
         * commands folder). */
        char *up = path_join(d->path, "../..");
        char *folded = path_fold(up); /* lexically: realpath would go up from the link's target */
        char *proj = realpath(folded, NULL);
        free(folded);
        free(up);
        bool in = proj && inside(real, proj);
        free(proj);
        if (!in) {
            warn_list_addf(&c->warnings,
                           "%s: leads out of the workspace (to %s); skipped: a workspace's "
                           "commands stay inside it", d->path, real);
            free(real);
            return;
        }
    }
    if (!seen_dir(c, real)) {
        walk w = {.c = c, .dir = d, .real_root = real};
        walk_dir(&w, d->path, "", 0);
    }
    free(real);
}

static int def_cmp(const void *a, const void *b)
{
    return strcmp((*(command_def *const *)a)->name, (*(command_def *const *)b)->name);
}

command_catalog *command_catalog_from_dirs(const ext_dirs *dirs, const json_t *notices)
{
    command_catalog *c = xcalloc(1, sizeof *c);
    /* Loom's own first: a folder's command of the same name replaces one. */
    for (size_t i = 0; i < command_builtin_count(); i++) {
        loom_error perr = {0};
        command_def *d = command_builtin_parse(i, warn_list_sink, &c->warnings, &perr);
        if (d)
            cat_add(c, d);
        else
            warn_list_addf(&c->warnings, "%s; skipped", perr.message);
    }
    for (size_t i = 0; dirs && i < dirs->n; i++)
        load_dir(c, &dirs->v[i]);
    if (c->n)
        qsort(c->defs, c->n, sizeof *c->defs, def_cmp);
    warn_list_add_strings(&c->warnings, notices);
    return c;
}

command_catalog *command_catalog_load(const ext_source_opts *o, loom_error *err)
{
    (void)err;
    ext_dirs dirs = {0};
    json_t *notices = json_array();
    if (o)
        ext_dirs_for("commands", o, &dirs, notices);
    command_catalog *c = command_catalog_from_dirs(&dirs, notices);
    ext_dirs_free(&dirs);
    json_decref(notices);
    return c;
}

void command_catalog_free(command_catalog *c)
{
    if (!c)
        return;
    for (size_t i = 0; i < c->n; i++)
        command_def_free(c->defs[i]);
    free(c->defs);
    warn_list_free(&c->warnings);
    for (size_t i = 0; i < c->ndirs; i++)
        free(c->dirs_read[i]);
    free(c->dirs_read);
    free(c);
}

size_t command_catalog_count(const command_catalog *c)
{
    return c ? c->n : 0;
}

const command_def *command_catalog_at(const command_catalog *c, size_t i)
{
    return c && i < c->n ? c->defs[i] : NULL;
}

const command_def *command_catalog_find(const command_catalog *c, const char *name)
{
    if (!c || !name)
        return NULL;
    for (size_t i = 0; i < c->n; i++)
        if (strcmp(c->defs[i]->name, name) == 0)
            return c->defs[i];
    for (size_t i = 0; i < c->n; i++)
        if (strcasecmp(c->defs[i]->name, name) == 0)
            return c->defs[i];
    return NULL;
}

size_t command_catalog_warning_count(const command_catalog *c)
{
    return c ? warn_list_count(&c->warnings) : 0;
}

const char *command_catalog_warning(const command_catalog *c, size_t i)
{
    return c ? warn_list_at(&c->warnings, i) : NULL;
}
