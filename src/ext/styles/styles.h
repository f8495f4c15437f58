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

typedef struct output_style {
    char *name;
    char *description;
    char *body;                     /* the style section's text */
    bool keep_coding_instructions;
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
size_t style_set_warning_count(const style_set *s);
const char *style_set_warning(const style_set *s, size_t i);

#endif
