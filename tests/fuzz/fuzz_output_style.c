/* fuzz_output_style.c — libFuzzer target for the output style file parser
 * (ext/styles/styles.c): whatever a style file holds, it may not crash or
 * leak. output_style_parse must give a style with a name that is printable
 * and short, a non-empty body under the cap and the file as its source, or
 * -1 with an error naming the file and the style left empty; every warning
 * names the file. Any disagreement aborts. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ext/styles/styles.h"

static void check_warning(void *ctx, const char *msg)
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

    size_t warnings = 0;
    output_style st;
    loom_error err;
    loom_error_clear(&err);
    if (output_style_parse("fuzz.md", text, &st, check_warning, &warnings, &err) == 0) {
        size_t n = strlen(st.name);
        if (n == 0 || n > OUTPUT_STYLE_NAME_MAX || strchr(st.name, ':') || !st.body ||
            !st.body[0] || strlen(st.body) > OUTPUT_STYLE_BODY_MAX || !st.description ||
            strlen(st.description) > OUTPUT_STYLE_DESCRIPTION_MAX ||
            strcmp(st.source, "fuzz.md") != 0)
            abort();
        for (const unsigned char *p = (const unsigned char *)st.name; *p; p++)
            if (*p < 0x20 || *p == 0x7f)
                abort();
        output_style_clear(&st);
    } else if (strncmp(err.message, "fuzz.md: ", 9) != 0 || st.name || st.body) {
        abort();
    }
    free(text);
    return 0;
}
