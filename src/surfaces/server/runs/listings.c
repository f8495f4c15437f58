/* listings.c — listings the run console needs that the object routes did
 * not give (docs/console.md): GET /profiles, the profiles a tenant may
 * start a run with. Reads the loaded objects only (const after load); any
 * thread. */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "base/json.h"
#include "surfaces/server/runs/service_int.h"

char *service_profile_list(service *svc, const principal *who, srv_error *err)
{
    if (!who || !who->tenant_id)
        return srv_fail(err, LOOM_ERR_UNAUTHENTICATED, "no principal"), NULL;
    size_t n = objects_profiles(svc->objs, NULL, 0);
    const agent_profile **all = calloc(n ? n : 1, sizeof *all);
    if (!all)
        return srv_fail(err, LOOM_ERR_INTERNAL, "out of memory"), NULL;
    objects_profiles(svc->objs, all, n);
    json_t *items = json_array();
    for (size_t i = 0; i < n; i++) {
        /* A tenant sees its own and the global ones, as GET /profiles/{id}. */
        if (all[i]->tenant_id && strcmp(all[i]->tenant_id, who->tenant_id) != 0)
            continue;
        json_t *o = all[i]->json ? json_loads(all[i]->json, 0, NULL) : NULL;
        if (o)
            json_array_append_new(items, o);
    }
    free(all);
    json_t *page = json_pack("{so}", "items", items);
    char *text = json_dump_compact(page);
    json_decref(page);
    return text;
}
