/* commands_internal.h — what the files of ext/commands/ share beyond the
 * face (commands.h): one file parsed into a command_def (command_def.c),
 * a command's name from its place in the folder, the shell-like split of
 * the arguments (substitute.c) and the catalog built from a list of
 * folders (catalog.c). Private to ext/commands/, its unit tests and its
 * fuzz target.
 *
 * No state; any thread. Every returned value is the caller's. */
#ifndef LOOM_EXT_COMMANDS_COMMANDS_INTERNAL_H
#define LOOM_EXT_COMMANDS_COMMANDS_INTERNAL_H

#include "ext/commands/commands.h"

/* Files over this many bytes are skipped with a warning: a command is a
 * prompt, and the frontmatter reader looks at no more either. */
#define COMMAND_FILE_MAX (256 * 1024)
/* How deep sub-folders are followed, and how many files one folder may
 * bring: a hostile or broken tree (a symlink loop, a generated folder)
 * costs a warning, not the start-up. */
#define COMMAND_MAX_DEPTH 8
#define COMMAND_MAX_FILES 1000
/* A description taken from the body's first line is cut at this many
 * characters. */
#define COMMAND_DESC_FROM_BODY 100

/* Parses one command file's text. name is the command's name (from
 * command_name_for); path names the file in every message. A key of the
 * wrong type is a warning through warn ("PATH: key 'model': must be a
 * string") and the key is dropped; the command is kept. NULL with err
 * (LOOM_ERR_CONFIG, "PATH: line 3: …") when the frontmatter is not YAML
 * the reader accepts: the command is skipped. scope and plugin are the
 * caller's to set (USER, NULL here). Free with command_def_free. */
command_def *command_def_parse(const char *path, const char *name, const char *text,
                               void (*warn)(void *ctx, const char *msg), void *warn_ctx,
                               loom_error *err);
void command_def_free(command_def *d);

/* The commands Loom ships (builtin.c: init, review), parsed as command
 * files; the catalog adds them before its folders, which may replace them
 * by name. NULL with err only if a built-in text does not parse. */
size_t command_builtin_count(void);
command_def *command_builtin_parse(size_t i, void (*warn)(void *ctx, const char *msg),
                                   void *warn_ctx, loom_error *err);

/* The command name of the file at rel (relative to its commands folder,
 * "frontend/component.md"): "frontend:component", prefixed "plugin:" for
 * a plugin's (plugin may be NULL). NULL with why set when a part is not a
 * name a person can type (1 to 64 of letters, digits, '-', '_', '.', not
 * starting with '.') or rel does not end in ".md". */
char *command_name_for(const char *rel, const char *plugin, loom_str *why);

/* args split into words the way a shell would (blanks separate, '…' and
 * "…" group, a backslash escapes the next character outside single
 * quotes; nothing is expanded). NULL-terminated, never NULL; *n (may be
 * NULL) gets the count. Free with command_words_free. */
char **command_words(const char *args, size_t *n);
/* command_substitute without the trailing "ARGUMENTS: …": shell quotes each
 * value as one word (for a !`cmd`); *used is set when a placeholder was
 * found (left alone otherwise). Caller frees. */
char *command_substitute_part(const char *body, const char *args, bool shell, bool *used);
/* The "ARGUMENTS: …" paragraph of a body that named no placeholder
 * (nothing when args is blank). */
void command_append_arguments(loom_str *out, const char *args);
void command_words_free(char **v);

/* The catalog of the given folders (lowest precedence first): each one's
 * .md files, sub-folders giving namespaces, later folders winning by name;
 * notices (may be NULL; strings) are kept after the files' warnings. What
 * command_catalog_load does once ext_dirs_for has named the folders. */
command_catalog *command_catalog_from_dirs(const ext_dirs *dirs, const json_t *notices);

#endif
