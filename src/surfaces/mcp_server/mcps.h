/* mcps.h — `loom mcp serve` (loom-mcp-server): Loom as an MCP server
 * (docs/mcp-server.md). One message handler (rpc.c) shared by the two
 * transports, stdio (stdio.c) and Streamable HTTP (http.c); the tools it
 * offers and runs are in tools.c, over loom.h only.
 *
 * A connection (mcps_conn) is one MCP session: the stdio stream, or one
 * Mcp-Session-Id over HTTP. Replies go to a sink the transport gives with
 * each message: stdout for stdio, the POST's response for HTTP. tools/call
 * runs on a thread of its own, so the reader keeps reading (a
 * notifications/cancelled must get through while a call runs). */
#ifndef LOOM_MCP_SERVER_MCPS_H
#define LOOM_MCP_SERVER_MCPS_H

#include <jansson.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

#include "loom.h"

/* JSON-RPC error codes. */
#define MCPS_PARSE_ERROR (-32700)
#define MCPS_INVALID_REQUEST (-32600)
#define MCPS_METHOD_NOT_FOUND (-32601)
#define MCPS_INVALID_PARAMS (-32602)
#define MCPS_INTERNAL_ERROR (-32603)

/* Where messages for the client go. send steals msg (NULL: nothing more to
 * say); final marks the last message for this request (an HTTP stream then
 * ends). retain/release keep ctx alive across a worker thread (may be NULL). */
typedef struct mcps_sink {
    void (*send)(void *ctx, json_t *msg, bool final);
    void (*retain)(void *ctx);
    void (*release)(void *ctx);
    void *ctx;
} mcps_sink;

typedef struct mcps_options {
    const char *permission_mode; /* the mode every call is decided in (default) */
    const char *cwd;             /* the working directory (default: getcwd) */
    const char *model;           /* the agent tool's default model (NULL: settings) */
    size_t page_size;            /* tools/list page (default 50; LOOM_MCP_PAGE_SIZE) */
    bool no_agent_tool;          /* offer only the built-in tools */
} mcps_options;

typedef struct mcps_call mcps_call;

struct mcps_server {
    mcps_options opts;
    char *cwd, *permission_mode, *model;
    bool tools;              /* false: no agent (the fuzz target) */
    pthread_mutex_t lock;    /* guards the agent, the tool session and specs */
    loom_agent *agent;       /* for the built-in tools' session */
    loom_session *tool_session;
    json_t *specs;           /* loom_session_tool_specs_json, parsed */
    char *setup_error;       /* why the tools could not be set up */
};
typedef struct mcps_server mcps_server;

struct mcps_conn {
    mcps_server *srv;
    char id[40];
    pthread_mutex_t handling; /* one message handled at a time (HTTP has many threads) */
    pthread_mutex_t lock;    /* guards everything below */
    pthread_cond_t idle;     /* calls drained */
    int refs;
    bool initialized;        /* initialize answered */
    bool ready;              /* notifications/initialized seen */
    bool closing;
    char version[16];
    int log_level;           /* logging/setLevel (index in the level list) */
    mcps_call *calls;        /* in flight */
    size_t n_calls;
};
typedef struct mcps_conn mcps_conn;

/* A server for opts (copied). With tools false (the fuzz target) no agent is
 * made: tools/list is empty and tools/call an error. NULL with why printed
 * on stderr. */
mcps_server *mcps_server_new(const mcps_options *opts, bool tools);
void mcps_server_free(mcps_server *srv);

mcps_conn *mcps_conn_new(mcps_server *srv);
/* Cancels the connection's calls, waits for them, and drops the caller's
 * reference. */
void mcps_conn_close(mcps_conn *c);
void mcps_conn_retain(mcps_conn *c);
void mcps_conn_release(mcps_conn *c);
const char *mcps_conn_id(const mcps_conn *c);        /* the Mcp-Session-Id */
bool mcps_conn_initialized(const mcps_conn *c);

typedef enum {
    MCPS_NO_REPLY,  /* a notification or a response: nothing to answer */
    MCPS_REPLIED,   /* one answer was sent to the sink before returning */
    MCPS_ASYNC,     /* answers follow from another thread; the last is final */
} mcps_outcome;

/* One message from the client (the bytes of one line, or of one POST
 * body). Never crashes on any input: a malformed message gets its
 * JSON-RPC error. */
mcps_outcome mcps_handle(mcps_conn *c, const char *buf, size_t len, const mcps_sink *sink);

/* The reader's first look at a message: its JSON (new reference, NULL when
 * it does not parse), whether it is an initialize request. For the HTTP
 * transport's session routing and the fuzz target. */
json_t *mcps_peek(const char *buf, size_t len, bool *is_initialize);

/* The protocol versions spoken, newest first, NULL-terminated. */
extern const char *const mcps_versions[];
bool mcps_version_supported(const char *v);

/* tools.c: the tools/list entries (new reference, an array), and a call:
 * answers through sink (final), possibly after progress notifications. */
json_t *mcps_tools_list(mcps_server *srv);
struct mcps_call {
    mcps_conn *conn;
    json_t *id;             /* the request's id */
    char *name;
    json_t *args;           /* an object */
    json_t *progress_token; /* NULL: none */
    mcps_sink sink;
    loom_run *_Atomic run;  /* the agent tool's run, while it runs */
    bool cancelled;         /* under the conn's lock */
    struct mcps_call *next;
};
/* Whether name is a tool the server offers. */
bool mcps_tool_known(mcps_server *srv, const char *name);
/* Runs the call (on its own thread); returns the tools/call result (new
 * reference). */
json_t *mcps_tool_run(mcps_server *srv, mcps_call *call);
/* The progress notification for a call (no-op without a progressToken). */
void mcps_call_progress(mcps_call *call, double progress, const char *message);

/* Lines for stderr: "loom-mcp-server: …". */
void mcps_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

int mcps_stdio_serve(mcps_server *srv);
typedef struct mcps_http_options {
    const char *host;     /* a literal IPv4 address */
    unsigned port;        /* 0: any; the port chosen is printed */
    const char *token;    /* NULL: none (then loopback only) */
    const char *const *allowed_origins; /* besides loopback ones; NULL-terminated */
    const char *port_file;/* write the bound port here (tests) */
} mcps_http_options;
int mcps_http_serve(mcps_server *srv, const mcps_http_options *o);

#endif
