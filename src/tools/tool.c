/* tool.c — small helpers every tool uses: results and path resolution. */
#include "tools/tool.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "base/path.h"

void tool_result_init(tool_result *r)
{
    memset(r, 0, sizeof *r);
}

void tool_result_free(tool_result *r)
{
    str_free(&r->text);
    json_decref(r->raw);
    free(r->image_media_type);
    free(r->image_data);
    memset(r, 0, sizeof *r);
}

int tool_error(tool_result *r, const char *fmt, ...)
{
    str_clear(&r->text);
    va_list ap;
    va_start(ap, fmt);
    str_vprintf(&r->text, fmt, ap);
    va_end(ap);
    r->is_error = true;
    return 0;
}

char *tool_resolve_path(const tool_ctx *ctx, const char *path)
{
    loom_str joined = LOOM_STR_INIT;
    if (path[0] != '/') {
        str_puts(&joined, ctx->cwd ? ctx->cwd : "/");
        str_putc(&joined, '/');
    }
    str_puts(&joined, path);
    char *src = str_steal(&joined);
    char *out = path_fold(src);
    free(src);
    return out;
}
