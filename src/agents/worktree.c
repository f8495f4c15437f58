/* worktree.c — a sub-agent's own git worktree (worktree.h): making it,
 * the sandbox copy that confines the agent to it, committing or removing it
 * at the end, sweeping the ones a crashed run left, and the one way Loom
 * runs git for agents/ (merge.c uses it too).
 *
 * Owns nothing between calls: the worktree's state is on disk (the folder,
 * its .loom-owner file, the branch). Threading: any thread; the exclude
 * file is updated under a process-wide lock, everything else works on the
 * caller's own agent_worktree.
 *
 * Loom's git calls are not the model's: they run unconfined (most of them)
 * with Loom's rights, on a repository that may be hostile and on a worktree
 * an agent wrote. So: the repository's hooks never run (core.hooksPath
 * points at /dev/null — a pre-commit or post-checkout hook would otherwise
 * execute repository code outside any sandbox), core.fsmonitor is off (it
 * is a command too), every GIT_* variable is dropped, and before any git
 * call inside a worktree its .git links are checked to be the ones
 * agent_worktree_create made (an agent could point them at a git dir with
 * its own config, whose filters git would run). Where the kernel can, the
 * calls inside the worktree also run under the agent's own sandbox policy,
 * so they can write nothing the agent could not.
 */
#include "agents/worktree.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <ftw.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "base/fileio.h"
#include "base/path.h"
#include "base/proc.h"
#include "base/str.h"
#include "base/uuid.h"
#include "sandbox/sandbox.h"
#include "sandbox/sandbox_policy.h"

#define WT_GIT_TIMEOUT_MS 120000
#define WT_OWNER_FILE ".loom-owner"
#define WT_DIR ".loom/worktrees"
#define WT_AUTHOR_NAME "Loom agent"
#define WT_AUTHOR_EMAIL "agent@loom.invalid"

extern char **environ;

/* ---- running git ---------------------------------------------------------- */

/* Loom's settings for every git call: no repository hooks, no fsmonitor
 * command, paths unquoted (they are parsed back). */
static const char *const git_pre[] = {
    "git", "-c", "core.hooksPath=/dev/null", "-c", "core.fsmonitor=false",
    "-c", "core.quotePath=false",
};
#define GIT_PRE_N (sizeof git_pre / sizeof *git_pre)

/* The environment minus every GIT_* variable (GIT_DIR, GIT_WORK_TREE,
 * GIT_INDEX_FILE, GIT_COMMON_DIR would aim git elsewhere; GIT_CONFIG_* add
 * settings), with prompts off and messages in English (they are quoted in
 * errors). */
static char **git_env(void)
{
    size_t n = 0;
    for (char **e = environ; e && *e; e++)
        n++;
    char **env = xcalloc(n + 4, sizeof *env);
    size_t k = 0;
    for (char **e = environ; e && *e; e++)
        if (strncmp(*e, "GIT_", 4) != 0 && strncmp(*e, "LC_ALL=", 7) != 0 &&
            strncmp(*e, "LANGUAGE=", 9) != 0)
            env[k++] = xstrdup(*e);
    env[k++] = xstrdup("GIT_TERMINAL_PROMPT=0");
    env[k++] = xstrdup("LC_ALL=C");
    env[k] = NULL;
    return env;
}

static void env_free(char **env)
{
    for (char **e = env; e && *e; e++)
        free(*e);
    free(env);
}

