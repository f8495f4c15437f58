/* agents.c — the integrator's face of sub-agents (agents.h): the session,
 * runs attaching their root node, the breakdown of usage, listing,
 * stopping and merging agents.
 *
 * Owns the agents_session (its strings, its nodes through tree.c, their
 * resources through runner.c). Threading: every function takes the
 * session's mutex for the tree's shape; see agents.h.
 */
#include "agents/agents.h"

#include <stdlib.h>
#include <sys/stat.h>
#include <string.h>

#include "agents/bus.h"
#include "agents/merge.h"
#include "agents/runner_internal.h"
#include "agents/tree.h"
#include "agents/worktree.h"
#include "base/clock.h"
#include "base/path.h"
#include "base/str.h"
#include "governance/governance.h"

void agents_config_defaults(agents_config *c)
{
    memset(c, 0, sizeof *c);
    c->enabled = true;
    c->max_depth = 3;
    c->max_running = 8;
    c->max_turns = 200;
    c->inherit_mode = true;
    c->merge_auto = false;
    c->bus_delta_min = 0.05;
}

agents_session *agents_session_new(const agents_session_opts *o)
{
    agents_session *s = xcalloc(1, sizeof *s);
    pthread_mutex_init(&s->mu, NULL);
    pthread_mutex_init(&s->merge_mu, NULL);
    pthread_mutex_init(&s->env_mu, NULL);
    pthread_cond_init(&s->env_cv, NULL);
    if (o && o->config)
        s->config = *o->config;
    else
        agents_config_defaults(&s->config);
    if (s->config.max_depth < 0)
        s->config.max_depth = 0;
    if (o) {
        s->catalog = o->catalog;
        s->skills = o->skills;
        s->session_id = xstrdup(o->session_id);
        s->session_path = xstrdup(o->session_path);
        s->mf_dir = xstrdup(o->mf_dir);
        s->cwd = xstrdup(o->cwd);
    }
    if (s->mf_dir) {
        loom_str dir = LOOM_STR_INIT;
        str_printf(&dir, "%s/bus", s->mf_dir);
        s->bus = mf_bus_new(str_cstr(&dir), s->config.bus_delta_min, 0);
        str_free(&dir);
    }
    /* A crashed run's clean worktrees go (agents/worktree.h); git runs only
     * when the folder exists, so a session elsewhere pays one stat. */
    if (s->cwd && s->config.enabled) {
        char *wt = path_join(s->cwd, ".loom/worktrees");
        struct stat st;
        if (stat(wt, &st) == 0 && S_ISDIR(st.st_mode))
            agent_worktree_sweep(s->cwd);
        free(wt);
    }
    return s;
}

void agents_session_free(agents_session *s)
{
    if (!s)
        return;
    pthread_mutex_lock(&s->mu);
    spawn_node *list = s->nodes;
    pthread_mutex_unlock(&s->mu);
    for (spawn_node *n = list; n; n = n->next_in_session)
        if (!n->parent)
            spawn_node_cancel_subtree(n, CANCEL_RUN);
    agent_bg_join_all(s);
    /* Deepest first is not needed: release cancels and frees each node's
     * own holdings; the nodes themselves go last. */
    for (spawn_node *n = list; n; n = n->next_in_session)
        agent_resources_free(n);
    spawn_session_free_nodes(s);
    if (s->bus)
        mf_bus_free(s->bus);
    free(s->session_id);
    free(s->session_path);
    free(s->mf_dir);
    free(s->cwd);
    free(s->live_ext);
    pthread_mutex_destroy(&s->mu);
    pthread_mutex_destroy(&s->merge_mu);
    pthread_mutex_destroy(&s->env_mu);
    pthread_cond_destroy(&s->env_cv);
    free(s);
}

/* The run's tool-set port, seen through: every change is kept for the
 * run's forks (tree.h, live_tools). Run thread only, like the port. */
static bool root_refresh(void *ctx, const tool_registry **tools, const char **ext)
{
    agents_session *s = ctx;
    const tool_registry *t = NULL;
    const char *e = NULL;
    if (!s->inner_toolset.refresh(s->inner_toolset.ctx, &t, &e))
        return false;
    pthread_mutex_lock(&s->env_mu);
    s->live_tools = t;
    free(s->live_ext);
    s->live_ext = e ? xstrdup(e) : NULL;
    pthread_mutex_unlock(&s->env_mu);
    *tools = t;
    *ext = e;
    return true;
}

static char *root_take_notes(void *ctx)
{
    agents_session *s = ctx;
    return s->inner_toolset.take_notes ? s->inner_toolset.take_notes(s->inner_toolset.ctx) : NULL;
}

spawn_node *agents_run_attach(agents_session *s, const agents_run_env *env)
{
    if (!s || !env)
        return NULL;
    spawn_node *root = spawn_node_new_root(s, env->run_id, env->params,
                                           env->io ? env->io->cancel : NULL);
    pthread_mutex_lock(&s->env_mu);
    s->env = *env;
    s->env_set = true;
    s->live_tools = NULL;
    free(s->live_ext);
    s->live_ext = NULL;
    s->inner_toolset = env->io ? env->io->toolset : (loop_toolset_port){0};
    pthread_mutex_unlock(&s->env_mu);
    if (env->tctx && env->tctx->gov) { /* agent hooks run as this run's sub-agents */
        env->tctx->gov->agent_hook = agents_hook_agent;
        env->tctx->gov->agent_hook_ctx = s;
    }
    if (env->io) {
        env->io->tree = spawn_node_tree_port(root);
        if (env->io->toolset.refresh)
            env->io->toolset = (loop_toolset_port){.ctx = s, .refresh = root_refresh,
                                                   .take_notes = root_take_notes};
    }
    return root;
}

