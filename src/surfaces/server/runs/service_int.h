/* service_int.h — what the files of runs/ share behind service.h: the
 * service, its live sessions and runs, the event writer, the state table.
 *
 * Owns nothing itself; each struct's owner is named beside it.
 * Threading: svc->mu guards the maps and every field of srv_session and
 * srv_run marked (mu); it is never held across a loom.h call or a store
 * write. run->lr_mu (recursive) guards run->lr, so an HTTP thread may call
 * loom_run_answer/pause/cancel while the run's exec thread frees it; it is
 * written with atomic stores, so the run's own event callback may read it
 * without the lock (a quota stop cancels from there). */
#ifndef LOOM_SERVER_SERVICE_INT_H
#define LOOM_SERVER_SERVICE_INT_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "loom.h"
#include "surfaces/server/runs/service.h"

#define SVC_ID_LEN 48

/* ---- ids and times ---------------------------------------------------- */
/* prefix + 26 lowercase base32 chars of a UUIDv7 ("run_01hx…"). */
void svc_new_id(const char *prefix, char out[SVC_ID_LEN]);
void svc_now(char out[32]);
void svc_time_after(char out[32], int seconds); /* now + seconds, as svc_now writes it */
char *svc_dump(json_t *v); /* compact JSON text (malloc'd); takes the reference */

/* ---- the state table (run_state.c) ------------------------------------ */
bool run_state_can(loom_run_state from, loom_run_state to);
/* queued, running, waiting_*: a run the session is busy with. */
bool run_state_active(loom_run_state s);
/* completed, failed, cancelled, blocked_*: nothing more happens unless resumed. */
bool run_state_terminal(loom_run_state s);

/* ---- the event writer (event_writer.c) -------------------------------- */
typedef struct event_writer event_writer;
/* Told, on the writer thread, after each durable batch: run_id's events up
 * to last_seq are stored (once per run of the batch). */
typedef void (*writer_stored_fn)(void *ctx, const char *run_id, int64_t last_seq);
event_writer *writer_new(store *st, int batch_ms, writer_stored_fn stored, void *ctx);
/* epoch: the fence of a leased run's write (store_fence; the worker is
 * writer_fence_setup's), 0 for none, WRITER_DROP for a run this worker
 * abandoned (the write is dropped, counted as refused). */
#define WRITER_DROP (-1)
/* Queues one event (the whole Event JSON, malloc'd: taken) of run_id at seq. */
void writer_event(event_writer *w, const char *run_id, int64_t seq, int64_t epoch, char *json);
/* Queues a document put (json taken); docs of a batch are stored before its
 * events. The epoch fences only run documents. */
void writer_doc(event_writer *w, store_kind kind, const char *id, const store_doc_keys *keys,
                int64_t epoch, char *json);
/* Told, on the writer thread, that a fenced write of run_id at epoch was
 * refused: another worker holds the run now. */
typedef void (*writer_fenced_fn)(void *ctx, const char *run_id, int64_t epoch);
void writer_fence_setup(event_writer *w, const char *worker, writer_fenced_fn fenced);
uint64_t writer_fenced_count(event_writer *w); /* writes refused or dropped by a fence */
/* Waits until everything queued so far is stored. */
void writer_flush(event_writer *w);
void writer_free(event_writer *w); /* flushes, stops the thread */

/* ---- /metrics (metrics.c) ---------------------------------------------- */
/* Claim latency (queued -> claimed) histogram bounds, seconds. */
#define CLAIM_BUCKETS 12
extern const double cluster_claim_bounds[CLAIM_BUCKETS];

/* What this worker did since it started (counters of /metrics). */
typedef struct cluster_stats {
    uint64_t claims;        /* runs claimed (queued or reclaimed) */
    uint64_t reclaims;      /* of them, active runs whose worker's lease expired */
    uint64_t renewals;      /* lease renewals made (one statement each) */
    uint64_t abandoned;     /* runs given up: reclaimed by another worker (fencing) */
    uint64_t lat_bucket[CLAIM_BUCKETS]; /* claims with latency <= bound (not cumulative) */
    uint64_t lat_over;      /* above the last bound */
    double lat_sum;         /* seconds */
} cluster_stats;

/* Counts one claim of a run that had waited wait_ms since it was queued. (mu held) */
void metrics_claimed(service *svc, int64_t wait_ms, bool reclaim);
/* An ISO 8601 UTC time ("2026-12-03T13:56:31.123Z") as Unix ms; -1 when not one. */
int64_t metrics_iso_ms(const char *iso);