int agent_git(const char *dir, const char *const *args, const sandbox_policy *policy,
              proc_result *res, loom_error *err)
{
    memset(res, 0, sizeof *res);
    size_t n_args = 0;
    while (args[n_args])
        n_args++;
    const char **argv = xcalloc(GIT_PRE_N + 2 + n_args + 1, sizeof *argv);
    size_t k = 0;
    for (size_t i = 0; i < GIT_PRE_N; i++)
        argv[k++] = git_pre[i];
    argv[k++] = "-C";
    argv[k++] = dir;
    for (size_t i = 0; i < n_args; i++)
        argv[k++] = args[i];
    argv[k] = NULL;
    char **env = git_env();
    proc_spec spec = {
        .argv = argv,
        .envp = (const char *const *)env,
        .cwd = dir,
        .timeout_ms = WT_GIT_TIMEOUT_MS,
    };
    sandbox_prep *prep = NULL;
    int rc = 0;
    if (policy && policy->enabled && sandbox_supported() >= 1) {
        char msg[512];
        if (sandbox_prepare(policy, &prep, msg, sizeof msg) != 0) {
            rc = loom_error_set(err, LOOM_ERR_INTERNAL, "git %s in %s: sandbox: %s", args[0],
                                dir, msg);
            goto out;
        }
        spec.child_setup = sandbox_child_setup;
        spec.child_ctx = prep;
        spec.supervise = sandbox_supervise;
        spec.supervise_ctx = prep;
    }
    rc = proc_run(&spec, res, err);
    if (rc < 0)
        loom_error_prefix(err, "git %s in %s", args[0], dir);
    else if (res->timed_out)
        rc = loom_error_set(err, LOOM_ERR_TOOL_EXECUTION_FAILED, "git %s in %s: timed out",
                            args[0], dir);
    if (rc < 0)
        proc_result_free(res);
out:
    sandbox_prep_free(prep);
    env_free(env);
    free(argv);
    return rc;
}

static void trim_end(char *s)
{
    size_t n = s ? strlen(s) : 0;
    while (n && (s[n - 1] == '\n' || s[n - 1] == '\r' || s[n - 1] == ' '))
        s[--n] = '\0';
}

int agent_git_out(const char *dir, const char *const *args, const sandbox_policy *policy,
                  char **out, loom_error *err)
{
    if (out)
        *out = NULL;
    proc_result r;
    int rc = agent_git(dir, args, policy, &r, err);
    if (rc < 0)
        return rc;
    if (r.exit_code != 0) {
        trim_end(r.err);
        rc = loom_error_set(err, LOOM_ERR_TOOL_EXECUTION_FAILED,
                            "git %s in %s failed (exit %d): %s", args[0], dir, r.exit_code,
                            r.err && *r.err ? r.err : "no message");
        proc_result_free(&r);
        return rc;
    }
    if (out) {
        *out = r.out ? r.out : xstrdup("");
        r.out = NULL;
    }
    proc_result_free(&r);
    return 0;
}

/* One line of git's output (trailing newline cut), or NULL with err. */
static char *git_line(const char *dir, const char *const *args, loom_error *err)
{
    char *o = NULL;
    if (agent_git_out(dir, args, NULL, &o, err) < 0)
        return NULL;
    trim_end(o);
    return o;
}

/* ---- names ------------------------------------------------------------------ */

static bool id_ok(const char *id, size_t max)
{
    if (!id || !*id || strlen(id) > max)
        return false;
    for (const char *p = id; *p; p++)
        if (!isalnum((unsigned char)*p) && *p != '-' && *p != '_')
            return false;
    return true;
}

/* loom/<slug>-<tag>: tag is 8 random hex digits drawn at creation, also
 * the folder's suffix. Agent ids are per session ("agent_1" in every one),
 * so the id alone would collide with a kept worktree of an earlier run. */
static char *branch_name(const char *name, const char *tag)
{
    loom_str b = LOOM_STR_INIT;
    str_puts(&b, "loom/");
    size_t start = b.len, kept = 0;
    for (const char *p = name ? name : ""; *p && kept < 24; p++) {
        unsigned char c = (unsigned char)*p;
        if (isalnum(c)) {
            str_putc(&b, (char)tolower(c));
            kept++;
        } else if (b.len > start && b.ptr[b.len - 1] != '-') {
            str_putc(&b, '-');
            kept++;
        }
    }
    while (b.len > start && b.ptr[b.len - 1] == '-')
        str_truncate(&b, b.len - 1);
    if (b.len == start)
        str_puts(&b, "agent");
    str_printf(&b, "-%s", tag);
    return str_steal(&b);
}

