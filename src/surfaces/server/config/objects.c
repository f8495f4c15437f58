/* objects.c — the set of objects.h: loading the four files of the config
 * folder in the order their references need (tenants, then policies and
 * sources, then profiles), the checks across files, the lookups and freeing.
 *
 * Visibility: an object with a tenant is that tenant's only; one without is
 * global and seen by all. A lookup looks for the tenant's own object first,
 * then a global one, so the rule stays right if ids ever become per-tenant.
 * A NULL tenant sees only global objects.
 *
 * Loading runs on one thread; afterwards the set is read-only and every
 * lookup may be called from any thread. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/path.h"
#include "base/str.h"
#include "surfaces/server/config/config_internal.h"

bool cfg_visible(const char *owner, const char *tenant_id)
{
    return !owner || (tenant_id && strcmp(owner, tenant_id) == 0);
}

char *cfg_resolve_path(const server_objects *o, const char *p)
{
    return path_make_absolute(p, o->dir ? o->dir : "/");
}

/* The place of ROOT.top.id.key in doc, for an error found after loading. */
static void at_key(cfg_at *out, const cfg_doc *doc, const char *top, const char *id,
                   const char *key, srv_error *err)
{
    cfg_at a = {.doc = doc, .err = err}, b, c;
    json_t *map = doc->root ? json_object_get(doc->root, top) : NULL;
    json_t *node = map ? json_object_get(map, id) : NULL;
    cfg_at_child(&b, &a, doc->root, top, 0);
    cfg_at_child(&c, &b, map, id, 0);
    if (key && node)
        cfg_at_child(out, &c, node, key, 0);
    else
        *out = c;
}

static int check_tenant_ref(server_objects *o, const cfg_doc *doc, const char *top,
                            const char *id, const char *tenant, srv_error *err)
{
    if (!tenant || objects_tenant(o, tenant))
        return 0;
    cfg_at at;
    at_key(&at, doc, top, id, "tenant", err);
    return cfg_fail(&at, "no tenant %s in tenants.yaml", tenant);
}

/* Each name of a profile's list (policies or knowledge_sources) exists and
 * is visible to the profile's tenant. */
static int check_refs(server_objects *o, const cfg_doc *doc, const agent_profile *p,
                      const char *key, const str_list *names, srv_error *err)
{
    bool policies = strcmp(key, "policies") == 0;
    for (size_t i = 0; i < names->n; i++) {
        const char *name = names->items[i];
        const char *owner = NULL;
        bool found = false;
        if (policies) {
            for (size_t j = 0; j < o->n_policies && !found; j++)
                if (strcmp(o->policies[j].id, name) == 0)
                    found = true, owner = o->policies[j].tenant_id;
        } else {
            for (size_t j = 0; j < o->n_sources && !found; j++)
                if (strcmp(o->sources[j].id, name) == 0)
                    found = true, owner = o->sources[j].tenant_id;
        }
        if (found && cfg_visible(owner, p->tenant_id))
            continue;
        cfg_at list, item;
        at_key(&list, doc, "profiles", p->id, key, err);
        json_t *map = json_object_get(doc->root, "profiles");
        json_t *arr = json_object_get(json_object_get(map, p->id), key);
        cfg_at_child(&item, &list, arr, NULL, i);
        const char *what = policies ? "policy" : "knowledge source";
        const char *file = policies ? "policies.yaml" : "knowledge_sources.yaml";
        if (!found)
            return cfg_fail(&item, "no %s %s in %s", what, name, file);
        if (p->tenant_id)
            return cfg_fail(&item, "the %s %s belongs to tenant %s, not %s", what, name, owner,
                            p->tenant_id);
        return cfg_fail(&item, "the %s %s belongs to tenant %s: a global profile names only "
                               "global ones",
                        what, name, owner);
    }
    return 0;
}

