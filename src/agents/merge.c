/* merge.c — merge-back of finished worktree agents (merge.h): each branch
 * tried without touching anything (git merge-tree --write-tree), merged
 * with --no-ff when clean and none of its files is modified in the
 * parent's working tree, reported file by file otherwise.
 *
 * Owns nothing past a call. Threading: one call at a time per repository
 * (git's own index lock refuses a second merge anyway). git runs through
 * agent_git (worktree.h): hooks off, no GIT_* variables, an argv.
 */
#include "agents/merge.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "agents/worktree.h"
#include "base/proc.h"
#include "base/str.h"

#define MERGE_AUTHOR_NAME "Loom agent"
#define MERGE_AUTHOR_EMAIL "agent@loom.invalid"

/* Splits git's -z output into a JSON array of strings. */
static json_t *nul_list(const char *buf, size_t len)
{
    json_t *a = json_array();
    for (size_t i = 0; i < len;) {
        size_t n = strnlen(buf + i, len - i);
        if (n)
            json_array_append_new(a, json_stringn(buf + i, n));
        i += n + 1;
    }
    return a;
}

static bool list_has(const json_t *a, const char *s)
{
    size_t i;
    json_t *v;
    json_array_foreach(a, i, v) if (!strcmp(json_string_value(v), s)) return true;
    return false;
}

/* The paths `git status` names in the parent: modified, staged, untracked
 * (both sides of a rename). */
static json_t *parent_dirty(const char *top, loom_error *err)
{
    const char *st[] = {"status", "--porcelain=v1", "-z", "--untracked-files=all", NULL};
    proc_result r;
    if (agent_git(top, st, NULL, &r, err) < 0)
        return NULL;
    json_t *paths = json_array();
    for (size_t i = 0; r.exit_code == 0 && i + 3 < r.out_len;) {
        char x = r.out[i];
        const char *p = r.out + i + 3;
        size_t n = strnlen(p, r.out_len - i - 3);
        json_array_append_new(paths, json_stringn(p, n));
        i += 3 + n + 1;
        if ((x == 'R' || x == 'C') && i < r.out_len) {
            size_t m = strnlen(r.out + i, r.out_len - i);
            json_array_append_new(paths, json_stringn(r.out + i, m));
            i += m + 1;
        }
    }
    int code = r.exit_code;
    proc_result_free(&r);
    if (code != 0) {
        json_decref(paths);
        loom_error_set(err, LOOM_ERR_TOOL_EXECUTION_FAILED, "git status in %s failed", top);
        return NULL;
    }
    return paths;
}

static char *git_trim(const char *dir, const char *const *args, loom_error *err)
{
    char *o = NULL;
    if (agent_git_out(dir, args, NULL, &o, err) < 0)
        return NULL;
    size_t n = strlen(o);
    while (n && (o[n - 1] == '\n' || o[n - 1] == ' '))
        o[--n] = '\0';
    return o;
}

