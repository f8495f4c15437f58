/* fuzz_command.c — libFuzzer target for the custom command parsers
 * (ext/commands/): one command file's frontmatter and keys
 * (command_def_parse, with Claude Code's lenient second read), the name a
 * path gives, "/name args" and the shell-like split of the arguments and
 * their substitution into a body. The input's first line is what a person
 * typed (and a file's path), the rest a command file. Whatever the bytes,
 * nothing may crash or leak, and:
 *   - a split line has a non-empty name of no blanks, its args inside it;
 *   - a file gives a def with a body and a description, its allowed-tools
 *     non-empty strings, or NULL with an error naming the file;
 *   - substitution always gives text, and a body with no '$' and no
 *     arguments comes back unchanged.
 * Any disagreement aborts. */
#include <ctype.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ext/commands/commands_internal.h"

static void count_warning(void *ctx, const char *msg)
{
    if (strncmp(msg, "fuzz.md: ", 9) != 0)
        abort();
    (*(size_t *)ctx)++;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *in = malloc(size + 1);
    memcpy(in, data, size);
    in[size] = '\0';
    char *nl = strchr(in, '\n');
    const char *text = nl ? nl + 1 : "";
    if (nl)
        *nl = '\0';
    const char *line = in;

    char *name = NULL;
    const char *args = NULL;
    if (command_split(line, &name, &args)) {
        if (!name || !name[0] || args < line || args > line + strlen(line))
            abort();
        for (const char *p = name; *p; p++)
            if (isspace((unsigned char)*p) || *p == '/')
                abort();
    } else if (name) {
        abort();
    }
    free(name);

    size_t n = 0;
    char **words = command_words(line, &n);
    for (size_t i = 0; i < n; i++)
        if (!words[i])
            abort();
    if (words[n])
        abort();
    command_words_free(words);

    loom_str why = LOOM_STR_INIT;
    char *cname = command_name_for(line, NULL, &why);
    if (cname ? (strchr(cname, '/') || !cname[0]) : why.len == 0)
        abort();
    free(cname);
    str_free(&why);

    size_t warnings = 0;
    loom_error err;
    loom_error_clear(&err);
    command_def *d = command_def_parse("fuzz.md", "fuzz", text, count_warning, &warnings, &err);
    if (d) {
        if (!d->body || !d->description || strcmp(d->name, "fuzz") != 0)
            abort();
        for (char **t = d->allowed_tools; t && *t; t++)
            if (!**t)
                abort();
        if (d->allowed_tools && !d->allowed_tools[0])
            abort();
        char *s = command_substitute(d->body, line);
        if (!s)
            abort();
        free(s);
        command_def_free(d);
    } else if (strncmp(err.message, "fuzz.md: ", 9) != 0) {
        abort();
    }

    char *s = command_substitute(text, NULL);
    if (!s || (!strchr(text, '$') && strcmp(s, text) != 0))
        abort();
    free(s);
    free(in);
    return 0;
}
