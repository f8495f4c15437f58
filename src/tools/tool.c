/* tool.c — small helpers every tool uses: results and path resolution. */
#include "tools/tool.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

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
    /* Fold "." and ".." component by component; ".." at the root stays at the root. */
    char *src = str_steal(&joined);
    size_t n = strlen(src);
    char *out = xmalloc(n + 2);
    size_t o = 0;
    for (size_t i = 0; i < n;) {
        while (i < n && src[i] == '/')
            i++;
        size_t start = i;
        while (i < n && src[i] != '/')
            i++;
        size_t len = i - start;
        if (len == 0 || (len == 1 && src[start] == '.'))
            continue;
        if (len == 2 && src[start] == '.' && src[start + 1] == '.') {
            while (o > 0 && out[o - 1] != '/')
                o--;
            if (o > 0)
                o--;
            continue;
        }
        out[o++] = '/';
        memcpy(out + o, src + start, len);
        o += len;
    }
    if (o == 0)
        out[o++] = '/';
    out[o] = '\0';
    free(src);
    return out;
}
