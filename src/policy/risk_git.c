/* risk_git.c — the risk rules for git (risk.h has the contract, the rule
 * ids are in docs/permissions-rules.md): force-pushing or deleting
 * main/master in any spelling, pushes hidden behind aliases and -c
 * options, history rewrites and other commands that lose work for good.
 * Stateless and reentrant.
 */
#include "policy/risk.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/str.h"
#include "policy/risk_impl.h"

/* Is this push destination the main branch? main, master,
 * refs/heads/main … (HEAD, the current branch, is judged by the caller). */
static bool push_dst_protected(const char *dst)
{
    if (!strncmp(dst, "refs/heads/", 11))
        dst += 11;
    return !strcmp(dst, "main") || !strcmp(dst, "master");
}

/* git push: force-pushing or deleting main/master is FORBIDDEN, in every
 * spelling: -f/--force (any order, clustered, abbreviated),
 * --force-with-lease / --force-if-includes, a +refspec, HEAD:main,
 * refs/heads/main, --mirror and --all (which include main), and a force
 * push that names no branch (it pushes the current one, which may be
 * main). */
static void rule_git_push(const bash_cmd *c, size_t a0, risk_verdict *v)
{
    bool plain_force = false, lease = false, all = false, mirror = false, del = false;
    bool protected_ref = false, refspec_force = false, repo_given = false, head_ref = false;
    size_t nrefs = 0;
    size_t nops = 0;
    bool ended = false;
    for (size_t k = a0; k < c->argc; k++) {
        const char *a = c->argv[k];
        if (!ended && !strcmp(a, "--")) {
            ended = true;
            continue;
        }
        if (!ended && a[0] == '-' && a[1]) {
            if (a[1] != '-') {
                /* a short cluster: -fu, -uf, -df …; -o takes a value */
                for (const char *p = a + 1; *p; p++) {
                    if (*p == 'f')
                        plain_force = true;
                    else if (*p == 'd')
                        del = true;
                    else if (*p == 'o') {
                        if (!p[1])
                            k++;
                        break;
                    }
                }
            } else if (risk_long_spells(a, "--force") && strcspn(a, "=") <= 7) {
                plain_force = true;
            } else if (risk_long_spells(a, "--force-with-lease") ||
                       risk_long_spells(a, "--force-if-includes")) {
                lease = true;
            } else if (risk_long_spells(a, "--all") || risk_long_spells(a, "--branches")) {
                all = true;
            } else if (risk_long_spells(a, "--mirror")) {
                mirror = true;
            } else if (risk_long_spells(a, "--delete")) {
                del = true;
            } else if (risk_long_spells(a, "--repo")) {
                repo_given = true;
                if (!strchr(a, '='))
                    k++;
            } else if (risk_long_spells(a, "--push-option") || risk_long_spells(a, "--receive-pack") ||
                       risk_long_spells(a, "--exec")) {
                if (!strchr(a, '='))
                    k++;
            }
            continue;
        }
        if (nops++ == 0 && !repo_given)
            continue;   /* the remote */
        nrefs++;
        const char *ref = a;
        if (ref[0] == '+') {
            refspec_force = true;
            ref++;
        }
        if (ref[0] == ':')
            del = true;
        const char *colon = strrchr(ref, ':');
        const char *dst = colon ? colon + 1 : ref;
        if (!strcmp(dst, "HEAD") || !strcmp(dst, "@") || strpbrk(dst, "*$`"))
            head_ref = true;   /* the current branch, a pattern, a $var: may be main */
        else if (push_dst_protected(dst))
            protected_ref = true;
    }
    bool force = plain_force || refspec_force || lease;
    protected_ref = protected_ref || (head_ref && force);
    bool implicit = nrefs == 0 && !all && !mirror;
    if (mirror)
        risk_raise(v, RISK_FORBIDDEN, "git.push_force_main",
                 "git push --mirror force-updates and deletes every ref on the remote, main "
                 "included; never done automatically");
    else if (force && (protected_ref || all))
        risk_raise(v, RISK_FORBIDDEN, "git.push_force_main",
                 "force-pushing %s rewrites the shared history of the main branch; never "
                 "done automatically",
                 all ? "every branch (main included)" : "main/master (or the current branch)");
    else if (force && implicit)
        risk_raise(v, RISK_FORBIDDEN, "git.push_force_main",
                 "a force push that names no branch pushes the current one, which may be "
                 "main; name the branch: git push --force-with-lease origin <branch>");
    else if (del && protected_ref)
        risk_raise(v, RISK_FORBIDDEN, "git.push_delete_main",
                 "deletes the main branch on the remote");
    else if (lease)
        risk_raise(v, RISK_CONFIRM, "git.push_force_lease",
                 "force-pushes (with lease): rewrites the remote branch's history");
    else if (force)
        risk_raise(v, RISK_CONFIRM, "git.push_force",
                 "git push --force overwrites the remote branch; use --force-with-lease, "
                 "which refuses to drop commits you have not seen");
    else if (del)
        risk_raise(v, RISK_CONFIRM, "git.push_delete", "deletes a branch or tag on the remote");
    else
        risk_raise(v, RISK_CONFIRM, "git.push", "publishes commits to a remote");
}

