/* commands.h — custom slash commands: the Markdown files of
 * .loom/commands/, ~/.loom/commands/, .claude/commands/ and plugins, and
 * how `/name args` becomes the prompt that is sent (docs/commands.md).
 *
 * A file commands/frontend/component.md is the command "frontend:component"
 * (namespaced by sub-folder, as Claude Code does); a plugin's are
 * "plugin:name". Optional YAML frontmatter: description, argument-hint,
 * allowed-tools (a string "Bash(git add:*), Read" or a list), model,
 * disable-model-invocation. Without a description the body's first
 * non-empty line is one.
 *
 * Expansion, in order: $ARGUMENTS (all arguments as typed), $1 … $9 (split
 * like a shell: quotes group; inside a !`cmd` each value is one quoted
 * shell word, and only the file's own !`cmd`s run), then each !`cmd` — the command
 * runs through the governed pipeline as a Bash call (rules, hooks, sandbox,
 * approvals; the command's allowed-tools count for it) and its output
 * replaces the !`cmd`; a denied command leaves the denial's text — then
 * @path words: the file's text (through the pipeline as a Read, so deny
 * rules and secret paths hold) in a fenced block after the line.
 *
 * Threading: a catalog is built once and read-only afterwards; expansion
 * runs on the run's thread. */
#ifndef LOOM_EXT_COMMANDS_COMMANDS_H
#define LOOM_EXT_COMMANDS_COMMANDS_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "base/error.h"
#include "base/str.h"
#include "ext/sources.h"
#include "tools/registry.h"
#include "tools/tool.h"

#define COMMAND_OUTPUT_CAP 20000    /* bytes of one !`cmd`'s output kept */
#define COMMAND_FILE_CAP 100000     /* bytes of one @file included */

typedef struct command_def {
    char *name;                 /* "review", "frontend:component", "plugin:deploy" */
    char *description;
    char *argument_hint;        /* may be NULL */
    char **allowed_tools;       /* rule strings, NULL-terminated; NULL: none */
    char *model;                /* may be NULL */
    bool disable_model_invocation;
    char *path;                 /* the file */
    char *body;                 /* the text after the frontmatter */
    ext_scope scope;
    char *plugin;               /* may be NULL */
} command_def;

typedef struct command_catalog command_catalog;

/* Loads ext_dirs_for("commands", o)'s files; later folders win by name. A
 * malformed file (bad frontmatter, a key of the wrong type) is a warning
 * naming the file and the problem; the rest load. NULL only when out of
 * memory. */
command_catalog *command_catalog_load(const ext_source_opts *o, loom_error *err);
void command_catalog_free(command_catalog *c);
size_t command_catalog_count(const command_catalog *c);
const command_def *command_catalog_at(const command_catalog *c, size_t i);
const command_def *command_catalog_find(const command_catalog *c, const char *name);
size_t command_catalog_warning_count(const command_catalog *c);
const char *command_catalog_warning(const command_catalog *c, size_t i);

/* Splits "/name rest" (line starts with '/'): *name malloc'd ("name"),
 * *args points into line (trimmed; "" when none). false when line is not
 * of that shape ("//x", "/", "/ x"). */
bool command_split(const char *line, char **name, const char **args);

/* $ARGUMENTS, $1…$9 in body; no command runs. Caller frees. */
char *command_substitute(const char *body, const char *args);

/* The whole expansion of c with args (see above), the !`cmd` lines and
 * @files through tool_call_run on reg with ctx (a run's context: its
 * governance decides). The command's allowed-tools are granted for the
 * run first (governance_grant_run). 0 with *out the prompt, or -1 with err
 * (nothing sent). */
int command_expand(const command_def *c, const char *args, const tool_registry *reg,
                   tool_ctx *ctx, loom_str *out, loom_error *err);

/* A plain prompt's attachments (docs/repl.md, "@file mentions and
 * images"): step 4 above on text — each @word naming a file is read
 * through the pipeline as a Read call and its text follows its line;
 * @dir/ (a folder) is listed one level deep by a Glob call; an image read
 * by an @word goes into images — and then every other word that is the
 * path of an existing .png/.jpg/.jpeg/.gif/.webp file is read the same
 * way and attached to images ({mediaType, data} objects appended). A
 * denied read leaves its denial in the text, never the content. 0 with
 * the prompt appended to out, or -1 with err when cancelled (nothing to
 * send). */
int command_expand_mentions(const char *text, const tool_registry *reg, tool_ctx *ctx,
                            loom_str *out, json_t *images, loom_error *err);

#endif
