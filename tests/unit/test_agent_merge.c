/* test_agent_merge.c — merge-back of worktree agents (agents/merge.h)
 * against real git: two agents on different files both merge; two on the
 * same line give a conflict on that file with the parent's status, HEAD
 * and file bytes unchanged; a file the user modified in the parent is not
 * merged over; a missing branch is skipped; the repository's merge hooks
 * do not run; a folder outside git is an error. */
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

#include "agents/merge.h"
#include "agents/worktree.h"
#include "base/fileio.h"
#include "base/path.h"
#include "base/str.h"

static char repo[256];

static int rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb;
    (void)flag;
    (void)ftw;
    return remove(path);
}

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

/* All git prints for the command in the repository. */
static char *git_all(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    loom_str cmd = LOOM_STR_INIT;
    str_printf(&cmd, "git -C '%s' ", repo);
    str_vprintf(&cmd, fmt, ap);
    str_puts(&cmd, " 2>/dev/null");
    va_end(ap);
    FILE *f = popen(cmd.ptr, "r");
    str_free(&cmd);
    loom_str out = LOOM_STR_INIT;
    char buf[4096];
    size_t n;
    while (f && (n = fread(buf, 1, sizeof buf, f)) > 0)
        str_append(&out, buf, n);
    if (f)
        pclose(f);
    char *text = str_steal(&out);
    return text ? text : xstrdup("");
}

static char *read_text(const char *rel)
{
    char *p = path_join(repo, rel), *text = NULL;
    size_t len;
    loom_error err;
    if (file_read_all(p, &text, &len, &err) < 0)
        text = NULL;
    free(p);
    return text;
}

static void write_text(const char *dir, const char *rel, const char *text)
{
    char *p = path_join(dir, rel);
    loom_error err;
    assert_int_equal(file_write_atomic(p, text, strlen(text), 0644, &err), 0);
    free(p);
}

static int setup_repo(void **state)
{
    (void)state;
    snprintf(repo, sizeof repo, "/tmp/loom_merge_test.XXXXXX");
    if (!mkdtemp(repo))
        return -1;
    return sh("cd '%s' && git init -q -b main . && git config user.name T && "
              "git config user.email t@example.com && printf 'one\\ntwo\\n' > a.txt && "
              "echo bee > b.txt && git add . && git commit -q -m init", repo);
}

