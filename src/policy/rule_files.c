/* rule_files.c — the files a Bash command reads and writes, against the
 * path rules of the list being checked: redirections (`> path` meets
 * Edit/Write rules, `< path` Read rules), the operands of file readers, the
 * write targets the risk classifier finds (policy/risk_writes), the files
 * wrappers write through their own options, and where a compound command
 * may have cd'd to. A write outside the workspace keeps a Bash(...) allow
 * rule from covering the command. Pure apart from reading the filesystem;
 * any thread. */
#include "policy/rules.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/path.h"
#include "base/str.h"
#include "policy/risk.h"
#include "policy/rule_internal.h"
#include "shell/bash_parse.h"

static void dirs_add(dirset *ds, char *dir)
{
    for (size_t k = 0; k < ds->n; k++)
        if (!strcmp(ds->d[k], dir)) {
            free(dir);
            return;
        }
    if (ds->n == CD_MAX_DIRS) {
        ds->unknown = true;
        free(dir);
        return;
    }
    ds->d[ds->n++] = dir;
}

static char *expand_tilde(const char *w, unsigned flags)
{
    if (!(flags & BASH_WORD_TILDE))
        return xstrdup(w);
    if (w[1] && w[1] != '/')
        return NULL;   /* ~user */
    const char *h = rule_home_dir();
    if (!h)
        return NULL;
    loom_str s = LOOM_STR_INIT;
    str_puts(&s, h);
    str_puts(&s, w + 1);
    return str_steal(&s);
}

void rule_files_track_cd(dirset *ds, const bash_cmd *c)
{
    const char *name = bash_cmd_name(c);
    if (strcmp(name, "cd") && strcmp(name, "pushd"))
        return;
    size_t i = 1;
    while (i < c->argc && c->argv[i][0] == '-' && c->argv[i][1] && strcmp(c->argv[i], "--"))
        i++;
    if (i < c->argc && !strcmp(c->argv[i], "--"))
        i++;
    char *target;
    if (i >= c->argc) {
        const char *h = rule_home_dir();
        target = h ? xstrdup(h) : NULL;
    } else if (c->argv_flags[i] & (BASH_WORD_EXPANDS | BASH_WORD_GLOB) ||
               !strcmp(c->argv[i], "-") || (c->argv[i][0] == '+' || c->argv[i][0] == '-')) {
        target = NULL;
    } else {
        target = expand_tilde(c->argv[i], c->argv_flags[i]);
    }
    if (!target) {
        ds->unknown = true;
        return;
    }
    if (target[0] == '/') {
        dirs_add(ds, path_fold(target));
    } else {
        /* CDPATH could send a relative cd elsewhere; it is rarely set in
         * the non-interactive shells the Bash tool starts. */
        size_t n = ds->n;
        for (size_t k = 0; k < n; k++) {
            char *j = path_join(ds->d[k], target);
            dirs_add(ds, path_fold(j));
            free(j);
        }
    }
    free(target);
}

/* Redirections to these never touch a file. */
static bool harmless_target(const char *t)
{
    return !strcmp(t, "/dev/null") || !strcmp(t, "/dev/stdout") || !strcmp(t, "/dev/stderr") ||
           !strcmp(t, "/dev/stdin") || !strcmp(t, "/dev/tty") || !strncmp(t, "/dev/fd/", 8);
}

/* Rule q's patterns (rule_patterns), made once per check. */
static bool st_patterns(bash_state *st, size_t q, const char **lx, const char **rs)
{
    const perm_rule *r = st->v[q];
    if (!st->pat_state) {
        st->pat_state = xcalloc(st->n, 1);
        st->pat_lx = xcalloc(st->n, sizeof *st->pat_lx);
        st->pat_rs = xcalloc(st->n, sizeof *st->pat_rs);
    }
    if (!st->pat_state[q])
        st->pat_state[q] = rule_patterns(r, st->cwd, st->root, &st->pat_lx[q], &st->pat_rs[q]) ? 1 : -1;
    *lx = st->pat_lx[q];
    *rs = st->pat_rs[q];
    return st->pat_state[q] == 1;
}