/* ---- live objects ----------------------------------------------------- */
typedef struct srv_run srv_run;

typedef struct srv_session {
    char id[SVC_ID_LEN];
    char *tenant_id, *project_id, *workspace;
    char *doc;                  /* the Session document without active_run_id (mu) */
    char *loom_session_id;      /* (mu) set when the loom session is made */
    loom_agent *agent;          /* made at the first run; used by the exec thread only */
    loom_session *ls;
    /* The session's records as the store's rows (session_rows.c; ctx is
     * this session, owner its service); rows.append NULL: the JSONL file. */
    loom_session_rows rows;
    struct service *owner;
    char *agent_key;            /* "profile\npolicy" the agent was configured for (exec thread) */
    pthread_mutex_t use_mu;     /* one user of agent/ls at a time */
    srv_run *active;            /* (mu) the run the session works on */
    srv_run *queue_head, *queue_tail; /* (mu) enqueued runs */
    bool exec_running;          /* (mu) an exec thread serves this session */
    long tokens_used;           /* (mu) */
    struct service *svc;
    struct srv_session *next;   /* hash chain */
} srv_session;

typedef struct srv_approval {
    char id[SVC_ID_LEN];
    char loom_id[80];
    char *doc;                  /* (mu) the Approval document */
    char status[16];            /* (mu) */
    struct srv_approval *next;  /* per run, newest first */
} srv_approval;

struct srv_run {
    char id[SVC_ID_LEN], task_id[SVC_ID_LEN], session_id[SVC_ID_LEN];
    char *tenant_id, *project_id, *goal, *agent_profile, *policy_id;
    char strategy[12];
    int priority;               /* claimed before the tenant's lower ones (cluster) */
    loom_run_state state;       /* (mu) the server's */
    char created_at[32], updated_at[32], started_at[32], ended_at[32];
    char current_step[96];      /* (mu) */
    char pending_approval_id[SVC_ID_LEN]; /* (mu) "" when none */
    char *summary, *stop_reason; /* (mu) */
    loom_error_code err_code;   /* (mu) LOOM_OK when none */
    char *err_message;          /* (mu) */
    long in_tok, out_tok;       /* (mu) */
    /* (mu) The run's cost so far: the newest cost_usd of its own model
     * events (the run's total, sub-agents' included). cost_unknown once a
     * model call of the run had no price: the total is unknown, never 0. */
    double cost_usd;
    bool cost_unknown;
    char *resumed_from;         /* always NULL here (the Run shape has it) */
    int64_t seq;                /* (mu) the last seq given out */
    int64_t stored_seq;         /* (mu) the last seq the writer has stored */
    pthread_cond_t feed_cv;     /* (with mu) broadcast when stored_seq moves or the run ends */
    /* An outside answer the run waits for (external.c; waiting_external). */
    char input_id[SVC_ID_LEN];  /* (mu) "" when none is asked */
    char *input_answer;         /* (mu) the answer given, taken by the asking thread */
    bool input_given;           /* (mu) */
    /* execution */
    bool continue_next;         /* (mu) the next start is loom_run_continue */
    char *note;                 /* (mu) resume note / run note */
    loom_error_code force_code; /* (mu) a quota stop: the error to end with */
    char *force_message;
    char *cancel_reason;        /* (mu) */
    bool cancel_pending;        /* (mu) cancel asked before lr existed */
    bool pause_pending;         /* (mu) */
    loom_run *lr;               /* (lr_mu) */
    pthread_mutex_t lr_mu;
    srv_approval *approvals;    /* (mu) */
    srv_session *sess;
    struct service *svc;
    long base_in, base_out;     /* (mu) usage before the current loom run */
    srv_run *queue_next;        /* (mu) */
    bool held;                  /* (mu) cluster: this worker holds its lease */
    int64_t lease_epoch;        /* (mu) cluster: the epoch of that lease (its writes' fence) */
    bool abandoned;             /* (mu) cluster: reclaimed by another worker while this one
                                 * still ran it: its writes are dropped, its loom run cancelled */
    /* (mu) cluster: claimed to go on from its session (reclaimed, handed
     * back, resumed): its calls left open are looked for at its start
     * (cluster_calls.c). interrupted: call id -> tool of those already
     * recorded as interrupted (take_over, from the events). */
    bool moved;
    json_t *interrupted;
    struct srv_run *next;       /* hash chain */
};

