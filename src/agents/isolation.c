/* isolation.c — the runner's use of a worktree for an isolation
 * "worktree" child (agents/worktree.h does the git work): made at
 * prepare, its sandbox policy handed to governance_child, finished at
 * release (removed when clean, committed and kept when changed).
 *
 * Owns res->wt and res->wt_policy. Threading: on the child's thread (the
 * state says whose), like the rest of its resources.
 */
#include <stdlib.h>

#include "agents/runner_internal.h"
#include "agents/worktree.h"
#include "base/log.h"
#include "base/str.h"
#include "sandbox/sandbox_policy.h"

int agent_start_worktree(spawn_node *n, const agent_request *req, loom_error *err)
{
    agent_resources *r = n->res;
    bool want = req->isolation_worktree || (n->def && n->def->isolation_worktree);
    if (!want || r->wt)
        return 0;
    r->want_worktree = true;
    agent_worktree *wt = xcalloc(1, sizeof *wt);
    if (agent_worktree_create(r->cwd, n->id, spawn_node_label(n), wt, err) != 0) {
        free(wt);
        loom_error_prefix(err, "Agent isolation \"worktree\"");
        return -1;
    }
    r->wt = wt;
    r->wt_policy = xcalloc(1, sizeof *r->wt_policy);
    agent_worktree_policy(wt, r->tctx.sandbox, r->wt_policy);
    n->worktree_path = xstrdup(wt->path);
    n->worktree_branch = xstrdup(wt->branch);
    pthread_mutex_lock(&n->session->mu);
    n->session->live_worktrees++;
    pthread_mutex_unlock(&n->session->mu);
    return 0;
}

void agent_finish_worktree(spawn_node *n)
{
    agent_resources *r = n->res;
    if (!r || !r->wt)
        return;
    loom_error err;
    loom_error_clear(&err);
    bool changed = false;
    if (agent_worktree_finish(r->wt, n->id, &changed, &err) != 0) {
        LOG_W("agents", "%s: worktree %s kept: %s", n->id, r->wt->path, err.message);
        changed = true;
    }
    n->worktree_changed = changed;
    agent_worktree_free(r->wt);
    free(r->wt);
    r->wt = NULL;
    if (r->wt_policy) {
        sandbox_policy_free(r->wt_policy);
        free(r->wt_policy);
        r->wt_policy = NULL;
    }
    agents_session *s = n->session;
    pthread_mutex_lock(&s->mu);
    bool last = --s->live_worktrees == 0;
    pthread_mutex_unlock(&s->mu);
    /* merge "auto": the last worktree agent to finish merges them all. */
    if (last && s->config.merge_auto) {
        loom_error_clear(&err);
        json_t *report = agents_merge(s, &err);
        if (!report && err.code != LOOM_ERR_RESOURCE_NOT_FOUND)
            LOG_W("agents", "merge auto: %s", err.message);
        json_decref(report);
    }
}

json_t *agent_worktree_json(spawn_node *n)
{
    if (!n->worktree_path)
        return NULL;
    return json_pack("{s:s,s:s?,s:b,s:b}", "path", n->worktree_path, "branch", n->worktree_branch,
                     "changed", n->worktree_changed, "kept", n->worktree_changed);
}
