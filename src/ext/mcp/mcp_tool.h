/* mcp_tool.h — one MCP server tool, as a Loom tool (pipeline step ②: the
 * MCP metadata resolved into the tool's declaration).
 *
 * Name: mcp__<server>__<tool>, every character outside [A-Za-z0-9_-]
 * replaced by '_', cut to the providers' 64 characters (a cut name gets a
 * short hash suffix so two long names stay distinct). Annotations decide
 * the defaults, failing closed: read-only (and so concurrency-safe and not
 * asking in default mode) only when readOnlyHint is true and
 * destructiveHint is not; absent annotations: it may change the world.
 *
 * A call sends tools/call with a progress token (progress becomes
 * tool.progress events through the tool context), the call's cancel flag
 * and deadline (notifications/cancelled reaches the server), and turns the
 * result into what the model sees: text as is; image and audio as a
 * described block (an image is passed to the model as an image); a
 * resource_link as its uri and name; an embedded resource's text (a blob:
 * its type and size); structuredContent checked against outputSchema (a
 * mismatch is a tool error naming the path) and shown when there is no
 * text; isError: a tool error the model sees. A result over the cap is cut
 * with a note, and written whole to a file the model can Read.
 */
#ifndef LOOM_EXT_MCP_MCP_TOOL_H
#define LOOM_EXT_MCP_MCP_TOOL_H

#include <jansson.h>
#include <stdbool.h>

#include "base/error.h"
#include "tools/tool.h"

struct mcp_manager;

struct mcp_tool {
    tool_def def;          /* def.impl points back here; def.name == loom_name */
    char *loom_name;
    char *server;
    char *remote_name;     /* the server's own name for it */
    char *description;
    char *schema_text;     /* inputSchema, compact JSON */
    json_t *input_schema;
    json_t *output_schema; /* NULL: none */
    bool destructive;
    bool always_load;      /* never deferred (config alwaysLoad or _meta "anthropic/alwaysLoad") */
    int64_t tokens;        /* estimated size of its declaration */
    struct mcp_manager *mgr;
};

/* From one entry of tools/list. NULL with err set (a missing name, an
 * inputSchema that is not an object). */
struct mcp_tool *mcp_tool_new(struct mcp_manager *mgr, const char *server, const json_t *tool,
                              bool always_load, loom_error *err);
void mcp_tool_free(struct mcp_tool *t);
/* The Loom name for a server's tool (caller frees). */
char *mcp_tool_loom_name(const char *server, const char *tool);

/* Turns a tools/call result into a tool result (see the header comment).
 * spill_dir and max_tokens as in mcp_manager_opts. */
void mcp_tool_convert_result(const struct mcp_tool *t, const json_t *result,
                             const char *spill_dir, int64_t max_tokens, tool_result *out);

#endif
