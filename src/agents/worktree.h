/* worktree.h — a sub-agent's own git worktree (isolation: "worktree").
 *
 * The worktree is `.loom/worktrees/<agent id>-<tag>/` of the repository
 * holding cwd, on a new branch `loom/<name>-<tag>` from HEAD (tag: 8 random
 * hex digits; agent ids repeat from one session to the next, and a changed
 * worktree outlives its session); a `.loom-owner` file
 * in it holds the owning process's pid (and its start time, so a reused
 * pid does not pass for the owner), so a sweep after a crash can tell
 * abandoned worktrees from live ones. `.loom/worktrees/` and `/.loom-owner`
 * are kept out of the parent's status through <git-common-dir>/info/exclude,
 * never through the user's .gitignore.
 *
 * The sub-agent's commands run confined to it: the sandbox policy it gets
 * has the worktree and the parts of the main .git a worktree commit writes
 * (its own .git/worktrees/<id>, objects, refs/heads/loom/ and their reflogs)
 * as its only writable roots. Loom's own git calls run with the
 * repository's hooks off and without GIT_DIR, GIT_WORK_TREE, GIT_INDEX_FILE,
 * GIT_COMMON_DIR (every GIT_* variable is dropped). Threading: each call is
 * independent (git runs as a child process); two calls on the same worktree
 * must not overlap.
 */
#ifndef LOOM_AGENTS_WORKTREE_H
#define LOOM_AGENTS_WORKTREE_H

#include <stdbool.h>
#include <stddef.h>

#include "base/error.h"

struct sandbox_policy;
struct proc_result;

typedef struct agent_worktree {
    char *path;        /* absolute */
    char *branch;      /* loom/<name>-<tag> */
    char *repo_root;   /* the main working tree it came from */
    char *base_commit; /* HEAD when it was made */
    char *git_common;  /* the repository's common git dir (absolute) */
    char *admin_dir;   /* <git_common>/worktrees/<name git chose>: its HEAD, index */
} agent_worktree;

/* Makes the worktree for agent_id ([A-Za-z0-9_-], it names the folder;
 * name: the agent's name or type, slugged for the branch, NULL: "agent").
 * 0, or < 0 with err set (not a git repository, no commit yet, git failed:
 * its stderr in the message); *out is then empty. */
int agent_worktree_create(const char *cwd, const char *agent_id, const char *name,
                          agent_worktree *out, loom_error *err);

/* Fills *out (the caller's; free its contents with sandbox_policy_free)
 * with the sandbox policy for a sub-agent in wt: a copy of base (NULL: the
 * defaults) that is enabled, whose workspace is the worktree and whose
 * writable roots are only the worktree, the git paths its commits need and
 * the base's extra paths and temp dirs that neither hold nor lie in the
 * parent repository. When base is NULL or disabled (the user asked for no
 * sandbox) the network stays allowed and an unsupported kernel only warns:
 * the copy confines writes, it does not add the rest of a sandbox. */
void agent_worktree_policy(const agent_worktree *wt, const struct sandbox_policy *base,
                           struct sandbox_policy *out);

/* Cleanup: with no change (no commit since base, clean status) the
 * worktree and its branch are removed; with changes, uncommitted ones are
 * committed on the branch ("loom: work of agent <id>", author "Loom agent
 * <agent@loom.invalid>"), the worktree is kept, and *changed set. The git
 * calls inside the worktree run confined by agent_worktree_policy where the
 * kernel can, and not at all when its .git links were changed. 0, or < 0
 * with err set (the worktree is then kept). */
int agent_worktree_finish(agent_worktree *wt, const char *agent_id, bool *changed,
                          loom_error *err);
void agent_worktree_free(agent_worktree *wt);

/* What removing wt would lose: its changed and untracked files (*files)
 * and the commits on its branch since base (*commits); the git calls run
 * as agent_worktree_finish's do. 0, or < 0 with err set. */
int agent_worktree_changes(const agent_worktree *wt, size_t *files, size_t *commits,
                           loom_error *err);

/* At session start: removes the clean worktrees under cwd's
 * .loom/worktrees/ whose owner pid is no longer alive (a crashed run's);
 * ones with changes are kept. Returns how many were removed. */
int agent_worktree_sweep(const char *cwd);

/* Removes the worktree at path and its branch (a no-op for what is already
 * gone): the end of a clean finish and of a merge. repo_root: the main
 * working tree. 0, or < 0 with err set. */
int agent_worktree_remove(const char *repo_root, const char *path, const char *branch,
                          loom_error *err);

/* git as Loom runs it (merge.c too): `git -c core.hooksPath=/dev/null …
 * -C dir args…`, an argv and never a shell, with every GIT_* variable
 * dropped from the environment, stdin closed and a timeout. policy (may be
 * NULL) confines the call like a Bash command when the kernel can. 0 when
 * git ran (res filled, its exit code in res->exit_code; free it), or < 0
 * with err set. */
int agent_git(const char *dir, const char *const *args, const struct sandbox_policy *policy,
              struct proc_result *res, loom_error *err);
/* agent_git, then: 0 with git's stdout in *out (caller frees; may be NULL
 * when unwanted) when it exited 0, else < 0 with its stderr in err. */
int agent_git_out(const char *dir, const char *const *args,
                  const struct sandbox_policy *policy, char **out, loom_error *err);

#endif