/* The git commands Loom knows are not push (anything else may be an alias
 * of it, set in a config file this parse cannot see). */
static const char *const GIT_NOT_PUSH[] = {
    "add", "am", "annotate", "apply", "archive", "bisect", "blame", "branch", "bundle",
    "cat-file", "check-ignore", "checkout", "cherry", "cherry-pick", "clean", "clone",
    "commit", "commit-tree", "config", "count-objects", "describe", "diff", "difftool",
    "fetch", "filter-branch", "filter-repo", "for-each-ref", "format-patch", "fsck", "gc",
    "grep", "hash-object", "help", "init", "lfs", "log", "ls-files", "ls-remote", "ls-tree",
    "maintenance", "merge", "merge-base", "mergetool", "mv", "name-rev", "notes", "prune",
    "pull", "range-diff", "read-tree", "rebase", "reflog", "remote", "repack", "replace",
    "rerere", "reset", "restore", "rev-list", "rev-parse", "revert", "rm", "shortlog", "show",
    "show-ref", "sparse-checkout", "stash", "status", "submodule", "switch", "symbolic-ref",
    "tag", "update-index", "update-ref", "var", "verify-commit", "version", "whatchanged",
    "worktree", "write-tree", NULL,
};

/* git -c alias.NAME=VALUE …: VALUE when sub is NAME, else NULL. */
static const char *git_cli_alias(const bash_cmd *c, size_t sub_at)
{
    const char *sub = c->argv[sub_at];
    size_t n = strlen(sub);
    for (size_t i = 1; i + 1 < sub_at; i++)
        if (!strcmp(c->argv[i], "-c") && !strncmp(c->argv[i + 1], "alias.", 6) &&
            !strncmp(c->argv[i + 1] + 6, sub, n) && c->argv[i + 1][6 + n] == '=')
            return c->argv[i + 1] + 7 + n;
    return NULL;
}

/* A push in disguise: an alias given with -c (git -c alias.p='push -f' p
 * origin main), send-pack, or a subcommand git may take from an alias in
 * a config file. Judged as the push it may be; only its FORBIDDEN verdict
 * is taken for an unknown subcommand (anything milder says too little).
 * True when the command was judged here. */
static bool git_maybe_push(const bash_cmd *c, size_t sub_at, risk_verdict *v)
{
    const char *sub = c->argv[sub_at];
    const char *alias = git_cli_alias(c, sub_at);
    if (!strcmp(sub, "push") || (!alias && risk_one_of(sub, GIT_NOT_PUSH)))
        return false;
    /* Rebuild "git push <alias words> <args>" when the alias is one. */
    char buf[1024];
    const char *words[256];
    size_t n = 0;
    words[n++] = "git";
    if (alias) {
        snprintf(buf, sizeof buf, "%s", alias);
        char *save = NULL;
        for (char *w = strtok_r(buf, " \t", &save); w && n < 128; w = strtok_r(NULL, " \t", &save))
            words[n++] = w;
        if (n < 2 || (strcmp(words[1], "push") && strcmp(words[1], "send-pack")))
            return false;   /* an alias of something else (or a shell alias: "!…") */
    } else {
        words[n++] = "push";
    }
    for (size_t k = sub_at + 1; k < c->argc && n < 255; k++)
        words[n++] = c->argv[k];
    words[n] = NULL;
    bash_cmd p = *c;
    p.argc = n;
    p.argv = words;
    risk_verdict pv = {.level = RISK_UNKNOWN};
    rule_git_push(&p, 2, &pv);
    if (pv.level == RISK_FORBIDDEN) {
        risk_raise(v, pv.level, pv.rule_id, "git %s may be git push: %s", sub, pv.reason);
        return true;
    }
    if (alias || !strcmp(sub, "send-pack")) {
        risk_raise(v, pv.level, pv.rule_id, "git %s is git push: %s", sub, pv.reason);
        return true;
    }
    return false;
}

