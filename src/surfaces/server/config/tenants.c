/* tenants.c — the tenants of tenants.yaml (seed 000 §10.9): each tenant's
 * projects and their workspaces, its quotas and its webhooks. The tokens of
 * the same file are tokens.c's.
 *
 * A tenant with no project gets "default" at the server's workspace, and a
 * file with no tenant (or no file) gets the tenant "default": a server
 * started without --config still has a place for runs. A relative workspace
 * is resolved against the config folder, so the folder can be moved whole.
 *
 * Runs on the loading thread; writes only into the set being loaded. */
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/path.h"
#include "base/sha256.h"
#include "base/str.h"
#include "surfaces/server/config/config_internal.h"

static const char *const WEBHOOK_EVENTS[] = {"run.completed", "approval.requested",
                                             "artifact.created", "policy.denied", NULL};

#define T(f) offsetof(tenant_config, quotas.f)
static const cfg_field QUOTA_FIELDS[] = {
    {"concurrent_runs", CFG_INT, T(concurrent_runs), 1, 100000, NULL, NULL, NULL},
    {"tool_executions_per_project", CFG_LONG, T(tool_executions_per_project), 0, 1000000000000L,
     NULL, NULL, NULL},
    {"tokens_per_session", CFG_LONG, T(tokens_per_session), 0, 1000000000000L, NULL, NULL, NULL},
    {"max_run_depth", CFG_INT, T(max_run_depth), 0, 16, NULL, NULL, NULL},
    {"max_tool_seconds", CFG_INT, T(max_tool_seconds), 1, 86400, NULL, NULL, NULL},
    {"max_artifacts_per_run", CFG_INT, T(max_artifacts_per_run), 1, 100000, NULL, NULL, NULL},
    {NULL, 0, 0, 0, 0, NULL, NULL, NULL}};
#undef T
static const cfg_field TENANT_FIELDS[] = {
    {"projects", CFG_CUSTOM, 0, 0, 0, NULL, NULL, NULL},
    {"quotas", CFG_GROUP, 0, 0, 0, NULL, QUOTA_FIELDS, NULL},
    {"webhooks", CFG_CUSTOM, 0, 0, 0, NULL, NULL, NULL},
    {NULL, 0, 0, 0, 0, NULL, NULL, NULL}};
static const cfg_field PROJECT_FIELDS[] = {
    {"workspace", CFG_TEXT, offsetof(tenant_project, workspace), 0, 0, NULL, NULL, NULL},
    {NULL, 0, 0, 0, 0, NULL, NULL, NULL}};
#define W(f) offsetof(tenant_webhook, f)
static const cfg_field WEBHOOK_FIELDS[] = {
    {"id", CFG_ID, W(id), 0, 0, NULL, NULL, NULL},
    {"url", CFG_TEXT, W(url), 0, 0, NULL, NULL, NULL},
    {"secret", CFG_TEXT, W(secret), 0, 0, NULL, NULL, NULL},
    {"events", CFG_LIST, W(events), 0, 0, WEBHOOK_EVENTS, NULL, NULL},
    {NULL, 0, 0, 0, 0, NULL, NULL, NULL}};
#undef W

static char *workspace_default(const char *given)
{
    if (given)
        return path_make_absolute(given, NULL);
    char cwd[PATH_MAX];
    return xstrdup(getcwd(cwd, sizeof cwd) ? cwd : "/");
}

static void tenant_init(tenant_config *t, const char *id)
{
    memset(t, 0, sizeof *t);
    t->id = xstrdup(id);
    t->quotas = (tenant_quotas){.concurrent_runs = 8, .max_run_depth = 3,
                                .max_tool_seconds = 600, .max_artifacts_per_run = 20};
}

static void add_default_project(tenant_config *t, const char *default_workspace)
{
    t->projects = xcalloc(1, sizeof *t->projects);
    t->projects[0].id = xstrdup("default");
    t->projects[0].workspace = workspace_default(default_workspace);
    t->n_projects = 1;
}

static int load_projects(server_objects *o, const cfg_at *at, const json_t *v, tenant_config *t,
                         const char *default_workspace)
{
    if (cfg_want_mapping(at, v) != 0)
        return -1;
    t->projects = xcalloc(json_object_size(v) + 1, sizeof *t->projects);
    const char *id;
    json_t *pv;
    json_object_foreach((json_t *)v, id, pv) {
        cfg_at one;
        cfg_at_child(&one, at, v, id, 0);
        if (!cfg_id_valid(id))
            return cfg_fail(&one, "not an id (1 to 64 of A-Z a-z 0-9 _ . -)");
        tenant_project *p = &t->projects[t->n_projects++];
        p->id = xstrdup(id);
        if (!json_is_null(pv) &&
            cfg_check_fields(&one, pv, PROJECT_FIELDS, p, NULL, NULL) != 0)
            return -1;
        char *ws = p->workspace ? cfg_resolve_path(o, p->workspace)
                                : workspace_default(default_workspace);
        free(p->workspace);
        p->workspace = ws;
    }
    if (t->n_projects == 0)
        add_default_project(t, default_workspace);
    return 0;
}

