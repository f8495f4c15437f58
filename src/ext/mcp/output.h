/* output.h — what an MCP server sends, made fit for the model: its text
 * as valid UTF-8, binaries described by type and size, embedded resources
 * rendered, the raw result without its blobs, and a result too big for the
 * model cut to the cap with the whole kept in a file the model can Read.
 * Shared by MCP tool results, resource reads and @server:uri mentions, so
 * all three look and cut the same way.
 *
 * Owns nothing past one call. Pure apart from the file a spill writes: any
 * thread.
 */
#ifndef LOOM_EXT_MCP_OUTPUT_H
#define LOOM_EXT_MCP_OUTPUT_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "base/str.h"

/* The longest byte prefix of s[0..n) that starts and ends on UTF-8
 * character boundaries and whose token estimate (context/tokens.h) is at
 * most max_tokens. */
size_t mcp_output_prefix(const char *s, size_t n, int64_t max_tokens);

/* When text's estimate is over max_tokens (> 0), writes the whole text to
 * <spill_dir>/<stem>-XXXXXX.txt (mode 0600; spill_dir NULL: $TMPDIR or
 * /tmp; created when missing), cuts text at a character boundary to fit,
 * and appends the note "…output cut at N tokens; the whole result (M
 * chars) is in PATH — Read it with offset/limit" (or, when the file could
 * not be written, why). raw (may be NULL) gets "truncated": true and
 * "spillPath". Returns whether text was cut. stem is normalized to a
 * file-name-safe form. */
bool mcp_output_spill(loom_str *text, const char *spill_dir, const char *stem, int64_t max_tokens,
                   json_t *raw);

/* Appends n bytes of server text to out as valid UTF-8 (bad sequences
 * become U+FFFD, NUL bytes are dropped: servers' bytes are untrusted). */
void mcp_output_text(loom_str *out, const char *s, size_t n);

/* Decoded size of base64 text (whitespace and padding not counted). */
size_t mcp_output_base64_bytes(const char *s, size_t n);
/* A server string, made safe (mcp_output_text), at most max bytes (cut on
 * a character boundary, with "…"); fallback when v is not a string. */
void mcp_output_field(loom_str *out, const json_t *v, const char *fallback, size_t max);
/* One resource contents object ({uri, mimeType, text | blob}): its text,
 * or "[binary resource URI: MIME, N bytes]". */
void mcp_output_resource(loom_str *out, const json_t *res);
/* A deep copy of a server's result with every long string (a blob over
 * 256 chars, any string over 16 KiB) replaced by a note of its size: the
 * result's raw metadata. New reference. */
json_t *mcp_output_raw(const json_t *result);

#endif
