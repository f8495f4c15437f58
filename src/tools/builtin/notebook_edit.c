/* notebook_edit.c — the NotebookEdit tool, with Claude Code's name and
 * input: replace, insert or delete one cell of a Jupyter notebook
 * (notebook.h). Like Write and Edit it changes only a notebook the model
 * has read and nobody changed since (file_state.h), and the change goes
 * through file_commit: backed up for rewind, written atomically. Governance
 * treats it as a file edit of notebook_path (policy/rule.c's edit tools). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/fileio.h"
#include "base/json.h"
#include "tools/builtin/builtin.h"
#include "tools/builtin/file_commit.h"
#include "tools/builtin/notebook.h"
#include "tools/file_state.h"
#include "tools/tool_io.h"

static const char notebook_edit_schema[] =
    "{\"type\":\"object\",\"properties\":{"
    "\"notebook_path\":{\"type\":\"string\",\"description\":\"Path of the .ipynb notebook: "
    "absolute, or relative to the working directory.\"},"
    "\"cell_id\":{\"type\":\"string\",\"description\":\"The cell to change, as Read shows it "
    "(its id, or cell-N for the N-th cell from 0). For insert, the new cell goes after it, or "
    "first when it is left out.\"},"
    "\"new_source\":{\"type\":\"string\",\"description\":\"The new source of the cell.\"},"
    "\"cell_type\":{\"type\":\"string\",\"enum\":[\"code\",\"markdown\"],\"description\":"
    "\"The cell's type: required for insert; on replace it may change the type.\"},"
    "\"edit_mode\":{\"type\":\"string\",\"enum\":[\"replace\",\"insert\",\"delete\"],"
    "\"description\":\"replace (the default), insert or delete.\"}},"
    "\"required\":[\"notebook_path\",\"new_source\"],\"additionalProperties\":false}";

static const char notebook_edit_description[] =
    "Changes one cell of a Jupyter notebook (.ipynb): replaces its source, inserts a new cell "
    "after it, or deletes it, keeping the rest of the notebook (other cells, their outputs, "
    "metadata) as it is. A replaced or inserted code cell has no outputs until it is run. Read "
    "the notebook first: cells are named by the ids Read shows. Use this rather than Edit or "
    "Write on a notebook's JSON.";

/* The notebook's current text: the driver's (tools/tool_io.h) or the
 * file's, after the read-cache check. 0, or 1 with why set. */
static int current_text(const tool_ctx *ctx, const char *path, bool validating, loom_str *text,
                        int *mode, loom_str *why)
{
    *mode = -1;
    if (TOOL_IO_FILES(ctx->io)) {
        bool exists = false;
        if (file_driver_current(ctx, "NotebookEdit", path, &exists, validating ? NULL : text,
                                why) != 0)
            return 1;
        if (!exists) {
            str_printf(why, "%s does not exist; NotebookEdit changes an existing notebook "
                            "(create one with Write).", path);
            return 1;
        }
        return 0;
    }
    struct stat st;
    if (stat(path, &st) != 0) {
        str_printf(why, "Cannot edit %s: %s", path, strerror(errno));
        return 1;
    }
    if (!S_ISREG(st.st_mode)) {
        str_printf(why, "%s is not a regular file; NotebookEdit changes .ipynb files.", path);
        return 1;
    }
    if ((size_t)st.st_size > NOTEBOOK_MAX_BYTES) {
        str_printf(why, "The notebook %s is larger than %zu bytes.", path, NOTEBOOK_MAX_BYTES);
        return 1;
    }
    if (file_state_check(ctx->files, path, why) != 0)
        return 1;
    *mode = (int)(st.st_mode & 07777);
    if (validating)
        return 0;
    char *data = NULL;
    size_t len = 0;
    loom_error err;
    if (file_read_all(path, &data, &len, &err) != 0) {
        str_printf(why, "Cannot read %s: %s", path, err.message);
        return 1;
    }
    str_append(text, data, len);
    free(data);
    return 0;
}

/* Resolves and checks the path (the real file behind a symlink). NULL with
 * why set when the input cannot be right. */
static char *notebook_target(const json_t *input, const tool_ctx *ctx, loom_str *why)
{
    const char *arg = json_get_str(input, "notebook_path", NULL);
    if (!arg || !*arg) {
        str_puts(why, "notebook_path is required: the path of the .ipynb file.");
        return NULL;
    }
    if (!json_is_string(json_object_get(input, "new_source"))) {
        str_puts(why, "new_source is required (an empty string to delete a cell).");
        return NULL;
    }
    char *path = tool_resolve_path(ctx, arg);
    if (!notebook_path(path)) {
        str_printf(why, "%s is not a notebook (.ipynb); use Edit for other files.", path);
        free(path);
        return NULL;
    }
    char *real = TOOL_IO_FILES(ctx->io) ? NULL : realpath(path, NULL);
    if (real) {
        free(path);
        path = real;
    }
    return path;
}

static int notebook_edit_validate(const json_t *input, const tool_ctx *ctx, loom_str *why)
{
    char *path = notebook_target(input, ctx, why);
    if (!path)
        return 1;
    int mode;
    int rc = current_text(ctx, path, true, NULL, &mode, why);
    free(path);
    return rc;
}

static int notebook_edit_run(const json_t *input, tool_ctx *ctx, tool_result *out)
{
    loom_str why = LOOM_STR_INIT, before = LOOM_STR_INIT;
    char *path = notebook_target(input, ctx, &why);
    int mode = -1;
    json_t *nb = NULL;
    char *touched = NULL;
    if (!path || current_text(ctx, path, false, &before, &mode, &why) != 0 ||
        !(nb = notebook_parse(path, before.ptr ? before.ptr : "", before.len, &why)) ||
        notebook_edit(nb, json_get_str(input, "edit_mode", NULL),
                      json_get_str(input, "cell_id", NULL), json_get_str(input, "cell_type", NULL),
                      json_get_str(input, "new_source", ""), &touched, &why) != 0) {
        tool_error(out, "%s", str_cstr(&why));
    } else {
        size_t len = 0;
        char *after = notebook_dump(nb, &len);
        const char *edit = json_get_str(input, "edit_mode", "replace");
        if (file_commit(ctx, path, true, after, len, mode, out) == 0) {
            str_printf(&out->text, "%s cell %s of %s.",
                       !strcmp(edit, "insert")   ? "Inserted"
                       : !strcmp(edit, "delete") ? "Deleted"
                                                 : "Updated",
                       touched, path);
            out->raw = json_pack("{s:s, s:s, s:s, s:s, s:I}", "type", "notebook_edit",
                                 "filePath", path, "edit_mode", edit, "cell_id", touched,
                                 "cells",
                                 (json_int_t)json_array_size(json_object_get(nb, "cells")));
            tool_raw_patch(out->raw, before.ptr ? before.ptr : "", before.len, after, len);
        }
        free(after);
    }
    free(touched);
    json_decref(nb);
    free(path);
    str_free(&why);
    str_free(&before);
    return 0;
}

const tool_def tool_notebook_edit = {
    .name = "NotebookEdit",
    .description = notebook_edit_description,
    .input_schema = notebook_edit_schema,
    .read_only = false,
    .concurrency_safe = false,
    .validate = notebook_edit_validate,
    .run = notebook_edit_run,
};
