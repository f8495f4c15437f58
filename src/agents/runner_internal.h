/* runner_internal.h — what the files of the runner share (runner.c, its
 * isolation and result parts, agents.c); not for other modules. */
#ifndef LOOM_AGENTS_RUNNER_INTERNAL_H
#define LOOM_AGENTS_RUNNER_INTERNAL_H

#include <jansson.h>

#include "agents/runner.h"

/* The tools a node's run declares (the root's: the run's registry). */
const tool_registry *agent_parent_tools(spawn_node *parent);
/* Frees node->res for good (agents_session_free). */
void agent_resources_free(spawn_node *n);

/* The mode a child of a parent in `parent` runs in: the def's
 * permissionMode when it allows nothing the parent's would not, else the
 * parent's (or default when !inherit and default is within the parent's). */
perm_mode agent_child_mode(perm_mode parent, const agent_def *def, bool inherit);

/* fork.c: writes the fork's sidechain at path: meta, then the parent's
 * active chain with its open calls answered. 0, or -1 with err. */
int agent_fork_sidechain(spawn_node *n, transcript *parent, const json_t *meta, const char *path,
                         loom_error *err);

/* isolation.c: the worktree of an isolation "worktree" child. start makes
 * it (nothing when not asked for) and sets the node's path and branch and
 * res->wt_policy; finish runs agent_worktree_finish at release; json is the
 * agent.completed "worktree" object (new), or NULL. */
int agent_start_worktree(spawn_node *n, const agent_request *req, loom_error *err);
void agent_finish_worktree(spawn_node *n);
json_t *agent_worktree_json(spawn_node *n);

#endif