void rule_files_state_free(bash_state *st)
{
    free(st->cwd_real);
    for (size_t q = 0; st->pat_state && q < st->n; q++) {
        free(st->pat_lx[q]);
        free(st->pat_rs[q]);
    }
    free(st->pat_state);
    free(st->pat_lx);
    free(st->pat_rs);
}

bool rule_in_family(const perm_rule *r, path_family fam)
{
    if (r->verdict == PERM_ALLOW)
        return false;
    if (r->kind != RK_PATH && r->kind != RK_TOOL)
        return false;
    if (r->kind == RK_TOOL && !rule_in_set(fam == FAM_EDIT ? RULE_EDIT_TOOLS : RULE_READ_TOOLS, r->tool))
        return false;
    path_family f = rule_family_of(r->tool);
    return fam == FAM_EDIT ? f == FAM_EDIT : f == FAM_READ;
}

/* The literal directory a word the shell will expand starts in:
 * "secrets/<glob>" → "secrets", "$F" → ".", "~/x$Y" → "$HOME". NULL when
 * not even that is known (~user). Caller frees. */
static char *literal_dir(const char *w)
{
    size_t n = strcspn(w, "$`*?[{");
    char *lit = xstrndup(w, n);
    char *slash = strrchr(lit, '/');
    if (slash)
        slash[slash == lit ? 1 : 0] = '\0';
    else
        lit[0] = '\0';
    if (lit[0] == '~') {
        char *t = expand_tilde(lit, BASH_WORD_TILDE);
        free(lit);
        return t;
    }
    if (!lit[0]) {
        free(lit);
        return xstrdup(".");
    }
    return lit;
}

static bool same_chain(const char *a, const char *b)
{
    size_t al = strlen(a), bl = strlen(b);
    if (!strcmp(a, "/") || !strcmp(b, "/"))
        return true;
    if (al <= bl)
        return !strncmp(a, b, al) && (b[al] == '/' || b[al] == '\0');
    return !strncmp(a, b, bl) && a[bl] == '/';
}

/* Could the area rule r covers overlap the tree at dir (absolute)? True
 * when the rule's literal part and dir lie on one path: one inside the
 * other. */
static bool rule_touches_dir(const char *lx, const char *rs, const char *dir)
{
    bool hit = false;
    const char *pats[2] = {lx, rs};
    char *rdir = rule_resolve_physical(dir);
    for (int k = 0; k < 2 && !hit; k++) {
        const char *pt = pats[k];
        size_t cut = 0;
        for (const char *q = pt; *q;) {
            while (*q == '/')
                q++;
            const char *e = strchr(q, '/');
            size_t len = e ? (size_t)(e - q) : strlen(q);
            if (!len || rule_has_glob(q, len))
                break;
            cut = (size_t)(q - pt) + len;
            q += len;
        }
        char *lit = xstrndup(pt, cut ? cut : 1);
        hit = same_chain(lit, dir) || (rdir && same_chain(lit, rdir));
        free(lit);
    }
    free(rdir);
    return hit;
}

static void note(bash_state *st, const perm_rule *r, perm_verdict as)
{
    if (as == PERM_DENY)
        st->deny = rule_better(st->deny, r);
    else
        st->ask = rule_better(st->ask, r);
}

static bool under(const char *dir, const char *p)
{
    size_t n = strlen(dir);
    if (n == 1 && dir[0] == '/')
        return true;
    return p && !strncmp(p, dir, n) && (p[n] == '/' || p[n] == '\0');
}

/* Does a file a Bash command writes stay in the workspace, every way it
 * resolves — or does an Edit/Write allow rule cover it there? */
static bool write_inside(bash_state *st, const rule_path_forms *pf)
{
    if (st->cwd_real && pf->resolved && pf->physical && under(st->cwd_real, pf->resolved) &&
        under(st->cwd_real, pf->physical))
        return true;
    for (size_t q = 0; q < st->n; q++) {
        const perm_rule *r = st->v[q];
        if (r->verdict != PERM_ALLOW || rule_family_of(r->tool) != FAM_EDIT)
            continue;
        if (r->kind == RK_TOOL)
            return true;
        if (r->kind == RK_PATH && rule_path_matches(r, pf, st->cwd, st->root, true))
            return true;
    }
    return false;
}

