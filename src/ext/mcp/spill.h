/* spill.h — an MCP result too big for the model: cut to the cap, the whole
 * kept in a file the model can Read (used by MCP tool results, resource
 * reads and @server:uri mentions alike, so all three cut the same way).
 *
 * Owns nothing past one call. Pure apart from the file it writes: any
 * thread.
 */
#ifndef LOOM_EXT_MCP_SPILL_H
#define LOOM_EXT_MCP_SPILL_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "base/str.h"

/* The longest byte prefix of s[0..n) that starts and ends on UTF-8
 * character boundaries and whose token estimate (context/tokens.h) is at
 * most max_tokens. */
size_t mcp_spill_prefix(const char *s, size_t n, int64_t max_tokens);

/* When text's estimate is over max_tokens (> 0), writes the whole text to
 * <spill_dir>/<stem>-XXXXXX.txt (mode 0600; spill_dir NULL: $TMPDIR or
 * /tmp; created when missing), cuts text at a character boundary to fit,
 * and appends the note "…output cut at N tokens; the whole result (M
 * chars) is in PATH — Read it with offset/limit" (or, when the file could
 * not be written, why). raw (may be NULL) gets "truncated": true and
 * "spillPath". Returns whether text was cut. stem is normalized to a
 * file-name-safe form. */
bool mcp_spill_cut(loom_str *text, const char *spill_dir, const char *stem, int64_t max_tokens,
                   json_t *raw);

/* Appends n bytes of server text to out as valid UTF-8 (bad sequences
 * become U+FFFD, NUL bytes are dropped: servers' bytes are untrusted). */
void mcp_put_text(loom_str *out, const char *s, size_t n);

#endif
