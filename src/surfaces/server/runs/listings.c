/* listings.c — listings the run console needs that the object routes did
 * not give (docs/console.md): GET /profiles, the profiles a tenant may
 * start a run with, and GET /usage, each run's tokens, cost, model and
 * tool outcomes. /usage is built from service_run_list and
 * service_events_page, so it sees exactly the runs and events the caller
 * may see, by the same rules; it reads the store and the loaded objects,
 * holds no state of its own; any thread. */
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

/* The figures of one run from its events: the model (the first
 * run.state_changed to running names it), the last cost_usd of the run
 * itself (a sub-agent's events carry agent_id and their cost is already in
 * the parent's), tool calls and failures. */
static void usage_of_events(service *svc, const principal *who, const char *run_id, json_t *u)
{
    int64_t after = 0;
    json_int_t calls = 0, failures = 0;
    unsigned mask = 1u << LOOM_VIS_USER | 1u << LOOM_VIS_SYSTEM;
    for (int pages = 0; pages < 100; pages++) {
        srv_error err = {0};
        char *text = service_events_page(svc, who, run_id, after, 1000, mask, &err);
        json_t *page = text ? json_loads(text, 0, NULL) : NULL;
        free(text);
        srv_error_clear(&err);
        if (!page)
            break;
        size_t i;
        json_t *e;
        json_array_foreach(json_object_get(page, "items"), i, e) {
            const char *type = json_string_value(json_object_get(e, "type"));
            json_t *p = json_object_get(e, "payload");
            if (!type || !json_is_object(p) || json_object_get(p, "agent_id"))
                continue;
            json_t *cost = json_object_get(p, "cost_usd");
            if (json_is_number(cost))
                json_object_set(u, "cost_usd", cost);
            json_t *model = json_object_get(p, "model");
            if (!strcmp(type, "run.state_changed") && json_is_string(model) &&
                json_is_null(json_object_get(u, "model")))
                json_object_set(u, "model", model);
            if (!strcmp(type, "tool.finished") || !strcmp(type, "tool.failed")) {
                calls++;
                if (!strcmp(type, "tool.failed") || json_is_true(json_object_get(p, "is_error")))
                    failures++;
            }
        }
        after = json_integer_value(json_object_get(page, "next_after"));
        bool more = json_is_true(json_object_get(page, "has_more"));
        json_decref(page);
        if (!more)
            break;
    }
    json_object_set_new(u, "tool_calls", json_integer(calls));
    json_object_set_new(u, "tool_failures", json_integer(failures));
}

char *service_usage_list(service *svc, const principal *who, const char *session_id,
                         const char *state, const char *cursor, int limit, srv_error *err)
{
    char *text = service_run_list(svc, who, session_id, state, cursor, limit, err);
    if (!text)
        return NULL;
    json_t *runs = json_loads(text, 0, NULL);
    free(text);
    if (!runs)
        return srv_fail(err, LOOM_ERR_INTERNAL, "the run list is not JSON"), NULL;
    json_t *items = json_array();
    size_t i;
    json_t *r;
    json_array_foreach(json_object_get(runs, "items"), i, r) {
        const char *id = json_string_value(json_object_get(r, "run_id"));
        if (!id)
            continue;
        json_t *usage = json_object_get(r, "usage");
        json_t *u = json_pack("{sOsOsOsOsOsOsOsIsIsnsn}", "run_id", json_object_get(r, "run_id"),
                              "session_id", json_object_get(r, "session_id"), "tenant_id",
                              json_object_get(r, "tenant_id"), "project_id",
                              json_object_get(r, "project_id"), "agent_profile",
                              json_object_get(r, "agent_profile"), "state",
                              json_object_get(r, "state"), "created_at",
                              json_object_get(r, "created_at"), "input_tokens",
                              (json_int_t)json_integer_value(json_object_get(usage, "input_tokens")),
                              "output_tokens",
                              (json_int_t)json_integer_value(json_object_get(usage, "output_tokens")),
                              "model", "cost_usd");
        if (!u)
            continue;
        usage_of_events(svc, who, id, u);
        json_array_append_new(items, u);
    }
    json_t *page = json_pack("{soso}", "items", items, "next_cursor",
                             json_incref(json_object_get(runs, "next_cursor")) ?: json_null());
    json_decref(runs);
    char *out = json_dump_compact(page);
    json_decref(page);
    return out;
}
