/* warn_list.h — the warnings a loader collects for its caller to show: the
 * agent, command, skill and style catalogs each keep one, filled from their
 * parsers' warn callbacks (warn_list_sink) and from ext_dirs_for's notices
 * (warn_list_add_strings), read back by index.
 *
 * The list owns its strings. Not synchronised: filled by the one thread that
 * builds its owner, read-only afterwards. */
#ifndef LOOM_BASE_WARN_LIST_H
#define LOOM_BASE_WARN_LIST_H

#include <stddef.h>

#include "base/json.h"

typedef struct warn_list {
    char **v;
    size_t n;
} warn_list;  /* zero-initialised is empty */

/* Appends a copy of msg. */
void warn_list_add(warn_list *w, const char *msg);
void warn_list_addf(warn_list *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Appends every string item of a JSON array (others and a NULL are skipped). */
void warn_list_add_strings(warn_list *w, const json_t *array);
/* warn_list_add as a parser's `void (*warn)(void *ctx, const char *msg)`,
 * ctx being the warn_list. */
void warn_list_sink(void *ctx, const char *msg);
/* How many, and the i-th (NULL past the end or for a NULL list). */
size_t warn_list_count(const warn_list *w);
const char *warn_list_at(const warn_list *w, size_t i);
/* Frees the strings; the list is empty again. */
void warn_list_free(warn_list *w);

#endif
