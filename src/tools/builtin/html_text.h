/* html_text.h — turns an HTML page into plain text a model can read
 * (WebFetch), and makes any fetched text safe to put in a JSON result.
 *
 * This is a reader, not a browser: no DOM, no CSS, no scripts. It keeps the
 * words and the structure that carries meaning (paragraphs, headings as
 * "# ", list items as "- ", links as "text (url)", table cells separated by
 * " | ") and drops what does not (script, style, head, noscript, svg,
 * template, iframe, comments). Input is untrusted and may be any bytes.
 */
#ifndef LOOM_TOOLS_BUILTIN_BUILTIN_HTML_TEXT_H
#define LOOM_TOOLS_BUILTIN_BUILTIN_HTML_TEXT_H

#include <stddef.h>

/* Converts len bytes of HTML to text. The result is valid UTF-8 without NUL
 * bytes (invalid sequences become U+FFFD), with whitespace collapsed, no
 * more than one blank line in a row, and no leading or trailing blank lines.
 * Never fails. *out_len (if non-NULL) gets the length. Caller frees. */
char *html_to_text(const char *html, size_t len, size_t *out_len);

/* Copies len bytes of text as valid UTF-8 without NUL bytes: invalid
 * sequences and NULs become U+FFFD; "\r\n" and lone "\r" become "\n". When
 * latin1 is set the input is read as Windows-1252 (a superset of ISO-8859-1
 * in practice) and transcoded. Caller frees. */
char *text_to_utf8(const char *text, size_t len, int latin1, size_t *out_len);

/* Appends one code point as UTF-8 to buf (at least 4 bytes); returns the
 * byte count. Surrogates and values past U+10FFFF become U+FFFD. */
size_t utf8_put(char *buf, unsigned long cp);

#endif
