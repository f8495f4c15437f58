/* frontmatter.h — the YAML frontmatter block at the top of a Markdown file
 * (agent files, later skill files), read into JSON.
 *
 * The block is a line "---" at the very start of the text (after an
 * optional UTF-8 byte order mark), YAML, and a line "---" that closes it;
 * LF and CRLF line ends both work, and blanks after either "---" are
 * allowed. The YAML must be one mapping, which becomes a JSON object:
 *   - a quoted scalar is a string; a plain one is an integer when it is
 *     plainly one (-?[0-9]+ that fits in 64 bits), true/false when it is
 *     plainly one (true, True, TRUE, false, …), null when it is empty, ~ or
 *     null, and a string otherwise (3.5 and yes stay strings);
 *   - a sequence is an array, a mapping an object (keys are strings; a
 *     repeated key: the later one wins);
 *   - "a, b" is one string: a key that holds a list splits it with
 *     frontmatter_list, below.
 * Aliases (*x) are refused rather than expanded, so a small file cannot
 * become a huge value. The text is untrusted: every refusal is an error
 * naming the line, never a crash.
 *
 * No state; any thread. The caller owns the returned object. */
#ifndef LOOM_BASE_FRONTMATTER_H
#define LOOM_BASE_FRONTMATTER_H

#include <jansson.h>

#include "base/error.h"
#include "base/str.h"

/* Longest text looked at, in bytes, and the deepest nesting of mappings
 * and sequences (the top mapping is depth 1). */
#define FRONTMATTER_MAX_BYTES (256 * 1024)
#define FRONTMATTER_MAX_DEPTH 16

/* The error code when the text has no frontmatter at all (it does not open
 * with "---"): not a fault in itself, so callers can tell it apart. */
#define FRONTMATTER_ERR_NONE LOOM_ERR_RESOURCE_NOT_FOUND

/* Parses the frontmatter of text (NUL-terminated). Returns a new object and
 * sets *body (may be NULL) to the first byte after the closing line, inside
 * text. NULL with err set otherwise:
 *   FRONTMATTER_ERR_NONE   no opening line; *body = text
 *   LOOM_ERR_CONFIG        bad YAML, not a mapping, no closing line, an
 *                          alias, too deep; the message names the line of
 *                          the file ("line 4: …"); *body = text
 *   LOOM_ERR_INVALID_REQUEST  text longer than FRONTMATTER_MAX_BYTES */
json_t *frontmatter_parse(const char *text, const char **body, loom_error *err);

/* A whole YAML file that is one mapping (a settings-like file such as
 * knowledge_sources.yaml), read by the same rules as a frontmatter block;
 * lines in messages are the file's own. len bytes of text (NUL inside is
 * refused). A new object, or NULL with err set (LOOM_ERR_CONFIG naming the
 * line; LOOM_ERR_INVALID_REQUEST past FRONTMATTER_MAX_BYTES). An empty
 * file is {}. */
json_t *yaml_mapping_parse(const char *text, size_t len, loom_error *err);

/* The body after the block as a prompt: without its leading blank lines
 * (the first line's indentation stays) and its trailing blanks. A new
 * string, caller frees. */
char *frontmatter_body_trim(const char *body);

/* frontmatter_list flags. */
#define FRONTMATTER_LIST_BLANKS 1u  /* blanks separate items too ("Read Grep") */
/* A list-valued key (tools, allowed-tools, skills, paths): a string, or a
 * YAML sequence of strings each split the same way. Items are separated by
 * commas outside parentheses ("Read, Bash(git add:*, git commit:*)", Claude
 * Code's form) and, with FRONTMATTER_LIST_BLANKS, by blanks outside them
 * too ("Read Grep Bash(git diff *)", the Agent Skills form); the blanks
 * around an item are trimmed, empty items dropped. Returns a NULL-terminated
 * vector (possibly empty; free with strv_free). NULL when v is
 * neither shape: why (may be NULL) says "item N is not text" for a sequence
 * with another item, and is left untouched for any other value, so the
 * caller says what it expected. */
char **frontmatter_list(const json_t *v, unsigned flags, loom_str *why);

#endif