void agents_run_detach(agents_session *s, spawn_node *root, loop_result *res, json_t **by_agent)
{
    if (by_agent)
        *by_agent = NULL;
    if (!s || !root)
        return;
    msg_usage own, tree;
    double own_usd, tree_usd;
    spawn_node_usage(root, false, &own, &own_usd);
    spawn_node_usage(root, true, &tree, &tree_usd);
    if (res) {
        res->usage.input_tokens += tree.input_tokens - own.input_tokens;
        res->usage.output_tokens += tree.output_tokens - own.output_tokens;
        res->usage.cache_read_tokens += tree.cache_read_tokens - own.cache_read_tokens;
        res->usage.cache_creation_tokens += tree.cache_creation_tokens - own.cache_creation_tokens;
        res->usage.reasoning_tokens += tree.reasoning_tokens - own.reasoning_tokens;
        if (tree_usd >= 0 && own_usd >= 0 && res->cost_usd >= 0)
            res->cost_usd += tree_usd - own_usd;
    }
    if (by_agent)
        *by_agent = spawn_usage_by_agent(root);
    root->ended_ms = clock_wall_ms();
    spawn_node_set_state(root, SPAWN_IDLE);
    pthread_mutex_lock(&s->env_mu);
    if (s->env.tctx && s->env.tctx->gov) {
        s->env.tctx->gov->agent_hook = NULL;
        s->env.tctx->gov->agent_hook_ctx = NULL;
    }
    s->env_set = false;
    while (s->env_users > 0)
        pthread_cond_wait(&s->env_cv, &s->env_mu);
    memset(&s->env, 0, sizeof s->env);
    s->live_tools = NULL;
    free(s->live_ext);
    s->live_ext = NULL;
    s->inner_toolset = (loop_toolset_port){0};
    pthread_mutex_unlock(&s->env_mu);
}

void agents_cancel_run(agents_session *s, const char *run_id)
{
    if (!s || !run_id)
        return;
    pthread_mutex_lock(&s->mu);
    spawn_node *list = s->nodes;
    pthread_mutex_unlock(&s->mu);
    for (spawn_node *n = list; n; n = n->next_in_session)
        if (!n->parent && n->run_id && !strcmp(n->run_id, run_id))
            spawn_node_cancel_subtree(n, CANCEL_RUN);
}

json_t *agents_list_json(agents_session *s)
{
    json_t *rows = json_array();
    if (!s)
        return rows;
    pthread_mutex_lock(&s->mu);
    spawn_node *list = s->nodes;
    pthread_mutex_unlock(&s->mu);
    for (spawn_node *n = list; n; n = n->next_in_session) {
        if (!n->parent)
            continue;
        json_t *row = spawn_node_json(n);
        pthread_mutex_lock(&s->mu);
        if (n->last_text) {
            size_t len = strlen(n->last_text);
            loom_str t = LOOM_STR_INIT;
            str_append(&t, n->last_text, len > 2000 ? 2000 : len);
            json_object_set_new(row, "result", json_string(str_cstr(&t)));
            str_free(&t);
        }
        pthread_mutex_unlock(&s->mu);
        json_array_append_new(rows, row);
    }
    return rows;
}

int agents_stop(agents_session *s, const char *agent_id)
{
    spawn_node *n = spawn_session_find(s, agent_id);
    if (!n || !n->parent)
        return -1;
    if (spawn_node_state(n) != SPAWN_RUNNING)
        return 1;
    spawn_node_cancel_subtree(n, CANCEL_RUN);
    return 0;
}

json_t *agents_merge(agents_session *s, loom_error *err)
{
    if (!s) {
        loom_error_set(err, LOOM_ERR_INVALID_REQUEST, "agents_merge: no session");
        return NULL;
    }
    pthread_mutex_lock(&s->mu);
    size_t n = 0;
    for (spawn_node *x = s->nodes; x; x = x->next_in_session)
        n += x->worktree_branch && x->worktree_changed && !x->worktree_merged &&
             spawn_node_state(x) != SPAWN_RUNNING;
    agent_merge_item *items = xcalloc(n ? n : 1, sizeof *items);
    spawn_node **nodes = xcalloc(n ? n : 1, sizeof *nodes);
    size_t k = 0;
    for (spawn_node *x = s->nodes; x && k < n; x = x->next_in_session)
        if (x->worktree_branch && x->worktree_changed && !x->worktree_merged &&
            spawn_node_state(x) != SPAWN_RUNNING) {
            items[k] = (agent_merge_item){x->id, x->name, x->worktree_branch, x->worktree_path};
            nodes[k++] = x;
        }
    pthread_mutex_unlock(&s->mu);
    json_t *report = NULL;
    pthread_mutex_lock(&s->merge_mu);
    if (!k)
        loom_error_set(err, LOOM_ERR_RESOURCE_NOT_FOUND,
                       "/agents merge: no finished worktree agent has changes to merge");
    else
        report = agent_merge_branches(s->cwd, items, k, err);
    if (report) {
        json_t *merged = json_object_get(report, "merged"), *row;
        size_t i;
        json_array_foreach(merged, i, row) {
            const char *id = json_string_value(json_object_get(row, "agent_id"));
            for (size_t j = 0; id && j < k; j++)
                if (!strcmp(nodes[j]->id, id))
                    nodes[j]->worktree_merged = true;
        }
    }
    pthread_mutex_unlock(&s->merge_mu);
    free(items);
    free(nodes);
    return report;
}
