/* service.h — the runtime's object model over loom.h (seed 000 §10):
 * sessions, tasks, runs as a state machine, their events, approvals as
 * objects, artifacts, transcripts, citations, knowledge search. The HTTP
 * layer (http/) is a thin adapter over these calls; nothing here knows HTTP.
 *
 * A server session is one loom_session (one agent configured from the
 * task's profile and policy and the tenant's quotas, working in the
 * project's workspace); a run is one loom_run (loom_run_start for a new
 * goal, loom_run_continue for :resume). Each run's events go to the store
 * with seq 1, 2, … through one writer thread that batches them; readers
 * (events pages, SSE feeds) read the store after their cursor, so a client
 * sees an event only once it is stored, and sees each one exactly once.
 *
 * Access: every call takes the caller's principal. An object of another
 * tenant is resource_not_found (its existence is not leaked); one of
 * another project of the same tenant, for a project-bound token,
 * project_scope_denied (artifact_scope_denied for artifacts); a role too
 * low for the call (a viewer creating a run, a member answering an
 * approval) project_scope_denied with the role it needs.
 *
 * Every function returning char * returns a malloc'd JSON text (caller
 * frees), or NULL with err set. Thread-safe: any number of HTTP threads
 * call at once. */
#ifndef LOOM_SERVER_SERVICE_H
#define LOOM_SERVER_SERVICE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "surfaces/server/config/objects.h"
#include "surfaces/server/server_error.h"
#include "surfaces/server/store/store.h"
#include "surfaces/server/webhooks/webhooks.h"

typedef struct principal {
    const char *tenant_id;
    const char *project_id;  /* NULL: any project of the tenant */
    const char *actor_id;
    token_role role;
    bool audit;
} principal;

typedef struct service_options {
    const char *workspace;        /* default project workspace (absolute) */
    const char *loom_home;        /* LOOM_HOME for the sessions' JSONL files (NULL: env) */
    bool resume_on_restart;       /* recovered runs are resumed, not failed */
    int max_active_runs;          /* the run pool: runs executing at once, server-wide (default 1024) */
    int batch_ms;                 /* event writer batching window (default 5) */
    /* A worker of a cluster sharing the store (docs/deploy.md; the store
     * must have leases: PostgreSQL). Runs are not executed where they are
     * made: every worker claims queued runs into a lease it renews, up to
     * max_active_runs at once (--slots), and a run whose lease expired is
     * reclaimed and resumed; nothing is recovered at start. */
    bool cluster;
    bool api_only;                /* cluster: claims nothing (an API node) */
    const char *worker_id;        /* cluster: this worker's name (NULL: host:pid) */
    int lease_ms;                 /* cluster: lease length (default 15000) */
} service_options;

typedef struct service service;

/* Borrows st, objs and wh (they outlive the service; wh may be NULL).
 * Recovers what a crash left (see common contract): runs that were queued,
 * running or waiting are failed with run_resumable, or resumed. */
service *service_new(const service_options *opts, store *st, const server_objects *objs,
                     webhooks *wh, srv_error *err);
/* Cancels what runs, flushes the event writer, frees. */
void service_free(service *svc);

char *service_session_create(service *svc, const principal *who, const char *body_json,
                             srv_error *err);
char *service_session_get(service *svc, const principal *who, const char *id, srv_error *err);
char *service_task_create(service *svc, const principal *who, const char *body_json,
                          srv_error *err);
char *service_task_get(service *svc, const principal *who, const char *id, srv_error *err);

/* wait_ms < 0: async (201 Run at once, *ended false). wait_ms ≥ 0: waits up
 * to wait_ms for the run to end (*ended true, the Run) or to wait for an
 * approval (NULL, err run_waiting_approval with run_id); on timeout the Run
 * as it is, *ended false. */
char *service_run_create(service *svc, const principal *who, const char *body_json,
                         long wait_ms, bool *ended, srv_error *err);
char *service_run_get(service *svc, const principal *who, const char *id, srv_error *err);
/* {items, next_cursor}. session_id, state, cursor may be NULL; limit 1–200. */
char *service_run_list(service *svc, const principal *who, const char *session_id,
                       const char *state, const char *cursor, int limit, srv_error *err);