/* 8 random hex digits (a UUIDv7's random tail). */
static void random_tag(char tag[9])
{
    char u[UUID_STR_LEN];
    uuid_v7(u);
    memcpy(tag, u + strlen(u) - 8, 8);
    tag[8] = '\0';
}

/* ---- the exclude file ------------------------------------------------------- */

static pthread_mutex_t exclude_mu = PTHREAD_MUTEX_INITIALIZER;

static bool has_line(const char *text, const char *line)
{
    size_t n = strlen(line);
    for (const char *p = text; p && *p;) {
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        if (len == n && !strncmp(p, line, n))
            return true;
        p = nl ? nl + 1 : p + len;
    }
    return false;
}

/* .loom/worktrees/ and the owner file stay out of every status of the
 * repository through <common>/info/exclude: the user's .gitignore is
 * theirs, and a tracked change to it would show in their diff. */
static int ensure_excluded(const char *common, loom_error *err)
{
    static const char *const lines[] = {WT_DIR "/", "/" WT_OWNER_FILE};
    char *info = path_join(common, "info");
    char *path = path_join(info, "exclude");
    pthread_mutex_lock(&exclude_mu);
    char *text = NULL;
    size_t len = 0;
    int rc = 0;
    if (file_exists(path) && (rc = file_read_all(path, &text, &len, err)) < 0)
        goto out;
    loom_str s = LOOM_STR_INIT;
    str_append(&s, text ? text : "", text ? len : 0);
    bool added = false;
    for (size_t i = 0; i < sizeof lines / sizeof *lines; i++) {
        if (has_line(s.ptr, lines[i]))
            continue;
        if (s.len && s.ptr[s.len - 1] != '\n')
            str_putc(&s, '\n');
        if (!added)
            str_puts(&s, "# Loom's sub-agent worktrees\n");
        str_printf(&s, "%s\n", lines[i]);
        added = true;
    }
    if (added && (rc = file_mkdirs(info, 0755, err)) == 0)
        rc = file_write_atomic(path, s.ptr, s.len, 0644, err);
    str_free(&s);
out:
    pthread_mutex_unlock(&exclude_mu);
    free(text);
    free(info);
    free(path);
    return rc;
}

/* ---- the owner file ---------------------------------------------------------- */

static int write_owner(const agent_worktree *wt, const char *agent_id, loom_error *err)
{
    pid_t pid = getpid();
    int64_t started = 0;
    char state;
    pid_t pp, pg;
    proc_read_stat(pid, &state, &pp, &pg, &started);
    json_t *o = json_pack("{s:I, s:I, s:s, s:s, s:s}", "pid", (json_int_t)pid, "started",
                          (json_int_t)started, "agent_id", agent_id, "branch", wt->branch,
                          "base", wt->base_commit);
    char *text = json_dumps(o, JSON_COMPACT);
    json_decref(o);
    char *path = path_join(wt->path, WT_OWNER_FILE);
    int rc = file_write_atomic(path, text, strlen(text), 0644, err);
    free(path);
    free(text);
    return rc;
}

/* Whether the process the owner file names still runs (the same process:
 * its start time matches, so a reused pid does not count). A process that
 * cannot be inspected counts as alive: its worktree is left alone. */
static bool owner_alive(const json_t *owner)
{
    json_int_t pid = json_integer_value(json_object_get(owner, "pid"));
    json_int_t started = json_integer_value(json_object_get(owner, "started"));
    if (pid <= 0 || pid > INT_MAX)
        return false;
    if (pid == getpid())
        return true;
    if (kill((pid_t)pid, 0) < 0 && errno == ESRCH)
        return false;
    char state = 0;
    pid_t pp, pg;
    int64_t st = 0;
    if (!proc_read_stat((pid_t)pid, &state, &pp, &pg, &st))
        return true;
    return state != 'Z' && (started == 0 || st == started);
}

