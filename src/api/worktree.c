/* worktree.c — the session's own worktree: EnterWorktree and ExitWorktree
 * (tools/builtin/worktree_tools.c) through tool_ctx.worktree_enter/exit.
 *
 * The worktree is made as a sub-agent's is (agents/worktree.h: under the
 * repository's .loom/worktrees/, on a new branch loom/<name>-<tag> from
 * HEAD, an owner file so a later sweep can tell it is not abandoned).
 * Entering moves the directory every later tool call of the session works
 * in (the run's tool_ctx.cwd, and the next runs' through
 * api_worktree_attach) — the subdirectory of the repository the session
 * was in, inside the worktree. Settings, hooks and "allow always" rules
 * stay the project's (the governance keeps its directory). Leaving
 * restores the directory: "keep" leaves the worktree and its branch on
 * disk, "remove" deletes both, and refuses while the worktree holds
 * changed files or commits unless discard_changes (Claude Code's
 * semantics). A session that ends inside a worktree keeps it.
 *
 * Owns s->worktree. Threading: the run's thread; the tools run alone.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "agents/worktree.h"
#include "api/internal.h"
#include "base/json.h"
#include "base/path.h"
#include "base/str.h"

struct api_worktree {
    agent_worktree wt;
    bool active;
    char *cwd;            /* where the session works inside it */
    const char *origin;   /* the directory before (the agent's; outlives this) */
    tool_ctx *run_ctx;    /* the running run's shared context; NULL between runs */
};

static struct api_worktree *state(loom_session *s)
{
    if (!s->worktree)
        s->worktree = xcalloc(1, sizeof *s->worktree);
    return s->worktree;
}

/* The subdirectory of the repository origin is, inside the worktree (the
 * worktree's root when it does not exist there). */
static char *inside(const agent_worktree *wt, const char *origin)
{
    size_t n = strlen(wt->repo_root);
    struct stat st;
    if (!strncmp(origin, wt->repo_root, n) && origin[n] == '/') {
        char *sub = path_join(wt->path, origin + n + 1);
        if (stat(sub, &st) == 0 && S_ISDIR(st.st_mode))
            return sub;
        free(sub);
    }
    return xstrdup(wt->path);
}

static int enter(void *ctx, const char *name, tool_result *out)
{
    loom_session *s = ctx;
    struct api_worktree *w = state(s);
    if (w->active)
        return tool_error(out, "The session is already in worktree %s (branch %s): leave it "
                               "with ExitWorktree first.", w->wt.path, w->wt.branch);
    /* The folder's name: the model's, or "session" (a random tag follows). */
    const char *id = name ? name : "session";
    loom_error err;
    loom_error_clear(&err);
    if (agent_worktree_create(w->run_ctx->cwd, id, id, &w->wt, &err) != 0)
        return tool_error(out, "Could not create a worktree: %s", err.message);
    w->active = true;
    w->origin = w->run_ctx->cwd;
    free(w->cwd);
    w->cwd = inside(&w->wt, w->origin);
    w->run_ctx->cwd = w->cwd;
    str_printf(&out->text, "Created worktree at %s on branch %s (from %.12s). The session now "
                           "works in %s: every file path and command is relative to it. Use "
                           "ExitWorktree to leave it.",
               w->wt.path, w->wt.branch, w->wt.base_commit, w->cwd);
    out->raw = json_pack("{s:s, s:s, s:s}", "worktreePath", w->wt.path, "worktreeBranch",
                         w->wt.branch, "cwd", w->cwd);
    return 0;
}

static void back(struct api_worktree *w)
{
    w->run_ctx->cwd = w->origin;
    w->active = false;
    agent_worktree_free(&w->wt);
    free(w->cwd);
    w->cwd = NULL;
}

static int leave(void *ctx, bool remove, bool discard, tool_result *out)
{
    loom_session *s = ctx;
    struct api_worktree *w = state(s);
    if (!w->active)
        return tool_error(out, "No worktree to leave: EnterWorktree has not moved this session "
                               "into one. Nothing was changed.");
    loom_error err;
    loom_error_clear(&err);
    char *path = xstrdup(w->wt.path), *branch = xstrdup(w->wt.branch);
    size_t files = 0, commits = 0;
    if (remove && agent_worktree_changes(&w->wt, &files, &commits, &err) != 0) {
        tool_error(out, "Could not check worktree %s for changes, so it was not removed: %s",
                   path, err.message);
    } else if (remove && (files || commits) && !discard) {
        tool_error(out, "Worktree %s has %zu changed file%s and %zu commit%s on branch %s: "
                        "removing it would lose that work. Confirm with the user, then call "
                        "ExitWorktree with discard_changes: true, or use action \"keep\". The "
                        "session is still in the worktree.",
                   path, files, files == 1 ? "" : "s", commits, commits == 1 ? "" : "s", branch);
    } else if (remove && agent_worktree_remove(w->wt.repo_root, path, branch, &err) != 0) {
        tool_error(out, "Could not remove worktree %s: %s. The session is still in it.", path,
                   err.message);
    } else {
        back(w);
        if (remove)
            str_printf(&out->text, "Removed worktree %s and its branch %s%s. The session is "
                                   "back in %s.", path, branch,
                       files || commits ? " (its changes discarded)" : "", w->origin);
        else
            str_printf(&out->text, "Left worktree %s; it and its branch %s are kept on disk. "
                                   "The session is back in %s.", path, branch, w->origin);
        out->raw = json_pack("{s:s, s:s, s:s, s:s}", "action", remove ? "remove" : "keep",
                             "worktreePath", path, "worktreeBranch", branch, "originalCwd",
                             w->origin);
    }
    free(path);
    free(branch);
    return 0;
}

void api_worktree_attach(loom_session *s, tool_ctx *tctx)
{
    struct api_worktree *w = state(s);
    w->run_ctx = tctx;
    tctx->worktree_enter = enter;
    tctx->worktree_exit = leave;
    tctx->worktree_ctx = s;
    if (w->active)
        tctx->cwd = w->cwd;
}

void api_worktree_detach(loom_session *s)
{
    if (!s->worktree)
        return;
    struct api_worktree *w = s->worktree;
    w->run_ctx = NULL;
    /* The next run's context starts from the agent's directory again. */
    if (w->active)
        w->origin = s->agent->cwd;
}

void api_worktree_free(loom_session *s)
{
    if (!s->worktree)
        return;
    agent_worktree_free(&s->worktree->wt);
    free(s->worktree->cwd);
    free(s->worktree);
    s->worktree = NULL;
}
