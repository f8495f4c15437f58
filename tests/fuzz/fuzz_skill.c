/* fuzz_skill.c — libFuzzer target for the SKILL.md parser
 * (ext/skills/skill_def.c): whatever a file holds, it may not crash or
 * leak. A parse gives an entry whose name is a valid Agent Skills name
 * equal to the folder's, a description of 1 to 1024 characters, a body,
 * and lists that are NULL-terminated; or NULL with an error naming the
 * file. Every warning names the file too. Any disagreement aborts. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ext/skills/skills_internal.h"

static void count_warning(void *ctx, const char *msg)
{
    if (strncmp(msg, "/f/fuzz-skill/SKILL.md: ", 24) != 0)
        abort();
    (*(size_t *)ctx)++;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    memcpy(text, data, size);
    text[size] = '\0';

    size_t warnings = 0;
    loom_error err;
    loom_error_clear(&err);
    skill_entry *e = skill_entry_parse("/f/fuzz-skill/SKILL.md", "fuzz-skill", text,
                                       count_warning, &warnings, &err);
    if (e) {
        const skill_def *d = &e->def;
        if (!skill_name_valid(d->name) || strcmp(d->name, "fuzz-skill") != 0 || !d->description ||
            !d->description[0] || strlen(d->description) > SKILL_DESCRIPTION_MAX || !e->body ||
            strcmp(d->dir, "/f/fuzz-skill") != 0)
            abort();
        for (char **p = d->allowed_tools; p && *p; p++)
            if (!**p)
                abort();
        for (char **p = d->paths; p && *p; p++)
            if (!**p)
                abort();
        if (d->compatibility && strlen(d->compatibility) > SKILL_COMPATIBILITY_MAX)
            abort();
        skill_entry_free(e);
    } else if (strncmp(err.message, "/f/fuzz-skill/SKILL.md: ", 24) != 0) {
        abort();
    }
    /* Without a folder to match, the name rules alone decide. */
    loom_error_clear(&err);
    e = skill_entry_parse("/f/fuzz-skill/SKILL.md", NULL, text, NULL, NULL, &err);
    if (e && !skill_name_valid(e->def.name))
        abort();
    skill_entry_free(e);
    free(text);
    return 0;
}
