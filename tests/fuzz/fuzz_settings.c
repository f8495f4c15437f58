/* fuzz_settings.c — the settings schema check (base/settings.h) over
 * arbitrary bytes: a repository writes .loom/settings.json, and a torn
 * write leaves any prefix of a file. A crash or leak is a bug, and so is a
 * message that does not name the file first or carries a control byte to
 * the terminal. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/json.h"
#include "base/settings.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void must_be_clean(const char *s)
{
    if (!s || strncmp(s, "F: ", 3) != 0)
        abort();
    for (const unsigned char *p = (const unsigned char *)s; *p; p++)
        if (*p < 0x20 || *p == 0x7f)
            abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    loom_error err;
    loom_error_clear(&err);
    json_t *doc = json_parse((const char *)data, size, "F", &err);
    if (!doc)
        return 0;
    json_t *warnings = json_array();
    loom_error_clear(&err);
    int rc = settings_check(doc, "F", warnings, &err);
    if (rc != 0) {
        if (err.code != LOOM_ERR_CONFIG || strncmp(err.message, "F", 1) != 0)
            abort();
        /* A wrong type's message names the key's type; a non-object says so. */
        if (json_is_object(doc) && !strstr(err.message, " must be "))
            abort();
    } else if (!json_is_object(doc)) {
        abort();
    }
    size_t i;
    json_t *w;
    json_array_foreach(warnings, i, w) {
        must_be_clean(json_string_value(w));
        if (!strstr(json_string_value(w), "unknown key \""))
            abort();
    }
    json_decref(warnings);
    json_decref(doc);
    return 0;
}
