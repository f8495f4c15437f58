/* warn_list.c — a growable list of owned warning strings (warn_list.h).
 * No state of its own; one list is not to be filled from two threads. */
#include "base/warn_list.h"

#include <stdarg.h>
#include <stdlib.h>

#include "base/str.h"

void warn_list_add(warn_list *w, const char *msg)
{
    w->v = xrealloc(w->v, (w->n + 1) * sizeof *w->v);
    w->v[w->n++] = xstrdup(msg);
}

void warn_list_addf(warn_list *w, const char *fmt, ...)
{
    loom_str s = LOOM_STR_INIT;
    va_list ap;
    va_start(ap, fmt);
    str_vprintf(&s, fmt, ap);
    va_end(ap);
    w->v = xrealloc(w->v, (w->n + 1) * sizeof *w->v);
    w->v[w->n++] = str_steal(&s);
}

void warn_list_add_strings(warn_list *w, const json_t *array)
{
    size_t i;
    const json_t *item;
    json_array_foreach(array, i, item) if (json_is_string(item))
        warn_list_add(w, json_string_value(item));
}

void warn_list_sink(void *ctx, const char *msg)
{
    warn_list_add(ctx, msg);
}

size_t warn_list_count(const warn_list *w)
{
    return w ? w->n : 0;
}

const char *warn_list_at(const warn_list *w, size_t i)
{
    return w && i < w->n ? w->v[i] : NULL;
}

void warn_list_free(warn_list *w)
{
    for (size_t i = 0; i < w->n; i++)
        free(w->v[i]);
    free(w->v);
    w->v = NULL;
    w->n = 0;
}
