/* helper_log.c — settling helper calls into the session and the audit log
 * (see helper_log.h). Called on the thread that owns the transcript. */
#include "governance/helper_log.h"

#include <stdlib.h>

#include "base/json.h"
#include "policy/audit.h"
#include "session/record.h"

size_t governance_settle_helpers(governance *g, transcript *t, const char *run_id,
                                 helper_account_fn account, void *ctx)
{
    if (!g || !g->helpers)
        return 0;
    helper_record *recs;
    size_t n;
    helper_router_take(g->helpers, g, g->parent == NULL, &recs, &n);
    for (size_t i = 0; i < n; i++) {
        double cost = account ? account(ctx, &recs[i]) : -1;
        json_t *fields = helper_record_json(&recs[i]);
        if (cost >= 0)
            json_object_set_new(fields, "costUsd", json_real(cost));
        if (recs[i].counted)
            json_object_set_new(fields, "countedBy", json_string("caller"));
        if (t) {
            json_t *rec = record_new(RECORD_HELPER_CALL);
            json_object_update(rec, fields);
            loom_error ignore;
            transcript_append_new(t, rec, &ignore);
        }
        audit_record_helper(g->audit, g->session_id, run_id, fields);
        json_decref(fields);
        helper_record_free(&recs[i]);
    }
    free(recs);
    return n;
}