int cfg_cross_check(server_objects *o, const cfg_doc *profiles, const cfg_doc *policies,
                    const cfg_doc *sources, srv_error *err)
{
    for (size_t i = 0; i < o->n_policies; i++)
        if (check_tenant_ref(o, policies, "policies", o->policies[i].id,
                             o->policies[i].tenant_id, err) != 0)
            return -1;
    for (size_t i = 0; i < o->n_sources; i++) {
        const knowledge_source *s = &o->sources[i];
        if (check_tenant_ref(o, sources, "knowledge_sources", s->id, s->tenant_id, err) != 0)
            return -1;
        if (s->project_id && !objects_project(objects_tenant(o, s->tenant_id), s->project_id)) {
            cfg_at at;
            at_key(&at, sources, "knowledge_sources", s->id, "project", err);
            return cfg_fail(&at, "tenant %s has no project %s", s->tenant_id, s->project_id);
        }
    }
    for (size_t i = 0; i < o->n_profiles; i++) {
        const agent_profile *p = &o->profiles[i];
        if (check_tenant_ref(o, profiles, "profiles", p->id, p->tenant_id, err) != 0 ||
            check_refs(o, profiles, p, "policies", &p->policies, err) != 0 ||
            check_refs(o, profiles, p, "knowledge_sources", &p->knowledge_sources, err) != 0)
            return -1;
    }
    return 0;
}

static int read_one(cfg_doc *doc, const char *dir, const char *name, srv_error *err)
{
    char *path = path_join(dir, name);
    int rc = cfg_yaml_read_file(doc, name, path, err);
    free(path);
    return rc < 0 ? -1 : 0;
}

server_objects *objects_load_all(const char *dir, const char *default_workspace,
                                 srv_error *err)
{
    server_objects *o = xcalloc(1, sizeof *o);
    cfg_doc docs[4] = {{0}};
    enum { TEN, POL, SRC, PRO };
    static const char *const names[] = {"tenants.yaml", "policies.yaml",
                                        "knowledge_sources.yaml", "profiles.yaml"};
    for (int i = 0; i < 4; i++) {
        docs[i].file = names[i];
        docs[i].root_line = 1;
    }
    int rc = 0;
    if (dir) {
        char real[PATH_MAX];
        struct stat st;
        if (!realpath(dir, real) || stat(real, &st) != 0 || !S_ISDIR(st.st_mode))
            rc = srv_fail(err, LOOM_ERR_CONFIG, "%s: the config folder does not exist", dir);
        else
            o->dir = xstrdup(real);
        for (int i = 0; i < 4 && rc == 0; i++)
            rc = read_one(&docs[i], o->dir, names[i], err);
    }
    if (rc == 0)
        rc = cfg_load_tenants(o, &docs[TEN], default_workspace, err);
    if (rc == 0)
        rc = cfg_load_tokens(o, &docs[TEN], err);
    if (rc == 0)
        rc = cfg_load_policies(o, &docs[POL], err);
    if (rc == 0)
        rc = cfg_load_sources(o, &docs[SRC], err);
    if (rc == 0)
        rc = cfg_load_profiles(o, &docs[PRO], err);
    if (rc == 0)
        rc = cfg_cross_check(o, &docs[PRO], &docs[POL], &docs[SRC], err);
    for (int i = 0; i < 4; i++)
        cfg_doc_free(&docs[i]);
    if (rc != 0) {
        objects_free(o);
        return NULL;
    }
    return o;
}

server_objects *cfg_load_text(char kind, const char *text, size_t len, srv_error *err)
{
    server_objects *o = xcalloc(1, sizeof *o);
    o->dir = xstrdup("/config");
    cfg_doc doc, none;
    const char *name = kind == 'p' ? "profiles.yaml" : kind == 'o' ? "policies.yaml"
                     : kind == 'k' ? "knowledge_sources.yaml" : "tenants.yaml";
    memset(&none, 0, sizeof none);
    none.file = "none.yaml";
    none.root_line = 1;
    int rc = cfg_yaml_read(&doc, name, text, len, err);
    if (rc == 0)
        rc = cfg_load_tenants(o, kind == 't' ? &doc : &none, "/work", err);
    if (rc == 0 && kind == 't')
        rc = cfg_load_tokens(o, &doc, err);
    if (rc == 0 && kind == 'o')
        rc = cfg_load_policies(o, &doc, err);
    if (rc == 0 && kind == 'k')
        rc = cfg_load_sources(o, &doc, err);
    if (rc == 0 && kind == 'p')
        rc = cfg_load_profiles(o, &doc, err);
    if (rc == 0)
        rc = cfg_cross_check(o, kind == 'p' ? &doc : &none, kind == 'o' ? &doc : &none,
                             kind == 'k' ? &doc : &none, err);
    cfg_doc_free(&doc);
    if (rc != 0) {
        objects_free(o);
        return NULL;
    }
    return o;
}

