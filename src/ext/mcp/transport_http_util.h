/* transport_http_util.h — what the two HTTP transports of MCP share
 * (Streamable HTTP in transport_http.c, the legacy HTTP+SSE one in
 * transport_sse.c): checking values before they become header lines,
 * naming URLs in messages, the configuration's headers, and resolving the
 * legacy transport's `endpoint` against the SSE URL.
 *
 * Pure functions; no threads, no I/O.
 */
#ifndef LOOM_EXT_MCP_TRANSPORT_HTTP_UTIL_H
#define LOOM_EXT_MCP_TRANSPORT_HTTP_UTIL_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "base/error.h"

/* A header value a server gave us (a session id, an event id) that is safe
 * to send back: 1..1024 visible ASCII characters (0x21..0x7E). */
bool mcp_http_token_ok(const char *s);
/* An http:// or https:// URL with a host. */
bool mcp_http_url_ok(const char *url);
/* The URL without userinfo, query or fragment (keys travel there); malloc'd. */
char *mcp_http_where(const char *url);
/* The start of a body for an error message: control characters as spaces,
 * cut at cap - 1 bytes. */
void mcp_http_snippet(const char *body, char *out, size_t cap);
/* The configuration's {name: value} headers as "Name: value" lines
 * (NULL-terminated, malloc'd; *out NULL when none). Names in reserved
 * (lower case) are left out with a warning; a name that is not a token, a
 * value that is not a string or holds a line break, is an error naming the
 * server. */
int mcp_http_config_headers(const char *server, const json_t *headers,
                            const char *const *reserved, char ***out, loom_error *err);
void mcp_http_free_lines(char **lines);
/* Resolves the legacy `endpoint` event's data (absolute URL, absolute path
 * or relative path) against the SSE URL; NULL when it names another
 * origin (scheme, host and port) or cannot be read. malloc'd. */
char *mcp_http_resolve_endpoint(const char *sse_url, const char *endpoint);

#endif
