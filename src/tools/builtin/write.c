/* write.c — the Write tool: creates a file or replaces one whole.
 *
 * Replacing is allowed only for a file the model has read and that has not
 * changed since (file_state.h), so a write never silently discards what the
 * user or a formatter put there. Before the write the old content is backed
 * up for rewind (file_history.h); the write itself is atomic and keeps the
 * file's mode, and writes through a symlink to its target rather than
 * replacing the link. With a driver's port (tools/tool_io.h) the driver's
 * text is the file: the stale check compares it, the write goes to it.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/fileio.h"
#include "base/json.h"
#include "tools/builtin/builtin.h"
#include "tools/builtin/file_commit.h"
#include "session/file_history.h"
#include "tools/file_state.h"
#include "tools/tool_io.h"

static const char write_schema[] =
    "{\"type\":\"object\",\"properties\":{"
    "\"file_path\":{\"type\":\"string\",\"description\":\"Path of the file to write: absolute, "
    "or relative to the working directory.\"},"
    "\"content\":{\"type\":\"string\",\"description\":\"The complete new content of the "
    "file.\"}},"
    "\"required\":[\"file_path\",\"content\"],\"additionalProperties\":false}";

static const char write_description[] =
    "Writes a file, creating it (and any missing parent directories) or replacing all of its "
    "content. To replace an existing file you must have read it with Read in this session, and "
    "it must not have changed since; otherwise the write is refused and you should read it "
    "again. Prefer Edit for changing part of an existing file: it sends only the change. Do not "
    "create documentation or README files unless asked to.";

/* What a write will do, worked out before any change. */
typedef struct write_plan {
    char *path;      /* where the bytes go: the symlink target for an existing file */
    bool exists;
    int mode;        /* the existing file's mode, or -1 for a new file */
    bool driver;     /* the driver's port writes it (tools/tool_io.h) */
    loom_str before; /* with the port: the driver's text being replaced */
} write_plan;

static void plan_free(write_plan *p)
{
    free(p->path);
    str_free(&p->before);
    memset(p, 0, sizeof *p);
}

/* Checks everything that can be checked without writing. 0 = go ahead;
 * else 1 with why set to a message the model can act on. */
static int write_plan_make(const json_t *input, const tool_ctx *ctx, write_plan *p,
                           bool validating, loom_str *why)
{
    memset(p, 0, sizeof *p);
    const char *arg = json_get_str(input, "file_path", NULL);
    if (!arg || !*arg) {
        str_puts(why, "file_path is required: the path of the file to write.");
        return 1;
    }
    if (!json_is_string(json_object_get(input, "content"))) {
        str_puts(why, "content is required: the complete text of the file.");
        return 1;
    }
    char *path = tool_resolve_path(ctx, arg);
    if (TOOL_IO_FILES(ctx->io)) {
        p->driver = true;
        p->mode = -1;
        if (file_driver_current(ctx, "Write", path, &p->exists,
                                validating ? NULL : &p->before, why) != 0) {
            free(path);
            return 1;
        }
        p->path = path;
        return 0;
    }
    struct stat st;
    if (stat(path, &st) != 0) {
        int e = errno;
        if (e != ENOENT) {
            str_printf(why, "Cannot write %s: %s", path, strerror(e));
            free(path);
            return 1;
        }
        p->path = path;
        p->mode = -1;
        return 0;
    }
    if (S_ISDIR(st.st_mode)) {
        str_printf(why, "%s is a directory; Write needs the path of a file.", path);
        free(path);
        return 1;
    }
    if (!S_ISREG(st.st_mode)) {
        str_printf(why, "%s is not a regular file (a device, pipe or socket); Write only "
                        "writes files.", path);
        free(path);
        return 1;
    }
    char *real = realpath(path, NULL);
    if (real) {
        free(path);
        path = real;
    }
    if (file_state_check(ctx->files, path, why) != 0) {
        free(path);
        return 1;
    }
    p->path = path;
    p->exists = true;
    p->mode = (int)(st.st_mode & 07777);
    return 0;
}

static int write_validate(const json_t *input, const tool_ctx *ctx, loom_str *why)
{
    write_plan p;
    int rc = write_plan_make(input, ctx, &p, true, why);
    plan_free(&p);
    return rc;
}

static int write_run(const json_t *input, tool_ctx *ctx, tool_result *out)
{
    write_plan p;
    loom_str why = LOOM_STR_INIT;
    if (write_plan_make(input, ctx, &p, false, &why) != 0) {
        tool_error(out, "%s", str_cstr(&why));
        str_free(&why);
        return 0;
    }
    str_free(&why);
    json_t *content = json_object_get(input, "content");
    /* The length, not strlen: the content is written exactly as given. */
    const char *data = json_string_value(content);
    size_t len = json_string_length(content);
    /* What the file held, for the result's structuredPatch. */
    char *before = NULL;
    size_t before_len = 0;
    loom_error ignore;
    struct stat was;
    if (p.driver && p.exists)
        before_len = p.before.len, before = str_steal(&p.before);
    else if (p.exists && stat(p.path, &was) == 0 && (size_t)was.st_size <= TOOL_PATCH_MAX_FILE &&
        file_read_all(p.path, &before, &before_len, &ignore) != 0)
        before = NULL;
    if (file_commit(ctx, p.path, p.exists, data, len, p.mode, out) == 0) {
        if (p.exists)
            str_printf(&out->text, "The file %s has been updated.", p.path);
        else
            str_printf(&out->text, "File created successfully at: %s", p.path);
        out->raw = json_pack("{s:s, s:s, s:I}", "type", p.exists ? "update" : "create",
                             "filePath", p.path, "bytes", (json_int_t)len);
        if (!p.exists || before) /* an unread old file is not an empty one */
            tool_raw_patch(out->raw, before, before_len, data, len);
    }
    free(before);
    plan_free(&p);
    return 0;
}

const tool_def tool_write = {
    .name = "Write",
    .description = write_description,
    .input_schema = write_schema,
    .read_only = false,
    .concurrency_safe = false,
    .validate = write_validate,
    .run = write_run,
};