/* True when w is a written glob whose files the rules can judge: no
 * expansion, no segment that could be "..", and a known directory. It then
 * neither blocks an allow nor meets deny rules here — glob_target_rules
 * decides which denied files it could be (rm *.o is not rm .env) — but
 * its literal directory must lie in the workspace like any other write. */
static bool glob_write_known(bash_state *st, const dirset *ds, const char *w, unsigned flags)
{
    if (!(flags & BASH_WORD_GLOB) || (flags & BASH_WORD_EXPANDS) || ds->unknown)
        return false;
    for (const char *seg = w; seg; seg = strchr(seg, '/') ? strchr(seg, '/') + 1 : NULL)
        if (seg[0] == '.' && (seg[1] == '*' || seg[1] == '?' || seg[1] == '[' || seg[1] == '{' ||
                              (seg[1] == '.' && (seg[2] == '/' || !seg[2]))))
            return false;   /* .* and .?: bash may match "..", leaving the tree */
    char *lit = literal_dir(w);
    if (!lit)
        return false;
    size_t ndirs = lit[0] == '/' ? 1 : ds->n;
    for (size_t k = 0; k < ndirs && !st->outside[0]; k++) {
        rule_path_forms pf;
        rule_path_forms_make(&pf, lit, ds->d[k]);
        if (!write_inside(st, &pf))
            snprintf(st->outside, sizeof st->outside,
                     "the command writes %s, outside the workspace (%s)", w, st->cwd);
        rule_path_forms_free(&pf);
    }
    free(lit);
    return true;
}

/* One file a Bash command reads (fam READ) or writes (fam EDIT), as the
 * parser gave it, against the deny/ask rules of that family. */
static void check_file_word(bash_state *st, const dirset *ds, const char *w, unsigned flags,
                            path_family fam, bool vague_read_asks)
{
    if (!*w || harmless_target(w))
        return;
    bool vague = (flags & (BASH_WORD_EXPANDS | BASH_WORD_GLOB)) != 0;
    char *t = vague ? NULL : expand_tilde(w, flags);
    if (!t || (t[0] != '/' && ds->unknown))
        vague = true;
    if (vague) {
        free(t);
        if (fam == FAM_EDIT && glob_write_known(st, ds, w, flags))
            return;
        if (fam == FAM_EDIT && !st->blocked[0])
            snprintf(st->blocked, sizeof st->blocked,
                     "the command writes %s: cannot tell which file that is", w);
        if (fam == FAM_READ && !vague_read_asks)
            return;
        /* A read-only command may run without asking anyone, so a read
         * that could reach a denied area must ask rather than wait. */
        char *lit = literal_dir(w);
        for (size_t q = 0; q < st->n; q++) {
            const perm_rule *r = st->v[q];
            if (!rule_in_family(r, fam))
                continue;
            bool touch = r->kind == RK_TOOL || !lit || ds->unknown;
            const char *plx, *prs;
            if (!touch && !st_patterns(st, q, &plx, &prs))
                continue;
            for (size_t k = 0; k < ds->n && !touch; k++) {
                char *j = path_join(ds->d[k], lit);
                char *f = path_fold(j);
                touch = rule_touches_dir(plx, prs, f);
                free(f);
                free(j);
            }
            /* A write that could land in a denied area is denied: it may
             * run unasked in bypassPermissions. A read only asks. */
            if (touch)
                note(st, r, fam == FAM_EDIT ? r->verdict : PERM_ASK);
        }
        free(lit);
        return;
    }
    size_t ndirs = t[0] == '/' ? 1 : ds->n;
    for (size_t k = 0; k < ndirs; k++) {
        rule_path_forms pf;
        rule_path_forms_make(&pf, t, ds->d[k]);
        if (fam == FAM_EDIT && !st->outside[0] && !write_inside(st, &pf))
            snprintf(st->outside, sizeof st->outside,
                     "the command writes %s, outside the workspace (%s)", w, st->cwd);
        for (size_t q = 0; q < st->n; q++) {
            const perm_rule *r = st->v[q];
            const char *plx, *prs;
            if (!rule_in_family(r, fam))
                continue;
            if (r->kind == RK_TOOL ||
                (st_patterns(st, q, &plx, &prs) && rule_patterns_match(plx, prs, &pf, false)))
                note(st, r, r->verdict);
        }
        rule_path_forms_free(&pf);
    }
    free(t);
}

