/* manager.h — a session's MCP servers: connections, state, and the tool set
 * they add (seed 000 rows 5.4 and 5.4b; seed 001 §13).
 *
 * The manager owns one client per startable server. mcp_manager_start
 * connects them all in parallel, in the background: a slow server never
 * delays the first model request unless the run needs it (a call to one of
 * its tools, an @server: mention or one of its prompts waits for it, up to
 * its connect timeout). A server that connects, or says its tools changed,
 * bumps the generation; the loop asks for a new tool set at the next turn
 * boundary, and gets each server's tools and its instructions from one
 * snapshot (registration and instructions are one atomic step: seed 000
 * §5, "never tools without their instructions").
 *
 * Tool order is stable across refreshes: tools keep the position they were
 * first seen at, new ones are appended, so the cached prefix of the tools
 * array survives a list_changed. When the declared tools would take more
 * than a share of the window, deferrable tools are left out and listed by
 * name in ToolSearch's description; found ones are appended after the
 * stable tools from the next request on (seed 001 §9).
 *
 * A server that dies is marked failed and restarted, with backoff, on its
 * next use. mcp_manager_clone gives a sub-agent connections of its own;
 * mcp_manager_free closes every connection and ends every server process
 * (checked: none outlives the session).
 *
 * Threading: all functions are thread-safe. Connects run on the manager's
 * threads; host callbacks may be called from any of them.
 */
#ifndef LOOM_EXT_MCP_MANAGER_H
#define LOOM_EXT_MCP_MANAGER_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "base/error.h"
#include "base/str.h"
#include "ext/mcp/client.h"
#include "ext/mcp/config.h"
#include "tools/registry.h"

typedef struct mcp_manager mcp_manager;
typedef struct mcp_tool mcp_tool; /* ext/mcp/mcp_tool.h */

typedef enum {
    MCP_STATE_NEEDS_APPROVAL,
    MCP_STATE_DISABLED,
    MCP_STATE_CONNECTING,
    MCP_STATE_CONNECTED,
    MCP_STATE_FAILED,
} mcp_state;

const char *mcp_state_name(mcp_state s); /* "needs-approval", "disabled", "connecting", … */

typedef struct mcp_manager_host {
    void *ctx;
    /* As in mcp_client_host (the server's name is passed). */
    json_t *(*elicit)(void *ctx, const char *server, const json_t *params);
    json_t *(*sample)(void *ctx, const char *server, const json_t *params, char **why);
    json_t *(*roots)(void *ctx, const char *server);
    void (*log)(void *ctx, const char *server, const char *level, const char *text);
    /* The tool set would differ now (a server connected, failed, changed
     * its list; a deferred tool was found). */
    void (*changed)(void *ctx);
} mcp_manager_host;

typedef struct mcp_manager_opts {
    const char *log_dir;      /* each stdio server's stderr: <log_dir>/mcp-<server>.log (NULL: dropped) */
    const char *spill_dir;    /* oversized results are written here whole (NULL: the system temp dir) */
    /* The most a result may put before the model, in estimated tokens;
     * the rest is in the spilled file (default 25 000; MAX_MCP_OUTPUT_TOKENS
     * in the environment overrides, as in Claude Code). */
    int64_t max_output_tokens;
} mcp_manager_opts;

/* Takes cfg (stolen: the manager frees it). Starts nothing. */
mcp_manager *mcp_manager_new(mcp_config_set *cfg, const mcp_manager_host *host,
                             const mcp_manager_opts *opts);
/* Connects every server that may start (approved, not disabled, no
 * config error), in parallel, in the background. Idempotent. */
void mcp_manager_start(mcp_manager *m);
/* Waits until server (NULL: every starting server) is connected or has
 * failed, at most timeout_ms. True when none is still connecting. */
