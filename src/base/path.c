/* path.c — joining, making absolute and folding paths (see path.h). No
 * state. */
#include "base/path.h"

#include <limits.h>
#include <stdbool.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/str.h"

char *path_fold(const char *abs)
{
    size_t n = strlen(abs);
    char *out = xmalloc(n + 2);
    size_t o = 0;
    for (size_t i = 0; i < n;) {
        while (i < n && abs[i] == '/')
            i++;
        size_t start = i;
        while (i < n && abs[i] != '/')
            i++;
        size_t len = i - start;
        if (len == 0 || (len == 1 && abs[start] == '.'))
            continue;
        if (len == 2 && abs[start] == '.' && abs[start + 1] == '.') {
            while (o > 0 && out[o - 1] != '/')
                o--;
            if (o > 0)
                o--;
            continue;
        }
        out[o++] = '/';
        memcpy(out + o, abs + start, len);
        o += len;
    }
    if (o == 0)
        out[o++] = '/';
    out[o] = '\0';
    return out;
}

char *path_join(const char *dir, const char *name)
{
    if (name[0] == '/')
        return xstrdup(name);
    loom_str s = LOOM_STR_INIT;
    str_puts(&s, dir && *dir ? dir : "/");
    if (s.ptr[s.len - 1] != '/')
        str_putc(&s, '/');
    str_puts(&s, name);
    return str_steal(&s);
}

char *path_make_absolute(const char *path, const char *base)
{
    const char *home = getenv("HOME");
    char *joined;
    if (path[0] == '~' && (path[1] == '/' || !path[1]) && home && home[0] == '/') {
        joined = path_join(home, path[1] ? path + 2 : "");
    } else {
        char cwd[PATH_MAX];
        if (!base && path[0] != '/')
            base = getcwd(cwd, sizeof cwd) ? cwd : "/";
        joined = path_join(base, path);
    }
    char *out = path_fold(joined);
    free(joined);
    return out;
}

char *path_repo_root(const char *dir)
{
    char *path = xstrdup(dir);
    for (;;) {
        loom_str g = LOOM_STR_INIT;
        str_printf(&g, "%s/.git", strcmp(path, "/") == 0 ? "" : path);
        struct stat st;
        bool found = stat(g.ptr, &st) == 0;
        str_free(&g);
        if (found)
            return path;
        char *slash = strrchr(path, '/');
        if (!slash || strcmp(path, "/") == 0) {
            free(path);
            return NULL;
        }
        if (slash == path)
            slash[1] = '\0';
        else
            *slash = '\0';
    }
}
