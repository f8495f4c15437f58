/* routes_knowledge.c — POST /knowledge/search (an EvidencePack) and the
 * declarative objects as the config loaded them: GET /profiles/{id},
 * /policies/{id}, /knowledge-sources/{id}. No state; any thread. */
#include "surfaces/server/http/http_internal.h"

static const body_field SEARCH_BODY[] = {
    {"query", BODY_STRING, true, 0, 0},
    {"knowledge_sources", BODY_STRINGS, false, 0, 0},
    {"limit", BODY_INT, false, 1, 100},
    {"run_id", BODY_STRING, false, 0, 0}, /* ties the evidence pack to a run (seed §10.8 5–6) */
    {NULL, BODY_STRING, false, 0, 0},
};

void route_knowledge_search(http_req *r)
{
    if (!query_only(r, NULL) || !body_check(r, SEARCH_BODY))
        return;
    srv_error err = {0};
    char *j = r->ctx->be->knowledge_search(r->ctx->svc, &r->who, body_text(r), &err);
    reply_result(r, j, 200, &err);
}

static void object_get(http_req *r, const char *kind)
{
    if (!query_only(r, NULL))
        return;
    srv_error err = {0};
    char *j = r->ctx->be->object_get(r->ctx->svc, &r->who, kind, r->params[0], &err);
    reply_result(r, j, 200, &err);
}

void route_profile_get(http_req *r)
{
    object_get(r, "profile");
}

void route_policy_get(http_req *r)
{
    object_get(r, "policy");
}

void route_knowledge_source_get(http_req *r)
{
    object_get(r, "knowledge_source");
}
