/* backend.c — http_backend_service: the HTTP layer's backend as the real
 * server has it, the functions of runs/service.h and the bearer-token
 * lookup of config/objects.h. Only server.c refers to it, so a unit test
 * that links loomserver with a fake backend does not pull in the service.
 * Const data; any thread. */
#include "surfaces/server/http/http.h"

static bool authenticate(const server_objects *objs, const char *bearer, principal *out)
{
    const token_entry *t = objs ? objects_token(objs, bearer) : NULL;
    if (!t)
        return false;
    out->tenant_id = t->tenant_id;
    out->project_id = t->project_id;
    out->actor_id = t->actor_id;
    out->role = t->role;
    out->audit = t->audit;
    return true;
}

const http_backend http_backend_service = {
    .authenticate = authenticate,
    .session_create = service_session_create,
    .session_get = service_session_get,
    .task_create = service_task_create,
    .task_get = service_task_get,
    .run_create = service_run_create,
    .run_get = service_run_get,
    .run_list = service_run_list,
    .run_cancel = service_run_cancel,
    .run_pause = service_run_pause,
    .run_resume = service_run_resume,
    .events_page = service_events_page,
    .artifacts_list = service_artifacts_list,
    .artifact_content = service_artifact_content,
    .transcript = service_transcript,
    .citations = service_citations,
    .approval_list = service_approval_list,
    .approval_get = service_approval_get,
    .approval_answer = service_approval_answer,
    .knowledge_search = service_knowledge_search,
    .object_get = service_object_get,
    .feed_open = service_feed_open,
    .feed_next = service_feed_next,
    .feed_close = service_feed_close,
    .profile_list = service_profile_list,
    .usage_list = service_usage_list,
    .run_input = service_run_input,
    .metrics = service_metrics,
};
