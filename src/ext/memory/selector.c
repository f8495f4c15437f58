/* selector.c — the optional model selector (see selector.h). Threading:
 * the caller's. */
#include "ext/memory/selector.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/clock.h"
#include "base/str.h"
#include "context/memory_sanitize.h"

static const char selector_system[] =
    "You select memories that will clearly help with a user's query. You are the memory "
    "selector; you have no tools. Answer with one JSON object and nothing else.";

static int by_mtime_desc(const void *a, const void *b)
{
    const memory_entry *x = *(const memory_entry *const *)a, *y = *(const memory_entry *const *)b;
    return x->mtime_ms < y->mtime_ms ? 1 : x->mtime_ms > y->mtime_ms ? -1 : 0;
}

static bool skipped(const json_t *skip, const char *path)
{
    size_t i;
    json_t *v;
    json_array_foreach(skip, i, v)
        if (!strcmp(json_string_value(v) ? json_string_value(v) : "", path))
            return true;
    return false;
}

json_t *memory_selector_parse(const char *text, const char *const *names)
{
    const char *key = text ? strstr(text, "\"selected_memories\"") : NULL;
    if (!key)
        return NULL;
    const char *open = key;
    while (open > text && *open != '{')
        open--;
    const char *close = strrchr(text, '}');
    if (*open != '{' || !close || close < key)
        return NULL;
    json_t *doc = json_loadb(open, (size_t)(close - open) + 1, 0, NULL);
    const json_t *arr = json_object_get(doc, "selected_memories");
    if (!json_is_array(arr)) {
        json_decref(doc);
        return NULL;
    }
    json_t *out = json_array();
    size_t i;
    json_t *v;
    json_array_foreach(arr, i, v) {
        const char *f = json_string_value(v);
        for (size_t k = 0; f && names[k]; k++)
            if (!strcmp(names[k], f)) {
                json_array_append_new(out, json_string(f));
                break;
            }
    }
    json_decref(doc);
    return out;
}

int memory_select_by_model(const memory_entry *v, size_t n, const char *goal,
                           const json_t *skip, int64_t now_ms, memory_helper_req call,
                           const loom_cancel *cancel, size_t max, memory_pick *out, size_t *got,
                           msg_usage *usage, loom_str *why)
{
    *got = 0;
    const memory_entry **order = xcalloc(n ? n : 1, sizeof *order);
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        if (!skip || !skipped(skip, v[i].path))
            order[m++] = &v[i];
    if (m > 1)
        qsort(order, m, sizeof *order, by_mtime_desc);
    if (m > MEMORY_MANIFEST_MAX)
        m = MEMORY_MANIFEST_MAX;
    if (!m) {
        free(order);
        return 0;
    }
    const char **names = xcalloc(m + 1, sizeof *names);
    loom_str prompt = LOOM_STR_INIT;
    str_printf(&prompt, "Query: %s\n\nAvailable memories:\n", goal);
    for (size_t i = 0; i < m; i++) {
        char ts[32];
        clock_iso8601(order[i]->mtime_ms, ts);
        names[i] = order[i]->slug;
        loom_str line = LOOM_STR_INIT;
        str_printf(&line, "- [%s] %s.md (%s): %s: %s\n", order[i]->type ? order[i]->type : "memory",
                   order[i]->slug, ts, order[i]->name, order[i]->description);
        char *clean = memory_sanitize(line.ptr, line.len, NULL);
        str_puts(&prompt, clean);
        free(clean);
        str_free(&line);
    }
    str_printf(&prompt, "\nSelect at most %zu memories that will clearly be useful for the "
                        "query. If you are unsure if a memory will be useful, do not include "
                        "it. Keep warnings, gotchas and known issues. Answer exactly "
                        "{\"selected_memories\": [\"<file without .md>\", ...]}.", max);
    call.system = selector_system;
    call.user = prompt.ptr;
    char *text = NULL;
    loom_error err;
    loom_error_clear(&err);
    int rc = memory_helper_call(&call, cancel, &text, usage, &err);
    str_free(&prompt);
    if (rc != 0) {
        str_printf(why, "the memory selector's call failed: %s", err.message);
        free(names);
        free(order);
        return -1;
    }
    json_t *sel = memory_selector_parse(text, names);
    free(text);
    if (!sel) {
        str_puts(why, "the memory selector's answer has no {\"selected_memories\": [...]}");
        free(names);
        free(order);
        return -1;
    }
    size_t i;
    json_t *f;
    json_array_foreach(sel, i, f) {
        if (*got >= max)
            break;
        bool dup = false;
        for (size_t d = 0; d < *got && !dup; d++)
            dup = !strcmp(v[out[d].index].slug, json_string_value(f));
        for (size_t k = 0; k < m && !dup; k++) {
            if (strcmp(names[k], json_string_value(f)) != 0)
                continue;
            memory_pick p = {.index = (size_t)(order[k] - v)};
            memory_score(order[k], goal, now_ms, &p);
            out[(*got)++] = p;
            break;
        }
    }
    json_decref(sel);
    free(names);
    free(order);
    return 0;
}
