/* routes_sessions.c — sessions and tasks: POST /sessions, GET
 * /sessions/{id}, POST /tasks, GET /tasks/{id}. Each parses and checks the
 * request (strict bodies: an unknown key is a 400), calls the backend,
 * replies; the service owns every rule about the objects themselves.
 * No state; any thread. */
#include "surfaces/server/http/http_internal.h"

static const body_field SESSION_BODY[] = {
    {"project_id", BODY_STRING, false, 0, 0},
    {"app_id", BODY_STRING, false, 0, 0},
    {"user_id", BODY_STRING, false, 0, 0},
    {"metadata", BODY_OBJECT, false, 0, 0},
    {NULL, BODY_STRING, false, 0, 0},
};

static const body_field TASK_BODY[] = {
    {"session_id", BODY_STRING, true, 0, 0},
    {"goal", BODY_STRING, true, 0, 0},
    {"agent_profile", BODY_STRING, false, 0, 0},
    {"policy_id", BODY_STRING, false, 0, 0},
    {"knowledge_sources", BODY_STRINGS, false, 0, 0},
    {"priority", BODY_INT, false, -1000, 1000},
    {NULL, BODY_STRING, false, 0, 0},
};

void route_session_create(http_req *r)
{
    if (!query_only(r, NULL) || !body_check(r, SESSION_BODY))
        return;
    srv_error err = {0};
    char *j = r->ctx->be->session_create(r->ctx->svc, &r->who, body_text(r), &err);
    reply_result(r, j, 201, &err);
}

void route_session_get(http_req *r)
{
    if (!query_only(r, NULL))
        return;
    srv_error err = {0};
    char *j = r->ctx->be->session_get(r->ctx->svc, &r->who, r->params[0], &err);
    reply_result(r, j, 200, &err);
}

void route_task_create(http_req *r)
{
    if (!query_only(r, NULL) || !body_check(r, TASK_BODY))
        return;
    srv_error err = {0};
    char *j = r->ctx->be->task_create(r->ctx->svc, &r->who, body_text(r), &err);
    reply_result(r, j, 201, &err);
}

void route_task_get(http_req *r)
{
    if (!query_only(r, NULL))
        return;
    srv_error err = {0};
    char *j = r->ctx->be->task_get(r->ctx->svc, &r->who, r->params[0], &err);
    reply_result(r, j, 200, &err);
}