#define SVC_BUCKETS 1024

typedef struct tenant_count {
    char *tenant_id, *project_id; /* project NULL: the tenant's active-run count */
    long n;
    struct tenant_count *next;
} tenant_count;

struct service {
    service_options opts;
    store *st;
    const server_objects *objs;
    webhooks *wh;
    event_writer *w;
    pthread_mutex_t mu;
    pthread_cond_t cv;          /* broadcast at every run state change */
    srv_session *sessions[SVC_BUCKETS];
    srv_run *runs[SVC_BUCKETS];
    tenant_count *counts;       /* (mu) active runs per tenant, tools per project */
    int executing;              /* (mu) runs inside loom now (the pool) */
    int exec_threads;           /* (mu) live exec threads */
    bool stopping;              /* (mu) */
    /* cluster (cluster.c) */
    char worker_id[128];
    int held;                   /* (mu) runs this worker holds */
    bool cluster_stop;          /* (mu) the cluster thread ends */
    bool cluster_started;
    bool abandon_pending;       /* (mu) a run was abandoned: its loom run is to be cancelled */
    bool listening;             /* the store's notices wake the cluster thread and feeds */
    bool cluster_kick;          /* (mu) a notice asked the cluster thread for a tick now */
    cluster_stats stats;        /* (mu) for /metrics (metrics.c) */
    pthread_cond_t cluster_cv;  /* (with mu) wakes the cluster thread */
    pthread_t cluster_thr;
    pthread_cond_t renew_cv;    /* (with mu) wakes the renewal thread (to stop) */
    pthread_t renew_thr;
};

/* ---- service.c helpers ------------------------------------------------- */
/* The run id names, checked for who (run_ctl.c). */
/* Each evidence pack of a run's SearchKnowledge calls (packs_json:
 * loom_run_evidence_packs_json's array) stored as an evidence_pack
 * artifact, which GET /runs/{id}/citations reads (outputs.c). */
void svc_store_run_packs(service *svc, srv_run *r, const char *packs_json);
srv_run *svc_run_for(service *svc, const principal *who, const char *id, token_role need,
                     srv_error *err);
json_t *svc_parse_body(const char *body, srv_error *err); /* an object, or NULL (invalid_request) */
void svc_run_init_mutex(srv_run *r);
unsigned svc_hash(const char *s);
srv_run *svc_run_find(service *svc, const char *id);        /* (mu held) */
srv_session *svc_session_find(service *svc, const char *id); /* (mu held) */
/* The live session, loaded from the store when not in memory (mu not held). */
srv_session *svc_session_load(service *svc, const char *id, srv_error *err);
/* The live run, loaded from the store when not in memory (mu not held). */
srv_run *svc_run_load(service *svc, const char *id, srv_error *err);
/* Access: tenant (else resource_not_found "what id"), project, role. */
int svc_access(const principal *who, const char *tenant_id, const char *project_id,
               token_role need, loom_error_code project_code, const char *what, const char *id,
               srv_error *err);
json_t *svc_scopes(const char *tenant_id, const char *project_id, const char *session_id,
                   const char *run_id);
json_t *svc_run_json(const srv_run *r);                     /* (mu held) */
void svc_run_store(service *svc, srv_run *r);               /* (mu held): queues the doc */
/* The fence r's writes carry (writer_event's epoch). (mu held) */
int64_t svc_fence(const service *svc, const srv_run *r);
void svc_session_store(service *svc, srv_session *s);       /* (mu held) */
long *svc_count(service *svc, const char *tenant_id, const char *project_id); /* (mu held) */
const tenant_config *svc_tenant(service *svc, const char *tenant_id);

/* ---- events (run_exec.c) ---------------------------------------------- */
/* Gives the next seq of r and queues the event (payload taken). (mu held) */
void svc_emit(service *svc, srv_run *r, const char *type, loom_visibility vis,
              const char *correlation_id, json_t *payload);
/* Moves r to state to (checked with the table), emitting run.state_changed
 * {from, state, reason?} and storing the doc. (mu held) */
int svc_transition(service *svc, srv_run *r, loom_run_state to, const char *reason,
                   srv_error *err);
/* Ends a run outside loom (cancelled while queued or paused, a missing
 * capability, a failed start): the final transition and run.completed. (mu not held) */
void svc_end_without_loom(service *svc, srv_run *r, loom_run_state to, loom_error_code code,
                          const char *message);
