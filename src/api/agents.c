/* agents.c — loom.h's sub-agent calls: the catalog of an agent, the
 * sub-agents of a session (/agents), stopping one, merging worktree agents
 * back. It owns nothing: it reads the agent's catalog and the session's
 * agents_session (agents/agents.h), which keep their own locks, and turns
 * what they answer into caller-owned JSON text.
 *
 * Threads: any thread, also while a run of the session works — the REPL
 * asks between runs, a server may ask during one; agents/ serializes. */
#include <stdlib.h>
#include <string.h>

#include "agents/agents.h"
#include "api/internal.h"
#include "base/json.h"

/* What a person reads when they ask for agents that are off. */
#define AGENTS_OFF \
    "sub-agents are off: start loom with --agents on, or set \"agents\": {\"enabled\": true} in settings"

/* Dumps v and drops the reference. */
static char *dump_take(json_t *v)
{
    char *text = v ? json_dump_compact(v) : NULL;
    json_decref(v);
    return text;
}

static const char *role_word(agent_role r)
{
    switch (r) {
    case AGENT_ROLE_CUSTOM: return "custom";
    case AGENT_ROLE_GENERAL: return "general";
    case AGENT_ROLE_EXPLORE: return "explore";
    case AGENT_ROLE_PLAN: return "plan";
    case AGENT_ROLE_VERIFICATION: return "verification";
    case AGENT_ROLE_FORK: return "fork";
    }
    return "custom";
}

/* A rule list (NULL-terminated) as a JSON array; NULL for none. */
static json_t *rules_json(char *const *rules)
{
    if (!rules)
        return NULL;
    json_t *arr = json_array();
    for (size_t i = 0; rules[i]; i++)
        json_array_append_new(arr, json_string(rules[i]));
    return arr;
}

static json_t *def_json(const agent_def *d)
{
    json_t *o = json_object();
    json_set_str(o, "name", d->name ? d->name : "");
    json_set_str(o, "source", d->source ? d->source : "built-in");
    json_set_str(o, "description", d->description ? d->description : "");
    json_set_str(o, "role", role_word(d->role));
    if (d->model && *d->model)
        json_set_str(o, "model", d->model);
    json_t *tools = rules_json(d->tools);
    if (tools)
        json_object_set_new(o, "tools", tools);
    json_t *denied = rules_json(d->disallowed);
    if (denied)
        json_object_set_new(o, "disallowedTools", denied);
    json_object_set_new(o, "read_only", json_boolean(d->read_only));
    json_object_set_new(o, "background", json_boolean(d->background));
    if (d->isolation_worktree)
        json_set_str(o, "isolation", "worktree");
    return o;
}

char *loom_agent_agents_catalog_json(loom_agent *a, loom_status *st)
{
    API_CHECK_ARG(st, a, NULL);
    const agent_catalog *cat = a->agents_catalog;
    if (!cat) {
        api_status_set(st, LOOM_ERR_INVALID_STATE_TRANSITION, AGENTS_OFF);
        return NULL;
    }
    json_t *list = json_array();
    for (size_t i = 0, n = agent_catalog_count(cat); i < n; i++) {
        const agent_def *d = agent_catalog_at(cat, i);
        if (d)
            json_array_append_new(list, def_json(d));
    }
    json_t *warnings = json_array();
    for (size_t i = 0, n = agent_catalog_warning_count(cat); i < n; i++)
        json_array_append_new(warnings, json_string(agent_catalog_warning(cat, i)));
    api_status_ok(st);
    return dump_take(json_pack("{s:o,s:o}", "agents", list, "warnings", warnings));
}

/* The session's agents_session, or NULL with st set. */
static agents_session *session_agents(loom_session *s, loom_status *st)
{
    if (!s->agents)
        api_status_set(st, LOOM_ERR_INVALID_STATE_TRANSITION, AGENTS_OFF);
    return s->agents;
}

char *loom_session_agents_json(loom_session *s, loom_status *st)
{
    API_CHECK_ARG(st, s, NULL);
    agents_session *as = session_agents(s, st);
    if (!as)
        return NULL;
    json_t *list = agents_list_json(as);
    api_status_ok(st);
    return dump_take(list ? list : json_array());
}

int loom_session_agent_stop(loom_session *s, const char *agent_id, loom_status *st)
{
    API_CHECK_ARG(st, s, -1);
    API_CHECK_ARG(st, agent_id, -1);
    agents_session *as = session_agents(s, st);
    if (!as)
        return -1;
    int rc = agents_stop(as, agent_id);
    if (rc < 0)
        return api_status_set(st, LOOM_ERR_RESOURCE_NOT_FOUND,
                              "no sub-agent %s in this session (/agents lists them)",
                              agent_id);
    api_status_ok(st);
    return rc;
}

char *loom_session_agents_merge(loom_session *s, loom_status *st)
{
    API_CHECK_ARG(st, s, NULL);
    agents_session *as = session_agents(s, st);
    if (!as)
        return NULL;
    loom_error err = {0};
    json_t *report = agents_merge(as, &err);
    if (!report) {
        api_status_from(st, &err);
        return NULL;
    }
    api_status_ok(st);
    return dump_take(report);
}