/* ---- the .git links ------------------------------------------------------------ */

/* A .git link file, gitdir or commondir: a small regular file, not a link. */
static char *read_small(const char *path)
{
    char *text = file_read_text(path, PATH_MAX + 64, FILE_TEXT_NOFOLLOW, NULL);
    if (text)
        trim_end(text);
    return text;
}

static bool same_file(const char *a, const char *b)
{
    char *ra = realpath(a, NULL), *rb = realpath(b, NULL);
    bool same = ra && rb && !strcmp(ra, rb);
    free(ra);
    free(rb);
    return same;
}

/* The worktree's <wt>/.git, its admin dir's gitdir and commondir are what
 * git made; the admin dir is inside <common>/worktrees/ and has no
 * config.worktree. An agent that changed one of them could make the next
 * git call read a config of its own (a filter is a command). */
static int links_ok(const agent_worktree *wt, loom_error *err)
{
    char *dotgit = path_join(wt->path, ".git");
    char *link = read_small(dotgit);
    char *admins = path_join(wt->git_common, "worktrees");
    char *gitdir_file = path_join(wt->admin_dir, "gitdir");
    char *commondir_file = path_join(wt->admin_dir, "commondir");
    char *cfg = path_join(wt->admin_dir, "config.worktree");
    char *gitdir = read_small(gitdir_file), *commondir = read_small(commondir_file);
    char *common_abs = commondir ? path_make_absolute(commondir, wt->admin_dir) : NULL;
    char *admin_real = realpath(wt->admin_dir, NULL), *admins_real = realpath(admins, NULL);
    struct stat st;
    bool ok = link && !strncmp(link, "gitdir: ", 8) && !strcmp(link + 8, wt->admin_dir) &&
              gitdir && !strcmp(gitdir, dotgit) && common_abs &&
              same_file(common_abs, wt->git_common) && admin_real && admins_real &&
              !strncmp(admin_real, admins_real, strlen(admins_real)) &&
              admin_real[strlen(admins_real)] == '/' && lstat(wt->admin_dir, &st) == 0 &&
              S_ISDIR(st.st_mode) && lstat(cfg, &st) < 0;
    free(dotgit);
    free(link);
    free(admins);
    free(gitdir_file);
    free(commondir_file);
    free(cfg);
    free(gitdir);
    free(commondir);
    free(common_abs);
    free(admin_real);
    free(admins_real);
    if (!ok)
        return loom_error_set(err, LOOM_ERR_INVALID_STATE_TRANSITION,
                              "worktree %s: its git links (.git, gitdir, commondir) are not the "
                              "ones Loom made; it is left as is and git is not run in it",
                              wt->path);
    return 0;
}

/* ---- create ------------------------------------------------------------------ */

static int admin_dir_of(agent_worktree *wt, loom_error *err)
{
    char *dotgit = path_join(wt->path, ".git");
    char *link = read_small(dotgit);
    free(dotgit);
    if (!link || strncmp(link, "gitdir: ", 8) != 0) {
        free(link);
        return loom_error_set(err, LOOM_ERR_INTERNAL, "worktree %s: no .git link", wt->path);
    }
    wt->admin_dir = path_make_absolute(link + 8, wt->path);
    free(link);
    return 0;
}

