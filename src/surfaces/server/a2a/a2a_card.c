/* a2a_card.c — the Agent Card (A2A v1.0, ProtoJSON as the SDK reads it):
 * name, description, version, one JSONRPC interface at <base>/a2a
 * (protocolVersion 1.0), capabilities {streaming, pushNotifications},
 * text/JSON input and output modes, a skill per configured agent profile
 * the caller may use (the global ones; with a token, its tenant's too),
 * and the bearer security scheme every call but the card needs.
 *
 * It reads the profiles through config_internal.h: objects.h has no walk
 * over them, and the card is the one place that lists them. No state;
 * any thread (the objects are read-only after load). */
#include <stdlib.h>
#include <string.h>

#include "base/json.h"
#include "base/str.h"
#include "surfaces/server/a2a/a2a_internal.h"
#include "loom.h"
#include "surfaces/server/config/config_internal.h"

static json_t *strings(const char *const *v)
{
    json_t *a = json_array();
    for (size_t i = 0; v[i]; i++)
        json_array_append_new(a, json_string(v[i]));
    return a;
}

static json_t *skill(const agent_profile *p)
{
    json_t *s = json_object();
    json_object_set_new(s, "id", json_string(p->id));
    json_object_set_new(s, "name", json_string(p->id));
    loom_str d = LOOM_STR_INIT;
    str_printf(&d, "Loom coding agent, profile %s", p->id);
    if (p->model)
        str_printf(&d, " (model %s)", p->model);
    if (p->mode)
        str_printf(&d, ", permission mode %s", p->mode);
    str_puts(&d, ": give it a goal in the project's workspace; it plans, edits, runs tools "
                 "under the profile's policy and answers with artifacts.");
    json_object_set_new(s, "description", json_string(str_cstr(&d)));
    str_free(&d);
    json_t *tags = json_array();
    json_array_append_new(tags, json_string("loom"));
    json_array_append_new(tags, json_string("coding"));
    if (p->mode)
        json_array_append_new(tags, json_string(p->mode));
    for (size_t i = 0; i < p->skills.n; i++)
        json_array_append_new(tags, json_string(p->skills.items[i]));
    json_object_set_new(s, "tags", tags);
    return s;
}

char *a2a_card_json(const a2a_env *env, const principal *who)
{
    json_t *c = json_object();
    json_object_set_new(c, "name", json_string("Loom"));
    json_object_set_new(c, "description",
                        json_string("Loom, a coding agent harness, served by loom serve: each "
                                    "A2A task is one run (a session's task), its contextId the "
                                    "session."));
    json_object_set_new(c, "version", json_string(loom_version()));
    json_t *ifc = json_object();
    loom_str url = LOOM_STR_INIT;
    str_printf(&url, "%s/a2a", env->base_url ? env->base_url : "http://127.0.0.1:8787");
    json_object_set_new(ifc, "url", json_string(str_cstr(&url)));
    str_free(&url);
    json_object_set_new(ifc, "protocolBinding", json_string("JSONRPC"));
    json_object_set_new(ifc, "protocolVersion", json_string("1.0"));
    json_t *ifcs = json_array();
    json_array_append_new(ifcs, ifc);
    json_object_set_new(c, "supportedInterfaces", ifcs);
    json_t *caps = json_object();
    json_object_set_new(caps, "streaming", json_true());
    json_object_set_new(caps, "pushNotifications", json_true());
    json_object_set_new(c, "capabilities", caps);
    static const char *const IN[] = {"text/plain", "application/json", NULL};
    static const char *const OUT[] = {"text/plain", "text/markdown", "text/x-diff",
                                      "application/json", NULL};
    json_object_set_new(c, "defaultInputModes", strings(IN));
    json_object_set_new(c, "defaultOutputModes", strings(OUT));
    json_t *skills = json_array();
    const server_objects *o = env->objs;
    for (size_t i = 0; o && i < o->n_profiles; i++) {
        const agent_profile *p = &o->profiles[i];
        if (p->tenant_id && (!who || !who->tenant_id || strcmp(p->tenant_id, who->tenant_id) != 0))
            continue;
        json_array_append_new(skills, skill(p));
    }
    json_object_set_new(c, "skills", skills);
    json_t *http = json_object();
    json_object_set_new(http, "scheme", json_string("Bearer"));
    json_object_set_new(http, "description",
                        json_string("A token from the server's tenants.yaml: Authorization: "
                                    "Bearer <token>."));
    json_t *scheme = json_object();
    json_object_set_new(scheme, "httpAuthSecurityScheme", http);
    json_t *schemes = json_object();
    json_object_set_new(schemes, "bearer", scheme);
    json_object_set_new(c, "securitySchemes", schemes);
    json_t *req = json_object(), *sch = json_object(), *lst = json_object();
    json_object_set_new(lst, "list", json_array());
    json_object_set_new(sch, "bearer", lst);
    json_object_set_new(req, "schemes", sch);
    json_t *reqs = json_array();
    json_array_append_new(reqs, req);
    json_object_set_new(c, "securityRequirements", reqs);
    char *s = json_dump_compact(c);
    json_decref(c);
    return s;
}
