/* kinds.c — the three declarative objects of seed 000 §10.7, each from its
 * own file: AgentProfile (profiles.yaml), PolicySet (policies.yaml) and the
 * KnowledgeSourceRegistry (knowledge_sources.yaml). The key tables, the
 * checks a table cannot say (a source's scope against its tenant and
 * project, a policy's bare command rules), and the JSON each is served as
 * (GET /profiles/{id} …: the id under the seed's name, every field, and
 * scopes). A key of another kind written here fails with a hint naming the
 * right file, because the seed's rule is that the three are never merged.
 *
 * Runs on the loading thread; writes only into the set being loaded. */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "base/str.h"
#include "loom.h"
#include "surfaces/server/config/config_internal.h"

static const char *const PROVIDERS[] = {"anthropic", "openai", "openai-responses", "replay", NULL};
static const char *const MODES[] = {"default", "acceptEdits", "plan", "auto", "dontAsk",
                                    "bypassPermissions", "fullAccess", "delegate", NULL};
static const char *const SOURCE_TYPES[] = {"filesystem", "mcp", "web", "internal_wiki", NULL};
static const char *const SCOPES[] = {"global", "tenant", "project", NULL};
static const char *const TIERS[] = {"high", "medium", "low", NULL};

/* Keys of the other kinds, for the "wrong file" hint. */
static const char *const POLICY_KEYS[] = {"permissions", "approvals", "knowledge",
                                          "require_citation_for", "allow", "ask", "deny", NULL};
static const char *const PROFILE_KEYS[] = {"model", "provider", "skills", "tools",
                                           "knowledge_sources", "policies", "runtime",
                                           "system_prompt_append", "heartbeat", NULL};

#define P(f) offsetof(agent_profile, f)
static const cfg_field TOOLS_FIELDS[] = {{"allow", CFG_LIST, P(tools_allow), 0, 0, NULL, NULL, NULL},
                                         {NULL, 0, 0, 0, 0, NULL, NULL, NULL}};
static const cfg_field RUNTIME_FIELDS[] = {
    {"max_depth", CFG_INT, P(max_depth), 0, 16, NULL, NULL, NULL},
    {"max_turns", CFG_INT, P(max_turns), 1, 1000000, NULL, NULL, NULL},
    {"enable_verification", CFG_BOOL, P(enable_verification), 0, 0, NULL, NULL, NULL},
    {NULL, 0, 0, 0, 0, NULL, NULL, NULL}};
static const cfg_field PROFILE_FIELDS[] = {
    {"model", CFG_TEXT, P(model), 0, 0, NULL, NULL, NULL},
    {"provider", CFG_TEXT, P(provider), 0, 0, PROVIDERS, NULL, NULL},
    {"base_url", CFG_TEXT, P(base_url), 0, 0, NULL, NULL, NULL},
    {"api_key_env", CFG_TEXT, P(api_key_env), 0, 0, NULL, NULL, NULL},
    {"mode", CFG_TEXT, P(mode), 0, 0, MODES, NULL, NULL},
    {"system_prompt_append", CFG_TEXT, P(system_prompt_append), 0, 0, NULL, NULL, NULL},
    {"skills", CFG_LIST, P(skills), 0, 0, NULL, NULL, NULL},
    {"tools", CFG_GROUP, 0, 0, 0, NULL, TOOLS_FIELDS, NULL},
    {"knowledge_sources", CFG_IDLIST, P(knowledge_sources), 0, 0, NULL, NULL, NULL},
    {"policies", CFG_IDLIST, P(policies), 0, 0, NULL, NULL, NULL},
    {"runtime", CFG_GROUP, 0, 0, 0, NULL, RUNTIME_FIELDS, NULL},
    {"tenant", CFG_ID, P(tenant_id), 0, 0, NULL, NULL, NULL},
    {"heartbeat", CFG_CUSTOM, 0, 0, 0, NULL, NULL, NULL},
    {NULL, 0, 0, 0, 0, NULL, NULL, NULL}};
#undef P

