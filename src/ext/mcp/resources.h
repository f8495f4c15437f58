/* resources.h — MCP resources for the model: the ListMcpResources and
 * ReadMcpResource tools, and @server:uri mentions in a user's prompt
 * expanded with the resource's contents.
 *
 * ListMcpResources {server?} lists every resource and resource template of
 * one server, or of every server that offers resources; ReadMcpResource
 * {server, uri} reads one (text as text, blobs described by type and size,
 * a large one cut and kept whole in a file like a tool result). Both are
 * read-only and concurrency-safe.
 *
 * Threading: the tools' run and mcp_expand_mentions may be called from any
 * thread (the manager is thread-safe); the parsing helpers are pure.
 */
#ifndef LOOM_EXT_MCP_RESOURCES_H
#define LOOM_EXT_MCP_RESOURCES_H

#include <jansson.h>
#include <stddef.h>

#include "base/error.h"
#include "base/str.h"
#include "tools/tool.h"

struct mcp_manager;

#define MCP_LIST_RESOURCES_NAME "ListMcpResources"
#define MCP_READ_RESOURCE_NAME "ReadMcpResource"

/* Heap tool_defs with impl = m; free with mcp_resources_tool_free. */
tool_def *mcp_resources_list_tool_new(struct mcp_manager *m);
tool_def *mcp_resources_read_tool_new(struct mcp_manager *m);
void mcp_resources_tool_free(tool_def *d);

/* The prompt with every @server:uri mention (server: a configured server;
 * the uri runs to whitespace; the @ at the start or after whitespace) read
 * with resources/read and appended as
 *   <resource server="s" uri="u">…</resource>
 * blocks, each capped like a tool result; a mention of an unknown server is
 * left as it is; a failed read adds a line saying so and why. Each mention
 * is read once however often it appears. Caller frees; NULL (err set) only
 * for a NULL prompt. */
char *mcp_expand_mentions(struct mcp_manager *m, const char *prompt, loom_error *err);

/* ---- pure helpers, for the tests ---------------------------------------- */

typedef struct mcp_mention {
    size_t start, len; /* the whole "@server:uri" token in the prompt */
    char *server;
    char *uri;
} mcp_mention;

/* The mentions of the given servers in prompt, in order, duplicates
 * (same server and uri) dropped; *out malloc'd (free with
 * mcp_mentions_free). Returns how many. The longest server name wins
 * when one is a prefix of another. */
size_t mcp_mentions_find(const char *prompt, const char *const *servers, size_t nservers,
                         mcp_mention **out);
void mcp_mentions_free(mcp_mention *v, size_t n);

/* A resources/read result's contents as text (each contents item through
 * mcp_output_resource, joined by newlines). */
void mcp_resource_contents_text(const json_t *result, loom_str *out);

#endif