/* The repository of cwd: its top level, common dir and HEAD. */
static int repo_of(const char *cwd, char **top, char **common, char **head, loom_error *err)
{
    *top = *common = NULL;
    if (head)
        *head = NULL;
    const char *a_top[] = {"rev-parse", "--show-toplevel", NULL};
    const char *a_common[] = {"rev-parse", "--path-format=absolute", "--git-common-dir", NULL};
    const char *a_head[] = {"rev-parse", "--verify", "-q", "HEAD^{commit}", NULL};
    loom_error e;
    loom_error_clear(&e);
    if (!(*top = git_line(cwd, a_top, &e)) || !**top) {
        free(*top);
        *top = NULL;
        return loom_error_set(err, LOOM_ERR_INVALID_REQUEST,
                              "isolation \"worktree\": %s is not in a git working tree (%s)", cwd,
                              e.message);
    }
    if (!(*common = git_line(cwd, a_common, err)))
        return -LOOM_ERR_TOOL_EXECUTION_FAILED;
    if (head && !(*head = git_line(*top, a_head, err)))
        return loom_error_set(err, LOOM_ERR_INVALID_REQUEST,
                              "isolation \"worktree\": the repository at %s has no commit yet",
                              *top);
    return 0;
}

int agent_worktree_create(const char *cwd, const char *agent_id, const char *name,
                          agent_worktree *out, loom_error *err)
{
    memset(out, 0, sizeof *out);
    if (!id_ok(agent_id, 64))
        return loom_error_set(err, LOOM_ERR_INVALID_REQUEST,
                              "worktree: agent id \"%s\" is not [A-Za-z0-9_-]{1,64}",
                              agent_id ? agent_id : "");
    int rc = repo_of(cwd, &out->repo_root, &out->git_common, &out->base_commit, err);
    if (rc < 0)
        goto fail;
    if ((rc = ensure_excluded(out->git_common, err)) < 0)
        goto fail;
    char tag[9];
    random_tag(tag);
    loom_str folder = LOOM_STR_INIT;
    str_printf(&folder, "%s-%s", agent_id, tag);
    char *parent = path_join(out->repo_root, WT_DIR);
    out->path = path_join(parent, folder.ptr);
    str_free(&folder);
    rc = file_mkdirs(parent, 0755, err);
    free(parent);
    if (rc < 0)
        goto fail;
    struct stat st;
    if (lstat(out->path, &st) == 0) {
        rc = loom_error_set(err, LOOM_ERR_INVALID_STATE_TRANSITION,
                            "worktree %s already exists", out->path);
        goto fail_kept;
    }
    out->branch = branch_name(name, tag);
    const char *add[] = {"worktree", "add", "-q", "-b", out->branch, out->path,
                         out->base_commit, NULL};
    if ((rc = agent_git_out(out->repo_root, add, NULL, NULL, err)) < 0)
        goto fail_kept;
    /* From here on a failure removes what git made. */
    char *refs = path_join(out->git_common, "refs/heads/loom");
    char *logs = path_join(out->git_common, "logs/refs/heads/loom");
    /* Landlock rules name existing paths: the ref folders a commit on the
     * branch writes must be there before the policy is built. */
    if ((rc = admin_dir_of(out, err)) == 0 && (rc = file_mkdirs(refs, 0755, err)) == 0 &&
        (rc = file_mkdirs(logs, 0755, err)) == 0)
        rc = write_owner(out, agent_id, err);
    free(refs);
    free(logs);
    if (rc == 0)
        return 0;
    agent_worktree_remove(out->repo_root, out->path, out->branch, NULL);
fail_kept:
fail:
    agent_worktree_free(out);
    return rc;
}

void agent_worktree_free(agent_worktree *wt)
{
    if (!wt)
        return;
    free(wt->path);
    free(wt->branch);
    free(wt->repo_root);
    free(wt->base_commit);
    free(wt->git_common);
    free(wt->admin_dir);
    memset(wt, 0, sizeof *wt);
}

/* ---- the policy --------------------------------------------------------------- */

static char *canon(const char *p)
{
    char *r = realpath(p, NULL);
    return r ? r : path_fold(p);
}

