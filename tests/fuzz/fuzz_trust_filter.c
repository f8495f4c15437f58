/* fuzz_trust_filter.c — the tighten-only filter for an untrusted folder's
 * settings (policy/trust.h) over arbitrary JSON: the repository writes
 * these files. A crash or leak is a bug, and so is a kept document that
 * still loosens: filtering what was kept again must keep all of it and
 * report nothing but the hooks (which are kept, and reported, on purpose). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "policy/trust.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static size_t hook_events(const json_t *doc)
{
    const json_t *h = json_object_get(doc, "hooks");
    return json_is_object(h) ? json_object_size(h) : 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    json_error_t jerr;
    json_t *doc = json_loadb((const char *)data, size, 0, &jerr);
    if (!json_is_object(doc)) {
        json_decref(doc);
        return 0;
    }
    json_t *bases[2] = {json_object(),
                        json_pack("{s:s,s:s,s:s}", "max_turns", "500", "permission_mode",
                                  "acceptEdits", "max_usd", "2")};
    for (int b = 0; b < 2; b++) {
        json_t *notices = json_array();
        json_t *kept = trust_filter(doc, ".loom/settings.json", bases[b], notices);
        if (!json_is_object(kept) || json_object_get(kept, "env") ||
            json_object_get(json_object_get(kept, "permissions"), "allow"))
            abort();
        json_t *again_notices = json_array();
        json_t *again = trust_filter(kept, ".loom/settings.json", bases[b], again_notices);
        if (!json_equal(again, kept) || json_array_size(again_notices) != hook_events(kept))
            abort();
        size_t i;
        json_t *n;
        json_array_foreach(notices, i, n) {
            const char *s = json_string_value(n);
            if (!s || strncmp(s, "ignored .loom/settings.json: ", 29) != 0 || strchr(s, '\x1b'))
                abort();
        }
        json_decref(again);
        json_decref(again_notices);
        json_decref(kept);
        json_decref(notices);
        json_decref(bases[b]);
    }
    json_decref(doc);
    return 0;
}