#define Q(f) offsetof(policy_set, f)
static const cfg_field PERMISSION_FIELDS[] = {
    {"mode", CFG_TEXT, Q(mode), 0, 0, MODES, NULL, NULL},
    {"allow", CFG_LIST, Q(allow), 0, 0, NULL, NULL, NULL},
    {"ask", CFG_LIST, Q(ask), 0, 0, NULL, NULL, NULL},
    {"deny", CFG_LIST, Q(deny), 0, 0, NULL, NULL, NULL},
    {NULL, 0, 0, 0, 0, NULL, NULL, NULL}};
static const cfg_field APPROVAL_FIELDS[] = {
    {"timeout_seconds", CFG_INT, Q(approval_timeout_seconds), 1, 604800, NULL, NULL, NULL},
    {NULL, 0, 0, 0, 0, NULL, NULL, NULL}};
static const cfg_field KNOWLEDGE_FIELDS[] = {
    {"allow_quote_from", CFG_LIST, Q(allow_quote_from), 0, 0, NULL, NULL, NULL},
    {NULL, 0, 0, 0, 0, NULL, NULL, NULL}};
static const cfg_field POLICY_FIELDS[] = {
    {"permissions", CFG_GROUP, 0, 0, 0, NULL, PERMISSION_FIELDS, NULL},
    {"approvals", CFG_GROUP, 0, 0, 0, NULL, APPROVAL_FIELDS, NULL},
    {"knowledge", CFG_GROUP, 0, 0, 0, NULL, KNOWLEDGE_FIELDS, NULL},
    {"require_citation_for", CFG_LIST, Q(require_citation_for), 0, 0, NULL, NULL, NULL},
    {"tenant", CFG_ID, Q(tenant_id), 0, 0, NULL, NULL, NULL},
    {NULL, 0, 0, 0, 0, NULL, NULL, NULL}};
#undef Q

#define K(f) offsetof(knowledge_source, f)
static const cfg_field RETRIEVAL_FIELDS[] = {
    {"allow_search", CFG_BOOL, K(allow_search), 0, 0, NULL, NULL, NULL},
    {"allow_quote", CFG_BOOL, K(allow_quote), 0, 0, NULL, NULL, NULL},
    {NULL, 0, 0, 0, 0, NULL, NULL, NULL}};
static const cfg_field SOURCE_FIELDS[] = {
    {"type", CFG_TEXT, K(type), 0, 0, SOURCE_TYPES, NULL, NULL},
    {"scope", CFG_TEXT, K(scope), 0, 0, SCOPES, NULL, NULL},
    {"tenant", CFG_ID, K(tenant_id), 0, 0, NULL, NULL, NULL},
    {"project", CFG_ID, K(project_id), 0, 0, NULL, NULL, NULL},
    {"path", CFG_TEXT, K(path), 0, 0, NULL, NULL, NULL},
    {"trust_tier", CFG_TEXT, K(trust_tier), 0, 0, TIERS, NULL, "trust"},
    {"trust", CFG_TEXT, K(trust_tier), 0, 0, TIERS, NULL, "trust_tier"},
    {"retrieval_policy", CFG_GROUP, 0, 0, 0, NULL, RETRIEVAL_FIELDS, NULL},
    {NULL, 0, 0, 0, 0, NULL, NULL, NULL}};
#undef K

static json_t *text_or_null(const char *s)
{
    return s ? json_string(s) : json_null();
}

static json_t *scopes_json(const char *tenant_id, const char *project_id)
{
    json_t *s = json_object();
    json_object_set_new(s, "tenant_scope", json_string(tenant_id ? tenant_id : "global"));
    if (project_id)
        json_object_set_new(s, "project_scope", json_string(project_id));
    return s;
}

static char *dump(json_t *j)
{
    char *s = json_dumps(j, JSON_COMPACT | JSON_PRESERVE_ORDER);
    json_decref(j);
    return s;
}

/* A file's one top key (profiles: {ID: …}): each entry's id checked, then
 * fn on the entry. */
typedef int (*entry_fn)(server_objects *o, const cfg_at *at, const char *id, const json_t *v);

