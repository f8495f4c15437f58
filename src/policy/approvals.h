/* approvals.h — approvals as objects (seed 000 §11): a question for a person
 * that a run waits on, answered from any surface (REPL prompt, HTTP
 * `POST /approvals/{id}:approve`, ACP) by id.
 *
 * The registry owns every approval and is thread-safe: the run's thread
 * creates one and blocks in approval_wait(); a surface's thread calls
 * approval_resolve(). An approval not answered by its expires_at becomes
 * `expired`, whether or not anyone is waiting. Emitting approval.requested
 * and approval.resolved events is the caller's job.
 */
#ifndef LOOM_POLICY_APPROVALS_H
#define LOOM_POLICY_APPROVALS_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "base/cancel.h"
#include "base/error.h"
#include "base/uuid.h"

/* seed 000 §10 (profile example): approvals.timeout_seconds: 600. */
#define APPROVAL_DEFAULT_TIMEOUT_MS 600000

typedef enum {
    APPROVAL_PENDING,
    APPROVAL_APPROVED,
    APPROVAL_REJECTED,
    APPROVAL_EXPIRED,
} approval_status;

typedef struct approval_registry approval_registry;

/* What to ask. Strings and context are copied. */
typedef struct approval_request {
    const char *run_id;
    const char *kind;          /* NULL: "tool_execution" (seed 000 §11: tool_execution |
                                * policy_override | external_publish) */
    const char *question;      /* shown to the person, e.g. "Run `git push`?" */
    const json_t *context;     /* e.g. {tool, input, reason}; NULL: {} */
    int64_t timeout_ms;        /* 0: APPROVAL_DEFAULT_TIMEOUT_MS; at most 365 days */
} approval_request;

/* A snapshot of one approval. Owns its strings and context; release with
 * approval_clear(). Times are Unix epoch ms; resolved_at_ms is 0 while
 * pending. */
typedef struct approval {
    char id[UUID_STR_LEN];     /* UUIDv7 */
    char *run_id;
    char *kind;
    char *question;
    json_t *context;
    approval_status status;
    int64_t created_at_ms;
    int64_t expires_at_ms;
    int64_t resolved_at_ms;
    bool always;               /* approved "don't ask again this session" */
    char *reason;              /* the person's reason (for a rejection, what
                                * the model is told); NULL when none */
} approval;

approval_registry *approval_registry_new(void);
/* Frees every approval. No thread may be inside a call on reg. */
void approval_registry_free(approval_registry *reg);

/* Creates a pending approval; writes its id to id_out. */
int approval_create(approval_registry *reg, const approval_request *req,
                    char id_out[UUID_STR_LEN], loom_error *err);

/* Blocks until the approval is approved, rejected or expired (returns 0;
 * read out->status), or *cancel becomes nonzero (returns
 * -LOOM_ERR_RUN_CANCELLED; the approval stays pending so a resumed run can
 * wait again). Unknown id, or removed while waiting:
 * -LOOM_ERR_RESOURCE_NOT_FOUND. cancel and out may be NULL; out, when
 * given, receives a snapshot to approval_clear(). */
int approval_wait(approval_registry *reg, const char *id, const loom_cancel *cancel,
                  approval *out, loom_error *err);

/* Answers a pending approval: allow → approved (always = don't ask again),
 * else rejected (always ignored). reason may be NULL. Errors: unknown id →
 * LOOM_ERR_RESOURCE_NOT_FOUND; already approved or rejected →
 * LOOM_ERR_INVALID_STATE_TRANSITION; expired → LOOM_ERR_RUN_APPROVAL_EXPIRED. */
int approval_resolve(approval_registry *reg, const char *id, bool allow, bool always,
                     const char *reason, loom_error *err);

/* A snapshot of one approval (out to approval_clear()). */
int approval_get(approval_registry *reg, const char *id, approval *out, loom_error *err);

/* Forgets an approval (a finished run's, say). Waiters get NOT_FOUND. */
int approval_remove(approval_registry *reg, const char *id, loom_error *err);

/* The pending approvals, oldest first, as a JSON array of approval_to_json
 * objects; run_id NULL for every run. New reference. */
json_t *approval_list_pending(approval_registry *reg, const char *run_id);

/* {approval_id, run_id, kind, status, question, context, created_at,
 *  expires_at, resolved_at, decision: {always, reason} | null} with ISO 8601
 * times (resolved_at null while pending). New reference. */
json_t *approval_to_json(const approval *a);

void approval_clear(approval *a);
const char *approval_status_name(approval_status s);

#endif