/* git branch: -D (or -d -f) deletes unmerged work; only a plain listing
 * is read-only. */
static void git_branch(const bash_cmd *c, size_t a0, risk_verdict *v, bool *safe)
{
    bool del = risk_has_opt(c, a0, 'd', "--delete"), force = risk_has_opt(c, a0, 'f', "--force");
    if (risk_has_opt(c, a0, 'D', NULL) || (del && force))
        risk_raise(v, RISK_CONFIRM, "git.branch_force_delete",
                 "git branch -D deletes a branch even when it is not merged; git branch -d "
                 "refuses to lose commits");
    size_t n = 0;
    for (size_t k = a0; k < c->argc; k++)
        n += c->argv[k][0] != '-';
    *safe = n == 0 && !del && !force && !risk_has_opt(c, a0, 'm', "--move") &&
            !risk_has_opt(c, a0, 'M', NULL) && !risk_has_opt(c, a0, 'c', "--copy") &&
            !risk_has_opt(c, a0, 'C', NULL) && !risk_has_opt(c, a0, 'u', "--set-upstream-to") &&
            !risk_has_opt(c, a0, 0, "--unset-upstream") && !risk_has_opt(c, a0, 0, "--edit-description");
}

/* git remote / tag / stash / config / reflog: read-only when listing;
 * dropping stashes and expiring the reflog lose work for good. */
static void git_listing(const bash_cmd *c, const char *sub, size_t a0, risk_verdict *v,
                        bool *safe)
{
    bool listing = a0 >= c->argc || !strcmp(c->argv[a0], "-v") ||
                   !strcmp(c->argv[a0], "--verbose") || !strcmp(c->argv[a0], "-l") ||
                   !strcmp(c->argv[a0], "--list") || !strcmp(c->argv[a0], "list") ||
                   !strcmp(c->argv[a0], "show") || !strcmp(c->argv[a0], "get-url") ||
                   !strcmp(c->argv[a0], "--get") || !strcmp(c->argv[a0], "--get-all");
    if (!strcmp(sub, "stash") && a0 < c->argc &&
        (!strcmp(c->argv[a0], "drop") || !strcmp(c->argv[a0], "clear")))
        risk_raise(v, RISK_CONFIRM, "git.stash_drop",
                 "git stash %s deletes stashed changes for good", c->argv[a0]);
    if (!strcmp(sub, "reflog") && a0 < c->argc &&
        (!strcmp(c->argv[a0], "expire") || !strcmp(c->argv[a0], "delete")))
        risk_raise(v, RISK_CONFIRM, "git.reflog_expire",
                 "git reflog %s drops the record that lets lost commits be recovered",
                 c->argv[a0]);
    *safe = listing && strcmp(sub, "stash");
    if (!strcmp(sub, "stash") && a0 < c->argc && !strcmp(c->argv[a0], "list"))
        *safe = true;
    if (!strcmp(sub, "stash") && a0 < c->argc && !strcmp(c->argv[a0], "show"))
        *safe = true;
}

