/* delete_guard.c — which recursive deletes need a person (delete_guard.h).
 * Reads the parse of shell/bash_parse.h (every simple command, wrappers
 * seen through) with braces expanded (policy/risk_expand.h), follows the
 * working directory through literal `cd`s, and judges each target against
 * the workspace. Errs on the side of asking: a target it cannot place asks.
 * Threading: none; reentrant. */
#include "governance/delete_guard.h"

#include <fnmatch.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/path.h"
#include "base/str.h"
#include "policy/risk_expand.h"
#include "policy/rule.h"
#include "shell/bash_parse.h"

typedef struct guard {
    char *ws;                  /* the workspace, symlinks resolved */
    char **dirs;               /* additional directories, resolved */
    size_t ndirs;
    char *why;
    size_t cap;
    bool hit;
} guard;

static bool under(const char *p, const char *root)
{
    size_t n = strlen(root);
    if (n == 1 && root[0] == '/')
        return true;
    return strncmp(p, root, n) == 0 && (p[n] == '\0' || p[n] == '/');
}

static bool strictly_under(const char *p, const char *root)
{
    return under(p, root) && strlen(p) > strlen(root);
}

static void flag(guard *g, const bash_cmd *c, const char *fmt, const char *path)
{
    if (g->hit)
        return; /* the first reason is enough */
    g->hit = true;
    char *text = bash_cmd_text(c);
    char what[600];
    snprintf(what, sizeof what, fmt, path);
    snprintf(g->why, g->cap, "%s (%s); recursive deletes of the workspace root, .git or paths "
             "outside the workspace always need a person",
             what, text ? text : bash_cmd_name(c));
    free(text);
}

/* Is the resolved path where deletes are the workspace's own business? */
static bool inside(const guard *g, const char *p)
{
    if (under(p, g->ws))
        return true;
    for (size_t i = 0; i < g->ndirs; i++)
        if (under(p, g->dirs[i]))
            return true;
    return false;
}

static bool has_glob(const char *s)
{
    return strpbrk(s, "*?[") != NULL;
}

/* One segment pattern could name ".git" (the shell skips dot files for a
 * pattern that does not start with a dot). */
static bool could_be_git(const char *seg)
{
    return !strcmp(seg, ".git") || (has_glob(seg) && fnmatch(seg, ".git", FNM_PERIOD) == 0);
}

/* Judges one absolute, folded target; globbed says its words hold
 * wildcards. */
static void judge_abs(guard *g, const bash_cmd *c, const char *abs, bool trailing_slash,
                      bool find_filtered)
{
    /* Each segment: a .git anywhere (or a pattern that could be one). */
    char *copy = xstrdup(abs);
    bool git = false;
    char *literal = xstrdup(abs); /* the part before the first wildcard segment */
    bool globbed = false;
    char *last_seg = NULL;
    size_t off = 0;
    for (char *save = NULL, *seg = strtok_r(copy, "/", &save); seg;
         seg = strtok_r(NULL, "/", &save)) {
        git = git || could_be_git(seg);
        if (!globbed && has_glob(seg)) {
            globbed = true;
            literal[off ? off : 1] = '\0';
        }
        if (!globbed)
            off += 1 + strlen(seg);
        last_seg = seg;
    }
    if (git) {
        flag(g, c, "it deletes git's repository data (%s)", abs);
        goto out;
    }
    /* The place: the literal part for a pattern; the parent resolved plus
     * the last name otherwise (removing a symlink leaves its target). */
    char *place = NULL;
    if (globbed) {
        place = perm_resolve_path(literal, "/");
    } else if (trailing_slash || !strcmp(abs, "/")) {
        place = perm_resolve_path(abs, "/");
    } else {
        char *slash = strrchr(literal, '/');
        char *parent = xstrndup(literal, (size_t)(slash - literal));
        char *rp = perm_resolve_path(parent[0] ? parent : "/", "/");
        place = rp ? path_join(rp, slash + 1) : NULL;
        free(rp);
        free(parent);
    }
    if (!place) {
        flag(g, c, "it deletes %s, whose place cannot be resolved", abs);
        goto out;
    }
    if (!globbed && !find_filtered && under(g->ws, place))
        flag(g, c, "it deletes the workspace root %s", g->ws);
    else if (globbed && under(g->ws, place) && last_seg && strspn(last_seg, "*") == strlen(last_seg) &&
             !strcmp(place, g->ws) && !find_filtered)
        flag(g, c, "it deletes everything in the workspace root %s", g->ws);
    else if (globbed && strictly_under(g->ws, place))
        flag(g, c, "it may delete the workspace root (%s)", abs);
    else if (!inside(g, place))
        flag(g, c, "it deletes %s, outside the workspace", globbed ? abs : place);
    free(place);
out:
    free(copy);
    free(literal);
}

