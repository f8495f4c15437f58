/* objects.h — the declarative objects of loom serve (seed 000 §10.7, §10.9):
 * AgentProfile (how to work), PolicySet (what is forbidden or asks), the
 * KnowledgeSourceRegistry (where evidence may come from), each in its own
 * YAML file of the --config folder and never merged into one, plus the
 * tenants (projects, quotas, webhooks) and the bearer tokens that map to a
 * tenant and a role.
 *
 *   DIR/profiles.yaml           profiles: {ID: profile}
 *   DIR/policies.yaml           policies: {ID: policy}
 *   DIR/knowledge_sources.yaml  knowledge_sources: {ID: source}
 *   DIR/tenants.yaml            tenants: {ID: tenant}, tokens: [token]
 *
 * (docs/server-config.md has every key.) A missing file is an empty set,
 * except tenants.yaml when the server listens on a non-loopback address
 * (main.c refuses to start: a token file is required). Loading validates
 * everything: an unknown key, a wrong type, an id that is not
 * [A-Za-z0-9_.-]{1,64}, a profile naming a policy or source that does not
 * exist, a duplicate token — each an error naming the file, the key path
 * and the line ("profiles.yaml:12: profiles.coding_default.runtime.max_depth:
 * must be a whole number from 0 to 16, not \"deep\"").
 *
 * Scope: an object with `tenant: ID` belongs to that tenant only; without it,
 * it is global (seen by every tenant). A knowledge source's `scope` is
 * global | tenant | project (project needs `project`).
 *
 * Loaded once at start, read-only after: every function may be called from
 * any thread. Strings are owned by the set. */
#ifndef LOOM_SERVER_OBJECTS_H
#define LOOM_SERVER_OBJECTS_H

#include <stdbool.h>
#include <stddef.h>

#include "surfaces/server/server_error.h"

typedef struct str_list {
    char **items;
    size_t n;
} str_list;

typedef struct agent_profile {
    char *id;
    char *tenant_id;        /* NULL: global */
    char *model;            /* NULL: the server's default model */
    char *provider;         /* anthropic | openai | openai-responses | replay; NULL: default */
    char *base_url;         /* NULL: the provider's default (tests: mockllm) */
    char *api_key_env;      /* the environment variable holding the key; NULL: provider's */
    char *mode;             /* permission mode, NULL: the policy's */
    char *system_prompt_append; /* NULL: none */
    str_list skills;
    str_list tools_allow;   /* empty: every tool (minus the policy's denials) */
    str_list knowledge_sources;
    str_list policies;      /* the first is the default policy of a task */
    int max_depth;          /* runtime.max_depth, 0–16 (default 3) */
    int max_turns;          /* runtime.max_turns, 1–1000000 (default 100) */
    bool enable_verification;
    char *heartbeat_json;   /* the heartbeat block as JSON text; NULL: no heartbeat */
    char *json;             /* the object as GET /profiles/{id} serves it */
} agent_profile;

typedef struct policy_set {
    char *id;
    char *tenant_id;
    char *mode;             /* permissions.mode (default "default") */
    str_list allow, ask, deny; /* permission rules as Claude Code writes them
                                * ("Bash(git push --force:*)"); a bare command
                                * text ("rm -rf") means Bash(<text>:*) */
    int approval_timeout_seconds; /* approvals.timeout_seconds (default 600) */
    str_list allow_quote_from;
    str_list require_citation_for;
    char *json;
} policy_set;

typedef struct knowledge_source {
    char *id;
    char *tenant_id;        /* NULL: global */
    char *project_id;       /* scope project: the project */
    char *type;             /* filesystem | mcp | web | internal_wiki */
    char *scope;            /* global | tenant | project */
    char *path;             /* filesystem: the folder (relative: to the config dir) */
    char *trust_tier;       /* high | medium | low */
    bool allow_search, allow_quote;
    char *json;
} knowledge_source;