char *service_run_cancel(service *svc, const principal *who, const char *id,
                         const char *body_json, srv_error *err);
char *service_run_pause(service *svc, const principal *who, const char *id, srv_error *err);
char *service_run_resume(service *svc, const principal *who, const char *id,
                         const char *body_json, srv_error *err);

/* Answers what a run waiting_external asks (AskUserQuestion): body
 * {input_id?, answers?: {question: answer}, text?: "…"} (answers or text,
 * not both). The Run, running again. Not waiting: invalid_state_transition;
 * an input_id that is not the one asked: resource_not_found. */
char *service_run_input(service *svc, const principal *who, const char *id,
                        const char *body_json, srv_error *err);

/* Visibility mask: bit 1<<LOOM_VIS_USER | 1<<LOOM_VIS_SYSTEM | 1<<LOOM_VIS_AUDIT.
 * Audit needs who->audit (else invalid_request). */
char *service_events_page(service *svc, const principal *who, const char *run_id,
                          int64_t after, int limit, unsigned vis_mask, srv_error *err);

char *service_artifacts_list(service *svc, const principal *who, const char *run_id,
                             srv_error *err);
/* The content (malloc'd bytes, *len) and its content type (malloc'd). */
void *service_artifact_content(service *svc, const principal *who, const char *run_id,
                               const char *name, size_t *len, char **content_type,
                               srv_error *err);
char *service_transcript(service *svc, const principal *who, const char *run_id,
                         srv_error *err);
char *service_citations(service *svc, const principal *who, const char *run_id, srv_error *err);

char *service_approval_list(service *svc, const principal *who, const char *run_id,
                            const char *status, srv_error *err);
char *service_approval_get(service *svc, const principal *who, const char *id, srv_error *err);
/* approve or reject; body {actor_id?, comment?}. Already answered:
 * invalid_state_transition; expired: run_approval_expired. */
char *service_approval_answer(service *svc, const principal *who, const char *id, bool approve,
                              const char *body_json, srv_error *err);

char *service_knowledge_search(service *svc, const principal *who, const char *body_json,
                               srv_error *err);
/* GET /profiles/{id} etc.: kind is "profile", "policy" or "knowledge_source". */
char *service_object_get(service *svc, const principal *who, const char *kind, const char *id,
                         srv_error *err);

/* ---- feeds (SSE) ----------------------------------------------------------
 * A feed reads a run's stored events after a cursor, waking when the writer
 * stores more. One feed per stream connection, used by one thread. */
typedef struct service_feed service_feed;

service_feed *service_feed_open(service *svc, const principal *who, const char *run_id,
                                int64_t after, unsigned vis_mask, srv_error *err);
/* Waits up to timeout_ms for the next event past the cursor (of the mask's
 * visibility). 1: *json (malloc'd Event) and *seq set; 0: timeout (send a
 * keep-alive); -1: the run has ended and every event was given (*json
 * set to {"state": …} for the closing `end` event). */
int service_feed_next(service_feed *f, char **json, int64_t *seq, int timeout_ms);
void service_feed_close(service_feed *f);

/* ---- listings (listings.c) ----------------------------------------------
 * GET /profiles: {items: [profile]} — every profile the caller's tenant
 * sees (its own and the global ones), each as GET /profiles/{id} has it. */
char *service_profile_list(service *svc, const principal *who, srv_error *err);
/* GET /usage: {items: [RunUsage], next_cursor} — the runs of GET /runs
 * (same filters, paging and access), each as {run_id, session_id,
 * tenant_id, project_id, agent_profile, state, created_at, input_tokens,
 * output_tokens, model|null, cost_usd|null, tool_calls, tool_failures},
 * the last four from the run's events. */
/* GET /metrics: the Prometheus text (format 0.0.4) of the caller's tenant's
 * runs and approvals in the store and this worker's counters (metrics.c). */
char *service_metrics(service *svc, const principal *who, srv_error *err);
char *service_usage_list(service *svc, const principal *who, const char *session_id,
                         const char *state, const char *cursor, int limit, srv_error *err);

#endif
