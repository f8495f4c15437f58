/* store.c — the session directory layout, and finding a session by id
 * prefix or by recency. Read-only: files are created by transcript.c. */
#include "session/store.h"

#include <dirent.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/json.h"
#include "base/path.h"
#include "base/settings.h"
#include "base/str.h"
#include "session/listing.h"

/* The slug is one path component, so it must stay under NAME_MAX (255). */
#define SLUG_MAX 200
#define SLUG_HASH_HEX 16
#define MAX_CANDIDATES_LISTED 8 /* with titles, they fit a loom_error message */

static const char jsonl_ext[] = ".jsonl";

static uint64_t fnv1a64(const char *s)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (; *s; s++) {
        h ^= (unsigned char)*s;
        h *= 0x100000001b3ull;
    }
    return h;
}

static bool alnum(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

char *store_slug(const char *cwd)
{
    loom_str abs = LOOM_STR_INIT;
    if (!cwd || cwd[0] != '/') {
        char *here = getcwd(NULL, 0);
        str_puts(&abs, here ? here : "/");
        free(here);
        if (cwd && *cwd) {
            str_putc(&abs, '/');
            str_puts(&abs, cwd);
        }
    } else {
        str_puts(&abs, cwd);
    }
    const char *p = str_cstr(&abs);
    loom_str slug = LOOM_STR_INIT;
    for (size_t i = 0; i < abs.len; i++)
        str_putc(&slug, alnum((unsigned char)p[i]) ? p[i] : '-');
    if (slug.len > SLUG_MAX) {
        slug.len = SLUG_MAX - 1 - SLUG_HASH_HEX;
        str_printf(&slug, "-%016llx", (unsigned long long)fnv1a64(p));
    }
    str_free(&abs);
    return str_steal(&slug);
}

char *store_project_dir(const char *cwd)
{
    char *home = loom_home();
    char *slug = store_slug(cwd);
    loom_str s = LOOM_STR_INIT;
    str_printf(&s, "%s/projects/%s", home, slug);
    free(home);
    free(slug);
    return str_steal(&s);
}

static bool is_session_file(const char *name, size_t *id_len)
{
    size_t n = strlen(name);
    size_t e = sizeof jsonl_ext - 1;
    if (n <= e || strcmp(name + n - e, jsonl_ext) != 0 || name[0] == '.')
        return false;
    *id_len = n - e;
    return true;
}

typedef struct {
    char **paths;
    size_t n;
    char *exact;  /* an exact id match wins over any prefix match */
} matches;

static void scan_project(const char *dir, const char *prefix, matches *m)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    size_t plen = strlen(prefix);
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        size_t id_len;
        if (!is_session_file(e->d_name, &id_len) || id_len < plen ||
            strncmp(e->d_name, prefix, plen) != 0)
            continue;
        char *path = path_join(dir, e->d_name);
        if (id_len == plen && !m->exact)
            m->exact = xstrdup(path);
        m->paths = xrealloc(m->paths, (m->n + 1) * sizeof *m->paths);
        m->paths[m->n++] = path;
    }
    closedir(d);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int session_find(const char *id_or_prefix, char **path, loom_error *err)
{
    *path = NULL;
    if (!id_or_prefix || !*id_or_prefix)
        return loom_error_set(err, LOOM_ERR_INVALID_REQUEST, "no session id given");
    struct stat st;
    if (strchr(id_or_prefix, '/')) {
        if (stat(id_or_prefix, &st) == 0 && S_ISREG(st.st_mode)) {
            *path = xstrdup(id_or_prefix);
            return 0;
        }
        return loom_error_set(err, LOOM_ERR_RESOURCE_NOT_FOUND, "no session file %s",
                              id_or_prefix);
    }
    char *home = loom_home();
    loom_str projects = LOOM_STR_INIT;
    str_printf(&projects, "%s/projects", home);
    matches m = {0};
    DIR *d = opendir(str_cstr(&projects));
    if (d) {
        struct dirent *e;
        while ((e = readdir(d)) != NULL) {
            if (e->d_name[0] == '.')
                continue;
            char *dir = path_join(str_cstr(&projects), e->d_name);
            scan_project(dir, id_or_prefix, &m);
            free(dir);
        }
        closedir(d);
    }
    int rc = 0;
    if (m.exact) {
        *path = m.exact;
        m.exact = NULL;
    } else if (m.n == 1) {
        *path = m.paths[0];
        m.paths[0] = NULL;
    } else if (m.n == 0) {
        rc = loom_error_set(err, LOOM_ERR_RESOURCE_NOT_FOUND, "no session matches '%s' in %s",
                            id_or_prefix, str_cstr(&projects));
    } else {
        qsort(m.paths, m.n, sizeof *m.paths, cmp_str);
        /* One candidate a line with its title, so a person can tell them
         * apart (the title is the file's text, made one safe line by
         * session_title_from_prompt). */
        loom_str list = LOOM_STR_INIT;
        for (size_t i = 0; i < m.n && i < MAX_CANDIDATES_LISTED; i++) {
            const char *base = strrchr(m.paths[i], '/') + 1;
            json_t *o = session_describe(m.paths[i]);
            const char *title = json_get_str(o, "title", "(no prompt yet)");
            str_printf(&list, "\n  %.*s  %s", (int)(strlen(base) - 6), base, title);
            json_decref(o);
        }
        if (m.n > MAX_CANDIDATES_LISTED)
            str_printf(&list, "\n  ... (%zu in all)", m.n);
        rc = loom_error_set(err, LOOM_ERR_INVALID_REQUEST,
                            "session prefix '%s' is ambiguous; it matches:%s", id_or_prefix,
                            str_cstr(&list));
        str_free(&list);
    }
    for (size_t i = 0; i < m.n; i++)
        free(m.paths[i]);
    free(m.paths);
    free(m.exact);
    str_free(&projects);
    free(home);
    return rc;
}

int session_latest(const char *cwd, char **path, loom_error *err)
{
    *path = NULL;
    char *dir = store_project_dir(cwd);
    DIR *d = opendir(dir);
    char *best = NULL;
    struct timespec best_t = {0, 0};
    if (d) {
        struct dirent *e;
        while ((e = readdir(d)) != NULL) {
            size_t id_len;
            if (!is_session_file(e->d_name, &id_len))
                continue;
            char *p = path_join(dir, e->d_name);
            struct stat st;
            if (stat(p, &st) != 0 || !S_ISREG(st.st_mode)) {
                free(p);
                continue;
            }
            /* Equal mtimes (coarse clocks) fall back to the name: UUIDv7
             * ids sort by creation time. */
            int c = st.st_mtim.tv_sec != best_t.tv_sec
                        ? (st.st_mtim.tv_sec > best_t.tv_sec ? 1 : -1)
                        : (st.st_mtim.tv_nsec != best_t.tv_nsec
                               ? (st.st_mtim.tv_nsec > best_t.tv_nsec ? 1 : -1)
                               : 0);
            if (!best || c > 0 || (c == 0 && strcmp(p, best) > 0)) {
                free(best);
                best = p;
                best_t = st.st_mtim;
            } else {
                free(p);
            }
        }
        closedir(d);
    }
    int rc = 0;
    if (best)
        *path = best;
    else
        rc = loom_error_set(err, LOOM_ERR_RESOURCE_NOT_FOUND, "no session to continue in %s",
                            dir);
    free(dir);
    return rc;
}
