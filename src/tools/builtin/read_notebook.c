/* read_notebook.c — Read of a Jupyter notebook (read_notebook.h). */
#include "tools/builtin/read_notebook.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "base/fileio.h"
#include "base/hash.h"
#include "tools/builtin/notebook.h"
#include "tools/file_state.h"

int read_notebook(tool_result *out, tool_ctx *ctx, const char *path, int fd,
                  const struct stat *st, const unsigned char *head, size_t hn, size_t max)
{
    if ((size_t)st->st_size > NOTEBOOK_MAX_BYTES)
        return tool_error(out, "The notebook %s is %lld bytes, more than the %zu Read shows as "
                               "cells; read part of it as text with offset and limit.",
                          path, (long long)st->st_size, NOTEBOOK_MAX_BYTES);
    loom_str data = LOOM_STR_INIT;
    str_append(&data, (const char *)head, hn);
    int rc = file_read_fd(fd, NOTEBOOK_MAX_BYTES - hn, &data);
    if (rc != 0) {
        int e = errno;
        str_free(&data);
        if (rc < 0)
            return tool_error(out, "Cannot read %s: %s", path, strerror(e));
        return tool_error(out, "The notebook %s grew past %zu bytes while being read.", path,
                          NOTEBOOK_MAX_BYTES);
    }
    loom_str why = LOOM_STR_INIT;
    json_t *nb = notebook_parse(path, data.ptr ? data.ptr : "", data.len, &why);
    if (!nb) {
        tool_error(out, "%s Read it as text with offset and limit to see the JSON.",
                   str_cstr(&why));
    } else {
        notebook_render(nb, path, max, &out->text);
        out->raw = json_pack("{s:s, s:s, s:I}", "filePath", path, "type", "notebook", "cells",
                             (json_int_t)json_array_size(json_object_get(nb, "cells")));
        file_state_note(ctx->files, path, st,
                        hash_fnv1a64(FILE_STATE_HASH_SEED, data.ptr, data.len));
        json_decref(nb);
    }
    str_free(&why);
    str_free(&data);
    return 0;
}
