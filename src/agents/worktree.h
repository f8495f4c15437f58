/* worktree.h — a sub-agent's own git worktree (isolation: "worktree").
 *
 * The worktree is `.loom/worktrees/<agent id>/` of the repository holding
 * cwd, on a new branch `loom/<name>-<id8>` from HEAD; a `.loom-owner` file
 * in it holds the owning process's pid, so a sweep after a crash can tell
 * abandoned worktrees from live ones. The sub-agent's commands run
 * confined to it: the sandbox policy it gets has the worktree (and the
 * parts of the main .git a worktree commit writes: objects, its own
 * .git/worktrees/<id>, refs/heads/loom/) as its only writable roots, and
 * its environment drops GIT_DIR, GIT_WORK_TREE, GIT_INDEX_FILE and
 * GIT_COMMON_DIR. Threading: each call is independent (git runs as a child
 * process); two calls on the same worktree must not overlap.
 */
#ifndef LOOM_AGENTS_WORKTREE_H
#define LOOM_AGENTS_WORKTREE_H

#include <stdbool.h>

#include "base/error.h"

struct sandbox_policy;

typedef struct agent_worktree {
    char *path;        /* absolute */
    char *branch;      /* loom/<name>-<id8> */
    char *repo_root;   /* the main working tree it came from */
    char *base_commit; /* HEAD when it was made */
} agent_worktree;

/* Makes the worktree for agent_id (name: the agent's name or type, slugged
 * for the branch). 0, or -1 with err set (not a git repository, git
 * failed: its stderr in the message). */
int agent_worktree_create(const char *cwd, const char *agent_id, const char *name,
                          agent_worktree *out, loom_error *err);

/* The sandbox policy for a sub-agent in wt: a copy of base (NULL: the
 * default policy) whose writable roots are only the worktree and the git
 * paths its commits need. Caller frees with sandbox_policy_free. */
struct sandbox_policy *agent_worktree_policy(const agent_worktree *wt,
                                             const struct sandbox_policy *base);

/* Cleanup: with no change (no commit since base, clean status) the
 * worktree and its branch are removed; with changes, uncommitted ones are
 * committed on the branch ("loom: work of agent <id>"), the worktree is
 * kept, and *changed set. 0, or -1 with err set (the worktree is then
 * kept). */
int agent_worktree_finish(agent_worktree *wt, const char *agent_id, bool *changed,
                          loom_error *err);
void agent_worktree_free(agent_worktree *wt);

/* At session start: removes the clean worktrees under cwd's
 * .loom/worktrees/ whose owner pid is no longer alive (a crashed run's);
 * ones with changes are kept. Returns how many were removed. */
int agent_worktree_sweep(const char *cwd);

#endif
