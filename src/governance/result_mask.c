/* result_mask.c — masking credentials in a tool result (result_mask.h).
 * Threading: none. */
#include "governance/result_mask.h"

#include <stdlib.h>
#include <string.h>

#include "base/str.h"
#include "policy/secret_scan.h"

/* Every string inside v (objects and arrays walked), masked in place. */
static size_t mask_json(json_t *v, int depth)
{
    size_t n = 0;
    if (depth > 64)
        return 0; /* raw metadata is shallow; a deeper tree is not ours */
    if (json_is_string(v)) {
        size_t k = 0;
        char *m = secret_mask(json_string_value(v), json_string_length(v), &k);
        if (k)
            json_string_set(v, m);
        free(m);
        return k;
    }
    if (json_is_object(v)) {
        const char *key;
        json_t *x;
        json_object_foreach(v, key, x)
            n += mask_json(x, depth + 1);
    } else if (json_is_array(v)) {
        size_t i;
        json_t *x;
        json_array_foreach(v, i, x)
            n += mask_json(x, depth + 1);
    }
    return n;
}

size_t result_mask(tool_result *res)
{
    size_t n = 0;
    if (res->text.len) {
        size_t k = 0;
        char *m = secret_mask(res->text.ptr, res->text.len, &k);
        if (k) {
            /* The old buffer held the values: wipe it before letting go. */
            memset(res->text.ptr, 0, res->text.len);
            str_clear(&res->text);
            str_puts(&res->text, m);
            n += k;
        }
        free(m);
    }
    if (res->raw)
        n += mask_json(res->raw, 0);
    if (n) {
        str_printf(&res->text,
                   "\n\n[Loom: %zu secret value%s (API keys, tokens or private keys) in this "
                   "output %s masked as [REDACTED:…]; the real value%s neither sent to you nor "
                   "saved. Refer to %s by where %s came from (the file or variable), not by "
                   "value.]",
                   n, n == 1 ? "" : "s", n == 1 ? "was" : "were", n == 1 ? " is" : "s are",
                   n == 1 ? "it" : "them", n == 1 ? "it" : "they");
        if (json_is_object(res->raw))
            json_object_set_new(res->raw, "secretsMasked", json_integer((json_int_t)n));
    }
    return n;
}