void objects_free(server_objects *o)
{
    if (!o)
        return;
    for (size_t i = 0; i < o->n_profiles; i++)
        cfg_profile_free(&o->profiles[i]);
    for (size_t i = 0; i < o->n_policies; i++)
        cfg_policy_free(&o->policies[i]);
    for (size_t i = 0; i < o->n_sources; i++)
        cfg_source_free(&o->sources[i]);
    for (size_t i = 0; i < o->n_tenants; i++)
        cfg_tenant_free(&o->tenants[i]);
    for (size_t i = 0; i < o->n_tokens; i++)
        cfg_token_free(&o->tokens[i]);
    free(o->profiles), free(o->policies), free(o->sources), free(o->tenants), free(o->tokens);
    free(o->dir);
    free(o);
}

/* The tenant's own object first, then a global one. The arrays differ in
 * type, so the walk is a macro over (array, count). */
#define FIND_VISIBLE(arr, n, id, tenant)                                                     \
    do {                                                                                     \
        if (!o || !(id))                                                                     \
            return NULL;                                                                     \
        for (int pass = 0; pass < 2; pass++)                                                 \
            for (size_t i = 0; i < (n); i++) {                                               \
                const char *owner = (arr)[i].tenant_id;                                      \
                bool mine = pass == 0 ? owner && (tenant) && strcmp(owner, (tenant)) == 0    \
                                      : !owner;                                              \
                if (mine && strcmp((arr)[i].id, (id)) == 0)                                  \
                    return &(arr)[i];                                                        \
            }                                                                                \
        return NULL;                                                                         \
    } while (0)

const agent_profile *objects_profile(const server_objects *o, const char *id,
                                     const char *tenant_id)
{
    FIND_VISIBLE(o->profiles, o->n_profiles, id, tenant_id);
}

const policy_set *objects_policy(const server_objects *o, const char *id, const char *tenant_id)
{
    FIND_VISIBLE(o->policies, o->n_policies, id, tenant_id);
}

const knowledge_source *objects_knowledge_source(const server_objects *o, const char *id,
                                                 const char *tenant_id)
{
    FIND_VISIBLE(o->sources, o->n_sources, id, tenant_id);
}

const agent_profile *objects_default_profile(const server_objects *o, const char *tenant_id)
{
    if (!o)
        return NULL;
    const agent_profile *p = objects_profile(o, "default", tenant_id);
    if (p)
        return p;
    for (size_t i = 0; i < o->n_profiles; i++)
        if (cfg_visible(o->profiles[i].tenant_id, tenant_id))
            return &o->profiles[i];
    return NULL;
}

size_t objects_tenants(const server_objects *o, const tenant_config **out, size_t cap)
{
    for (size_t i = 0; i < o->n_tenants && i < cap; i++)
        out[i] = &o->tenants[i];
    return o->n_tenants;
}

const tenant_config *objects_tenant(const server_objects *o, const char *tenant_id)
{
    if (!o || !tenant_id)
        return NULL;
    for (size_t i = 0; i < o->n_tenants; i++)
        if (strcmp(o->tenants[i].id, tenant_id) == 0)
            return &o->tenants[i];
    return NULL;
}

const tenant_project *objects_project(const tenant_config *t, const char *project_id)
{
    if (!t || !project_id)
        return NULL;
    for (size_t i = 0; i < t->n_projects; i++)
        if (strcmp(t->projects[i].id, project_id) == 0)
            return &t->projects[i];
    return NULL;
}

size_t objects_knowledge_sources_visible(const server_objects *o, const char *tenant_id,
                                         const char *project_id,
                                         const knowledge_source **out, size_t cap)
{
    size_t n = 0;
    if (!o)
        return 0;
    for (size_t i = 0; i < o->n_sources && n < cap; i++) {
        const knowledge_source *s = &o->sources[i];
        if (!cfg_visible(s->tenant_id, tenant_id))
            continue;
        /* A project source is seen from its project only. */
        if (s->project_id && (!project_id || strcmp(s->project_id, project_id) != 0))
            continue;
        out[n++] = s;
    }
    return n;
}

size_t objects_profiles(const server_objects *o, const agent_profile **out, size_t cap)
{
    if (!o)
        return 0;
    for (size_t i = 0; i < o->n_profiles && i < cap; i++)
        out[i] = &o->profiles[i];
    return o->n_profiles;
}
