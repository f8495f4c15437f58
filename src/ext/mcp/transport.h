/* transport.h — how JSON-RPC messages travel between Loom and one MCP
 * server: the interface every transport implements.
 *
 * A transport moves whole message texts; it knows nothing of ids or
 * methods beyond what its wire needs (Streamable HTTP looks at a message to
 * tell a request from a notification, and answers `initialize`'s
 * Mcp-Session-Id). Messages that arrive are handed to on_message, on a
 * thread the transport owns, in the order they arrived on each stream.
 * When the transport can no longer carry messages (the process exited, the
 * stream failed for good) it calls on_closed once, with the reason, and
 * sends fail from then on.
 *
 * No callback runs before the first send: mcp_client_new installs its own
 * callbacks (keeping the opener's on_stderr and ctx for it) between open
 * and its first send. What arrives before then waits (stdio: stderr lines
 * go to the log file only).
 *
 * Threading: send may be called from any thread, concurrently; close is
 * called once, by the owner, after which no callback runs.
 */
#ifndef LOOM_EXT_MCP_TRANSPORT_H
#define LOOM_EXT_MCP_TRANSPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include <jansson.h>

#include "base/error.h"

typedef struct mcp_transport mcp_transport;

typedef struct mcp_transport_events {
    void *ctx;
    /* One message text (a JSON-RPC message or batch), NUL-terminated. */
    void (*on_message)(void *ctx, const char *text, size_t len);
    /* The transport is gone; why says how ("the process exited with status
     * 1", "HTTP 500 from http://…"). Called at most once. */
    void (*on_closed)(void *ctx, const char *why);
    /* A line the server wrote to its stderr (stdio only; may be NULL). */
    void (*on_stderr)(void *ctx, const char *line);
} mcp_transport_events;

typedef struct mcp_transport_ops {
    const char *kind; /* "stdio", "http", "sse" */
    /* Queues or performs the send of one message text. 0, or -code with
     * err set (the transport is closed, the server refused it: an HTTP
     * 4xx/5xx on the POST is reported here, with the status in err). A
     * POST's reply (JSON or an SSE stream) is delivered via on_message,
     * possibly after send returned. Streamable HTTP returns at once for a
     * request (its POST runs on a thread of the transport), so a failure
     * of that POST arrives instead as a JSON-RPC error response for the
     * request's id via on_message, naming the server, status and URL. */
    int (*send)(mcp_transport *t, const char *text, size_t len, loom_error *err);
    /* Ends the connection (stdio: close stdin, SIGTERM the group, SIGKILL
     * after a grace; HTTP: DELETE the session, stop the GET stream), joins
     * the transport's threads and frees it. */
    void (*close)(mcp_transport *t);
    /* The server process's pid (stdio), else 0. */
    pid_t (*pid)(const mcp_transport *t);
    /* Streamable HTTP: the negotiated protocol version to send in the
     * MCP-Protocol-Version header from now on (NULL ops member: ignored). */
    void (*set_protocol_version)(mcp_transport *t, const char *version);
    /* Streamable HTTP: a 404 for our session id means the server forgot it
     * (restart): true once, then cleared; the client re-initializes. */
    bool (*session_expired)(mcp_transport *t);
    /* Makes every send in progress or to come fail at once, and stops the
     * callbacks; close must still follow. Called before the owner joins
     * threads that may be inside send (a stdio server that stopped reading
     * would hold such a send for its stall timeout). NULL: not needed. */
    void (*abort_sends)(mcp_transport *t);
} mcp_transport_ops;

struct mcp_transport {
    const mcp_transport_ops *ops;
    mcp_transport_events ev;
};

/* How to start a stdio server. */
typedef struct mcp_stdio_spec {
    const char *command;
    const char *const *args;   /* NULL-terminated (may be NULL) */
    const json_t *env;         /* extra environment {name: value} (may be NULL) */
    const char *cwd;           /* NULL: Loom's */
    const char *log_path;      /* the server's stderr is appended here (NULL: on_stderr only) */
} mcp_stdio_spec;

/* Starts the server process in its own process group, stdin/stdout piped,
 * stderr to log_path and on_stderr. NULL with err set when it cannot start
 * (the command is not found: "MCP server \"x\": command \"foo\" not found"). */
mcp_transport *mcp_stdio_open(const char *server, const mcp_stdio_spec *spec,
                              const mcp_transport_events *ev, loom_error *err);

/* How to reach an HTTP server. */
typedef struct mcp_http_spec {
    const char *url;
    const json_t *headers;     /* {name: value} sent with every request (may be NULL) */
    long timeout_ms;           /* a single POST's cap (0: none beyond the call's) */
} mcp_http_spec;

/* Streamable HTTP (2025-03-26 and later): one endpoint, POST per message
 * (Accept: application/json, text/event-stream), JSON or SSE replies, the
 * GET stream for server-initiated messages once a session exists (405:
 * none offered), Mcp-Session-Id kept and sent, Last-Event-ID and the SSE
 * retry field on reconnect, DELETE on close. Opening does no I/O. */
mcp_transport *mcp_http_open(const char *server, const mcp_http_spec *spec,
                             const mcp_transport_events *ev, loom_error *err);

/* The legacy HTTP+SSE transport (2024-11-05): GET the SSE URL, wait for the
 * `endpoint` event, POST messages to that URL; replies arrive on the
 * stream. Fails (err) when the stream does not open or names no endpoint
 * within timeout_ms. */
mcp_transport *mcp_sse_open(const char *server, const mcp_http_spec *spec,
                            const mcp_transport_events *ev, loom_error *err);

#endif
