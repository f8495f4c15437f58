/* file_commit.h — the one way a tool changes a file: back it up into the
 * file history (the snapshot record goes to the session), create missing
 * parent directories, write atomically, remember the new state. Write and
 * Edit both end here. */
#ifndef LOOM_TOOLS_BUILTIN_FILE_COMMIT_H
#define LOOM_TOOLS_BUILTIN_FILE_COMMIT_H

#include <stdbool.h>
#include <stddef.h>

#include "base/json.h"
#include "tools/tool.h"

/* 0, or -1 with an error result already set in out. mode < 0: a new file
 * (created with the umask). */
int file_commit(tool_ctx *ctx, const char *path, bool exists, const void *data, size_t len,
                int mode, tool_result *out);

/* With a driver's port (TOOL_IO_FILES, tools/tool_io.h): what a Write or
 * Edit of *path (resolved, absolute) replaces. A file the session read or
 * wrote is the driver's: its text now comes back in text (*exists true),
 * after the stale check against the read cache. A file never read is
 * refused when it is on disk (read it first), else it is new (*exists
 * false). Directories and devices are refused as without a port; tool
 * names the caller in the message. text NULL (the tool's validate, which
 * runs before the pipeline's decision): nothing is asked of the driver, a
 * file read before counts as existing. 0 = go ahead; 1 with why set to a
 * message the model can act on. */
int file_driver_current(const tool_ctx *ctx, const char *tool, const char *path, bool *exists,
                        loom_str *text, loom_str *why);

/* Adds Claude Code's structuredPatch (base/diff.h, 3 lines of context) of
 * before -> after to raw, the result's metadata: the REPL draws the diff
 * from it. Left out when the patch would pass TOOL_PATCH_MAX_LINES lines
 * (a whole file rewritten), so the session does not carry the file twice,
 * and for a file of more than TOOL_PATCH_MAX_FILE bytes.
 * before NULL: a new file. */
#define TOOL_PATCH_MAX_LINES 2000
#define TOOL_PATCH_MAX_FILE ((size_t)4 << 20) /* bytes: bigger files get no patch */
void tool_raw_patch(json_t *raw, const char *before, size_t before_len, const char *after,
                    size_t after_len);

#endif