/* a is b or lies beneath it. */
static bool is_within(const char *a, const char *b)
{
    size_t n = strlen(b);
    while (n > 1 && b[n - 1] == '/')
        n--;
    return !strncmp(a, b, n) && (a[n] == '\0' || a[n] == '/' || (n == 1 && b[0] == '/'));
}

/* Either holds the other: a writable root that would open the parent's
 * tree (a temp dir holding the repository, a path inside it). */
static bool overlaps(const char *path, const char *area)
{
    char *p = canon(path), *a = canon(area);
    bool o = is_within(p, a) || is_within(a, p);
    free(p);
    free(a);
    return o;
}

static void keep_apart(sandbox_paths *l, const agent_worktree *wt)
{
    size_t k = 0;
    for (size_t i = 0; i < l->n; i++) {
        if (overlaps(l->v[i], wt->repo_root) || overlaps(l->v[i], wt->git_common))
            free(l->v[i]);
        else
            l->v[k++] = l->v[i];
    }
    l->n = k;
}

void agent_worktree_policy(const agent_worktree *wt, const sandbox_policy *base,
                           sandbox_policy *out)
{
    bool user_sandbox = base && base->enabled;
    if (base) {
        sandbox_policy_copy(out, base);
        free(out->workspace);
        out->workspace = xstrdup(wt->path);
    } else {
        sandbox_policy_init(out, wt->path);
    }
    keep_apart(&out->writable, wt);
    keep_apart(&out->temp, wt);
    /* What a commit on the branch writes in the common dir: objects, the
     * branch's ref and reflog (both under loom/), and the worktree's own
     * admin dir (HEAD, index, its reflog). Not packed-refs, config, hooks
     * or the main index: `git gc`, `git config` and `git -C <parent>` fail. */
    static const char *const git_parts[] = {"objects", "refs/heads/loom", "logs/refs/heads/loom"};
    sandbox_paths_add(&out->writable, wt->admin_dir, NULL);
    for (size_t i = 0; i < sizeof git_parts / sizeof *git_parts; i++) {
        char *p = path_join(wt->git_common, git_parts[i]);
        sandbox_paths_add(&out->writable, p, NULL);
        free(p);
    }
    out->enabled = true;
    if (!user_sandbox) {
        /* The user asked for no sandbox: the copy is there to keep the
         * agent's writes in its worktree, not to cut it off the network,
         * and a kernel that cannot confine runs it as before, with a notice. */
        out->network = SANDBOX_NET_ALLOW;
        out->on_unsupported = SANDBOX_UNSUPPORTED_WARN;
    }
}

/* ---- finish, remove, sweep ----------------------------------------------------- */

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)ftw;
    if (flag == FTW_DP)
        return rmdir(path) < 0 && errno != ENOENT ? -1 : 0;
    return unlink(path) < 0 && errno != ENOENT ? -1 : 0;
}

/* links_ok for a bare path (the remove of a merge, which has no
 * agent_worktree at hand). */
static bool path_links_ok(const char *repo_root, const char *path)
{
    const char *a_common[] = {"rev-parse", "--path-format=absolute", "--git-common-dir", NULL};
    agent_worktree wt = {.path = xstrdup(path), .git_common = git_line(repo_root, a_common, NULL)};
    bool ok = wt.git_common && admin_dir_of(&wt, NULL) == 0 && links_ok(&wt, NULL) == 0;
    agent_worktree_free(&wt);
    return ok;
}

