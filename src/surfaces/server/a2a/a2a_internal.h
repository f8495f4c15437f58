/* a2a_internal.h — what the parts of a2a/ share: the JSON-RPC error codes
 * (JSON-RPC's own and A2A v1.0's), the run → Task mapping (a2a_task.c),
 * the streams (a2a_stream.c) and the push notification table
 * (a2a_push.c). No state here; see each file for its threading. */
#ifndef LOOM_SERVER_A2A_INTERNAL_H
#define LOOM_SERVER_A2A_INTERNAL_H

#include <jansson.h>

#include "surfaces/server/a2a/a2a.h"

enum {
    RPC_PARSE_ERROR = -32700,
    RPC_INVALID_REQUEST = -32600,
    RPC_METHOD_NOT_FOUND = -32601,
    RPC_INVALID_PARAMS = -32602,
    RPC_INTERNAL_ERROR = -32603,
    A2A_TASK_NOT_FOUND = -32001,
    A2A_TASK_NOT_CANCELABLE = -32002,
    A2A_PUSH_NOT_SUPPORTED = -32003,
    A2A_UNSUPPORTED_OPERATION = -32004,
    A2A_CONTENT_TYPE_NOT_SUPPORTED = -32005,
};

/* A failed call: the JSON-RPC code and message (and the server's error
 * code in data, when it came from the service). */
typedef struct a2a_fail {
    int code;
    char message[512];
    const char *server_code;  /* static, or NULL */
} a2a_fail;

int a2a_failf(a2a_fail *f, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* The service's error as A2A's: resource_not_found → TaskNotFound,
 * invalid_state_transition → TaskNotCancelable (for a cancel) or
 * UnsupportedOperation, invalid_request → InvalidParams, others Internal.
 * Clears err. */
int a2a_fail_from(a2a_fail *f, srv_error *err, bool cancel);

/* The JSON-RPC response texts (malloc'd). id is borrowed (NULL: null). */
char *a2a_result_text(const json_t *id, json_t *result /* stolen */);
char *a2a_error_text(const json_t *id, const a2a_fail *f);

/* ---- a2a_task.c: runs as Tasks ------------------------------------------ */
/* The Task of a run (its JSON from the backend), with its artifacts when
 * the run has ended. NULL with f set. */
json_t *a2a_task_from_run(const a2a_env *env, const principal *who, const char *run_json,
                          a2a_fail *f);
/* GetTask: the run's Task; an id that is no run of who's is TaskNotFound. */
json_t *a2a_task_get(const a2a_env *env, const principal *who, const char *id, a2a_fail *f);
/* A TaskStatus for a run state name, with an agent message text (may be NULL). */
json_t *a2a_status(const char *run_state, const char *timestamp, const char *text,
                   const char *task_id, const char *context_id);
/* An Artifact of run_id from its server document (content as a part). */
json_t *a2a_artifact(const a2a_env *env, const principal *who, const char *run_id,
                     const char *artifact_id, const char *name, const char *title);
/* Whether a run state name is terminal. */
bool a2a_run_ended(const char *run_state);

/* ---- a2a_stream.c -------------------------------------------------------- */
/* A stream of run_id's updates for the JSON-RPC request id: first the
 * Task (first, stolen; NULL: none), then a statusUpdate per run state
 * change and an artifactUpdate per artifact, from the run's events after
 * seq after. */
a2a_stream *a2a_stream_open(const a2a_env *env, const principal *who, const json_t *id,
                            const char *run_id, const char *context_id, int64_t after,
                            json_t *first, a2a_fail *f);
/* The last stored seq of a run (subscribe starts past it). */
int64_t a2a_run_tail(const a2a_env *env, const principal *who, const char *run_id);

/* ---- a2a_push.c ---------------------------------------------------------- */
json_t *a2a_push_create(const a2a_env *env, const principal *who, const json_t *params,
                        a2a_fail *f);
json_t *a2a_push_get(const a2a_env *env, const principal *who, const json_t *params,
                     a2a_fail *f);
json_t *a2a_push_list(const a2a_env *env, const principal *who, const json_t *params,
                      a2a_fail *f);
json_t *a2a_push_delete(const a2a_env *env, const principal *who, const json_t *params,
                        a2a_fail *f);
/* A config given with SendMessage (configuration.taskPushNotificationConfig). */
int a2a_push_attach(const a2a_env *env, const principal *who, const char *task_id,
                    const json_t *cfg, a2a_fail *f);
/* Tells the task's push URLs about a StreamResponse (borrowed): called by
 * whatever observes a change (streams, the watcher). */
void a2a_push_notify(const char *task_id, const json_t *stream_response);

#endif
