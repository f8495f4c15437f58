/* routes_meta.c — the routes about the server itself: the two public ones,
 * GET /healthz (the process answers; no token, so a load balancer or a
 * test can poll it) and GET /openapi.json (the document compiled in from
 * http/openapi.json, the contract clients validate against), and GET
 * /metrics (Prometheus text, an admin token: runs/metrics.c). No state;
 * any thread. */
#include <jansson.h>
#include <string.h>

#include "base/json.h"
#include "base/str.h"
#include "loom.h"
#include "surfaces/server/http/http_internal.h"

void route_healthz(http_req *r)
{
    if (!query_only(r, NULL))
        return;
    json_t *o = json_pack("{ssss}", "status", "ok", "version", loom_version());
    reply_json(r, 200, json_dump_compact(o));
    json_decref(o);
}

void route_openapi(http_req *r)
{
    if (!query_only(r, NULL))
        return;
    char *doc = xmalloc(loom_openapi_json_len + 1);
    memcpy(doc, loom_openapi_json, loom_openapi_json_len);
    doc[loom_openapi_json_len] = '\0';
    reply_json(r, 200, doc);
}

void route_metrics(http_req *r)
{
    if (!query_only(r, NULL))
        return;
    if (!r->ctx->be->metrics) {
        reply_fail(r, 0, LOOM_ERR_RESOURCE_NOT_FOUND, NULL, "this server has no metrics");
        return;
    }
    srv_error err = {0};
    char *text = r->ctx->be->metrics(r->ctx->svc, &r->who, &err);
    if (!text) {
        reply_error(r, &err);
        return;
    }
    r->reply.status = 200;
    r->reply.body = text;
    r->reply.len = strlen(text);
    r->reply.content_type = xstrdup("text/plain; version=0.0.4; charset=utf-8");
}
