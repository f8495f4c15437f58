/* routes_approvals.c — approvals as objects (seed 000 §10.5): GET
 * /approvals, GET /approvals/{id}, POST /approvals/{id}:approve and
 * :reject (the router requires the approver role for those two; the
 * service checks the approval's own rules: already answered 409, expired
 * 410). No state; any thread. */
#include <string.h>

#include "surfaces/server/http/http_internal.h"

static const body_field ANSWER_BODY[] = {
    {"actor_id", BODY_STRING, false, 0, 0},
    {"comment", BODY_STRING, false, 0, 0},
    {NULL, BODY_STRING, false, 0, 0},
};

static const char *const STATUSES[] = {"pending", "approved", "rejected", "expired",
                                       "cancelled", NULL};

void route_approval_list(http_req *r)
{
    static const char *const q[] = {"run_id", "status", NULL};
    if (!query_only(r, q))
        return;
    const char *status = query_get(r, "status");
    if (status) {
        bool known = false;
        for (size_t i = 0; STATUSES[i]; i++)
            known = known || strcmp(status, STATUSES[i]) == 0;
        if (!known) {
            reply_fail(r, 0, LOOM_ERR_INVALID_REQUEST, NULL,
                       "status must be pending, approved, rejected, expired or cancelled, "
                       "not \"%.64s\"", status);
            return;
        }
    }
    srv_error err = {0};
    char *j = r->ctx->be->approval_list(r->ctx->svc, &r->who, query_get(r, "run_id"), status,
                                        &err);
    reply_result(r, j, 200, &err);
}

void route_approval_get(http_req *r)
{
    if (!query_only(r, NULL))
        return;
    srv_error err = {0};
    char *j = r->ctx->be->approval_get(r->ctx->svc, &r->who, r->params[0], &err);
    reply_result(r, j, 200, &err);
}

static void answer(http_req *r, bool approve)
{
    if (!query_only(r, NULL) || !body_check(r, ANSWER_BODY))
        return;
    srv_error err = {0};
    char *j = r->ctx->be->approval_answer(r->ctx->svc, &r->who, r->params[0], approve,
                                          body_text(r), &err);
    reply_result(r, j, 200, &err);
}

void route_approval_approve(http_req *r)
{
    answer(r, true);
}

void route_approval_reject(http_req *r)
{
    answer(r, false);
}
