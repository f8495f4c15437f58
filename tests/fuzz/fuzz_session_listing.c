/* fuzz_session_listing.c — libFuzzer target for what the session pickers
 * read from session files (session/listing.h): session_describe_text over
 * the input as a file's bytes, and session_title_from_prompt over it as a
 * prompt. Whatever the bytes, nothing may crash or leak, and:
 *   - the description is an object whose id and path are the ones given
 *     and whose message count is not negative;
 *   - a title is valid UTF-8 where the input was (never cut inside a
 *     character), holds no control byte, and has at most
 *     SESSION_TITLE_MAX characters ("…" included).
 * Any disagreement aborts. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/json.h"
#include "session/listing.h"

static size_t chars(const char *s)
{
    size_t n = 0;
    for (; *s; s++)
        n += ((unsigned char)*s & 0xc0) != 0x80;
    return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *in = malloc(size + 1);
    memcpy(in, data, size);
    in[size] = '\0';
    json_t *o = session_describe_text("fuzz-id", "/x/fuzz-id.jsonl", in, size);
    if (!json_is_object(o) || strcmp(json_get_str(o, "id", ""), "fuzz-id") != 0 ||
        strcmp(json_get_str(o, "path", ""), "/x/fuzz-id.jsonl") != 0 ||
        json_get_int(o, "messages", -1) < 0)
        abort();
    const char *title = json_get_str(o, "title", NULL);
    if (title && chars(title) > SESSION_TITLE_MAX)
        abort();
    json_decref(o);
    char *t = session_title_from_prompt(in);
    if (t) {
        if (!*t || chars(t) > SESSION_TITLE_MAX)
            abort();
        for (const char *p = t; *p; p++)
            if ((unsigned char)*p < 0x20 || *p == 0x7f)
                abort();
    }
    free(t);
    free(in);
    return 0;
}
