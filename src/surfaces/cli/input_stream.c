/* input_stream.c — one line of `--input-format stream-json` as a prompt
 * (input_stream.h). The line comes from whatever drives loom: it may be
 * anything, of any size up to the caller's cap; every way it can be wrong
 * gets a reason, and none may crash. Pure and reentrant. */
#include "surfaces/cli/input_stream.h"

#include <stdio.h>
#include <string.h>

#include "base/json.h"
#include "base/str.h"

static int refuse(char **prompt, char *why, size_t why_len, const char *reason)
{
    *prompt = NULL;
    snprintf(why, why_len, "%s", reason);
    return -1;
}

static bool blank(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (s[i] != ' ' && s[i] != '\t' && s[i] != '\r' && s[i] != '\n')
            return false;
    return true;
}

int input_stream_line(const char *line, size_t n, char **prompt, char *why, size_t why_len)
{
    *prompt = NULL;
    if (why_len)
        why[0] = '\0';
    if (blank(line, n))
        return 0;
    if (n > INPUT_STREAM_LINE_MAX)
        return refuse(prompt, why, why_len, "the line is longer than 10 MB");
    loom_error err;
    json_t *doc = json_parse(line, n, "stdin", &err);
    if (!doc) {
        *prompt = NULL;
        snprintf(why, why_len, "not JSON (%s)", err.message);
        return -1;
    }
    if (!json_is_object(doc)) {
        json_decref(doc);
        return refuse(prompt, why, why_len, "not a JSON object");
    }
    const char *type = json_get_str(doc, "type", NULL);
    if (!type || strcmp(type, "user") != 0) {
        json_decref(doc);
        return refuse(prompt, why, why_len,
                      "only {\"type\":\"user\",…} messages are read; this one is another type");
    }
    const json_t *message = json_get_obj(doc, "message");
    const char *role = json_get_str(message, "role", "user");
    const json_t *content = json_object_get(message, "content");
    if (!json_is_object(message) || strcmp(role, "user") != 0 || !content) {
        json_decref(doc);
        return refuse(prompt, why, why_len,
                      "a user line needs \"message\": {\"role\": \"user\", \"content\": …}");
    }
    loom_str text = LOOM_STR_INIT;
    size_t dropped = 0;
    if (json_is_string(content)) {
        str_append(&text, json_string_value(content), json_string_length(content));
    } else if (json_is_array(content)) {
        size_t i;
        json_t *block;
        json_array_foreach(content, i, block) {
            const char *bt = json_get_str(block, "type", "");
            const json_t *t = json_object_get(block, "text");
            if (!strcmp(bt, "text") && json_is_string(t)) {
                if (text.len)
                    str_append(&text, "\n\n", 2);
                str_append(&text, json_string_value(t), json_string_length(t));
            } else {
                dropped++;
            }
        }
    } else {
        json_decref(doc);
        return refuse(prompt, why, why_len, "\"content\" must be a string or an array of blocks");
    }
    json_decref(doc);
    /* A NUL inside the text would cut the prompt short without a word. */
    if (text.len && memchr(text.ptr, '\0', text.len)) {
        str_free(&text);
        return refuse(prompt, why, why_len, "the message's text holds a NUL character");
    }
    if (blank(text.ptr ? text.ptr : "", text.len)) {
        str_free(&text);
        return refuse(prompt, why, why_len,
                      dropped ? "the message holds no text block (only blocks Loom does not "
                                "read: images, tool results)"
                              : "the message's text is empty");
    }
    if (dropped && why_len)
        snprintf(why, why_len, "%zu block%s that %s not text (images, tool results) dropped",
                 dropped, dropped == 1 ? "" : "s", dropped == 1 ? "is" : "are");
    *prompt = str_steal(&text);
    return 1;
}