static int each_entry(server_objects *o, const cfg_doc *doc, const char *top_key,
                      entry_fn fn, srv_error *err)
{
    const char *const allowed[] = {top_key, NULL};
    if (cfg_check_top(doc, allowed, err) != 0)
        return -1;
    if (!doc->root || json_is_null(doc->root))
        return 0;
    json_t *map = json_object_get(doc->root, top_key);
    cfg_at top = {.doc = doc, .err = err};
    cfg_at at;
    cfg_at_child(&at, &top, doc->root, top_key, 0);
    if (!map || json_is_null(map))
        return 0;
    if (cfg_want_mapping(&at, map) != 0)
        return -1;
    const char *id;
    json_t *v;
    json_object_foreach(map, id, v) {
        cfg_at one;
        cfg_at_child(&one, &at, map, id, 0);
        if (!cfg_id_valid(id))
            return cfg_fail(&one, "not an id (1 to 64 of A-Z a-z 0-9 _ . -)");
        if (fn(o, &one, id, v) != 0)
            return -1;
    }
    return 0;
}

static bool url_ok(const char *u)
{
    return strncmp(u, "http://", 7) == 0 || strncmp(u, "https://", 8) == 0;
}

static bool env_name_ok(const char *s)
{
    if (!((*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z') || *s == '_'))
        return false;
    for (s++; *s; s++)
        if (!((*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z') ||
              (*s >= '0' && *s <= '9') || *s == '_'))
            return false;
    return true;
}

static char *profile_json(const agent_profile *p)
{
    json_t *j = json_object();
    json_object_set_new(j, "profile_id", json_string(p->id));
    json_object_set_new(j, "tenant_id", text_or_null(p->tenant_id));
    json_object_set_new(j, "model", text_or_null(p->model));
    json_object_set_new(j, "provider", text_or_null(p->provider));
    json_object_set_new(j, "base_url", text_or_null(p->base_url));
    json_object_set_new(j, "api_key_env", text_or_null(p->api_key_env));
    json_object_set_new(j, "mode", text_or_null(p->mode));
    json_object_set_new(j, "system_prompt_append", text_or_null(p->system_prompt_append));
    json_object_set_new(j, "skills", cfg_list_json(&p->skills));
    json_object_set_new(j, "tools", json_pack("{so}", "allow", cfg_list_json(&p->tools_allow)));
    json_object_set_new(j, "knowledge_sources", cfg_list_json(&p->knowledge_sources));
    json_object_set_new(j, "policies", cfg_list_json(&p->policies));
    json_object_set_new(j, "runtime", json_pack("{sisisb}", "max_depth", p->max_depth,
                                                "max_turns", p->max_turns,
                                                "enable_verification", p->enable_verification));
    json_object_set_new(j, "heartbeat", p->heartbeat_json
                                            ? json_loads(p->heartbeat_json, 0, NULL)
                                            : json_null());
    json_object_set_new(j, "scopes", scopes_json(p->tenant_id, NULL));
    return dump(j);
}

/* The "heartbeat" block, as in settings (docs/heartbeat.md): kept as JSON
 * text for loom_config_set at agent setup, and checked now by that same
 * call on a throwaway config, so a bad block fails the load naming the
 * file, the profile and the key instead of failing every run. */
static int profile_heartbeat(agent_profile *p, const cfg_at *at, const json_t *v)
{
    const json_t *hb = json_object_get(v, "heartbeat");
    if (!hb || json_is_null(hb))
        return 0;
    cfg_at k;
    cfg_at_child(&k, at, v, "heartbeat", 0);
    if (!json_is_object(hb))
        return cfg_fail(&k, "must be a mapping (the heartbeat block of docs/heartbeat.md)");
    p->heartbeat_json = json_dumps(hb, JSON_COMPACT | JSON_PRESERVE_ORDER);
    loom_config *check = loom_config_new();
    loom_status st;
    int rc = loom_config_set(check, "heartbeat", p->heartbeat_json, &st);
    loom_config_free(check);
    return rc != 0 ? cfg_fail(&k, "%s", st.message) : 0;
}

static int one_profile(server_objects *o, const cfg_at *at, const char *id, const json_t *v)
{
    o->profiles = xrealloc(o->profiles, (o->n_profiles + 1) * sizeof *o->profiles);
    agent_profile *p = &o->profiles[o->n_profiles++];
    memset(p, 0, sizeof *p);
    p->id = xstrdup(id);
    p->max_depth = 3;
    p->max_turns = 100;
    if (cfg_check_fields(at, v, PROFILE_FIELDS, p, POLICY_KEYS,
                         "a policy key: policies go in policies.yaml") != 0)
        return -1;
    cfg_at k;
    if (p->base_url && !url_ok(p->base_url)) {
        cfg_at_child(&k, at, v, "base_url", 0);
        return cfg_fail(&k, "must start with http:// or https://");
    }
    if (p->api_key_env && !env_name_ok(p->api_key_env)) {
        cfg_at_child(&k, at, v, "api_key_env", 0);
        return cfg_fail(&k, "must be the name of an environment variable, not \"%.80s\"",
                        p->api_key_env);
    }
    if (profile_heartbeat(p, at, v) != 0)
        return -1;
    p->json = profile_json(p);
    return 0;
}

int cfg_load_profiles(server_objects *o, const cfg_doc *doc, srv_error *err)
{
    return each_entry(o, doc, "profiles", one_profile, err);
}

/* "rm -rf" → "Bash(rm -rf:*)"; a rule that already names a tool
 * (Bash(…), Read, mcp__srv__tool) stays as written. */
static bool names_a_tool(const char *r)
{
    if (strncmp(r, "mcp__", 5) == 0)
        return !strchr(r, ' ');
    if (!(*r >= 'A' && *r <= 'Z'))
        return false;
    const char *p = r;
    while ((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') ||
           *p == '_')
        p++;
    if (!*p)
        return true;
    size_t n = strlen(p);
    return *p == '(' && p[n - 1] == ')';
}

static void normalize_rules(str_list *l)
{
    for (size_t i = 0; i < l->n; i++) {
        if (names_a_tool(l->items[i]))
            continue;
        loom_str s = LOOM_STR_INIT;
        str_printf(&s, "Bash(%s:*)", l->items[i]);
        free(l->items[i]);
        l->items[i] = str_steal(&s);
    }
}

static int one_policy(server_objects *o, const cfg_at *at, const char *id, const json_t *v)
{
    o->policies = xrealloc(o->policies, (o->n_policies + 1) * sizeof *o->policies);
    policy_set *p = &o->policies[o->n_policies++];
    memset(p, 0, sizeof *p);
    p->id = xstrdup(id);
    p->approval_timeout_seconds = 600;
    if (cfg_check_fields(at, v, POLICY_FIELDS, p, PROFILE_KEYS,
                         "a profile key: profiles go in profiles.yaml") != 0)
        return -1;
    if (!p->mode)
        p->mode = xstrdup("default");
    /* Served as written (the rules a person wrote), kept normalized. */
    json_t *j = json_object();
    json_object_set_new(j, "policy_id", json_string(p->id));
    json_object_set_new(j, "tenant_id", text_or_null(p->tenant_id));
    json_object_set_new(j, "permissions",
                        json_pack("{sssososo}", "mode", p->mode, "allow", cfg_list_json(&p->allow),
                                  "ask", cfg_list_json(&p->ask), "deny", cfg_list_json(&p->deny)));
    json_object_set_new(j, "approvals",
                        json_pack("{si}", "timeout_seconds", p->approval_timeout_seconds));
    json_object_set_new(j, "knowledge",
                        json_pack("{so}", "allow_quote_from", cfg_list_json(&p->allow_quote_from)));
    json_object_set_new(j, "require_citation_for", cfg_list_json(&p->require_citation_for));
    json_object_set_new(j, "scopes", scopes_json(p->tenant_id, NULL));
    p->json = dump(j);
    normalize_rules(&p->allow);
    normalize_rules(&p->ask);
    normalize_rules(&p->deny);
    return 0;
}

int cfg_load_policies(server_objects *o, const cfg_doc *doc, srv_error *err)
{
    return each_entry(o, doc, "policies", one_policy, err);
}

/* scope against tenant/project: global has neither, tenant needs the
 * tenant, project needs both. Unwritten, it follows from what is given. */
static int source_scope(const cfg_at *at, const json_t *v, knowledge_source *s)
{
    if (!s->scope)
        s->scope = xstrdup(s->project_id ? "project" : s->tenant_id ? "tenant" : "global");
    cfg_at k;
    cfg_at_child(&k, at, v, "scope", 0);
    if (strcmp(s->scope, "global") == 0 && (s->tenant_id || s->project_id))
        return cfg_fail(&k, "a global source has no tenant or project");
    if (strcmp(s->scope, "tenant") == 0 && (!s->tenant_id || s->project_id))
        return cfg_fail(&k, "scope tenant needs tenant and no project");
    if (strcmp(s->scope, "project") == 0 && (!s->tenant_id || !s->project_id))
        return cfg_fail(&k, "scope project needs tenant and project");
    return 0;
}

static char *source_json(const knowledge_source *s)
{
    json_t *j = json_object();
    json_object_set_new(j, "knowledge_source_id", json_string(s->id));
    json_object_set_new(j, "type", json_string(s->type));
    json_object_set_new(j, "scope", json_string(s->scope));
    json_object_set_new(j, "tenant_id", text_or_null(s->tenant_id));
    json_object_set_new(j, "project_id", text_or_null(s->project_id));
    json_object_set_new(j, "path", text_or_null(s->path));
    json_object_set_new(j, "trust_tier", json_string(s->trust_tier));
    json_object_set_new(j, "retrieval_policy", json_pack("{sbsb}", "allow_search", s->allow_search,
                                                         "allow_quote", s->allow_quote));
    json_object_set_new(j, "scopes", scopes_json(s->tenant_id, s->project_id));
    return dump(j);
}

static int one_source(server_objects *o, const cfg_at *at, const char *id, const json_t *v)
{
    o->sources = xrealloc(o->sources, (o->n_sources + 1) * sizeof *o->sources);
    knowledge_source *s = &o->sources[o->n_sources++];
    memset(s, 0, sizeof *s);
    s->id = xstrdup(id);
    s->allow_search = true;
    s->allow_quote = true;
    if (cfg_check_fields(at, v, SOURCE_FIELDS, s, PROFILE_KEYS,
                         "a profile key: profiles go in profiles.yaml") != 0)
        return -1;
    if (!s->type)
        return cfg_fail(at, "type is required (filesystem, mcp, web or internal_wiki)");
    if (source_scope(at, v, s) != 0)
        return -1;
    if (!s->trust_tier)
        s->trust_tier = xstrdup("medium");
    if (strcmp(s->type, "filesystem") == 0) {
        if (!s->path)
            return cfg_fail(at, "a filesystem source needs path");
        char *abs = cfg_resolve_path(o, s->path);
        free(s->path);
        s->path = abs;
    }
    s->json = source_json(s);
    return 0;
}

int cfg_load_sources(server_objects *o, const cfg_doc *doc, srv_error *err)
{
    return each_entry(o, doc, "knowledge_sources", one_source, err);
}

void cfg_profile_free(agent_profile *p)
{
    free(p->id), free(p->tenant_id), free(p->model), free(p->provider), free(p->base_url);
    free(p->api_key_env), free(p->mode), free(p->system_prompt_append), free(p->json);
    free(p->heartbeat_json);
    cfg_list_free(&p->skills), cfg_list_free(&p->tools_allow);
    cfg_list_free(&p->knowledge_sources), cfg_list_free(&p->policies);
}

void cfg_policy_free(policy_set *p)
{
    free(p->id), free(p->tenant_id), free(p->mode), free(p->json);
    cfg_list_free(&p->allow), cfg_list_free(&p->ask), cfg_list_free(&p->deny);
    cfg_list_free(&p->allow_quote_from), cfg_list_free(&p->require_citation_for);
}

void cfg_source_free(knowledge_source *s)
{
    free(s->id), free(s->tenant_id), free(s->project_id), free(s->type), free(s->scope);
    free(s->path), free(s->trust_tier), free(s->json);
}