int agent_worktree_remove(const char *repo_root, const char *path, const char *branch,
                          loom_error *err)
{
    int rc = 0;
    struct stat st;
    if (path && lstat(path, &st) == 0) {
        /* git finds the folder to delete through the worktree's links: only
         * when they are the ones it made is it asked to. */
        const char *rm[] = {"worktree", "remove", "--force", "--force", path, NULL};
        bool by_git = path_links_ok(repo_root, path) &&
                      agent_git_out(repo_root, rm, NULL, NULL, NULL) == 0;
        if (!by_git && lstat(path, &st) == 0) {
            /* git refuses some (one holding a submodule): delete the folder
             * without following its links, then let git forget it. */
            if (nftw(path, rm_entry, 16, FTW_DEPTH | FTW_PHYS) < 0)
                rc = loom_error_set(err, LOOM_ERR_IO, "worktree %s: cannot remove: %s", path,
                                    strerror(errno));
        }
    }
    const char *prune[] = {"worktree", "prune", NULL};
    agent_git_out(repo_root, prune, NULL, NULL, NULL);
    if (branch && *branch) {
        loom_str r = LOOM_STR_INIT;
        str_printf(&r, "refs/heads/%s", branch);
        char *ref = str_steal(&r);
        const char *exists[] = {"rev-parse", "--verify", "-q", ref, NULL};
        const char *del[] = {"branch", "-D", "-q", branch, NULL};
        if (agent_git_out(repo_root, exists, NULL, NULL, NULL) == 0 && rc == 0)
            rc = agent_git_out(repo_root, del, NULL, NULL, err);
        free(ref);
    }
    return rc;
}

/* Whether the worktree holds any change: a non-empty status (submodules
 * not entered: their config is the agent's). */
static int wt_dirty(const agent_worktree *wt, const sandbox_policy *conf, bool *dirty,
                    loom_error *err)
{
    const char *st[] = {"status", "--porcelain=v1", "-z", "--untracked-files=all",
                        "--ignore-submodules=all", NULL};
    char *o = NULL;
    int rc = agent_git_out(wt->path, st, conf, &o, err);
    *dirty = rc == 0 && o && *o;
    free(o);
    return rc;
}

static char *wt_head(const agent_worktree *wt, const sandbox_policy *conf, loom_error *err)
{
    const char *a[] = {"rev-parse", "--verify", "-q", "HEAD", NULL};
    char *o = NULL;
    if (agent_git_out(wt->path, a, conf, &o, err) < 0)
        return NULL;
    trim_end(o);
    return o;
}

int agent_worktree_changes(const agent_worktree *wt, size_t *files, size_t *commits,
                           loom_error *err)
{
    *files = *commits = 0;
    int rc = links_ok(wt, err);
    if (rc < 0)
        return rc;
    sandbox_policy pol;
    agent_worktree_policy(wt, NULL, &pol);
    const char *st[] = {"status", "--porcelain=v1", "-z", "--untracked-files=all",
                        "--ignore-submodules=all", NULL};
    char *o = NULL;
    rc = agent_git_out(wt->path, st, &pol, &o, err);
    /* -z: one NUL after each entry (a rename's second path adds one more,
     * which counts it twice: "changed files" is a warning, not a tally). */
    for (const char *p = o; rc == 0 && p && *p; p += strlen(p) + 1)
        (*files)++;
    free(o);
    o = NULL;
    loom_str range = LOOM_STR_INIT;
    str_printf(&range, "%s..HEAD", wt->base_commit);
    const char *count[] = {"rev-list", "--count", range.ptr, NULL};
    if (rc == 0 && (rc = agent_git_out(wt->path, count, &pol, &o, err)) == 0)
        *commits = o ? strtoul(o, NULL, 10) : 0;
    free(o);
    str_free(&range);
    sandbox_policy_free(&pol);
    return rc;
}