/* A target word: made absolute against cwd (NULL: unknown), ~ and $HOME
 * spelled out; anything else that expands cannot be placed. */
static void judge_word(guard *g, const bash_cmd *c, const char *w, unsigned flags,
                       const char *cwd, bool find_filtered)
{
    if (!w || !w[0])
        return;
    const char *home = getenv("HOME");
    char *spelled = NULL;
    if ((flags & BASH_WORD_TILDE) && (!strcmp(w, "~") || !strncmp(w, "~/", 2)) && home)
        spelled = path_join(home, w[1] ? w + 2 : "");
    else if ((flags & BASH_WORD_EXPANDS) && home &&
             (!strncmp(w, "$HOME", 5) || !strncmp(w, "${HOME}", 7))) {
        const char *rest = w + (w[1] == '{' ? 7 : 5);
        if (rest[0] == '\0' || rest[0] == '/')
            spelled = path_join(home, rest[0] ? rest + 1 : "");
    } else if (!(flags & (BASH_WORD_TILDE | BASH_WORD_EXPANDS))) {
        spelled = xstrdup(w);
    }
    if (!spelled || strchr(spelled, '$') || strchr(spelled, '`') ||
        (spelled[0] != '/' && !cwd)) {
        flag(g, c, "it deletes %s, which cannot be placed before it runs", w);
        free(spelled);
        return;
    }
    char *abs = path_join(cwd, spelled);
    char *folded = path_fold(abs);
    size_t n = strlen(w);
    judge_abs(g, c, folded, n > 1 && w[n - 1] == '/', find_filtered);
    free(folded);
    free(abs);
    free(spelled);
}

static bool opt_in(const bash_cmd *c, size_t from, char letter, const char *longopt)
{
    for (size_t i = from; i < c->argc; i++) {
        const char *a = c->argv[i];
        if (!strcmp(a, "--"))
            return false;
        if (longopt && !strncmp(a, longopt, strlen(longopt)))
            return true;
        if (a[0] == '-' && a[1] != '-' && strchr(a + 1, letter))
            return true;
    }
    return false;
}

static void rule_rm(guard *g, const bash_cmd *c, const char *cwd)
{
    if (!opt_in(c, 1, 'r', "--recursive") && !opt_in(c, 1, 'R', NULL) &&
        !opt_in(c, 1, 'r', "--r"))
        return;
    /* xargs rm -r: the paths arrive at run time. */
    if (c->flags & BASH_CMD_MORE_ARGS) {
        flag(g, c, "it deletes what %s reads at run time, which cannot be placed before it runs",
             "xargs");
        return;
    }
    bool opts = true;
    for (size_t i = 1; i < c->argc; i++) {
        if (opts && !strcmp(c->argv[i], "--")) {
            opts = false;
            continue;
        }
        if (opts && c->argv[i][0] == '-' && c->argv[i][1])
            continue;
        judge_word(g, c, c->argv[i], c->argv_flags[i], cwd, false);
    }
}

static const char *const FIND_TESTS[] = {
    "-name", "-iname", "-path", "-ipath", "-wholename", "-iwholename", "-regex", "-iregex",
    "-type", "-xtype", "-newer", "-mtime", "-mmin", "-atime", "-amin", "-ctime", "-cmin",
    "-size", "-user", "-group", "-perm", "-empty", "-links", "-inum", "-samefile", "-lname",
    "-ilname", "-uid", "-gid", "-nouser", "-nogroup", "-used", NULL};
static const char *const DELETERS[] = {"rm", "rmdir", "shred", "unlink", NULL};

static bool one_of(const char *s, const char *const *set)
{
    for (; *set; set++)
        if (!strcmp(s, *set))
            return true;
    return false;
}