static void add_skipped(json_t *report, const agent_merge_item *it, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void add_skipped(json_t *report, const agent_merge_item *it, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    loom_str why = LOOM_STR_INIT;
    str_vprintf(&why, fmt, ap);
    va_end(ap);
    json_array_append_new(json_object_get(report, "skipped"),
                          json_pack("{s:s?, s:s?, s:s}", "agent_id", it->agent_id, "branch",
                                    it->branch, "reason", why.ptr));
    str_free(&why);
}

static void add_conflict(json_t *report, const agent_merge_item *it, json_t *files,
                         const char *reason)
{
    json_array_append_new(json_object_get(report, "conflicts"),
                          json_pack("{s:s?, s:s?, s:s, s:o, s:s}", "agent_id", it->agent_id,
                                    "name", it->name, "branch", it->branch, "files", files,
                                    "reason", reason));
}

/* The dry run: 0 clean, 1 conflicts (*files: the conflicted paths), < 0
 * git could not say (err). */
static int dry_run(const char *top, const char *branch, json_t **files, loom_error *err)
{
    *files = NULL;
    const char *mt[] = {"merge-tree", "--write-tree", "--name-only", "-z", "HEAD", branch, NULL};
    proc_result r;
    if (agent_git(top, mt, NULL, &r, err) < 0)
        return -1;
    int rc = r.exit_code;
    if (rc == 1) {
        /* <tree oid> NUL <path> NUL … NUL NUL <messages> */
        size_t i = strnlen(r.out, r.out_len) + 1;
        *files = json_array();
        while (i < r.out_len) {
            size_t n = strnlen(r.out + i, r.out_len - i);
            if (!n)
                break;
            json_t *p = json_stringn(r.out + i, n);
            if (!list_has(*files, json_string_value(p)))
                json_array_append(*files, p);
            json_decref(p);
            i += n + 1;
        }
    } else if (rc != 0) {
        loom_error_set(err, LOOM_ERR_TOOL_EXECUTION_FAILED, "git merge-tree %s: %s", branch,
                       r.err && *r.err ? r.err : "failed");
        rc = -1;
    }
    proc_result_free(&r);
    return rc;
}

/* The merge itself, with the user's identity or, when they set none,
 * Loom's (git refuses to commit without one). */
static int do_merge(const char *top, const agent_merge_item *it, bool own_identity,
                    loom_error *err)
{
    loom_str msg = LOOM_STR_INIT;
    str_printf(&msg, "loom: merge the work of agent %s", it->agent_id ? it->agent_id : "?");
    if (it->name && *it->name)
        str_printf(&msg, " (%s)", it->name);
    const char *with_id[] = {"-c", "user.name=" MERGE_AUTHOR_NAME,
                             "-c", "user.email=" MERGE_AUTHOR_EMAIL,
                             "merge", "--no-ff", "--no-edit", "--no-verify", "-q", "-m", msg.ptr,
                             it->branch, NULL};
    const char *const *args = own_identity ? with_id : with_id + 4;
    int rc = agent_git_out(top, args, NULL, NULL, err);
    str_free(&msg);
    if (rc < 0) {
        /* A merge git started and could not finish: put the tree back. */
        const char *mh[] = {"rev-parse", "-q", "--verify", "MERGE_HEAD", NULL};
        const char *abort_args[] = {"merge", "--abort", NULL};
        if (agent_git_out(top, mh, NULL, NULL, NULL) == 0)
            agent_git_out(top, abort_args, NULL, NULL, NULL);
    }
    return rc;
}

/* One branch: merged, reported as a conflict, or skipped. */
static void merge_one(const char *top, const agent_merge_item *it, bool own_identity,
                      json_t *report)
{
    loom_error err;
    loom_error_clear(&err);
    if (!it->branch || !*it->branch || it->branch[0] == '-') {
        add_skipped(report, it, "no branch");
        return;
    }
    loom_str ref = LOOM_STR_INIT;
    str_printf(&ref, "refs/heads/%s", it->branch);
    const char *verify[] = {"rev-parse", "-q", "--verify", ref.ptr, NULL};
    char *tip = git_trim(top, verify, &err);
    str_free(&ref);
    if (!tip) {
        add_skipped(report, it, "branch %s does not exist", it->branch);
        return;
    }
    const char *mb[] = {"merge-base", "HEAD", tip, NULL};
    char *base = git_trim(top, mb, &err);
    json_t *files = NULL, *dirty = NULL, *conflicted = NULL;
    char *stat = NULL;
    if (!base) {
        add_skipped(report, it, "branch %s shares no history with HEAD", it->branch);
        goto out;
    }
    const char *names[] = {"diff", "--name-only", "-z", "--no-renames", base, tip, NULL};
    proc_result r;
    if (agent_git(top, names, NULL, &r, &err) < 0) {
        add_skipped(report, it, "%s", err.message);
        goto out;
    }
    if (r.exit_code != 0) {
        add_skipped(report, it, "git diff %s failed: %s", it->branch, r.err ? r.err : "");
        proc_result_free(&r);
        goto out;
    }
    files = nul_list(r.out, r.out_len);
    proc_result_free(&r);
    if (!json_array_size(files)) {
        add_skipped(report, it, "nothing to merge: HEAD already has every change of %s",
                    it->branch);
        goto out;
    }
    if (!(dirty = parent_dirty(top, &err))) {
        add_skipped(report, it, "%s", err.message);
        goto out;
    }
    json_t *touched = json_array();
    size_t i;
    json_t *f;
    json_array_foreach(files, i, f) if (list_has(dirty, json_string_value(f)))
        json_array_append(touched, f);
    if (json_array_size(touched)) {
        add_conflict(report, it, touched, "modified in the working tree, not merged");
        goto out;
    }
    json_decref(touched);
    int dr = dry_run(top, tip, &conflicted, &err);
    if (dr < 0) {
        add_skipped(report, it, "%s", err.message);
        goto out;
    }
    if (dr == 1) {
        add_conflict(report, it, conflicted, "conflict");
        conflicted = NULL;
        goto out;
    }
    const char *st[] = {"diff", "--stat", base, tip, NULL};
    stat = git_trim(top, st, NULL);
    if (do_merge(top, it, own_identity, &err) < 0) {
        add_conflict(report, it, json_incref(files), err.message);
        goto out;
    }
    const char *head[] = {"rev-parse", "HEAD", NULL};
    char *commit = git_trim(top, head, NULL);
    json_array_append_new(json_object_get(report, "merged"),
                          json_pack("{s:s?, s:s?, s:s, s:O, s:s, s:s?}", "agent_id", it->agent_id,
                                    "name", it->name, "branch", it->branch, "files", files,
                                    "stat", stat ? stat : "", "commit", commit));
    free(commit);
    /* Its work is in the parent now: the worktree and branch go. */
    agent_worktree_remove(top, it->worktree, it->branch, NULL);
out:
    json_decref(files);
    json_decref(dirty);
    json_decref(conflicted);
    free(stat);
    free(base);
    free(tip);
}

json_t *agent_merge_branches(const char *cwd, const agent_merge_item *items, size_t n,
                             loom_error *err)
{
    const char *a_top[] = {"rev-parse", "--show-toplevel", NULL};
    loom_error e;
    loom_error_clear(&e);
    char *top = git_trim(cwd, a_top, &e);
    if (!top || !*top) {
        free(top);
        loom_error_set(err, LOOM_ERR_INVALID_REQUEST, "merge: %s is not in a git working tree (%s)",
                       cwd, e.message);
        return NULL;
    }
    json_t *report = json_pack("{s:[], s:[], s:[]}", "merged", "conflicts", "skipped");
    const char *a_head[] = {"rev-parse", "-q", "--verify", "HEAD", NULL};
    const char *a_mh[] = {"rev-parse", "-q", "--verify", "MERGE_HEAD", NULL};
    const char *a_email[] = {"config", "user.email", NULL};
    bool no_head = agent_git_out(top, a_head, NULL, NULL, NULL) < 0;
    bool merging = agent_git_out(top, a_mh, NULL, NULL, NULL) == 0;
    bool own_identity = agent_git_out(top, a_email, NULL, NULL, NULL) < 0;
    for (size_t i = 0; i < n; i++) {
        if (no_head)
            add_skipped(report, &items[i], "the repository has no commit to merge into");
        else if (merging)
            add_skipped(report, &items[i], "a merge is already in progress in %s", top);
        else
            merge_one(top, &items[i], own_identity, report);
    }
    free(top);
    return report;
}
