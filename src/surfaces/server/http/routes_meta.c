/* routes_meta.c — the two public routes: GET /healthz (the process answers;
 * no token, so a load balancer or a test can poll it) and GET /openapi.json
 * (the document compiled in from http/openapi.json, the contract clients
 * validate against). No state; any thread. */
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