static int teardown_repo(void **state)
{
    (void)state;
    nftw(repo, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
    return 0;
}

/* An agent's worktree with one file written and finished (committed). */
static void agent_edit(agent_worktree *wt, const char *id, const char *file, const char *text)
{
    loom_error err;
    assert_int_equal(agent_worktree_create(repo, id, id, wt, &err), 0);
    write_text(wt->path, file, text);
    bool changed = false;
    assert_int_equal(agent_worktree_finish(wt, id, &changed, &err), 0);
    assert_true(changed);
}

static agent_merge_item item_of(const agent_worktree *wt, const char *id)
{
    return (agent_merge_item){.agent_id = id, .name = id, .branch = wt->branch,
                              .worktree = wt->path};
}

static void test_different_files_both_merged(void **state)
{
    (void)state;
    agent_worktree w1, w2;
    agent_edit(&w1, "ag1", "a.txt", "one changed\ntwo\n");
    agent_edit(&w2, "ag2", "b.txt", "bee changed\n");
    agent_merge_item items[] = {item_of(&w1, "ag1"), item_of(&w2, "ag2")};
    loom_error err;
    json_t *rep = agent_merge_branches(repo, items, 2, &err);
    assert_non_null(rep);
    json_t *merged = json_object_get(rep, "merged");
    assert_int_equal(json_array_size(merged), 2);
    assert_int_equal(json_array_size(json_object_get(rep, "conflicts")), 0);
    json_t *m1 = json_array_get(merged, 0);
    assert_string_equal(json_string_value(json_object_get(m1, "agent_id")), "ag1");
    assert_string_equal(json_string_value(json_array_get(json_object_get(m1, "files"), 0)),
                        "a.txt");
    assert_non_null(strstr(json_string_value(json_object_get(m1, "stat")), "a.txt"));
    char *a = read_text("a.txt"), *b = read_text("b.txt");
    assert_string_equal(a, "one changed\ntwo\n");
    assert_string_equal(b, "bee changed\n");
    free(a);
    free(b);
    /* Two merge commits; worktrees and branches gone; a clean status. */
    char *merges = git_all("rev-list --merges --count HEAD");
    assert_string_equal(merges, "2\n");
    char *branches = git_all("branch --list 'loom/*'");
    assert_string_equal(branches, "");
    char *status = git_all("status --porcelain --untracked-files=all");
    assert_string_equal(status, "");
    assert_false(file_exists(w1.path));
    assert_false(file_exists(w2.path));
    free(merges);
    free(branches);
    free(status);
    json_decref(rep);
    agent_worktree_free(&w1);
    agent_worktree_free(&w2);
}

static void test_same_line_conflict_untouched(void **state)
{
    (void)state;
    agent_worktree w1, w2;
    agent_edit(&w1, "cf1", "a.txt", "one by cf1\ntwo\n");
    agent_edit(&w2, "cf2", "a.txt", "one by cf2\ntwo\n");
    loom_error err;
    agent_merge_item first[] = {item_of(&w1, "cf1")};
    json_t *rep = agent_merge_branches(repo, first, 1, &err);
    assert_int_equal(json_array_size(json_object_get(rep, "merged")), 1);
    json_decref(rep);
    /* The parent as it stands before the second: a user's untracked file
     * too, so status has something to compare. */
    write_text(repo, "notes.txt", "mine\n");
    char *status0 = git_all("status --porcelain --untracked-files=all");
    char *head0 = git_all("rev-parse HEAD");
    char *a0 = read_text("a.txt");
    agent_merge_item second[] = {item_of(&w2, "cf2")};
    rep = agent_merge_branches(repo, second, 1, &err);
    assert_int_equal(json_array_size(json_object_get(rep, "merged")), 0);
    json_t *conf = json_object_get(rep, "conflicts");
    assert_int_equal(json_array_size(conf), 1);
    json_t *c = json_array_get(conf, 0);
    assert_string_equal(json_string_value(json_object_get(c, "agent_id")), "cf2");
    assert_string_equal(json_string_value(json_object_get(c, "reason")), "conflict");
    json_t *files = json_object_get(c, "files");
    assert_int_equal(json_array_size(files), 1);
    assert_string_equal(json_string_value(json_array_get(files, 0)), "a.txt");
    char *status1 = git_all("status --porcelain --untracked-files=all");
    char *head1 = git_all("rev-parse HEAD");
    char *a1 = read_text("a.txt");
    assert_string_equal(status1, status0);
    assert_string_equal(head1, head0);
    assert_string_equal(a1, a0);
    assert_string_equal(a1, "one by cf1\ntwo\n");
    /* The conflicting agent's worktree and branch are kept for the user. */
    assert_true(file_exists(w2.path));
    char *br = git_all("rev-parse -q --verify refs/heads/%s", w2.branch);
    assert_true(strlen(br) > 0);
    free(br);
    free(status0);
    free(status1);
    free(head0);
    free(head1);
    free(a0);
    free(a1);
    json_decref(rep);
    agent_worktree_remove(repo, w2.path, w2.branch, &err);
    agent_worktree_free(&w1);
    agent_worktree_free(&w2);
}

static void test_parent_modified_file_kept(void **state)
{
    (void)state;
    agent_worktree w;
    agent_edit(&w, "pm1", "b.txt", "bee by agent\n");
    write_text(repo, "b.txt", "bee by user, unsaved\n");
    agent_merge_item items[] = {item_of(&w, "pm1"), {.agent_id = "ghost", .branch = "loom/none"}};
    loom_error err;
    json_t *rep = agent_merge_branches(repo, items, 2, &err);
    json_t *c = json_array_get(json_object_get(rep, "conflicts"), 0);
    assert_non_null(c);
    assert_non_null(strstr(json_string_value(json_object_get(c, "reason")), "modified"));
    assert_string_equal(json_string_value(json_array_get(json_object_get(c, "files"), 0)),
                        "b.txt");
    json_t *s = json_array_get(json_object_get(rep, "skipped"), 0);
    assert_string_equal(json_string_value(json_object_get(s, "agent_id")), "ghost");
    assert_non_null(strstr(json_string_value(json_object_get(s, "reason")), "does not exist"));
    char *b = read_text("b.txt");
    assert_string_equal(b, "bee by user, unsaved\n");
    free(b);
    json_decref(rep);
    agent_worktree_remove(repo, w.path, w.branch, &err);
    agent_worktree_free(&w);
}

static void test_merge_hooks_off(void **state)
{
    (void)state;
    char *marker = path_join(repo, "../merge_hook_marker");
    char *m = path_fold(marker);
    unlink(m);
    assert_int_equal(sh("cd '%s' && for h in pre-merge-commit post-merge commit-msg; do "
                        "printf '#!/bin/sh\\ntouch %s\\n' > .git/hooks/$h; chmod +x "
                        ".git/hooks/$h; done", repo, m), 0);
    agent_worktree w;
    agent_edit(&w, "hk1", "c.txt", "new\n");
    agent_merge_item items[] = {item_of(&w, "hk1")};
    loom_error err;
    json_t *rep = agent_merge_branches(repo, items, 1, &err);
    assert_int_equal(json_array_size(json_object_get(rep, "merged")), 1);
    assert_false(file_exists(m));
    char *c = read_text("c.txt");
    assert_string_equal(c, "new\n");
    free(c);
    json_decref(rep);
    agent_worktree_free(&w);
    free(marker);
    free(m);
}

static void test_not_a_repo(void **state)
{
    (void)state;
    char dir[] = "/tmp/loom_merge_norepo.XXXXXX";
    assert_non_null(mkdtemp(dir));
    loom_error err;
    assert_null(agent_merge_branches(dir, NULL, 0, &err));
    assert_non_null(strstr(err.message, "not in a git working tree"));
    rmdir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_different_files_both_merged, setup_repo,
                                        teardown_repo),
        cmocka_unit_test_setup_teardown(test_same_line_conflict_untouched, setup_repo,
                                        teardown_repo),
        cmocka_unit_test_setup_teardown(test_parent_modified_file_kept, setup_repo,
                                        teardown_repo),
        cmocka_unit_test_setup_teardown(test_merge_hooks_off, setup_repo, teardown_repo),
        cmocka_unit_test(test_not_a_repo),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
