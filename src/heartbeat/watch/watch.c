/* watch.c — what every watch source shares: the table of their ops,
 * freeing, and naming paths relative to the working directory in
 * summaries. No state beyond the constant table; any thread. */
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

/* Indexed by watch_type. */
static const watch_ops *const all_ops[] = {
    [WATCH_FILESYSTEM] = &watch_fs_ops,     [WATCH_PROCESS] = &watch_process_ops,
    [WATCH_MF_EVENTS] = &watch_mf_ops,      [WATCH_RESOURCE] = &watch_resource_ops,
    [WATCH_EXTERNAL_SIGNAL] = &watch_signal_ops,
};

const watch_ops *watch_ops_named(const char *name)
{
    for (size_t i = 0; name && i < sizeof all_ops / sizeof *all_ops; i++)
        if (!strcmp(all_ops[i]->name, name))
            return all_ops[i];
    return NULL;
}

const watch_ops *watch_ops_of(watch_type t)
{
    return (unsigned)t < sizeof all_ops / sizeof *all_ops ? all_ops[t] : NULL;
}
