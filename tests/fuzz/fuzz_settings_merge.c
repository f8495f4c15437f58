/* fuzz_settings_merge.c — settings_merge (base/settings.h) over two
 * arbitrary documents, a Claude Code file and a Loom file of one level
 * (the input's bytes before and after its first NUL; a repository writes
 * both). Of two documents the schema accepts, the merge must keep every
 * deny and ask rule of either (the fail-closed promise of docs/compat.md),
 * Claude Code's first, and give an object; a crash or leak is a bug. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/json.h"
#include "base/settings.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static json_t *parse(const char *text, size_t len)
{
    loom_error err;
    json_t *doc = json_parse(text, len, "F", &err);
    if (doc && settings_check(doc, "F", NULL, &err) != 0) {
        json_decref(doc);
        return NULL;
    }
    return doc;
}

static const json_t *rules(const json_t *doc, const char *key)
{
    return json_object_get(json_object_get(doc, "permissions"), key);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *text = (const char *)data;
    const char *nul = memchr(text, '\0', size);
    size_t first = nul ? (size_t)(nul - text) : size;
    json_t *claude = parse(text, first);
    json_t *loom = nul ? parse(nul + 1, size - first - 1) : NULL;
    json_t *before_c = claude ? json_deep_copy(claude) : NULL;
    json_t *before_l = loom ? json_deep_copy(loom) : NULL;
    json_t *m = settings_merge(claude, loom);
    if ((claude || loom) != (m != NULL) || (m && !json_is_object(m)))
        abort();
    /* The inputs are left as they were. */
    if ((claude && !json_equal(claude, before_c)) || (loom && !json_equal(loom, before_l)))
        abort();
    static const char *const keys[] = {"deny", "ask"};
    for (size_t k = 0; k < 2 && m; k++) {
        const json_t *c = rules(claude, keys[k]), *l = rules(loom, keys[k]);
        const json_t *got = rules(m, keys[k]);
        size_t nc = json_array_size(c), nl = json_array_size(l);
        if (json_array_size(got) != nc + nl)
            abort();
        for (size_t i = 0; i < nc; i++)
            if (!json_equal(json_array_get(got, i), json_array_get(c, i)))
                abort();
        for (size_t i = 0; i < nl; i++)
            if (!json_equal(json_array_get(got, nc + i), json_array_get(l, i)))
                abort();
    }
    json_decref(m);
    json_decref(claude);
    json_decref(loom);
    json_decref(before_c);
    json_decref(before_l);
    return 0;
}
