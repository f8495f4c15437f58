/* manager_internal.h — the manager's state, shared by manager.c
 * (connections, requests, status, subscriptions, prompts, life) and
 * manager_toolset.c (the tool set, deferral, ToolSearch finds). Private to
 * ext/mcp/manager*.c. Locking as in manager.c's opening comment: every
 * field below the lock is read and written under mu.
 */
#ifndef LOOM_EXT_MCP_MANAGER_INTERNAL_H
#define LOOM_EXT_MCP_MANAGER_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>

#include "base/cancel.h"
#include "ext/mcp/manager.h"

typedef struct conn {
    mcp_client *client;
    int refs;            /* under the manager's lock */
} conn;

typedef struct slot {
    mcp_server_config cfg;
    mcp_state state;
    char *error;
    conn *c;             /* NULL until connected */
    bool thread_live;    /* a connect thread runs (joined at free) */
    pthread_t thread;
    bool ever_connected;
    bool tools_dirty;    /* list_changed: list again at the next tool set */
    json_t *tools_json;  /* the last tools/list (array), NULL: none yet */
    /* The Loom tools made from tools_from (a reference held, so a new list
     * is never mistaken for it): a tool set rebuilt while the list is the
     * same reuses them. Earlier ones stay in the manager's `made`. */
    json_t *tools_from;
    mcp_tool **tools;
    size_t n_tools;
    int n_resources, n_prompts;
    int failures;        /* consecutive failed connects: the backoff */
    int64_t retry_at_ms; /* no reconnect before (monotonic) */
    mcp_client *connecting; /* the client a connect thread is handshaking or
                               listing with: free aborts it (a server that
                               never answers must not hold Loom's exit) */
    struct mcp_manager *m;
} slot;

typedef struct made_def {
    tool_def *def;
    void (*release)(tool_def *);
} made_def;

struct mcp_manager {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    mcp_config_set *cfg;
    slot *slots;
    size_t n;
    const char **names;
    mcp_manager_host host;
    mcp_manager_opts opts;
    char *log_dir, *spill_dir;
    atomic_uint_fast64_t generation;
    /* Set by free: connects and list requests in progress give up, so the
     * session's end never waits out a server's connect timeout. */
    loom_cancel closing;
    bool started;
    json_t *order;        /* loom tool names, first-seen order (stable positions) */
    json_t *found;        /* deferred tools found by ToolSearch, in the order found */
    json_t *subscribed;   /* "server\nuri" strings subscribed to */
    json_t *updated;      /* {server, uri} changed since take_updates */
    /* Every mcp_tool and tool_def made: registries built from them borrow
     * them, so they live as long as the manager. */
    mcp_tool **made;
    size_t n_made, cap_made;
    made_def *defs;
    size_t n_defs, cap_defs;
    mcp_tool **current;   /* the tools of the last tool set, all of them */
    size_t n_current;
    bool *deferred_now;   /* parallel to current */
};

/* The tool set would differ now: the generation moves, the host hears. */
void manager_bump(mcp_manager *m);
/* Drops a reference to a connection (taken under mu); the last one frees
 * the client, which ends the server. Takes mu itself. */
void manager_conn_put(mcp_manager *m, conn *c);
/* Whether the JSON array of strings holds name. */
bool manager_name_in(const json_t *arr, const char *name);

#endif