/* Starts the session's exec thread if it has none. (mu held) */
void svc_kick(service *svc, srv_session *s);
void svc_webhook(service *svc, const char *tenant_id, const char *type, const char *event_id,
                 json_t *payload); /* payload taken; mu not held */

/* ---- approvals.c ------------------------------------------------------- */
/* From loom's approval.requested / approval.resolved payloads. (mu held) */
void apv_requested(service *svc, srv_run *r, json_t *payload);
void apv_resolved(service *svc, srv_run *r, json_t *payload);
/* Pending approvals of an ended run become cancelled. (mu held) */
void apv_cancel_pending(service *svc, srv_run *r);

/* ---- external.c ---------------------------------------------------------- */
/* loom's ask_user for a server run (ctx: the srv_run): the run becomes
 * waiting_external until POST /runs/{id}:input answers, the policy's
 * approval timeout passes, or the run is cancelled, paused or the server
 * stops. On loom's run thread. */
char *svc_ask_external(void *ctx, const char *questions_json);

/* ---- cluster.c ----------------------------------------------------------
 * Workers sharing the store (service_options.cluster). The cluster thread
 * renews this worker's leases, applies the controls other nodes sent for
 * the runs it holds, and claims runs into free slots. Runs this worker
 * does not hold are read from the store (refresh) wherever they are
 * shown. */
#define CLUSTER_POLL_MS 100          /* how often a node reads another worker's run */
#define CLUSTER_FALLBACK_MS 1000     /* the same, and the cluster tick, under notices */
/* How long a wait for another worker's run sleeps between reads of the
 * store: CLUSTER_POLL_MS, or CLUSTER_FALLBACK_MS when the store's notices
 * wake it (cluster.c). */
int cluster_poll_ms(const service *svc);
#define CLUSTER_CONTROL_WAIT_MS 5000 /* how long a control's sender waits for its effect */
int cluster_start(service *svc, srv_error *err); /* mu not held */
void cluster_stop(service *svc);                 /* joins the thread; mu not held */
void cluster_wake(service *svc);                 /* a run was queued; mu not held */
/* After a held run's exec ended (stored or handed back): the lease goes. */
void cluster_release(service *svc, srv_run *r); /* mu not held */
/* writer_fenced_fn: a fenced write of run_id at epoch was refused. */
void cluster_fenced(void *ctx, const char *run_id, int64_t epoch);
/* session_rows.c: the rows port of s, or NULL when the store keeps no
 * session records (SQLite: the JSONL file is the record). Exec thread. */
const loom_session_rows *session_rows(service *svc, srv_session *s);
/* loom_run_options' tool_gate for a held run (ctx: the srv_run): the
 * lease checked in the store right before each tool call (cluster_calls.c). */
int cluster_tool_gate(void *ctx, const char *call_id, const char *tool, char **why);
/* Before a moved run (r->moved) goes on in ls: the calls of its last turn
 * left without a result, or with one saying they never started, recorded
 * as tool.interrupted, and r->note told of them. (mu not held) */
void cluster_open_calls(service *svc, srv_run *r, loom_session *ls);
/* Whether the session holds goal as a person's message: a run taken over
 * from a worker that died after storing its running state but before its
 * goal reached the session (a transaction away on PostgreSQL) has nothing
 * to continue and is started afresh (cluster_calls.c). */
bool cluster_goal_recorded(loom_session *ls, const char *goal);
/* abandon (cluster.c) for cluster_calls.c. (mu held) */
void cluster_abandon(service *svc, srv_run *r, const char *how);
/* r's fields again from the store, when this worker does not hold it. */
void cluster_refresh(service *svc, srv_run *r); /* mu not held */
/* Whether r is another node's to act on (cluster, not held here). (mu held) */
bool cluster_remote(service *svc, const srv_run *r);
/* A call another worker must make (what: "pause", "input"; its body):
 * sent to r's holder, then r as it is once its state moved (or after
 * CLUSTER_CONTROL_WAIT_MS). */
char *cluster_forward(service *svc, const principal *who, srv_run *r, const char *what,
                      const char *body_json, srv_error *err);
/* Sends a control (taken) to r's holder. */
int cluster_send(service *svc, const char *run_id, json_t *control, srv_error *err);

/* ---- recover.c --------------------------------------------------------- */
void svc_recover(service *svc);
/* The run's pending approvals become expired with why (store only). */
void svc_expire_approvals(service *svc, const char *tenant, const char *run_id, const char *why);

#endif
