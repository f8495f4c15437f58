/* render.h — the model's markdown, rendered for a terminal (md4c → ANSI).
 *
 * Text arrives from the model a few bytes at a time, so the renderer is a
 * stream: it holds bytes back until they form something that renders the
 * same whatever comes next — a whole line, a whole fenced code block, a whole
 * table — then renders that piece on its own. Layout follows the source:
 * each source line is one output line (a blank source line, one blank
 * line), wrapped at word boundaries when wider than the width (wrap.h;
 * tables are not wrapped), so the text looks the same whether it streamed
 * or not.
 *
 * With color: headings and **strong** bold, *emphasis* italic, `code` cyan,
 * code blocks indented under a dim "┌ lang" label, highlighted for the
 * languages highlight.h knows and dim otherwise, quotes behind a dim bar, links underlined
 * and followed by their dim "(url)". Without color (stdout is not a
 * terminal, or NO_COLOR is set): the same layout — bullets, indentation,
 * "text (url)" — and not one escape code.
 *
 * The text is the model's: every control character in it — raw, or from an
 * entity like `&#27;`, or in a link target — is shown in its visible form
 * (base/termsafe.h; a lone CR as "^M"), so the only escapes in the output
 * are the renderer's own styles.
 *
 * Indented code blocks (four spaces) are not recognized: when each line is
 * rendered alone, a nested list item would otherwise turn into code. Models
 * fence their code.
 */
#ifndef LOOM_CLI_RENDER_H
#define LOOM_CLI_RENDER_H

#include <stdbool.h>
#include <stddef.h>

#include "base/str.h"

typedef struct render_stream render_stream;

/* color: emit ANSI escapes; width: the terminal's columns (rules and tables
 * stay within it; <= 0 means 80). Caller frees with render_stream_free. */
render_stream *render_stream_new(bool color, int width);
void render_stream_free(render_stream *rs);
/* Adds n bytes of markdown; whatever became complete is rendered and
 * appended to out (possibly nothing). */
void render_stream_feed(render_stream *rs, const char *text, size_t n, loom_str *out);
/* The end of the text (end of a turn): renders what is still held back — a
 * last line without its newline, an unclosed code block — and resets the
 * stream for the next text. Output always ends with a newline. */
void render_stream_finish(render_stream *rs, loom_str *out);
/* Drops what is held back without rendering it (the reply starts over). */
void render_stream_discard(render_stream *rs);
/* True when bytes are held back. */
bool render_stream_pending(const render_stream *rs);

/* A whole document at once: the same as one feed and a finish. */
void render_markdown(const char *md, size_t n, bool color, int width, loom_str *out);

/* Columns a string takes on screen: UTF-8 characters, escape sequences
 * (ESC [ … letter) not counted. */
size_t render_display_width(const char *s, size_t n);

#endif