typedef struct write_ctx {
    bash_state *st;
    const dirset *ds;
} write_ctx;

/* A written glob (rm .en*, > secrets/k?y) may be any file it matches: an
 * Edit rule it could meet applies as if it matched, so a deny denies. */
static void glob_target_rules(bash_state *st, const dirset *ds, const char *w, unsigned flags)
{
    char *t = expand_tilde(w, flags);
    if (!t || (t[0] != '/' && ds->unknown)) {
        free(t);
        return;   /* already keeps the command from being allowed */
    }
    size_t ndirs = t[0] == '/' ? 1 : ds->n;
    for (size_t k = 0; k < ndirs; k++) {
        char *abs = path_join(ds->d[k], t);
        char *f = path_fold(abs);
        for (size_t q = 0; q < st->n; q++) {
            const perm_rule *r = st->v[q];
            const char *plx, *prs;
            if (r->kind == RK_PATH && rule_in_family(r, FAM_EDIT) &&
                st_patterns(st, q, &plx, &prs) &&
                (risk_target_could_match(f, plx) || risk_target_could_match(f, prs)))
                note(st, r, r->verdict);
        }
        free(f);
        free(abs);
    }
    free(t);
}

/* risk_write_targets hands over text only: its shell flags are guessed
 * from the characters left after quote removal (a quoted '$' reads as an
 * expansion, which only makes the check stricter). */
static void on_write_target(void *ctx, const char *path)
{
    write_ctx *w = ctx;
    unsigned flags = 0;
    if (strpbrk(path, "$`"))
        flags |= BASH_WORD_EXPANDS;
    if (strpbrk(path, "*?["))
        flags |= BASH_WORD_GLOB;
    if (path[0] == '~')
        flags |= BASH_WORD_TILDE;
    check_file_word(w->st, w->ds, path, flags, FAM_EDIT, false);
    if (flags & BASH_WORD_GLOB && !(flags & BASH_WORD_EXPANDS))
        glob_target_rules(w->st, w->ds, path, flags);
}

/* Commands whose operands are files they read, and that the risk
 * classifier may rate SAFE (or that copy files elsewhere). */
static const char *const FILE_READERS[] = {
    "cat", "head", "tail", "less", "more", "grep", "egrep", "fgrep", "rg", "wc", "nl", "od",
    "xxd", "hexdump", "strings", "sort", "uniq", "cut", "diff", "cmp", "tac", "rev", "jq",
    "sha1sum", "sha256sum", "sha512sum", "md5sum", "cksum", "base64", "file", "stat", "paste",
    "join", "comm", "column", "fold", "expand", "cp", "scp", "rsync", "tar", "zip", "source",
    ".", NULL,
};

/* Value of option opt (short "-o" or long "--output") at argv[*k]: glued,
 * after '=', or the next word; NULL when argv[*k] is not that option. */
static const char *opt_value(const bash_cmd *c, size_t *k, const char *shrt, const char *lng)
{
    const char *a = c->argv[*k];
    if (shrt && !strcmp(a, shrt))
        return *k + 1 < c->argc ? c->argv[++*k] : NULL;
    if (shrt && !strncmp(a, shrt, 2) && a[2] && a[1] != '-')
        return a + 2;
    size_t ln = lng ? strlen(lng) : 0;
    if (lng && !strncmp(a, lng, ln)) {
        if (a[ln] == '=')
            return a + ln + 1;
        if (!a[ln])
            return *k + 1 < c->argc ? c->argv[++*k] : NULL;
    }
    return NULL;
}

