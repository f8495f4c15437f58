/* fuzz_frontmatter.c — libFuzzer target for the frontmatter reader
 * (base/frontmatter.c) and the agent file parser on top of it
 * (agents/catalog.c): whatever a file holds, neither may crash or leak.
 * frontmatter_parse must give an object with the body pointing inside the
 * text, or NULL with an error code and message and the body left at the
 * text's start; agent_def_parse must give a def with a valid name and a
 * description, or NULL with an error naming the file. Any disagreement
 * aborts. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agents/catalog.h"
#include "base/frontmatter.h"

static void count_warning(void *ctx, const char *msg)
{
    if (strncmp(msg, "fuzz.md: ", 9) != 0)
        abort();
    (*(size_t *)ctx)++;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    memcpy(text, data, size);
    text[size] = '\0';
    size_t len = strlen(text);

    loom_error err;
    loom_error_clear(&err);
    const char *body = NULL;
    json_t *v = frontmatter_parse(text, &body, &err);
    if (v) {
        if (!json_is_object(v) || body < text || body > text + len)
            abort();
        json_decref(v);
    } else if (body != text || err.code == 0 || !err.message[0]) {
        abort();
    }

    size_t warnings = 0;
    loom_error_clear(&err);
    agent_def *d = agent_def_parse("fuzz.md", text, count_warning, &warnings, &err);
    if (d) {
        if (!d->name || !d->name[0] || strlen(d->name) > 64 || !d->description || !d->prompt)
            abort();
        agent_def_free(d);
    } else if (strncmp(err.message, "fuzz.md: ", 9) != 0) {
        abort();
    }
    free(text);
    return 0;
}