static void rule_find(guard *g, const bash_cmd *c, const char *cwd)
{
    bool deletes = false, filtered = false;
    for (size_t i = 1; i < c->argc; i++) {
        const char *a = c->argv[i];
        if (!strcmp(a, "-delete"))
            deletes = true;
        else if ((!strcmp(a, "-exec") || !strcmp(a, "-execdir") || !strcmp(a, "-ok") ||
                  !strcmp(a, "-okdir")) && i + 1 < c->argc) {
            const char *prog = strrchr(c->argv[i + 1], '/');
            prog = prog ? prog + 1 : c->argv[i + 1];
            deletes = deletes || one_of(prog, DELETERS);
        } else if (one_of(a, FIND_TESTS))
            filtered = true;
    }
    if (!deletes)
        return;
    size_t i = 1, roots = 0;
    while (i < c->argc && (!strcmp(c->argv[i], "-H") || !strcmp(c->argv[i], "-L") ||
                           !strcmp(c->argv[i], "-P") || !strncmp(c->argv[i], "-O", 2) ||
                           !strcmp(c->argv[i], "-D")))
        i += !strcmp(c->argv[i], "-D") ? 2 : 1;
    for (; i < c->argc && c->argv[i][0] != '-' && strcmp(c->argv[i], "(") &&
           strcmp(c->argv[i], "!") && strcmp(c->argv[i], ",");
         i++, roots++)
        judge_word(g, c, c->argv[i], c->argv_flags[i], cwd, filtered);
    if (roots == 0)
        judge_word(g, c, ".", 0, cwd, filtered);
}

/* git [-C DIR]… clean -f …: its pathspecs, or the directory it cleans. */
static void rule_git(guard *g, const bash_cmd *c, const char *cwd)
{
    char *dir = cwd ? xstrdup(cwd) : NULL;
    size_t i = 1;
    for (; i < c->argc && c->argv[i][0] == '-'; i++) {
        const char *a = c->argv[i];
        const char *d = NULL;
        if (!strcmp(a, "-C") && i + 1 < c->argc)
            d = c->argv[++i];
        else if (!strncmp(a, "--work-tree=", 12))
            d = a + 12;
        else if (!strcmp(a, "-c") || !strcmp(a, "--git-dir") || !strcmp(a, "--work-tree") ||
                 !strcmp(a, "--namespace"))
            i++;
        if (d) {
            char *next = NULL;
            if (dir && !(c->argv_flags[i] & (BASH_WORD_EXPANDS | BASH_WORD_TILDE | BASH_WORD_GLOB)))
                next = path_join(dir, d);
            free(dir);
            dir = next ? path_fold(next) : NULL;
            free(next);
        }
    }
    if (i >= c->argc || strcmp(c->argv[i], "clean") != 0) {
        free(dir);
        return;
    }
    size_t from = i + 1;
    bool force = opt_in(c, from, 'f', "--force");
    bool dry = opt_in(c, from, 'n', "--dry-run");
    if (force && !dry) {
        size_t specs = 0;
        bool opts = true;
        for (size_t k = from; k < c->argc; k++) {
            const char *a = c->argv[k];
            if (opts && !strcmp(a, "--")) {
                opts = false;
                continue;
            }
            if (opts && a[0] == '-') {
                if ((!strcmp(a, "-e") || !strcmp(a, "--exclude")) && k + 1 < c->argc)
                    k++;
                continue;
            }
            judge_word(g, c, a, c->argv_flags[k], dir, false);
            specs++;
        }
        if (specs == 0)
            judge_word(g, c, ".", 0, dir, false);
    }
    free(dir);
}

static void rule_rsync(guard *g, const bash_cmd *c, const char *cwd)
{
    bool del = false;
    size_t dest = 0;
    for (size_t i = 1; i < c->argc; i++) {
        const char *a = c->argv[i];
        if (!strncmp(a, "--del", 5) || !strcmp(a, "--remove-source-files"))
            del = true;
        else if (a[0] != '-')
            dest = i;
        else if (!strcmp(a, "-e") || !strcmp(a, "--rsh") || !strcmp(a, "--exclude") ||
                 !strcmp(a, "--include") || !strcmp(a, "-f") || !strcmp(a, "--filter"))
            i++;
    }
    if (!del || !dest)
        return;
    const char *d = c->argv[dest];
    const char *colon = strchr(d, ':'), *slash = strchr(d, '/');
    if (colon && (!slash || colon < slash))
        return; /* host:path — another machine's disk */
    judge_word(g, c, d, c->argv_flags[dest], cwd, false);
}