void perm_wrapper_write_targets(const bash_cmd *c, void (*fn)(void *ctx, const char *path),
                                void *ctx)
{
    if (!c || !c->argc)
        return;
    const char *name = bash_cmd_name(c);
    bool trace = !strcmp(name, "strace") || !strcmp(name, "ltrace");
    bool time = !strcmp(name, "time");
    bool script = !strcmp(name, "script");
    bool vg = !strcmp(name, "valgrind");
    if (!trace && !time && !script && !vg)
        return;
    bool positional = false;
    for (size_t k = 1; k < c->argc; k++) {
        const char *a = c->argv[k];
        const char *v = NULL;
        if (trace || time) {
            if ((v = opt_value(c, &k, "-o", "--output")))
                fn(ctx, v);
            else if (a[0] != '-')
                break;   /* the traced command starts here */
        } else if (vg) {
            if (!strncmp(a, "--log-file=", 11) || !strncmp(a, "--xml-file=", 11))
                fn(ctx, a + 11);
            else if (a[0] != '-')
                break;
        } else { /* script [options] [file] */
            if (!strcmp(a, "-c") || !strcmp(a, "--command") || !strcmp(a, "-E") ||
                !strcmp(a, "--echo") || !strcmp(a, "-m") || !strcmp(a, "--logging-format"))
                k++;
            else if ((v = opt_value(c, &k, "-O", "--log-out")) ||
                     (v = opt_value(c, &k, "-I", "--log-in")) ||
                     (v = opt_value(c, &k, "-B", "--log-io")) ||
                     (v = opt_value(c, &k, "-T", "--log-timing")))
                fn(ctx, v);
            else if (!strncmp(a, "--timing=", 9))
                fn(ctx, a + 9);
            else if (a[0] != '-' && !positional) {
                positional = true;
                fn(ctx, a);
            }
        }
    }
    if (script && !positional)
        fn(ctx, "typescript");
}

/* A word an unknown writer (./tool .env, python3 -c "open('.env','w')")
 * may write: checked when it names a file plainly; a vague word (or a
 * relative one after a cd to somewhere unknown) is no reason to block,
 * since it may well not be a file at all. */
static void on_maybe_write(void *ctx, const char *path)
{
    write_ctx *w = ctx;
    bool tilde_user = path[0] == '~' && path[1] && path[1] != '/';
    bool plain = !strpbrk(path, "$`*?[{") && !tilde_user &&
                 (path[0] == '/' || path[0] == '~' || !w->ds->unknown);
    if (!plain)
        return;
    /* Only the deny and ask rules may act on a candidate: it may not be a
     * file at all, so it neither blocks an allow rule nor counts as a
     * write outside the workspace (gcc -I/usr/include stays allowed). */
    char blocked[sizeof w->st->blocked], outside[sizeof w->st->outside];
    memcpy(blocked, w->st->blocked, sizeof blocked);
    memcpy(outside, w->st->outside, sizeof outside);
    check_file_word(w->st, w->ds, path, path[0] == '~' ? BASH_WORD_TILDE : 0, FAM_EDIT, false);
    memcpy(w->st->blocked, blocked, sizeof blocked);
    memcpy(w->st->outside, outside, sizeof outside);
}

void rule_files_check_cmd(bash_state *st, const dirset *ds, const bash_cmd *c)
{
    write_ctx w = {st, ds};
    risk_write_targets(c, on_write_target, &w);
    perm_wrapper_write_targets(c, on_write_target, &w);
    if (st->has_path_rules[1])
        risk_unknown_write_candidates(c, on_maybe_write, &w);
    if (!st->has_path_rules[0])
        return;
    for (size_t k = 0; k < c->nredir; k++)
        if (bash_redir_reads(&c->redir[k]))
            check_file_word(st, ds, c->redir[k].target, c->redir[k].target_flags, FAM_READ, true);
    bool reader = c->argc && rule_in_set(FILE_READERS, bash_cmd_name(c));
    for (size_t k = 1; k < c->argc; k++)
        if (c->argv[k][0] != '-')
            check_file_word(st, ds, c->argv[k], c->argv_flags[k], FAM_READ, reader);
}

/* Records that deny/ask rule r matches; why says how, when the command
 * only could be the one it names (kept for the rule that decides). */
