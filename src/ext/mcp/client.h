/* client.h — one MCP client connection: the protocol over a transport.
 *
 * Owns a transport and speaks MCP over it: the handshake (the stateless
 * 2026-07-28 `server/discover`, falling back to the stateful
 * `initialize` + `notifications/initialized` of 2025-11-25 / 2025-06-18),
 * requests matched to their responses by id, paging (`nextCursor`),
 * progress (`_meta.progressToken`, `notifications/progress`), cancellation
 * (`notifications/cancelled` when the caller's flag is set or the call's
 * timeout passes), and the requests a server may send us: `ping`,
 * `roots/list`, `elicitation/create`, `sampling/createMessage` (each
 * answered through mcp_client_host; an absent callback answers
 * method-not-found), plus the notifications it may send (`notifications/…/list_changed`,
 * `resources/updated`, `message` logging).
 *
 * In the stateless era every request carries `_meta` with
 * `io.modelcontextprotocol/protocolVersion` and `…/clientCapabilities`.
 *
 * Threading: every function may be called from any thread; many requests
 * may be in flight at once (each waits on its own slot). Host callbacks run
 * on a thread of the client's (never the caller's), so a callback may block
 * (a person answering an elicitation) without stalling other traffic.
 */
#ifndef LOOM_EXT_MCP_CLIENT_H
#define LOOM_EXT_MCP_CLIENT_H

#include <jansson.h>
#include <stdbool.h>

#include "base/cancel.h"
#include "base/error.h"
#include "ext/mcp/transport.h"

/* The revisions we speak, newest first. */
#define MCP_VERSION_STATELESS "2026-07-28"
#define MCP_VERSION_LATEST_STATEFUL "2025-11-25"

typedef struct mcp_client mcp_client;

/* What the client asks of whoever owns it. Every member may be NULL. */
typedef struct mcp_client_host {
    void *ctx;
    /* notifications/message: level ("info", "error"…), logger (may be
     * NULL), data rendered as text. */
    void (*log)(void *ctx, const char *server, const char *level, const char *logger,
                const char *text);
    /* notifications/{tools,resources,prompts}/list_changed: what is "tools",
     * "resources" or "prompts". Called on the transport's reader thread, in
     * order with the responses: it must not block (mark, do not list). */
    void (*list_changed)(void *ctx, const char *server, const char *what);
    /* notifications/resources/updated. */
    void (*resource_updated)(void *ctx, const char *server, const char *uri);
    /* elicitation/create: returns the result object ({"action": "accept",
     * "content": {...}} | {"action": "decline"} | {"action": "cancel"});
     * new reference. NULL: answered decline. */
    json_t *(*elicit)(void *ctx, const char *server, const json_t *params);
    /* sampling/createMessage: the CreateMessageResult (new reference), or
     * NULL with *why set (malloc'd) to the error the server gets. */
    json_t *(*sample)(void *ctx, const char *server, const json_t *params, char **why);
    /* roots/list: the roots array [{uri, name}] (new reference). */
    json_t *(*roots)(void *ctx, const char *server);
    /* The transport closed (crash, exit, network): every pending request
     * has already failed with why. */
    void (*closed)(void *ctx, const char *server, const char *why);
} mcp_client_host;

/* Capabilities we announce follow from which host members are set:
 * roots (listChanged), elicitation (form, url), sampling. The client takes
 * over t's on_message and on_closed (and wraps its on_stderr, which still
 * reaches the opener's ctx). */
mcp_client *mcp_client_new(const char *server, mcp_transport *t /* owned */,
                           const mcp_client_host *host);
/* clientInfo {name, version} sent in the handshake (default "loom" and
 * Loom's version). Before connect. */
void mcp_client_set_info(mcp_client *c, const char *name, const char *version);
/* The handshake. 0, or -code with err set naming the server. After it,
 * the server's info, capabilities and instructions are known.
 * First `server/discover` (capped at 5 s) with the stateless _meta keys;
 * a result whose supportedVersions holds 2026-07-28 makes the client
 * stateless. Any other answer, an error or no answer falls back to
 * `initialize` (2025-11-25 asked; 2025-11-25, 2025-06-18, 2025-03-26 and
 * 2024-11-05 accepted; any other version is an error) and
 * notifications/initialized. A cancel or a closed connection does not fall
 * back. */
int mcp_client_connect(mcp_client *c, long timeout_ms, const loom_cancel *cancel,
                       loom_error *err);

const char *mcp_client_server_name(const mcp_client *c);
const char *mcp_client_protocol_version(const mcp_client *c); /* after connect */
bool mcp_client_stateless(const mcp_client *c);
const json_t *mcp_client_server_info(const mcp_client *c);   /* {name, version, …} */
const json_t *mcp_client_capabilities(const mcp_client *c);  /* the server's */
const char *mcp_client_instructions(const mcp_client *c);    /* NULL: none */
/* Still usable: connected and the transport not closed. */
bool mcp_client_alive(const mcp_client *c);

/* Per-call options. */
typedef struct mcp_call_opts {
    long timeout_ms;           /* 0: none (the cancel flag still applies) */
    const loom_cancel *cancel; /* set: notifications/cancelled is sent, the call fails */
    /* notifications/progress for this call (a progressToken is sent only
     * when set): progress, total (< 0: unknown), message (may be NULL).
     * Runs on the calling thread, inside mcp_client_request. */
    void (*on_progress)(void *ctx, double progress, double total, const char *message);
    void *progress_ctx;
} mcp_call_opts;

/* Sends a request and waits for its answer. Returns the result (new
 * reference), or NULL with err set: the server's JSON-RPC error (its code
 * in err->detail-free message "MCP server \"x\": tools/call: -32602 …"),
 * LOOM_ERR_RUN_CANCELLED when cancelled, LOOM_ERR_TOOL_EXECUTION_FAILED
 * with "timed out after N ms" at timeout (Loom has no timeout code for
 * tools), LOOM_ERR_TOOL_EXECUTION_FAILED when the transport died. On a
 * cancel or timeout notifications/cancelled {requestId, reason} is sent.
 * After a failure, when the transport's session_expired says so, the
 * handshake runs again once and the request is retried once. params stolen
 * (may be NULL). opts may be NULL. */
json_t *mcp_client_request(mcp_client *c, const char *method, json_t *params,
                           const mcp_call_opts *opts, loom_error *err);
/* A notification; params stolen (may be NULL). */
int mcp_client_notify(mcp_client *c, const char *method, json_t *params, loom_error *err);
/* Every page of a list method ("tools/list" with key "tools", …) joined
 * into one array (new reference); at most max_items (0: 10 000) items, a
 * repeated cursor ends the walk. NULL with err set on failure. */
json_t *mcp_client_list_all(mcp_client *c, const char *method, const char *key,
                            size_t max_items, long timeout_ms, loom_error *err);

/* Closes the transport and frees. Pending requests fail first, and free
 * waits for their callers to leave; a host callback in progress (an
 * elicitation waiting for a person) is waited for too. host->closed is
 * not called for this. */
void mcp_client_free(mcp_client *c);
/* Fails every request in flight, and every later one, with why (the
 * connection counts as closed; the transport stays until free). For an
 * owner that must stop a handshake or a listing stuck on a server that
 * never answers, from another thread. */
void mcp_client_abort(mcp_client *c, const char *why);

#endif
