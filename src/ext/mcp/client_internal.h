/* client_internal.h — what client.c (requests, handshake) and
 * client_serve.c (what the server sends us) share: the client's struct.
 * Private to ext/mcp/client*.c.
 *
 * Threading: every field below mu is guarded by mu unless it says
 * otherwise.
 */
#ifndef LOOM_EXT_MCP_CLIENT_INTERNAL_H
#define LOOM_EXT_MCP_CLIENT_INTERNAL_H

#include <pthread.h>

#include "ext/mcp/client.h"

/* A progress notification waiting for its caller's thread. */
typedef struct client_progress {
    double progress, total;
    char *message;
    struct client_progress *next;
} client_progress;

/* One request in flight. */
typedef struct client_pending {
    long long id;
    long long token;     /* progress token; 0: none asked for */
    pthread_cond_t cv;   /* the caller waits here */
    bool done;
    json_t *result;      /* owned, on success */
    json_t *error;       /* owned: the server's error object */
    bool closed;         /* the transport went first */
    char *closed_why;
    client_progress *prog_head, *prog_tail;
    struct client_pending *next;
} client_pending;

/* Work for the client's own threads. */
typedef enum { JOB_NOTIFY, JOB_REQUEST, JOB_CLOSED, JOB_WARN } client_job_kind;

typedef struct client_job {
    client_job_kind kind;
    char *method;
    json_t *id;          /* requests */
    json_t *params;
    char *text;          /* closed: why; warn: the message */
    struct client_job *next;
} client_job;

#define CLIENT_POOL_MAX 4
/* The most jobs a queue holds: past it a server's messages are dropped
 * (a server flooding notifications must not grow Loom without bound). */
#define CLIENT_QUEUE_MAX 10000

/* A queue and the threads that drain it (started as work arrives, up to
 * max). Guarded by the client's mu. */
typedef struct client_pool {
    struct mcp_client *c;
    client_job *head, *tail;
    size_t queued, idle, nthreads, max;
    size_t dropped;      /* jobs refused since the queue was last full */
    pthread_cond_t cv;
    pthread_t threads[CLIENT_POOL_MAX];
} client_pool;

struct mcp_client {
    char *server;
    mcp_transport *t;
    mcp_client_host host;
    mcp_transport_events opener_ev; /* the events the transport was opened with (on_stderr) */
    json_t *client_caps;        /* what we announce (from host) */
    long connect_timeout_ms;    /* for a re-handshake */

    pthread_mutex_t mu;
    pthread_mutex_t hs_mu;      /* one handshake at a time */
    pthread_cond_t idle_cv;     /* inflight reached 0 */
    char *client_name, *client_version;
    long long next_id, next_token;
    client_pending *pending;
    size_t inflight;            /* callers inside request/connect */
    bool closed;                /* the transport is gone */
    char *closed_why;
    bool stopping;              /* mcp_client_free started */
    unsigned hs_gen;            /* handshakes done */

    /* What the handshake learned. Written under mu by the handshake, read
     * without it by the accessors (after connect; a re-handshake keeps the
     * old values alive, in retired/kept, until free). */
    bool connected, stateless;
    char *version;
    json_t *server_info, *server_caps;
    char *instructions;
    json_t *retired;
    char **kept;
    size_t nkept, kept_cap;

    /* notifications and quick answers, in order (one thread); host
     * requests that may block (elicitation, sampling, roots). */
    client_pool notify_pool, host_pool;
};

/* client.c */
json_t *client_request_raw(struct mcp_client *c, const char *method, json_t **params,
                           const mcp_call_opts *o, bool quiet, loom_error *err);
int client_handshake(struct mcp_client *c, long timeout_ms, const loom_cancel *cancel,
                     loom_error *err);

/* client_serve.c */
void client_serve_init(struct mcp_client *c);
/* Ends the worker threads (after the job in hand); queued work is dropped. */
void client_serve_stop(struct mcp_client *c);
void client_serve_free(struct mcp_client *c);
/* The transport's callbacks. */
void client_on_message(void *ctx, const char *text, size_t len);
void client_on_closed(void *ctx, const char *why);
void client_on_stderr(void *ctx, const char *line);
/* Fails every pending request with why and marks the client closed; mu held. */
void client_fail_all_locked(struct mcp_client *c, const char *why);

#endif