typedef struct tenant_project {
    char *id;
    char *workspace;        /* the folder runs of this project work in (absolute) */
} tenant_project;

typedef struct tenant_quotas {
    int concurrent_runs;             /* per tenant (default 8) */
    long tool_executions_per_project; /* per project, over the server's life (0: none) */
    long tokens_per_session;         /* input+output tokens a session may spend (0: none) */
    int max_run_depth;               /* sub-agent depth (default 3) */
    int max_tool_seconds;            /* one tool call (default 600) */
    int max_artifacts_per_run;       /* default 20 */
} tenant_quotas;

typedef struct tenant_webhook {
    char *id;               /* "wh_<n>" by position when not given */
    char *url;              /* http://127.0.0.1:… (only loopback in tests) */
    char *secret;           /* Standard Webhooks secret, "whsec_<base64>" */
    str_list events;        /* run.completed, approval.requested, artifact.created,
                             * policy.denied; empty: all four */
} tenant_webhook;

typedef struct tenant_config {
    char *id;
    tenant_project *projects;
    size_t n_projects;      /* at least one; "default" when none is written */
    tenant_quotas quotas;
    tenant_webhook *webhooks;
    size_t n_webhooks;
} tenant_config;

typedef enum token_role {
    ROLE_VIEWER = 0,        /* reads */
    ROLE_MEMBER = 1,        /* reads, creates sessions/tasks/runs, cancels */
    ROLE_APPROVER = 2,      /* member + answers approvals */
    ROLE_ADMIN = 3,         /* everything in its tenant */
} token_role;

typedef struct token_entry {
    char sha256_hex[65];    /* the token is kept hashed only */
    char *tenant_id;
    char *project_id;       /* NULL: every project of the tenant */
    char *actor_id;         /* who the token is; default "token:<first 8 hex>" */
    token_role role;
    bool audit;             /* may read audit-visibility events */
} token_entry;

typedef struct server_objects server_objects;

/* Loads DIR's four files (DIR NULL: an empty set with one tenant "default",
 * project "default" at the server's workspace, and no tokens). NULL with err
 * (config_invalid) naming file, key and line. */
server_objects *objects_load_all(const char *dir, const char *default_workspace,
                                 srv_error *err);
void objects_free(server_objects *objs);

/* Lookups: the object visible to tenant_id (its own, or global), or NULL. */
const agent_profile *objects_profile(const server_objects *o, const char *id,
                                     const char *tenant_id);
const policy_set *objects_policy(const server_objects *o, const char *id, const char *tenant_id);
const knowledge_source *objects_knowledge_source(const server_objects *o, const char *id,
                                                 const char *tenant_id);
/* The default profile ("default" if defined, else the first in the file) and
 * the default policy (the profile's first, else "default", else none). */
const agent_profile *objects_default_profile(const server_objects *o, const char *tenant_id);
const tenant_config *objects_tenant(const server_objects *o, const char *tenant_id);
/* Every tenant, in the file's order (crash recovery walks them). Writes at
 * most cap into out; returns how many there are in all. */
size_t objects_tenants(const server_objects *o, const tenant_config **out, size_t cap);
const tenant_project *objects_project(const tenant_config *t, const char *project_id);
/* The token entry for a presented bearer token (compared by SHA-256 in
 * constant time), or NULL. */
const token_entry *objects_token(const server_objects *o, const char *bearer);
size_t objects_token_count(const server_objects *o);
/* Every knowledge source visible to a tenant/project (for a search that
 * names none). Returns how many were written into out (at most cap). */
size_t objects_knowledge_sources_visible(const server_objects *o, const char *tenant_id,
                                         const char *project_id,
                                         const knowledge_source **out, size_t cap);

/* Every profile, global and of every tenant, in the file's order (GET
 * /profiles filters by tenant). Writes at most cap into out; returns how
 * many there are in all. */
size_t objects_profiles(const server_objects *o, const agent_profile **out, size_t cap);

#endif
