/* commands_stub.c — TEMPORARY: an empty commands module so the wiring
 * builds before ext/commands lands. The commands helper deletes this file. */
#include <stdlib.h>
#include <string.h>

#include "ext/commands/commands.h"

struct command_catalog { int unused; };

command_catalog *command_catalog_load(const ext_source_opts *o, loom_error *err) { (void)o; (void)err; return calloc(1, sizeof(command_catalog)); }
void command_catalog_free(command_catalog *c) { free(c); }
size_t command_catalog_count(const command_catalog *c) { (void)c; return 0; }
const command_def *command_catalog_at(const command_catalog *c, size_t i) { (void)c; (void)i; return NULL; }
const command_def *command_catalog_find(const command_catalog *c, const char *n) { (void)c; (void)n; return NULL; }
size_t command_catalog_warning_count(const command_catalog *c) { (void)c; return 0; }
const char *command_catalog_warning(const command_catalog *c, size_t i) { (void)c; (void)i; return NULL; }
bool command_split(const char *line, char **name, const char **args)
{
    if (!line || line[0] != '/' || !line[1] || line[1] == '/' || line[1] == ' ')
        return false;
    size_t n = strcspn(line + 1, " \t\n");
    *name = strndup(line + 1, n);
    const char *a = line + 1 + n;
    *args = a + strspn(a, " \t\n");
    return true;
}
char *command_substitute(const char *body, const char *args) { (void)args; return strdup(body); }
int command_expand(const command_def *c, const char *args, const tool_registry *reg, tool_ctx *ctx,
                   loom_str *out, loom_error *err)
{
    (void)c; (void)args; (void)reg; (void)ctx; (void)out;
    return loom_error_set(err, LOOM_ERR_INTERNAL, "commands are not built yet");
}
