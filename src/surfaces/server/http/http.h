/* http.h — the HTTP surface of loom serve (docs/server.md): the daemon that
 * speaks the wire contract (routes, error envelope, status table, SSE) and
 * the backend it dispatches to.
 *
 * The backend is a const table of function pointers with the signatures of
 * service.h, plus the bearer-token lookup. The server passes
 * http_backend_service (backend.c: the real service and objects_token); the
 * unit test passes a fake, so the HTTP layer is tested alone, over real
 * sockets, without a store or a model.
 *
 * Threading: http_start starts libmicrohttpd with one thread per
 * connection (a stream holds its connection for the run's life); handlers
 * run on those threads and call the backend concurrently. http_stop may be
 * called from any one thread; it returns when every connection thread has
 * ended. */
#ifndef LOOM_SERVER_HTTP_H
#define LOOM_SERVER_HTTP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "surfaces/server/runs/service.h"

typedef struct http_backend {
    /* The principal for a presented bearer token; false when unknown. The
     * strings set in *out must live as long as the backend (the objects). */
    bool (*authenticate)(const server_objects *objs, const char *bearer, principal *out);

    char *(*session_create)(service *svc, const principal *who, const char *body_json,
                            srv_error *err);
    char *(*session_get)(service *svc, const principal *who, const char *id, srv_error *err);
    char *(*task_create)(service *svc, const principal *who, const char *body_json,
                         srv_error *err);
    char *(*task_get)(service *svc, const principal *who, const char *id, srv_error *err);
    char *(*run_create)(service *svc, const principal *who, const char *body_json, long wait_ms,
                        bool *ended, srv_error *err);
    char *(*run_get)(service *svc, const principal *who, const char *id, srv_error *err);
    char *(*run_list)(service *svc, const principal *who, const char *session_id,
                      const char *state, const char *cursor, int limit, srv_error *err);
    char *(*run_cancel)(service *svc, const principal *who, const char *id,
                        const char *body_json, srv_error *err);
    char *(*run_pause)(service *svc, const principal *who, const char *id, srv_error *err);
    char *(*run_resume)(service *svc, const principal *who, const char *id,
                        const char *body_json, srv_error *err);
    char *(*events_page)(service *svc, const principal *who, const char *run_id, int64_t after,
                         int limit, unsigned vis_mask, srv_error *err);
    char *(*artifacts_list)(service *svc, const principal *who, const char *run_id,
                            srv_error *err);
    void *(*artifact_content)(service *svc, const principal *who, const char *run_id,
                              const char *name, size_t *len, char **content_type,
                              srv_error *err);
    char *(*transcript)(service *svc, const principal *who, const char *run_id, srv_error *err);
    char *(*citations)(service *svc, const principal *who, const char *run_id, srv_error *err);
    char *(*approval_list)(service *svc, const principal *who, const char *run_id,
                           const char *status, srv_error *err);
    char *(*approval_get)(service *svc, const principal *who, const char *id, srv_error *err);
    char *(*approval_answer)(service *svc, const principal *who, const char *id, bool approve,
                             const char *body_json, srv_error *err);
    char *(*knowledge_search)(service *svc, const principal *who, const char *body_json,
                              srv_error *err);
    char *(*object_get)(service *svc, const principal *who, const char *kind, const char *id,
                        srv_error *err);
    service_feed *(*feed_open)(service *svc, const principal *who, const char *run_id,
                               int64_t after, unsigned vis_mask, srv_error *err);
    int (*feed_next)(service_feed *f, char **json, int64_t *seq, int timeout_ms);
    void (*feed_close)(service_feed *f);
    char *(*profile_list)(service *svc, const principal *who, srv_error *err);
    char *(*usage_list)(service *svc, const principal *who, const char *session_id,
                        const char *state, const char *cursor, int limit, srv_error *err);
    char *(*run_input)(service *svc, const principal *who, const char *id,
                       const char *body_json, srv_error *err);
    /* The Prometheus text of GET /metrics; NULL where there are none. */
    char *(*metrics)(service *svc, const principal *who, srv_error *err);
} http_backend;

/* service.h and objects_token (backend.c). */
extern const http_backend http_backend_service;

typedef struct http_options {
    const char *host;           /* a numeric address or "localhost"; default 127.0.0.1 */
    int port;                   /* 0: an ephemeral port (http_port tells which) */
    int keepalive_ms;           /* SSE keep-alive comment period (default 15000) */
    unsigned connection_limit;  /* connections at once (default 4096) */
    size_t body_max;            /* request body cap (default 1 MB) */
    bool health_only;           /* a worker-only node: /healthz, every other path 404 */
} http_options;

typedef struct http_server http_server;

/* Starts listening. backend, svc and objs are borrowed and must outlive the
 * server (svc and objs are only handed to the backend). NULL with err. */
http_server *http_start(const http_options *opts, const http_backend *backend, service *svc,
                        const server_objects *objs, srv_error *err);
int http_port(const http_server *h);
/* Stops accepting, ends open streams (each notices within a quarter of a
 * second), joins every connection thread, frees. NULL is a no-op. */
void http_stop(http_server *h);

/* The OpenAPI document compiled in from http/openapi.json (CMake). */
extern const char loom_openapi_json[];
extern const size_t loom_openapi_json_len;

#endif
