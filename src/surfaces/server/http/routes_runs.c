/* routes_runs.c — runs and what hangs off them: POST /runs (async 201, or
 * sync with ?wait=S: 200 when it ended, 202 run_waiting_approval, 201 when
 * the wait ran out first), GET /runs (a page), GET /runs/{id}, the
 * :cancel/:pause/:resume actions, GET …/events (a page of stored events),
 * …/artifacts and one artifact's bytes, …/transcript, …/citations.
 * (…/stream is sse.c.) No state; any thread. */
#include <stdlib.h>
#include <string.h>

#include "base/str.h"
#include "surfaces/server/http/http_internal.h"

static const body_field RUN_BODY[] = {
    {"task_id", BODY_STRING, true, 0, 0},
    {"multitask_strategy", BODY_STRING, false, 0, 0},
    {"note", BODY_STRING, false, 0, 0},
    {"priority", BODY_INT, false, -1000, 1000},
    {NULL, BODY_STRING, false, 0, 0},
};
static const body_field CANCEL_BODY[] = {
    {"reason", BODY_STRING, false, 0, 0},
    {NULL, BODY_STRING, false, 0, 0},
};
static const body_field RESUME_BODY[] = {
    {"note", BODY_STRING, false, 0, 0},
    {NULL, BODY_STRING, false, 0, 0},
};
static const body_field INPUT_BODY[] = {
    {"input_id", BODY_STRING, false, 0, 0},
    {"answers", BODY_OBJECT, false, 0, 0},
    {"text", BODY_STRING, false, 0, 0},
    {NULL, BODY_STRING, false, 0, 0},
};
static const body_field NO_BODY[] = {
    {NULL, BODY_STRING, false, 0, 0},
};

/* The server's run states (service.h's state machine), for ?state=. */
static const char *const RUN_STATES[] = {
    "queued", "running", "waiting_approval", "waiting_external", "paused", "completed",
    "failed", "cancelled", "blocked_by_policy", "blocked_by_capability", NULL,
};

static bool one_of(const char *v, const char *const *set)
{
    for (size_t i = 0; set[i]; i++)
        if (strcmp(v, set[i]) == 0)
            return true;
    return false;
}

void route_run_create(http_req *r)
{
    static const char *const q[] = {"wait", NULL};
    int64_t wait_s;
    if (!query_only(r, q) || !query_int(r, "wait", 0, 300, -1, &wait_s) ||
        !body_check(r, RUN_BODY))
        return;
    static const char *const STRATEGIES[] = {"reject", "enqueue", "interrupt", NULL};
    const char *strategy = json_string_value(json_object_get(r->json, "multitask_strategy"));
    if (strategy && !one_of(strategy, STRATEGIES)) {
        reply_fail(r, 0, LOOM_ERR_INVALID_REQUEST, NULL,
                   "multitask_strategy must be reject, enqueue or interrupt, not \"%.64s\"",
                   strategy);
        return;
    }
    srv_error err = {0};
    bool ended = false;
    long wait_ms = wait_s < 0 ? -1 : (long)wait_s * 1000;
    char *j = r->ctx->be->run_create(r->ctx->svc, &r->who, body_text(r), wait_ms, &ended, &err);
    reply_result(r, j, wait_ms >= 0 && ended ? 200 : 201, &err);
}

void route_run_list(http_req *r)
{
    static const char *const q[] = {"session_id", "state", "limit", "cursor", NULL};
    int64_t limit;
    if (!query_only(r, q) || !query_int(r, "limit", 1, 200, 50, &limit))
        return;
    const char *state = query_get(r, "state");
    if (state && !one_of(state, RUN_STATES)) {
        reply_fail(r, 0, LOOM_ERR_INVALID_REQUEST, NULL, "state \"%.64s\" is not a run state",
                   state);
        return;
    }
    srv_error err = {0};
    char *j = r->ctx->be->run_list(r->ctx->svc, &r->who, query_get(r, "session_id"), state,
                                   query_get(r, "cursor"), (int)limit, &err);
    reply_result(r, j, 200, &err);
}

