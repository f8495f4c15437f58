/* watch.c — what every watch source shares: freeing, and naming paths
 * relative to the working directory in summaries. */
#include "heartbeat/watch/watch.h"

#include <string.h>

void watch_source_free(watch_source *s)
{
    if (s && s->ops) {
        s->ops->free(s->ctx);
        s->ops = NULL;
        s->ctx = NULL;
    }
}

const char *watch_rel_path(const char *path, const char *cwd)
{
    if (!cwd)
        return path;
    size_t n = strlen(cwd);
    if (n == 1 && cwd[0] == '/')
        return path[0] == '/' && path[1] ? path + 1 : path;
    if (strncmp(path, cwd, n))
        return path;
    if (path[n] == '\0')
        return ".";
    if (path[n] == '/')
        return path + n + 1;
    return path;
}
