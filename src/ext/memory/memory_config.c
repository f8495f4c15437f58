/* memory_config.c — the "memory" settings (see memory_config.h). Threading:
 * none. */
#include "ext/memory/memory_config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/json.h"

static void warn_key(loom_str *warn, const char *key, const char *want)
{
    if (warn)
        str_printf(warn, "%smemory.%s must be %s; the default is used",
                   warn->len ? "; " : "", key, want);
}

static void read_bool(const json_t *o, const char *key, const char *full, bool *out,
                      loom_str *warn)
{
    const json_t *v = json_object_get(o, key);
    if (!v)
        return;
    if (json_is_boolean(v))
        *out = json_is_true(v);
    else
        warn_key(warn, full, "true or false");
}

static void read_int(const json_t *o, const char *key, const char *full, int lo, int hi,
                     int *out, loom_str *warn)
{
    const json_t *v = json_object_get(o, key);
    if (!v)
        return;
    if (json_is_integer(v) && json_integer_value(v) >= lo && json_integer_value(v) <= hi)
        *out = (int)json_integer_value(v);
    else {
        char want[64];
        snprintf(want, sizeof want, "an integer from %d to %d", lo, hi);
        warn_key(warn, full, want);
    }
}

static void read_str(const json_t *o, const char *key, const char *full, char **out,
                     loom_str *warn)
{
    const json_t *v = json_object_get(o, key);
    if (!v || json_is_null(v))
        return;
    if (json_is_string(v) && json_string_length(v) > 0 && json_string_length(v) < 200) {
        free(*out);
        *out = xstrdup(json_string_value(v));
    } else {
        warn_key(warn, full, "a model name");
    }
}

void memory_config_read(json_t *const *files, size_t n, memory_config *c, loom_str *warn)
{
    memset(c, 0, sizeof *c);
    c->extract_max_tokens = MEMORY_EXTRACT_MAX_TOKENS;
    c->min_chars = MEMORY_EXTRACT_MIN_CHARS;
    c->recall = true;
    c->recall_max_entries = MEMORY_RECALL_MAX_ENTRIES;
    c->recall_max_bytes = MEMORY_RECALL_MAX_BYTES;
    for (size_t i = 0; i < n; i++) {
        const json_t *m = files[i] ? json_object_get(files[i], "memory") : NULL;
        if (!m)
            continue;
        if (!json_is_object(m)) {
            warn_key(warn, "", "an object");
            continue;
        }
        const json_t *x = json_object_get(m, "extraction");
        if (json_is_boolean(x)) {
            c->extract = json_is_true(x);
        } else if (json_is_object(x)) {
            read_bool(x, "enabled", "extraction.enabled", &c->extract, warn);
            read_str(x, "model", "extraction.model", &c->extract_model, warn);
            read_int(x, "max_tokens", "extraction.max_tokens", 64, 16384,
                     &c->extract_max_tokens, warn);
            read_int(x, "min_chars", "extraction.min_chars", 0, 100000, &c->min_chars, warn);
        } else if (x) {
            warn_key(warn, "extraction", "true, false or an object");
        }
        const json_t *r = json_object_get(m, "recall");
        if (json_is_boolean(r)) {
            c->recall = json_is_true(r);
        } else if (json_is_object(r)) {
            read_bool(r, "enabled", "recall.enabled", &c->recall, warn);
            read_int(r, "max_entries", "recall.max_entries", 0, MEMORY_RECALL_MAX_ENTRIES,
                     &c->recall_max_entries, warn);
            read_int(r, "max_bytes", "recall.max_bytes", 256, 64000, &c->recall_max_bytes,
                     warn);
        } else if (r) {
            warn_key(warn, "recall", "true, false or an object");
        }
        const json_t *s = json_object_get(m, "selector");
        if (json_is_object(s))
            read_str(s, "model", "selector.model", &c->selector_model, warn);
        else if (s)
            warn_key(warn, "selector", "an object");
    }
    /* seed 001 §11.10 gate 1: the environment first. */
    const char *env = getenv("LOOM_MEMORY_EXTRACTION");
    if (env && (!strcmp(env, "1") || !strcmp(env, "true")))
        c->extract = true;
    else if (env && (!strcmp(env, "0") || !strcmp(env, "false")))
        c->extract = false;
}

void memory_config_free(memory_config *c)
{
    free(c->extract_model);
    free(c->selector_model);
    memset(c, 0, sizeof *c);
}
