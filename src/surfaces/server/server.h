/* server.h — the loom serve server object: the objects of the config
 * folder, the store, webhooks, the service and the HTTP daemon, made in
 * that order and freed in the reverse one (docs/server.md).
 *
 * Two steps, so main.c can refuse a non-loopback listen without a token
 * before anything is opened or written: server_new loads the config,
 * server_start opens the store and starts everything else.
 *
 * One thread (main's) calls these; what they start has its own threads. */
#ifndef LOOM_SERVER_SERVER_H
#define LOOM_SERVER_SERVER_H

#include <stdbool.h>
#include <stddef.h>

#include "surfaces/server/server_error.h"

typedef struct server_options {
    const char *host;         /* listen address (default 127.0.0.1) */
    int port;                 /* 0: ephemeral */
    const char *store_spec;   /* "sqlite:PATH"; NULL: sqlite:$LOOM_HOME/loom.db */
    const char *config_dir;   /* NULL: no config (one default tenant, no tokens) */
    const char *workspace;    /* the default project's folder; NULL: cwd */
    bool resume_on_restart;
    int keepalive_ms;         /* 0: 15000 */
    int slots;                /* runs executing at once (0: the service's default) */
    /* A worker of several sharing a PostgreSQL store (docs/deploy.md):
     * cluster, implied by worker_only and api_only. */
    bool cluster, worker_only, api_only;
    const char *worker_id;    /* NULL: host:pid */
    int lease_ms;             /* 0: 15000 */
} server_options;

typedef struct loom_server loom_server;

/* Loads the config folder. NULL with err (config_invalid naming file, key
 * and line). opts' strings are copied. */
loom_server *server_new(const server_options *opts, srv_error *err);
/* How many bearer tokens the config defines. */
size_t server_token_count(const loom_server *s);
/* Opens the store, starts webhooks, the service (which recovers what a
 * crash left) and the HTTP daemon. -1 with err. */
int server_start(loom_server *s, srv_error *err);
/* The port listened on (the chosen one for port 0), after server_start. */
int server_port(const loom_server *s);
const char *server_host(const loom_server *s);
/* Stops the daemon (open streams end), then frees the service, webhooks,
 * the store and the objects. NULL is a no-op. */
void server_free(loom_server *s);

/* True for 127.0.0.0/8, ::1 and localhost: the addresses a server may
 * listen on without a token file. */
bool server_host_is_loopback(const char *host);

#endif