int agent_worktree_finish(agent_worktree *wt, const char *agent_id, bool *changed,
                          loom_error *err)
{
    *changed = false;
    if (!wt || !wt->path)
        return 0;
    int rc = links_ok(wt, err);
    if (rc < 0)
        return rc;
    sandbox_policy pol;
    agent_worktree_policy(wt, NULL, &pol);
    bool dirty = false;
    if ((rc = wt_dirty(wt, &pol, &dirty, err)) < 0)
        goto out;
    if (dirty) {
        loom_str msg = LOOM_STR_INIT;
        str_printf(&msg, "loom: work of agent %s", agent_id ? agent_id : "?");
        const char *add[] = {"add", "-A", NULL};
        const char *commit[] = {"-c", "user.name=" WT_AUTHOR_NAME, "-c",
                                "user.email=" WT_AUTHOR_EMAIL, "-c", "commit.gpgSign=false",
                                "commit", "-q", "--no-verify", "-m", msg.ptr, NULL};
        rc = agent_git_out(wt->path, add, &pol, NULL, err);
        if (rc == 0)
            rc = agent_git_out(wt->path, commit, &pol, NULL, err);
        str_free(&msg);
        if (rc < 0)
            goto out;
    }
    char *head = wt_head(wt, &pol, err);
    if (!head) {
        rc = -LOOM_ERR_TOOL_EXECUTION_FAILED;
        goto out;
    }
    loom_str ref = LOOM_STR_INIT;
    str_printf(&ref, "refs/heads/%s", wt->branch);
    const char *tip_args[] = {"rev-parse", "--verify", "-q", ref.ptr, NULL};
    char *tip = git_line(wt->repo_root, tip_args, NULL);
    str_free(&ref);
    *changed = strcmp(head, wt->base_commit) != 0 || (tip && strcmp(tip, wt->base_commit) != 0);
    free(head);
    free(tip);
    if (!*changed)
        rc = agent_worktree_remove(wt->repo_root, wt->path, wt->branch, err);
out:
    sandbox_policy_free(&pol);
    return rc;
}

/* One folder of the sweep: removed when its owner is gone and it holds
 * nothing (clean, HEAD still at the base it was made from). */
static bool sweep_one(const char *top, const char *common, const char *path)
{
    char *owner_path = path_join(path, WT_OWNER_FILE);
    json_t *owner = json_load_file(owner_path, 0, NULL);
    free(owner_path);
    const char *branch = json_string_value(json_object_get(owner, "branch"));
    const char *base = json_string_value(json_object_get(owner, "base"));
    bool removed = false;
    if (!owner || !branch || !base || owner_alive(owner) || strncmp(branch, "loom/", 5) != 0) {
        json_decref(owner);
        return false;
    }
    agent_worktree wt = {
        .path = xstrdup(path),
        .branch = xstrdup(branch),
        .repo_root = xstrdup(top),
        .base_commit = xstrdup(base),
        .git_common = xstrdup(common),
    };
    json_decref(owner);
    bool dirty = true;
    if (admin_dir_of(&wt, NULL) == 0 && links_ok(&wt, NULL) == 0) {
        sandbox_policy pol;
        agent_worktree_policy(&wt, NULL, &pol);
        char *head = NULL;
        if (wt_dirty(&wt, &pol, &dirty, NULL) == 0 && !dirty &&
            (head = wt_head(&wt, &pol, NULL)) && !strcmp(head, wt.base_commit))
            removed = agent_worktree_remove(top, wt.path, wt.branch, NULL) == 0;
        free(head);
        sandbox_policy_free(&pol);
    }
    agent_worktree_free(&wt);
    return removed;
}

int agent_worktree_sweep(const char *cwd)
{
    char *top = NULL, *common = NULL;
    loom_error err;
    loom_error_clear(&err);
    int removed = 0;
    if (repo_of(cwd, &top, &common, NULL, &err) < 0)
        goto out;
    char *dir = path_join(top, WT_DIR);
    DIR *d = opendir(dir);
    struct dirent *e;
    while (d && (e = readdir(d))) {
        if (e->d_name[0] == '.' || !id_ok(e->d_name, 80))
            continue;
        char *p = path_join(dir, e->d_name);
        if (sweep_one(top, common, p))
            removed++;
        free(p);
    }
    if (d)
        closedir(d);
    free(dir);
out:
    free(top);
    free(common);
    return removed;
}