/* A flat list of independent rules, a few lines per git subcommand. */
void risk_rule_git(const bash_cmd *c, risk_verdict *v, bool *safe)
{
    size_t i = 1;
    /* -c x=y, --config-env and --exec-path can name programs git runs
     * (core.pager, diff.external …): nothing after them is plainly read-only. */
    bool configured = false;
    while (i < c->argc && c->argv[i][0] == '-') {
        const char *a = c->argv[i];
        if (!strcmp(a, "-c") || !strncmp(a, "--config-env", 12) || !strncmp(a, "--exec-path", 11))
            configured = true;
        if (!strcmp(a, "-C") || !strcmp(a, "-c") || !strcmp(a, "--git-dir") ||
            !strcmp(a, "--work-tree") || !strcmp(a, "--namespace") || !strcmp(a, "--config-env") ||
            !strcmp(a, "--super-prefix"))
            i++;
        i++;
    }
    if (i >= c->argc)
        return;
    const char *sub = c->argv[i];
    size_t a0 = i + 1;
    if (git_maybe_push(c, i, v))
        return;
    static const char *const READ_ONLY[] = {
        "status", "log", "diff", "show", "blame", "rev-parse", "ls-files", "ls-tree",
        "describe", "shortlog", "grep", "cat-file", "rev-list", "merge-base", "name-rev",
        "whatchanged", "count-objects", "version", "show-ref", "for-each-ref", "check-ignore",
        NULL,
    };
    if (risk_one_of(sub, READ_ONLY)) {
        /* --output writes a file; --ext-diff, textconv and grep -O run
         * programs. */
        *safe = !configured && !risk_has_opt(c, a0, 0, "--output") &&
                !risk_has_opt(c, a0, 0, "--ext-diff") && !risk_has_opt(c, a0, 0, "--textconv") &&
                !(!strcmp(sub, "grep") && (risk_has_opt(c, a0, 'O', "--open-files-in-pager")));
        return;
    }
    if (configured)
        *safe = false;
    if (!strcmp(sub, "branch")) {
        git_branch(c, a0, v, safe);
        return;
    }
    if (!strcmp(sub, "remote") || !strcmp(sub, "tag") || !strcmp(sub, "stash") ||
        !strcmp(sub, "config") || !strcmp(sub, "reflog")) {
        git_listing(c, sub, a0, v, safe);
        return;
    }
    if (!strcmp(sub, "push")) {
        rule_git_push(c, a0, v);
        return;
    }
    if (!strcmp(sub, "reset") && risk_has_opt(c, a0, 0, "--hard")) {
        risk_raise(v, RISK_CONFIRM, "git.reset_hard",
                 "git reset --hard throws away uncommitted changes; git stash keeps them");
        return;
    }
    if (!strcmp(sub, "clean")) {
        bool dry = risk_has_opt(c, a0, 'n', "--dry-run");
        if (!dry && risk_has_opt(c, a0, 'f', "--force"))
            risk_raise(v, RISK_CONFIRM, "git.clean",
                     "git clean -f deletes untracked files for good; git clean -n shows what "
                     "would go");
        *safe = dry;
        return;
    }
    if (!strcmp(sub, "checkout")) {
        bool dashdash = false, dot = false;
        for (size_t k = a0; k < c->argc; k++) {
            if (!strcmp(c->argv[k], "--") && k + 1 < c->argc)
                dashdash = true;
            if (!strcmp(c->argv[k], ".") || !strcmp(c->argv[k], ":/"))
                dot = true;
        }
        if (dashdash || dot || risk_has_opt(c, a0, 'f', "--force"))
            risk_raise(v, RISK_CONFIRM, "git.checkout_discard",
                     "git checkout -- <paths> / -f throws away uncommitted changes");
        return;
    }
    if (!strcmp(sub, "restore")) {
        bool staged = risk_has_opt(c, a0, 'S', "--staged"), work = risk_has_opt(c, a0, 'W', "--worktree");
        if (!staged || work)
            risk_raise(v, RISK_CONFIRM, "git.restore_discard",
                     "git restore throws away uncommitted changes to the files");
        return;
    }
    if (!strcmp(sub, "switch") &&
        (risk_has_opt(c, a0, 'f', "--force") || risk_has_opt(c, a0, 0, "--discard-changes"))) {
        risk_raise(v, RISK_CONFIRM, "git.checkout_discard",
                 "git switch --discard-changes throws away uncommitted changes");
        return;
    }
    if (!strcmp(sub, "rebase") && risk_has_opt(c, a0, 'i', "--interactive")) {
        risk_raise(v, RISK_CONFIRM, "git.rebase_interactive",
                 "git rebase -i rewrites history and needs an editor; use a non-interactive "
                 "rebase");
        return;
    }
    if (!strcmp(sub, "commit") && risk_has_opt(c, a0, 0, "--amend")) {
        risk_raise(v, RISK_CONFIRM, "git.commit_amend",
                 "git commit --amend rewrites the last commit, which may already be pushed; a "
                 "new commit is safer");
        return;
    }
    if (!strcmp(sub, "filter-branch") || !strcmp(sub, "filter-repo")) {
        risk_raise(v, RISK_CONFIRM, "git.filter_branch", "git %s rewrites the whole history", sub);
        return;
    }
    if (!strcmp(sub, "gc") && risk_has_opt(c, a0, 0, "--prune")) {
        risk_raise(v, RISK_CONFIRM, "git.reflog_expire",
                 "git gc --prune deletes unreachable commits for good");
        return;
    }
    if (!strcmp(sub, "add")) {
        for (size_t k = a0; k < c->argc; k++)
            if (!strcmp(c->argv[k], ".") || !strcmp(c->argv[k], "-A") ||
                !strcmp(c->argv[k], "--all") || !strcmp(c->argv[k], ":/")) {
                risk_raise(v, RISK_UNKNOWN, "git.add_all",
                         "git add %s stages everything, secrets and build output included; "
                         "prefer git add <specific-files>", c->argv[k]);
                break;
            }
    }
}