/* A literal cd/pushd moves the working directory the rest is judged in;
 * one whose target cannot be known makes it unknown (NULL). */
static void follow_cd(const bash_cmd *c, char **cwd)
{
    const char *name = bash_cmd_name(c);
    if (strcmp(name, "cd") && strcmp(name, "pushd") && strcmp(name, "popd"))
        return;
    size_t i = 1;
    while (i < c->argc && c->argv[i][0] == '-' && c->argv[i][1] && strcmp(c->argv[i], "-"))
        i++; /* cd -P, -L */
    char *next = NULL;
    const char *home = getenv("HOME");
    if (!strcmp(name, "popd") || (i < c->argc && !strcmp(c->argv[i], "-"))) {
        next = NULL;
    } else if (i >= c->argc) {
        next = home ? xstrdup(home) : NULL;
    } else if (*cwd || c->argv[i][0] == '/' || c->argv[i][0] == '~') {
        const char *w = c->argv[i];
        unsigned f = c->argv_flags[i];
        if ((f & BASH_WORD_TILDE) && home && (!strcmp(w, "~") || !strncmp(w, "~/", 2)))
            next = path_join(home, w[1] ? w + 2 : "");
        else if (!(f & (BASH_WORD_EXPANDS | BASH_WORD_GLOB | BASH_WORD_TILDE)))
            next = path_join(*cwd ? *cwd : "/", w);
    }
    char *folded = next ? path_fold(next) : NULL;
    free(next);
    free(*cwd);
    *cwd = folded;
}

static char *resolved(const char *p)
{
    char *r = p ? realpath(p, NULL) : NULL;
    return r ? r : (p ? path_fold(p) : NULL);
}

bool delete_guard_check(const char *command, const char *workspace, const char *const *dirs,
                        size_t ndirs, char *why, size_t cap)
{
    if (!command || !workspace || workspace[0] != '/')
        return false;
    guard g = {.why = why, .cap = cap};
    if (why && cap)
        why[0] = '\0';
    static char none[1];
    if (!g.why) {
        g.why = none;
        g.cap = 1;
    }
    g.ws = resolved(workspace);
    g.dirs = xcalloc(ndirs + 1, sizeof *g.dirs);
    for (size_t i = 0; i < ndirs; i++)
        if (dirs[i] && dirs[i][0] == '/')
            g.dirs[g.ndirs++] = resolved(dirs[i]);

    bash_cmds *pc = bash_parse(command);
    /* A parse that cannot be trusted (eval, unbalanced quotes…) hides what
     * runs: any delete in the text asks. */
    if (bash_cmds_uncertain(pc) &&
        (strstr(command, "rm ") || strstr(command, "-delete") || strstr(command, "clean") ||
         strstr(command, "--del") || strstr(command, "rmdir"))) {
        snprintf(g.why, g.cap,
                 "the command may delete files and cannot be read for sure (%s); recursive "
                 "deletes of the workspace root, .git or paths outside the workspace always "
                 "need a person",
                 bash_cmds_why(pc) ? bash_cmds_why(pc) : "uncertain parse");
        g.hit = true;
    }
    char *cwd = xstrdup(workspace);
    for (size_t k = 0; k < bash_cmds_count(pc) && !g.hit; k++) {
        risk_expanded x;
        risk_expand_cmd(bash_cmds_at(pc, k), &x);
        const bash_cmd *c = &x.cmd;
        if (c->argc) {
            const char *name = bash_cmd_name(c);
            if (!strcmp(name, "rm"))
                rule_rm(&g, c, cwd);
            else if (!strcmp(name, "find"))
                rule_find(&g, c, cwd);
            else if (!strcmp(name, "git"))
                rule_git(&g, c, cwd);
            else if (!strcmp(name, "rsync"))
                rule_rsync(&g, c, cwd);
            else
                follow_cd(c, &cwd);
        }
        risk_expanded_free(&x);
    }
    bash_cmds_free(pc);
    free(cwd);
    free(g.ws);
    for (size_t i = 0; i < g.ndirs; i++)
        free(g.dirs[i]);
    free(g.dirs);
    return g.hit;
}
