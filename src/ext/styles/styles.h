/* styles.h — output styles: the part of the static system prompt that says
 * how Loom talks to the person, replaceable as a whole (docs/output-styles.md).
 *
 * Built-ins: default (Loom's own wording), explanatory (adds short
 * "Insight" notes on the choices made), learning (asks the person to write
 * small pieces themselves, marked TODO(human)). Files: output-styles/NAME.md
 * of ext_dirs_for("output-styles", …) with frontmatter name, description,
 * keep-coding-instructions (default false: the coding rules are dropped
 * with the default style section); the body replaces the style section.
 * The active style is the settings' "outputStyle" (default "default").
 *
 * A set is built once and read-only afterwards. */
#ifndef LOOM_EXT_STYLES_STYLES_H
#define LOOM_EXT_STYLES_STYLES_H

#include <stdbool.h>
#include <stddef.h>

#include "base/error.h"
#include "ext/sources.h"

#define OUTPUT_STYLE_NAME_MAX 64          /* bytes of a name */
#define OUTPUT_STYLE_BODY_MAX (64 * 1024)  /* bytes of a body: it is in every request */
#define OUTPUT_STYLE_DESCRIPTION_MAX 1024  /* bytes of a description; longer is cut */
#define OUTPUT_STYLE_FILES_MAX 200         /* style files read from one folder */

typedef struct output_style {
    char *name;                     /* a plugin's: "plugin:name" */
    char *description;              /* "" when the file gives none */
    char *body;                     /* the style section's text; NULL for the built-in
                                       default: Loom's own wording (system_prompt_static) */
    bool keep_coding_instructions;  /* the built-ins: true */
    char *source;                   /* "built-in" or the file */
} output_style;

typedef struct style_set style_set;

/* Built-ins first, then the files (later win by name; a file may replace a
 * built-in). A malformed file is a warning naming it; the rest load. */
style_set *style_set_load(const ext_source_opts *o, loom_error *err);
void style_set_free(style_set *s);
size_t style_set_count(const style_set *s);
const output_style *style_set_at(const style_set *s, size_t i);
const output_style *style_set_find(const style_set *s, const char *name); /* case-insensitive */
/* Warnings of malformed files, then notices of skipped folders. */
size_t style_set_warning_count(const style_set *s);
const char *style_set_warning(const style_set *s, size_t i);

/* One style file's text (NUL-terminated) parsed into *out (release with
 * output_style_clear); path names it in messages and gives the default
 * name (its stem). 0, or -1 with err naming the file and the problem (bad
 * frontmatter, a bad name, an empty body or one over OUTPUT_STYLE_BODY_MAX)
 * and *out empty. A key with a bad value is dropped with a warning through
 * warn (may be NULL). For style_set_load and the fuzz target. */
int output_style_parse(const char *path, const char *text, output_style *out,
                       void (*warn)(void *ctx, const char *msg), void *warn_ctx,
                       loom_error *err);
void output_style_clear(output_style *st);

#endif
