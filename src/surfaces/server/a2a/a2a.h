/* a2a.h — the Agent2Agent (A2A) surface of loom serve (docs/a2a.md): the
 * Agent Card at GET /.well-known/agent-card.json and the JSON-RPC 2.0
 * endpoint POST /a2a, speaking A2A v1.0 as the official @a2a-js/sdk
 * client pinned in tests/a2a does (methods SendMessage,
 * SendStreamingMessage, GetTask, ListTasks, CancelTask, SubscribeToTask,
 * Create/Get/List/DeleteTaskPushNotificationConfig(s); ProtoJSON shapes:
 * "TASK_STATE_WORKING", "ROLE_AGENT", parts as {text}|{data}|{url}|{raw}).
 *
 * The mapping: an A2A task is one server run (its id is the run id; the
 * run's server task and session come with it); its contextId is the
 * server session. Everything goes through the HTTP backend table
 * (http.h), so the unit test and the fuzz target drive it with a fake.
 *
 * The dispatcher works on bytes and knows no HTTP: a2a_dispatch gives
 * either one JSON-RPC response text or a stream (SendStreamingMessage,
 * SubscribeToTask) that yields JSON-RPC response texts until it ends.
 *
 * Threading: every function may be called from any number of threads at
 * once; a stream belongs to the one thread that reads it. The push
 * notification configs are one process-wide table behind a mutex. */
#ifndef LOOM_SERVER_A2A_H
#define LOOM_SERVER_A2A_H

#include <stdbool.h>
#include <stddef.h>

#include "surfaces/server/http/http.h"

typedef struct a2a_env {
    const http_backend *be;
    service *svc;
    const server_objects *objs;
    const char *base_url;     /* "http://127.0.0.1:8787": the card's interface url is base_url + /a2a */
    long block_ms;            /* the longest wait of a blocking SendMessage (0: 300 s) and of
                               * CancelTask for the end (0: 10 s) */
} a2a_env;

typedef struct a2a_stream a2a_stream;

typedef struct a2a_answer {
    char *json;               /* a JSON-RPC response (malloc'd), or NULL … */
    a2a_stream *stream;       /* … when the answer is this stream */
    bool notification;        /* a request without id: nothing is to be sent back */
} a2a_answer;

/* One JSON-RPC request (body of len bytes, not necessarily NUL-ended) from
 * who. Never fails: a malformed request is a JSON-RPC error response. */
a2a_answer a2a_dispatch(const a2a_env *env, const principal *who, const char *body, size_t len);

/* The next JSON-RPC response of the stream (one line of JSON, malloc'd):
 * 1 with *json set; 0 when nothing came within timeout_ms; -1 when the
 * stream has ended (nothing set). */
int a2a_stream_next(a2a_stream *s, char **json, int timeout_ms);
void a2a_stream_free(a2a_stream *s);

/* The Agent Card (malloc'd JSON). who may be NULL (no token): then the
 * skills are the global profiles only; with a token, also its tenant's. */
char *a2a_card_json(const a2a_env *env, const principal *who);

/* Stops and joins the push notification watchers (http_stop calls it,
 * before the service they read is freed). Any thread, once at a time. */
void a2a_shutdown(void);

/* The push notification sender (default: an HTTP POST with libcurl). The
 * unit test and the fuzz target put their own in to see deliveries without
 * a network; NULL puts the default back. headers: "Name: value" lines,
 * NULL-terminated. Called from the watcher threads. */
typedef void (*a2a_push_sender)(const char *url, const char *const *headers, const char *body);
void a2a_push_set_sender(a2a_push_sender send);

/* Maps a server run state name to the A2A TaskState name. */
const char *a2a_task_state(const char *run_state);

/* The route handlers (router.c's rows). */
struct http_req;
void route_a2a_card(struct http_req *r);
void route_a2a_rpc(struct http_req *r);

#endif