/* A Standard Webhooks secret: "whsec_" then base64 of at least 16 bytes. */
static bool secret_ok(const char *s)
{
    if (strncmp(s, "whsec_", 6) != 0)
        return false;
    size_t n = strlen(s + 6);
    if (n == 0 || n % 4 != 0 || n > 1024)
        return false;
    unsigned char buf[800];
    long got = base64_decode(s + 6, n, buf);
    return got >= 16;
}

static int load_webhooks(const cfg_at *at, const json_t *v, tenant_config *t)
{
    if (!json_is_array(v))
        return cfg_fail(at, "must be a list of webhooks ({url, secret, events?})");
    size_t n = json_array_size(v);
    t->webhooks = xcalloc(n + 1, sizeof *t->webhooks);
    for (size_t i = 0; i < n; i++) {
        cfg_at one;
        cfg_at_child(&one, at, v, NULL, i);
        tenant_webhook *w = &t->webhooks[t->n_webhooks++];
        const json_t *wv = json_array_get(v, i);
        if (cfg_check_fields(&one, wv, WEBHOOK_FIELDS, w, NULL, NULL) != 0)
            return -1;
        cfg_at k;
        if (!w->url)
            return cfg_fail(&one, "url is required");
        cfg_at_child(&k, &one, wv, "url", 0);
        if (strncmp(w->url, "http://", 7) != 0 && strncmp(w->url, "https://", 8) != 0)
            return cfg_fail(&k, "must start with http:// or https://");
        if (!w->secret)
            return cfg_fail(&one, "secret is required (whsec_ and base64)");
        cfg_at_child(&k, &one, wv, "secret", 0);
        if (!secret_ok(w->secret))
            return cfg_fail(&k, "must be whsec_ followed by the base64 of at least 16 bytes");
        if (!w->id) {
            char id[32];
            snprintf(id, sizeof id, "wh_%zu", i + 1);
            w->id = xstrdup(id);
        }
        for (size_t j = 0; j + 1 < t->n_webhooks; j++)
            if (strcmp(t->webhooks[j].id, w->id) == 0)
                return cfg_fail(&one, "the webhook id %s is given twice", w->id);
    }
    return 0;
}

static int one_tenant(server_objects *o, const cfg_at *at, const char *id, const json_t *v,
                      const char *default_workspace)
{
    o->tenants = xrealloc(o->tenants, (o->n_tenants + 1) * sizeof *o->tenants);
    tenant_config *t = &o->tenants[o->n_tenants++];
    tenant_init(t, id);
    if (!json_is_null(v) && cfg_check_fields(at, v, TENANT_FIELDS, t, NULL, NULL) != 0)
        return -1;
    const json_t *pv = json_is_object(v) ? json_object_get(v, "projects") : NULL;
    cfg_at k;
    if (pv && !json_is_null(pv)) {
        cfg_at_child(&k, at, v, "projects", 0);
        if (load_projects(o, &k, pv, t, default_workspace) != 0)
            return -1;
    } else {
        add_default_project(t, default_workspace);
    }
    const json_t *wv = json_is_object(v) ? json_object_get(v, "webhooks") : NULL;
    if (wv && !json_is_null(wv)) {
        cfg_at_child(&k, at, v, "webhooks", 0);
        if (load_webhooks(&k, wv, t) != 0)
            return -1;
    }
    return 0;
}

int cfg_load_tenants(server_objects *o, const cfg_doc *doc, const char *default_workspace,
                     srv_error *err)
{
    const char *const allowed[] = {"tenants", "tokens", NULL};
    if (cfg_check_top(doc, allowed, err) != 0)
        return -1;
    json_t *map = doc->root && json_is_object(doc->root) ? json_object_get(doc->root, "tenants")
                                                         : NULL;
    if (map && !json_is_null(map)) {
        cfg_at top = {.doc = doc, .err = err};
        cfg_at at;
        cfg_at_child(&at, &top, doc->root, "tenants", 0);
        if (cfg_want_mapping(&at, map) != 0)
            return -1;
        const char *id;
        json_t *v;
        json_object_foreach(map, id, v) {
            cfg_at one;
            cfg_at_child(&one, &at, map, id, 0);
            if (!cfg_id_valid(id))
                return cfg_fail(&one, "not an id (1 to 64 of A-Z a-z 0-9 _ . -)");
            if (one_tenant(o, &one, id, v, default_workspace) != 0)
                return -1;
        }
    }
    if (o->n_tenants == 0) {
        o->tenants = xcalloc(1, sizeof *o->tenants);
        tenant_init(&o->tenants[0], "default");
        add_default_project(&o->tenants[0], default_workspace);
        o->n_tenants = 1;
    }
    return 0;
}

void cfg_tenant_free(tenant_config *t)
{
    free(t->id);
    for (size_t i = 0; i < t->n_projects; i++)
        free(t->projects[i].id), free(t->projects[i].workspace);
    free(t->projects);
    for (size_t i = 0; i < t->n_webhooks; i++) {
        free(t->webhooks[i].id), free(t->webhooks[i].url), free(t->webhooks[i].secret);
        cfg_list_free(&t->webhooks[i].events);
    }
    free(t->webhooks);
}
