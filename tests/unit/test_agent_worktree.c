/* test_agent_worktree.c — a sub-agent's git worktree (agents/worktree.h)
 * against real git in a temporary repository: making it, the confined
 * policy's paths, finishing clean (removed) and changed (committed and
 * kept), the sweep of a dead owner's worktree, a repository whose hooks
 * would run code (they must not), a worktree whose .git link an agent
 * changed, and the escape attempts through the real sandbox (touch in the
 * parent, git -C <parent>, GIT_DIR=, cd ..) where the kernel can sandbox. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "agents/worktree.h"
#include "base/fileio.h"
#include "base/path.h"
#include "base/proc.h"
#include "base/str.h"
#include "sandbox/sandbox.h"
#include "sandbox/sandbox_policy.h"
#include "tools/builtin/builtin.h"
#include "tools/tool.h"

static char repo[256];

static int rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb;
    (void)flag;
    (void)ftw;
    return remove(path);
}

static void write_file(const char *path, const char *text)
{
    loom_error err;
    assert_int_equal(file_write_atomic(path, text, strlen(text), 0644, &err), 0);
}

/* A shell line for the fixtures (never for what is under test). */
static int sh(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    loom_str s = LOOM_STR_INIT;
    str_vprintf(&s, fmt, ap);
    va_end(ap);
    int rc = system(s.ptr);
    str_free(&s);
    return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

/* The first line git prints for args in dir ("" when none). */
static char *git1(const char *dir, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    loom_str cmd = LOOM_STR_INIT;
    str_printf(&cmd, "git -C '%s' ", dir);
    str_vprintf(&cmd, fmt, ap);
    str_puts(&cmd, " 2>/dev/null");
    va_end(ap);
    FILE *f = popen(cmd.ptr, "r");
    str_free(&cmd);
    char buf[4096] = "";
    if (f) {
        size_t n = fread(buf, 1, sizeof buf - 1, f);
        buf[n] = '\0';
        pclose(f);
    }
    char *nl = strchr(buf, '\n');
    if (nl)
        *nl = '\0';
    return xstrdup(buf);
}

static int setup_repo(void **state)
{
    (void)state;
    snprintf(repo, sizeof repo, "/tmp/loom_wt_test.XXXXXX");
    if (!mkdtemp(repo))
        return -1;
    return sh("cd '%s' && git init -q -b main . && git config user.name T && "
              "git config user.email t@example.com && echo one > a.txt && git add a.txt && "
              "git commit -q -m init", repo);
}

static int teardown_repo(void **state)
{
    (void)state;
    nftw(repo, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
    return 0;
}

static char *in_repo(const char *rel)
{
    return path_join(repo, rel);
}

static void test_create_and_exclude(void **state)
{
    (void)state;
    agent_worktree wt;
    loom_error err;
    assert_int_equal(agent_worktree_create(repo, "a1b2c3d4e5f60718", "Code Reviewer!", &wt, &err),
                     0);
    /* <id>-<tag> and loom/<slug>-<tag>, the same 8 hex digits. */
    char *want = in_repo(".loom/worktrees/a1b2c3d4e5f60718-");
    assert_int_equal(strncmp(wt.path, want, strlen(want)), 0);
    const char *tag = wt.path + strlen(want);
    assert_int_equal(strlen(tag), 8);
    assert_int_equal(strspn(tag, "0123456789abcdef"), 8);
    free(want);
    assert_int_equal(strncmp(wt.branch, "loom/code-reviewer-", 19), 0);
    assert_string_equal(wt.branch + 19, tag);
    assert_true(file_exists(wt.path));
    char *owner = path_join(wt.path, ".loom-owner");
    assert_true(file_exists(owner));
    free(owner);
    char *head = git1(repo, "rev-parse HEAD");
    assert_string_equal(wt.base_commit, head);
    char *tip = git1(repo, "rev-parse refs/heads/%s", wt.branch);
    assert_string_equal(tip, head);
    free(tip);
    free(head);
    /* The parent's status shows neither the worktree nor the owner file,
     * and its .gitignore was not written. */
    char *status = git1(repo, "status --porcelain --untracked-files=all");
    assert_string_equal(status, "");
    free(status);
    char *gi = in_repo(".gitignore");
    assert_false(file_exists(gi));
    free(gi);
    char *exclude = path_join(wt.git_common, "info/exclude"), *text = NULL;
    size_t len;
    assert_int_equal(file_read_all(exclude, &text, &len, &err), 0);
    assert_non_null(strstr(text, "\n.loom/worktrees/\n"));
    free(text);
    /* A second one adds no second copy of the lines. */
    agent_worktree wt2;
    assert_int_equal(agent_worktree_create(repo, "second", NULL, &wt2, &err), 0);
    assert_int_equal(strncmp(wt2.branch, "loom/agent-", 11), 0);
    assert_int_equal(file_read_all(exclude, &text, &len, &err), 0);
    assert_null(strstr(strstr(text, ".loom/worktrees/") + 1, ".loom/worktrees/"));
    free(text);
    free(exclude);
    /* The same id again (agent_1 of the next session) gets a worktree and
     * branch of its own; a bad id is refused. */
    agent_worktree dup;
    assert_int_equal(agent_worktree_create(repo, "second", NULL, &dup, &err), 0);
    assert_string_not_equal(dup.path, wt2.path);
    assert_string_not_equal(dup.branch, wt2.branch);
    bool dup_changed;
    assert_int_equal(agent_worktree_finish(&dup, "second", &dup_changed, &err), 0);
    assert_false(file_exists(dup.path ? dup.path : "/nonexistent"));
    agent_worktree_free(&dup);
    assert_true(agent_worktree_create(repo, "../x", NULL, &dup, &err) < 0);
    assert_non_null(strstr(err.message, "agent id"));
    bool changed = true;
    assert_int_equal(agent_worktree_finish(&wt, "a1b2c3d4e5f60718", &changed, &err), 0);
    assert_false(changed);
    assert_int_equal(agent_worktree_finish(&wt2, "second", &changed, &err), 0);
    agent_worktree_free(&wt);
    agent_worktree_free(&wt2);
}

static void test_not_a_repo(void **state)
{
    (void)state;
    char dir[] = "/tmp/loom_wt_norepo.XXXXXX";
    assert_non_null(mkdtemp(dir));
    agent_worktree wt;
    loom_error err;
    assert_true(agent_worktree_create(dir, "x1", NULL, &wt, &err) < 0);
    assert_non_null(strstr(err.message, "not in a git working tree"));
    assert_null(wt.path);
    assert_int_equal(agent_worktree_sweep(dir), 0);
    rmdir(dir);
}

static bool has_path(const sandbox_paths *l, const char *p)
{
    for (size_t i = 0; i < l->n; i++)
        if (!strcmp(l->v[i], p))
            return true;
    return false;
}

static void test_policy_paths(void **state)
{
    (void)state;
    agent_worktree wt;
    loom_error err;
    assert_int_equal(agent_worktree_create(repo, "pol1", "p", &wt, &err), 0);
    sandbox_policy base;
    sandbox_policy_init(&base, repo);
    base.enabled = true;
    char *inside = in_repo("build");
    sandbox_paths_add(&base.writable, inside, NULL);
    sandbox_paths_add(&base.writable, "/var/loom-extra", NULL);
    sandbox_paths_add(&base.temp, "/tmp", NULL);
    sandbox_policy pol;
    agent_worktree_policy(&wt, &base, &pol);
    assert_true(pol.enabled);
    assert_string_equal(pol.workspace, wt.path);
    assert_true(has_path(&pol.writable, wt.admin_dir));
    char *objects = path_join(wt.git_common, "objects");
    char *refs = path_join(wt.git_common, "refs/heads/loom");
    char *logs = path_join(wt.git_common, "logs/refs/heads/loom");
    assert_true(has_path(&pol.writable, objects));
    assert_true(has_path(&pol.writable, refs));
    assert_true(has_path(&pol.writable, logs));
    /* A path inside the parent and a temp dir holding it are dropped; an
     * unrelated extra path stays; the user's network choice stays. */
    assert_false(has_path(&pol.writable, inside));
    assert_true(has_path(&pol.writable, "/var/loom-extra"));
    assert_false(has_path(&pol.temp, "/tmp"));
    assert_int_equal(pol.network, base.network);
    char *wt_file = path_join(wt.path, "y"), *parent_file = in_repo("x");
    char *git_config = path_join(wt.git_common, "config");
    char *git_index = path_join(wt.git_common, "index");
    assert_true(sandbox_path_writable(&pol, wt_file));
    assert_false(sandbox_path_writable(&pol, parent_file));
    assert_false(sandbox_path_writable(&pol, git_config));
    assert_false(sandbox_path_writable(&pol, git_index));
    sandbox_policy_free(&pol);
    /* No base: enabled, network allowed, an unsupported kernel only warns. */
    agent_worktree_policy(&wt, NULL, &pol);
    assert_true(pol.enabled);
    assert_int_equal(pol.network, SANDBOX_NET_ALLOW);
    assert_int_equal(pol.on_unsupported, SANDBOX_UNSUPPORTED_WARN);
    assert_false(sandbox_path_writable(&pol, parent_file));
    sandbox_policy_free(&pol);
    sandbox_policy_free(&base);
    free(inside);
    free(objects);
    free(refs);
    free(logs);
    free(wt_file);
    free(parent_file);
    free(git_config);
    free(git_index);
    bool changed;
    assert_int_equal(agent_worktree_finish(&wt, "pol1", &changed, &err), 0);
    agent_worktree_free(&wt);
}

static void test_finish_clean_removed(void **state)
{
    (void)state;
    agent_worktree wt;
    loom_error err;
    assert_int_equal(agent_worktree_create(repo, "clean1", "c", &wt, &err), 0);
    char *path = xstrdup(wt.path), *branch = xstrdup(wt.branch);
    bool changed = true;
    assert_int_equal(agent_worktree_finish(&wt, "clean1", &changed, &err), 0);
    assert_false(changed);
    assert_false(file_exists(path));
    char *tip = git1(repo, "rev-parse -q --verify refs/heads/%s", branch);
    assert_string_equal(tip, "");
    char *list = git1(repo, "worktree list --porcelain | grep -c clean1");
    assert_string_equal(list, "0");
    free(list);
    free(tip);
    free(path);
    free(branch);
    agent_worktree_free(&wt);
}

static void test_finish_changed_kept(void **state)
{
    (void)state;
    agent_worktree wt;
    loom_error err;
    assert_int_equal(agent_worktree_create(repo, "chg1", "writer", &wt, &err), 0);
    char *f = path_join(wt.path, "new.txt");
    write_file(f, "agent work\n");
    free(f);
    char *a = path_join(wt.path, "a.txt");
    write_file(a, "two\n");
    free(a);
    bool changed = false;
    assert_int_equal(agent_worktree_finish(&wt, "chg1", &changed, &err), 0);
    assert_true(changed);
    assert_true(file_exists(wt.path));
    char *author = git1(repo, "log -1 --format='%%an <%%ae>|%%s' %s", wt.branch);
    assert_string_equal(author, "Loom agent <agent@loom.invalid>|loom: work of agent chg1");
    free(author);
    char *files = git1(repo, "diff --name-only %s %s | tr '\\n' ' '", wt.base_commit, wt.branch);
    assert_string_equal(files, "a.txt new.txt ");
    free(files);
    /* The owner file is not part of the commit, and the parent is as it was. */
    char *tree = git1(repo, "ls-tree --name-only %s | grep -c loom-owner", wt.branch);
    assert_string_equal(tree, "0");
    free(tree);
    char *status = git1(repo, "status --porcelain --untracked-files=all");
    assert_string_equal(status, "");
    free(status);
    char *head = git1(repo, "rev-parse HEAD");
    assert_string_equal(head, wt.base_commit);
    free(head);
    assert_int_equal(agent_worktree_remove(wt.repo_root, wt.path, wt.branch, &err), 0);
    assert_false(file_exists(wt.path));
    agent_worktree_free(&wt);
}

/* Rewrites a worktree's owner file to name pid (with its start time). */
static void set_owner_pid(const agent_worktree *wt, pid_t pid)
{
    char *p = path_join(wt->path, ".loom-owner"), *text = NULL;
    size_t len;
    loom_error err;
    assert_int_equal(file_read_all(p, &text, &len, &err), 0);
    json_t *o = json_loads(text, 0, NULL);
    assert_non_null(o);
    json_object_set_new(o, "pid", json_integer(pid));
    json_object_set_new(o, "started", json_integer(1));
    char *out = json_dumps(o, 0);
    write_file(p, out);
    free(out);
    json_decref(o);
    free(text);
    free(p);
}

static void test_sweep_dead_owner(void **state)
{
    (void)state;
    pid_t dead = fork();
    if (dead == 0)
        _exit(0);
    waitpid(dead, NULL, 0);
    agent_worktree clean, dirty, live;
    loom_error err;
    assert_int_equal(agent_worktree_create(repo, "swclean", "s", &clean, &err), 0);
    assert_int_equal(agent_worktree_create(repo, "swdirty", "s", &dirty, &err), 0);
    assert_int_equal(agent_worktree_create(repo, "swlive", "s", &live, &err), 0);
    set_owner_pid(&clean, dead);
    set_owner_pid(&dirty, dead);
    char *f = path_join(dirty.path, "wip.txt");
    write_file(f, "unsaved\n");
    free(f);
    assert_int_equal(agent_worktree_sweep(repo), 1);
    assert_false(file_exists(clean.path));
    char *tip = git1(repo, "rev-parse -q --verify refs/heads/%s", clean.branch);
    assert_string_equal(tip, "");
    free(tip);
    assert_true(file_exists(dirty.path)); /* changes: kept */
    assert_true(file_exists(live.path));  /* this process owns it */
    assert_int_equal(agent_worktree_sweep(repo), 0);
    agent_worktree_remove(repo, dirty.path, dirty.branch, &err);
    agent_worktree_remove(repo, live.path, live.branch, &err);
    agent_worktree_free(&clean);
    agent_worktree_free(&dirty);
    agent_worktree_free(&live);
}

/* The repository's hooks would touch a marker; Loom's git calls (worktree
 * add runs post-checkout, commit runs pre-commit and commit-msg) run none. */
static void test_hooks_never_run(void **state)
{
    (void)state;
    char *marker = in_repo("../hook_ran_marker");
    char *m = path_fold(marker);
    unlink(m);
    assert_int_equal(sh("cd '%s' && for h in pre-commit commit-msg post-commit post-checkout "
                        "reference-transaction; do printf '#!/bin/sh\\ntouch %s\\n' > "
                        ".git/hooks/$h; chmod +x .git/hooks/$h; done", repo, m), 0);
    /* The hooks work when git runs them itself. */
    assert_int_equal(sh("cd '%s' && git commit -q --allow-empty -m probe", repo), 0);
    assert_true(file_exists(m));
    unlink(m);
    agent_worktree wt;
    loom_error err;
    assert_int_equal(agent_worktree_create(repo, "hook1", "h", &wt, &err), 0);
    char *f = path_join(wt.path, "w.txt");
    write_file(f, "x\n");
    free(f);
    bool changed = false;
    assert_int_equal(agent_worktree_finish(&wt, "hook1", &changed, &err), 0);
    assert_true(changed);
    assert_false(file_exists(m));
    assert_int_equal(agent_worktree_remove(wt.repo_root, wt.path, wt.branch, &err), 0);
    assert_false(file_exists(m));
    sh("rm -f '%s'/.git/hooks/*", repo);
    agent_worktree_free(&wt);
    free(marker);
    free(m);
}

/* An agent that pointed its .git at a git dir of its own (whose config
 * could name a filter command) gets no git call run there: finish refuses
 * and keeps the worktree. */
static void test_tampered_link_refused(void **state)
{
    (void)state;
    agent_worktree wt;
    loom_error err;
    assert_int_equal(agent_worktree_create(repo, "tamper1", "t", &wt, &err), 0);
    char *dotgit = path_join(wt.path, ".git"), *fake = path_join(wt.path, "fakegit");
    loom_str s = LOOM_STR_INIT;
    str_printf(&s, "gitdir: %s\n", fake);
    write_file(dotgit, s.ptr);
    str_free(&s);
    bool changed = true;
    assert_true(agent_worktree_finish(&wt, "tamper1", &changed, &err) < 0);
    assert_false(changed);
    assert_non_null(strstr(err.message, "git links"));
    assert_true(file_exists(wt.path));
    /* The sweep does not run git there either, dead owner or not. */
    set_owner_pid(&wt, 999999);
    assert_int_equal(agent_worktree_sweep(repo), 0);
    assert_true(file_exists(wt.path));
    assert_int_equal(agent_worktree_remove(wt.repo_root, wt.path, wt.branch, &err), 0);
    assert_false(file_exists(wt.path));
    free(dotgit);
    free(fake);
    agent_worktree_free(&wt);
}

/* bash -c cmd in cwd under the policy, as the Bash tool runs it; its exit
 * code. */
static int confined(const sandbox_policy *pol, const char *cwd, const char *cmd)
{
    const char *argv[] = {"bash", "-c", cmd, NULL};
    proc_spec spec = {.argv = argv, .cwd = cwd, .timeout_ms = 30000};
    sandbox_prep *prep = NULL;
    char msg[512];
    assert_int_equal(sandbox_prepare(pol, &prep, msg, sizeof msg), 0);
    spec.child_setup = sandbox_child_setup;
    spec.child_ctx = prep;
    spec.supervise = sandbox_supervise;
    spec.supervise_ctx = prep;
    proc_result r;
    loom_error err;
    assert_int_equal(proc_run(&spec, &r, &err), 0);
    int code = r.exit_code;
    proc_result_free(&r);
    sandbox_prep_free(prep);
    return code;
}

static void test_escape_confined(void **state)
{
    (void)state;
    if (sandbox_supported() < 1) {
        fprintf(stderr, "skipped: %s\n", sandbox_unsupported_reason());
        skip();
    }
    agent_worktree wt;
    loom_error err;
    assert_int_equal(agent_worktree_create(repo, "esc1", "e", &wt, &err), 0);
    sandbox_policy pol;
    agent_worktree_policy(&wt, NULL, &pol);
    char *head = git1(repo, "rev-parse HEAD");
    loom_str c = LOOM_STR_INIT;
    /* Inside: a write and a commit on the agent's branch work. */
    assert_int_equal(confined(&pol, wt.path, "touch y && echo z > z.txt"), 0);
    assert_int_equal(confined(&pol, wt.path, "git add z.txt && git -c user.name=a -c "
                                             "user.email=a@b commit -q -m 'agent commit'"), 0);
    /* Outside: the parent's tree, by path, by cd, through git -C and GIT_DIR. */
    str_printf(&c, "touch '%s/x'", repo);
    assert_int_not_equal(confined(&pol, wt.path, c.ptr), 0);
    assert_int_not_equal(confined(&pol, wt.path, "cd ../../.. && touch x2"), 0);
    str_clear(&c);
    str_printf(&c, "git -C '%s' -c user.name=a -c user.email=a@b commit -q --allow-empty -m evil",
               repo);
    assert_int_not_equal(confined(&pol, wt.path, c.ptr), 0);
    str_clear(&c);
    str_printf(&c, "echo evil > '%s/a.txt.new'; GIT_DIR='%s/.git' GIT_WORK_TREE='%s' git -c "
                   "user.name=a -c user.email=a@b commit -q --allow-empty -m evil2",
               repo, repo, repo);
    assert_int_not_equal(confined(&pol, wt.path, c.ptr), 0);
    str_clear(&c);
    str_printf(&c, "git -C '%s' config core.hooksPath /tmp", repo);
    assert_int_not_equal(confined(&pol, wt.path, c.ptr), 0);
    assert_int_not_equal(confined(&pol, wt.path, "git gc -q"), 0);
    str_free(&c);
    char *x = in_repo("x"), *x2 = in_repo("x2"), *anew = in_repo("a.txt.new");
    char *y = path_join(wt.path, "y");
    assert_false(file_exists(x));
    assert_false(file_exists(x2));
    assert_false(file_exists(anew));
    assert_true(file_exists(y));
    char *after = git1(repo, "rev-parse HEAD");
    assert_string_equal(after, head); /* the parent's branch did not move */
    char *msg = git1(repo, "log -1 --format=%%s %s", wt.branch);
    assert_string_equal(msg, "agent commit");
    char *hp = git1(repo, "config --get core.hooksPath");
    assert_string_equal(hp, "");
    free(hp);
    free(msg);
    free(after);
    free(head);
    free(x);
    free(x2);
    free(anew);
    free(y);
    sandbox_policy_free(&pol);
    bool changed = false;
    assert_int_equal(agent_worktree_finish(&wt, "esc1", &changed, &err), 0);
    assert_true(changed);
    assert_int_equal(agent_worktree_remove(wt.repo_root, wt.path, wt.branch, &err), 0);
    agent_worktree_free(&wt);
}

/* The Bash tool itself, given the worktree policy as its tool_ctx.sandbox
 * (what the runner hands a worktree agent): the same escapes fail, the
 * result says the sandbox blocked them, and a write inside works. */
static int bash_tool(const sandbox_policy *pol, const char *cwd, const char *cmd, char **text)
{
    tool_ctx ctx = {.cwd = cwd, .sandbox = pol};
    json_t *in = json_pack("{s:s}", "command", cmd);
    tool_result r;
    tool_result_init(&r);
    assert_int_equal(tool_bash.run(in, &ctx, &r), 0);
    json_decref(in);
    int failed = r.is_error;
    if (text)
        *text = xstrdup(str_cstr(&r.text));
    tool_result_free(&r);
    return failed;
}

static void test_escape_through_bash_tool(void **state)
{
    (void)state;
    if (sandbox_supported() < 1)
        skip();
    agent_worktree wt;
    loom_error err;
    assert_int_equal(agent_worktree_create(repo, "bash1", "b", &wt, &err), 0);
    sandbox_policy pol;
    agent_worktree_policy(&wt, NULL, &pol);
    char *head = git1(repo, "rev-parse HEAD");
    loom_str c = LOOM_STR_INIT;
    str_printf(&c, "git -C '%s' -c user.name=a -c user.email=a@b commit -q --allow-empty -m evil",
               repo);
    char *text = NULL;
    assert_true(bash_tool(&pol, wt.path, c.ptr, &text));
    free(text);
    str_clear(&c);
    str_printf(&c, "touch '%s/escaped'", repo);
    assert_true(bash_tool(&pol, wt.path, c.ptr, &text));
    assert_non_null(strstr(text, "sandbox"));
    free(text);
    assert_false(bash_tool(&pol, wt.path, "echo ok > inside.txt", NULL));
    str_free(&c);
    char *esc = in_repo("escaped"), *ins = path_join(wt.path, "inside.txt");
    assert_false(file_exists(esc));
    assert_true(file_exists(ins));
    char *after = git1(repo, "rev-parse HEAD");
    assert_string_equal(after, head);
    free(after);
    free(head);
    free(esc);
    free(ins);
    sandbox_policy_free(&pol);
    assert_int_equal(agent_worktree_remove(wt.repo_root, wt.path, wt.branch, &err), 0);
    agent_worktree_free(&wt);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_create_and_exclude, setup_repo, teardown_repo),
        cmocka_unit_test(test_not_a_repo),
        cmocka_unit_test_setup_teardown(test_policy_paths, setup_repo, teardown_repo),
        cmocka_unit_test_setup_teardown(test_finish_clean_removed, setup_repo, teardown_repo),
        cmocka_unit_test_setup_teardown(test_finish_changed_kept, setup_repo, teardown_repo),
        cmocka_unit_test_setup_teardown(test_sweep_dead_owner, setup_repo, teardown_repo),
        cmocka_unit_test_setup_teardown(test_hooks_never_run, setup_repo, teardown_repo),
        cmocka_unit_test_setup_teardown(test_tampered_link_refused, setup_repo, teardown_repo),
        cmocka_unit_test_setup_teardown(test_escape_confined, setup_repo, teardown_repo),
        cmocka_unit_test_setup_teardown(test_escape_through_bash_tool, setup_repo, teardown_repo),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
