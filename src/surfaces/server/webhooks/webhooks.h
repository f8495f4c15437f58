/* webhooks.h — the event-driven service form (seed 000 §10.4 item 4):
 * run.completed, approval.requested, artifact.created and policy.denied
 * POSTed to a tenant's webhooks in the Standard Webhooks format
 * (webhook-id, webhook-timestamp, webhook-signature "v1,<base64 HMAC-SHA256
 * of id.timestamp.body>" with the secret's base64-decoded key), retried with
 * exponential backoff on a non-2xx answer or a connection failure, each
 * attempt written to the delivery log (store kind STORE_DELIVERY:
 * {delivery_id, webhook_id, tenant_id, event_type, event_id, url, attempt,
 * status: pending|delivered|failed, http_status, error, created_at,
 * updated_at}). Docs: docs/server-webhooks.md.
 *
 * One sender thread owns the queue and the HTTP calls; webhooks_emit only
 * enqueues and returns at once (never blocks a run on a slow receiver).
 * Only http:// and https:// URLs are sent; a URL whose host is not loopback
 * is refused unless allow_remote was set. */
#ifndef LOOM_SERVER_WEBHOOKS_H
#define LOOM_SERVER_WEBHOOKS_H

#include <stdbool.h>

#include "surfaces/server/config/objects.h"
#include "surfaces/server/store/store.h"

typedef struct webhooks webhooks;

typedef struct webhooks_options {
    int max_attempts;       /* default 5 */
    int first_backoff_ms;   /* default 500, doubled each attempt, capped at 60 s */
    int timeout_ms;         /* per attempt, default 10000 */
    bool allow_remote;      /* send to non-loopback hosts (off in tests) */
} webhooks_options;

/* opts may be NULL (defaults). The store is borrowed (outlives webhooks). */
webhooks *webhooks_new(store *st, const webhooks_options *opts, srv_error *err);
/* Queues event_type (one of the four) with payload_json (the event object
 * the receiver gets as the body's "data") for every webhook of tenant that
 * takes it. event_id makes webhook-id stable across retries. */
void webhooks_emit(webhooks *wh, const tenant_config *tenant, const char *event_type,
                   const char *event_id, const char *payload_json);
/* Waits up to timeout_ms for the queue to drain (tests, shutdown). */
bool webhooks_flush(webhooks *wh, int timeout_ms);
void webhooks_free(webhooks *wh);

/* The signature header value for (id, timestamp, body) under secret
 * ("whsec_…" or raw base64): "v1,<base64>", malloc'd; NULL for a bad secret. */
char *webhooks_sign(const char *secret, const char *msg_id, long timestamp, const char *body);

#endif
