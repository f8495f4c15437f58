/* path.c — lexical folding of absolute paths. */
#include "base/path.h"

#include <string.h>

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