void route_run_get(http_req *r)
{
    if (!query_only(r, NULL))
        return;
    srv_error err = {0};
    char *j = r->ctx->be->run_get(r->ctx->svc, &r->who, r->params[0], &err);
    reply_result(r, j, 200, &err);
}

void route_run_cancel(http_req *r)
{
    if (!query_only(r, NULL) || !body_check(r, CANCEL_BODY))
        return;
    srv_error err = {0};
    char *j = r->ctx->be->run_cancel(r->ctx->svc, &r->who, r->params[0], body_text(r), &err);
    reply_result(r, j, 200, &err);
}

void route_run_pause(http_req *r)
{
    if (!query_only(r, NULL) || !body_check(r, NO_BODY))
        return;
    srv_error err = {0};
    char *j = r->ctx->be->run_pause(r->ctx->svc, &r->who, r->params[0], &err);
    reply_result(r, j, 200, &err);
}

void route_run_resume(http_req *r)
{
    if (!query_only(r, NULL) || !body_check(r, RESUME_BODY))
        return;
    srv_error err = {0};
    char *j = r->ctx->be->run_resume(r->ctx->svc, &r->who, r->params[0], body_text(r), &err);
    reply_result(r, j, 200, &err);
}

/* POST /runs/{id}:input — the answer to what a waiting_external run asks. */
void route_run_input(http_req *r)
{
    if (!query_only(r, NULL) || !body_check(r, INPUT_BODY))
        return;
    srv_error err = {0};
    if (!r->ctx->be->run_input) {
        srv_fail(&err, LOOM_ERR_INVALID_REQUEST, "this server takes no answers");
        reply_result(r, NULL, 200, &err);
        return;
    }
    char *j = r->ctx->be->run_input(r->ctx->svc, &r->who, r->params[0], body_text(r), &err);
    reply_result(r, j, 200, &err);
}

void route_run_events(http_req *r)
{
    static const char *const q[] = {"after", "limit", "visibility", NULL};
    int64_t after, limit;
    unsigned mask;
    if (!query_only(r, q) || !query_int(r, "after", 0, INT64_MAX / 2, 0, &after) ||
        !query_int(r, "limit", 1, 1000, 200, &limit) || !query_visibility(r, &mask))
        return;
    srv_error err = {0};
    char *j = r->ctx->be->events_page(r->ctx->svc, &r->who, r->params[0], after, (int)limit,
                                      mask, &err);
    reply_result(r, j, 200, &err);
}

void route_run_artifacts(http_req *r)
{
    if (!query_only(r, NULL))
        return;
    srv_error err = {0};
    char *j = r->ctx->be->artifacts_list(r->ctx->svc, &r->who, r->params[0], &err);
    reply_result(r, j, 200, &err);
}

void route_run_artifact(http_req *r)
{
    if (!query_only(r, NULL))
        return;
    srv_error err = {0};
    size_t len = 0;
    char *type = NULL;
    void *bytes = r->ctx->be->artifact_content(r->ctx->svc, &r->who, r->params[0],
                                               r->params[1], &len, &type, &err);
    if (!bytes && err.code != LOOM_OK) {
        free(type);
        reply_error(r, &err);
        return;
    }
    srv_error_clear(&err);
    reply_free(&r->reply);
    r->reply.status = 200;
    r->reply.body = bytes;
    r->reply.len = len;
    r->reply.content_type = type ? type : xstrdup("application/octet-stream");
}

void route_run_transcript(http_req *r)
{
    if (!query_only(r, NULL))
        return;
    srv_error err = {0};
    char *j = r->ctx->be->transcript(r->ctx->svc, &r->who, r->params[0], &err);
    reply_result(r, j, 200, &err);
}

void route_run_citations(http_req *r)
{
    if (!query_only(r, NULL))
        return;
    srv_error err = {0};
    char *j = r->ctx->be->citations(r->ctx->svc, &r->who, r->params[0], &err);
    reply_result(r, j, 200, &err);
}