bool mcp_manager_wait(mcp_manager *m, const char *server, long timeout_ms);
/* Approves a server that needed it (the REPL's prompt) and starts it. */
int mcp_manager_approve(mcp_manager *m, const char *server, loom_error *err);
/* Drops the connection (if any) and connects again, waiting for it. */
int mcp_manager_reconnect(mcp_manager *m, const char *server, loom_error *err);

/* Every server: [{name, scope, transport, state, error?, protocolVersion?,
 * serverInfo?, tools, resources, prompts, instructions: bool, source}]
 * (new reference), in configuration order. */
json_t *mcp_manager_status(mcp_manager *m);
/* The changes so far (connects, failures, list changes, found deferred
 * tools): compare to decide whether to rebuild the tool set. */
uint64_t mcp_manager_generation(mcp_manager *m);

typedef struct mcp_toolset_opts {
    int64_t window_tokens;    /* the model's context window (0: never defer) */
    double defer_share;       /* defer past this share of the window (api/mcp.c: 0.10,
                                 or ENABLE_TOOL_SEARCH's auto:N / true / false; 0: never) */
    int64_t builtin_tokens;   /* what the built-in tools already take */
} mcp_toolset_opts;

/* Adds the current MCP tools to reg (after what it holds), in the stable
 * order, with ToolSearch when some are deferred and ListMcpResources /
 * ReadMcpResource when a server offers resources; appends to instructions
 * one section per server whose tools were added ("## MCP server NAME\n…",
 * capped per server). 0, or -1 with err set. */
int mcp_manager_toolset(mcp_manager *m, tool_registry *reg, loom_str *instructions,
                        const mcp_toolset_opts *o, loom_error *err);

/* A request to a server, for the tools of ext/mcp: waits for a connecting
 * server (its connect timeout), restarts a dead one (backoff: 0.5 s, 1 s,
 * 2 s … 30 s between attempts), and fails with err naming the server
 * otherwise. When opts gives no timeout, the server's configured one
 * applies. Result: new reference. */
json_t *mcp_manager_request(mcp_manager *m, const char *server, const char *method,
                            json_t *params /* stolen */, const mcp_call_opts *opts,
                            loom_error *err);
/* The servers, in configuration order; *n set. Names borrowed (valid while
 * m lives). */
const char *const *mcp_manager_servers(mcp_manager *m, size_t *n);
/* Whether server is connected and announced capability cap ("resources",
 * "prompts", "tools", "resources.subscribe"). */
bool mcp_manager_offers(mcp_manager *m, const char *server, const char *cap);

/* Deferred tools: the ones left out of the current tool set (borrowed:
 * mcp_tool structs live as long as m). *n set; free the array only. */
const mcp_tool **mcp_manager_deferred(mcp_manager *m, size_t *n);
/* Marks deferred tools as found: they join the tool set from the next
 * refresh on, after the stable ones, in the order found. Unknown names are
 * ignored. */
void mcp_manager_load_deferred(mcp_manager *m, const char *const *names, size_t n);
/* Resource subscriptions (where the server offers resources.subscribe):
 * subscribe sends resources/subscribe for uri once (later calls for the
 * same uri do nothing); take_updates returns what changed since the last
 * call, as a note for the model ("The resource … changed"), malloc'd, or
 * NULL when nothing did. */
void mcp_manager_subscribe(mcp_manager *m, const char *server, const char *uri);
char *mcp_manager_take_updates(mcp_manager *m);
/* Where oversized results go, and the cap (tokens). */
const char *mcp_manager_spill_dir(const mcp_manager *m);
int64_t mcp_manager_max_output_tokens(const mcp_manager *m);

/* The prompts of every connected server: [{server, name, command
 * ("mcp__server__name"), description, arguments}] (new reference). */
json_t *mcp_manager_prompts(mcp_manager *m);

/* Connections of its own for a sub-agent (seed 000 row 4.9): the same
 * configuration, approvals and host; started at once. */
mcp_manager *mcp_manager_clone(mcp_manager *m);
/* Closes every connection, ends every server process, frees. */
void mcp_manager_free(mcp_manager *m);

#endif
