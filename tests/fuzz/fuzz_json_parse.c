/* fuzz_json_parse.c — differential: Loom's json_parse_fast against jansson's
 * json_loadb on the same bytes, under each decode flag set Loom uses (and
 * the rest). Both must accept or both refuse; an accepted document must give
 * the same value: same types, members in the same order, strings byte for
 * byte, integers equal and reals bit for bit. With JSON_DISABLE_EOF_CHECK
 * the end position must agree too. Any difference aborts. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/json.h"

static const size_t flag_sets[] = {
    0,
    JSON_DECODE_ANY,
    JSON_DECODE_ANY | JSON_REJECT_DUPLICATES,
    JSON_DECODE_ANY | JSON_ALLOW_NUL,
    JSON_DECODE_ANY | JSON_DISABLE_EOF_CHECK,
    JSON_DECODE_ANY | JSON_DECODE_INT_AS_REAL,
};

static int same(const json_t *a, const json_t *b)
{
    if (json_typeof(a) != json_typeof(b))
        return 0;
    switch (json_typeof(a)) {
    case JSON_OBJECT: {
        if (json_object_size(a) != json_object_size(b))
            return 0;
        void *ia = json_object_iter((json_t *)a), *ib = json_object_iter((json_t *)b);
        for (; ia && ib; ia = json_object_iter_next((json_t *)a, ia),
                         ib = json_object_iter_next((json_t *)b, ib)) {
            size_t ka = json_object_iter_key_len(ia), kb = json_object_iter_key_len(ib);
            if (ka != kb || memcmp(json_object_iter_key(ia), json_object_iter_key(ib), ka))
                return 0;
            if (!same(json_object_iter_value(ia), json_object_iter_value(ib)))
                return 0;
        }
        return !ia && !ib;
    }
    case JSON_ARRAY:
        if (json_array_size(a) != json_array_size(b))
            return 0;
        for (size_t i = 0; i < json_array_size(a); i++)
            if (!same(json_array_get(a, i), json_array_get(b, i)))
                return 0;
        return 1;
    case JSON_STRING:
        return json_string_length(a) == json_string_length(b) &&
               memcmp(json_string_value(a), json_string_value(b), json_string_length(a)) == 0;
    case JSON_INTEGER:
        return json_integer_value(a) == json_integer_value(b);
    case JSON_REAL: {
        double x = json_real_value(a), y = json_real_value(b);
        return memcmp(&x, &y, sizeof x) == 0;
    }
    default:
        return 1;
    }
}

static void diverged(const char *why, size_t flags, const uint8_t *data, size_t size,
                     const json_error_t *ej, const json_error_t *eo)
{
    fprintf(stderr, "json_parse_fast diverges from jansson (flags 0x%zx): %s\n", flags, why);
    fprintf(stderr, "  jansson: %s (line %d, column %d, position %d)\n", ej->text, ej->line,
            ej->column, ej->position);
    fprintf(stderr, "  ours:    %s (line %d, column %d, position %d)\n", eo->text, eo->line,
            eo->column, eo->position);
    fprintf(stderr, "  input (%zu bytes): ", size);
    for (size_t i = 0; i < size && i < 200; i++)
        fprintf(stderr, data[i] >= 0x20 && data[i] < 0x7f ? "%c" : "\\x%02x", data[i]);
    fprintf(stderr, "\n");
    abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    for (size_t i = 0; i < sizeof flag_sets / sizeof flag_sets[0]; i++) {
        size_t flags = flag_sets[i];
        json_error_t ej, eo;
        json_t *theirs = json_loadb((const char *)data, size, flags, &ej);
        json_t *ours = json_parse_fast((const char *)data, size, flags, &eo);
        if (!theirs != !ours)
            diverged(ours ? "we accept what jansson refuses" : "we refuse what jansson accepts",
                     flags, data, size, &ej, &eo);
        if (theirs && !same(theirs, ours))
            diverged("different values", flags, data, size, &ej, &eo);
        if (theirs && (flags & JSON_DISABLE_EOF_CHECK) && ej.position != eo.position)
            diverged("different end positions", flags, data, size, &ej, &eo);
        if (!ours && (!eo.text[0] || eo.line < 1 || eo.column < 0))
            diverged("an error without text or place", flags, data, size, &ej, &eo);
        json_decref(theirs);
        json_decref(ours);
    }
    return 0;
}
