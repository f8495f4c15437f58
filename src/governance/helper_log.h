/* helper_log.h — where a helper model call is written down: one
 * `helper-call` record in the session and one line in the audit log per
 * call (provider/helper.h), with its purpose, tier, model, usage and cost.
 *
 * The router queues a record when a call ends, on whatever thread made it;
 * the session's transcript has one writer at a time, so the records are
 * settled by the thread that owns the transcript: the loop at its
 * boundaries, the API after a call it made outside a run. */
#ifndef LOOM_GOVERNANCE_HELPER_LOG_H
#define LOOM_GOVERNANCE_HELPER_LOG_H

#include "governance/governance.h"
#include "provider/helper.h"
#include "session/transcript.h"

/* Accounts one record and prices it: adds its tokens to the run (unless
 * rec->counted) and returns its cost in USD, < 0 when unknown. */
typedef double (*helper_account_fn)(void *ctx, const helper_record *rec);

/* Takes g's records from its router (a session's own governance also takes
 * those without an owner), accounts each through account (may be NULL:
 * cost unknown), appends a `helper-call` record to t (may be NULL) and a
 * line to g's audit log. Returns how many it settled. A failed write is
 * skipped, never fatal: the call already happened. */
size_t governance_settle_helpers(governance *g, transcript *t, const char *run_id,
                                 helper_account_fn account, void *ctx);

#endif
