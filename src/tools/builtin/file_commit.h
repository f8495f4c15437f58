/* file_commit.h — the one way a tool changes a file: back it up into the
 * file history (the snapshot record goes to the session), create missing
 * parent directories, write atomically, remember the new state. Write and
 * Edit both end here. */
#ifndef LOOM_TOOLS_BUILTIN_FILE_COMMIT_H
#define LOOM_TOOLS_BUILTIN_FILE_COMMIT_H

#include <stdbool.h>
#include <stddef.h>

#include "tools/tool.h"

/* 0, or -1 with an error result already set in out. mode < 0: a new file
 * (created with the umask). */
int file_commit(tool_ctx *ctx, const char *path, bool exists, const void *data, size_t len,
                int mode, tool_result *out);

#endif
