/* conv.c — helpers the three formats share when summarising a request's
 * conversation (message text extraction, summary lifetime). The per-format
 * walk over messages/input lives with each format. */
#include "mockllm.h"

#include <stdlib.h>
#include <string.h>

void conv_free(mock_conv *c)
{
    free(c->last_user);
    free(c->system);
    c->last_user = c->system = NULL;
}

void conv_append(char **dst, const char *text)
{
    if (!text || !*text)
        return;
    char *s = *dst && **dst ? xprintf("%s\n%s", *dst, text) : xstrdup(text);
    free(*dst);
    *dst = s;
}

char *conv_content_text(const json_t *content)
{
    if (json_is_string(content))
        return xstrdup(json_string_value(content));
    char *out = NULL;
    size_t i;
    json_t *block;
    json_array_foreach(content, i, block) {
        const char *type = json_string_value(json_object_get(block, "type"));
        /* Anthropic and Chat call text parts "text"; Responses uses
         * input_text for users and output_text for assistants. */
        if (!type || (strcmp(type, "text") && strcmp(type, "input_text") &&
                      strcmp(type, "output_text")))
            continue;
        const char *text = json_string_value(json_object_get(block, "text"));
        /* Loom's working-memory block rides at the tail of every request and
         * repeats the goal: matching on it would match every request. */
        if (text && !strncmp(text, "<working-memory>", 16))
            continue;
        conv_append(&out, text);
    }
    return out ? out : xstrdup("");
}
