/* rules.c — parses settings permission rules and answers what a set of them
 * says about one tool call (rules.h has the contract, docs/permissions-rules.md
 * the user-facing reference).
 *
 * The asymmetry that runs through this file: a deny or ask rule is matched
 * generously (every spelling of the command, the lexical and the resolved
 * path, through wrappers), an allow rule strictly (the command as written
 * including its assignments, the path only as it really resolves). A miss
 * on the generous side would let a call through; a miss on the strict side
 * only costs a question. "Generous" includes what a command could become:
 * deny rules are matched with known programs' global options dropped
 * (program_options.h), through expansions and appended arguments, and an
 * uncertain parse meets every Bash deny and ask rule. An allow rule covers
 * a command only while every file it writes stays in the workspace.
 */
#include "policy/rules.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <pwd.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/path.h"
#include "base/glob.h"
#include "base/str.h"
#include "shell/bash_parse.h"
#include "shell/program_options.h"
#include "policy/risk.h"

/* Symlinks followed while resolving one path; Linux gives up at 40 too. */
#define RESOLVE_MAX_HOPS 40
/* Directories a compound command may have cd'd into that relative
 * redirections are checked against; past this they count as unknown. */
#define CD_MAX_DIRS 16

typedef enum { RK_TOOL, RK_BASH, RK_PATH, RK_DOMAIN, RK_MCP_SERVER, RK_GENERIC } rule_kind;
typedef enum { BM_EXACT, BM_PREFIX, BM_GLOB } bash_mode;
typedef enum { FAM_READ, FAM_EDIT, FAM_SELF } path_family;
typedef enum { AN_ABS, AN_HOME, AN_CWD } anchor;

typedef struct rule {
    perm_verdict verdict;
    rule_source source;
    size_t order;
    char *text;
    char *tool;          /* as written: "Bash", "Edit", "mcp__srv", … */
    rule_kind kind;
    /* RK_BASH */
    bash_mode bmode;
    char **words;
    size_t nwords;
    char *glob;
    /* RK_PATH */
    path_family fam;
    anchor anc;
    char *pattern;       /* relative to the anchor, no leading '/' */
    bool anywhere;       /* no '/' in the pattern: any depth below the anchor */
    /* RK_DOMAIN */
    char *domain;
    bool sub_only;       /* "*.example.com": subdomains, not the domain */
    /* RK_GENERIC */
    char *spec;
} rule;

struct perm_rules {
    rule *v;
    size_t n, cap;
};

/* ---- small helpers --------------------------------------------------- */

static const char *const READ_TOOLS[] = {"Read", "Glob", "Grep", "LS", "NotebookRead", NULL};
static const char *const EDIT_TOOLS[] = {"Edit", "Write", "MultiEdit", "NotebookEdit", NULL};

static bool in_set(const char *const *set, const char *s)
{
    for (; *set; set++)
        if (!strcmp(*set, s))
            return true;
    return false;
}

static path_family family_of(const char *tool)
{
    if (!strcmp(tool, "Read") || !strcmp(tool, "NotebookRead"))
        return FAM_READ;
    if (in_set(EDIT_TOOLS, tool))
        return FAM_EDIT;
    return FAM_SELF;
}

/* Does a rule written for rule_tool apply to a call of tool? Read rules
 * cover every reading tool and Edit/Write rules every writing tool, so a
 * deny cannot be walked around by picking a sibling tool. */
static bool tool_applies(const rule *r, const char *tool)
{
    if (!strcmp(r->tool, tool))
        return true;
    switch (family_of(r->tool)) {
    case FAM_READ: return in_set(READ_TOOLS, tool);
    case FAM_EDIT: return in_set(EDIT_TOOLS, tool);
    case FAM_SELF: return false;
    }
    return false;
}

/* Higher source wins the report; between equals, the rule added first. */
static const rule *better(const rule *a, const rule *b)
{
    if (!a)
        return b;
    if (!b)
        return a;
    if (a->source != b->source)
        return a->source > b->source ? a : b;
    return a->order <= b->order ? a : b;
}

static const char *home_dir(void)
{
    const char *h = getenv("HOME");
    if (h && *h)
        return h;
    struct passwd *pw = getpwuid(getuid());
    return pw && pw->pw_dir && *pw->pw_dir ? pw->pw_dir : NULL;
}

static void set_match(rule_match *m, perm_verdict v, const rule *r)
{
    m->verdict = v;
    m->rule[0] = '\0';
    m->source = RULE_SRC_USER;
    if (r) {
        snprintf(m->rule, sizeof m->rule, "%s", r->text);
        m->source = r->source;
    }
}

/* ---- paths ----------------------------------------------------------- */

static char *join_path(const char *dir, const char *path)
{
    if (path[0] == '/')
        return xstrdup(path);
    loom_str s = LOOM_STR_INIT;
    str_puts(&s, dir && *dir ? dir : "/");
    str_putc(&s, '/');
    str_puts(&s, path);
    return str_steal(&s);
}

/* Follows the symlinks of an absolute path component by component, the
 * way the kernel does: ".." after a symlink climbs from its target. Once a
 * component does not exist, the rest is taken as written. */
static char *resolve_physical(const char *abs)
{
    loom_str out = LOOM_STR_INIT;   /* "" stands for "/" */
    char *rest = xstrdup(abs);
    size_t pos = 0;
    int hops = 0;
    bool exists = true;
    char *result = NULL;
    for (;;) {
        while (rest[pos] == '/')
            pos++;
        if (!rest[pos])
            break;
        size_t st = pos;
        while (rest[pos] && rest[pos] != '/')
            pos++;
        size_t len = pos - st;
        if (len == 1 && rest[st] == '.')
            continue;
        if (len == 2 && rest[st] == '.' && rest[st + 1] == '.') {
            while (out.len > 0 && out.ptr[out.len - 1] != '/')
                out.len--;
            if (out.len > 0)
                out.len--;
            if (out.ptr)
                out.ptr[out.len] = '\0';
            continue;
        }
        size_t before = out.len;
        str_putc(&out, '/');
        str_append(&out, rest + st, len);
        if (out.len > 4 * PATH_MAX)
            goto fail;
        if (!exists)
            continue;
        struct stat sb;
        if (lstat(out.ptr, &sb) != 0) {
            exists = false;
            continue;
        }
        if (!S_ISLNK(sb.st_mode))
            continue;
        if (++hops > RESOLVE_MAX_HOPS)
            goto fail;
        char target[PATH_MAX];
        ssize_t tl = readlink(out.ptr, target, sizeof target - 1);
        if (tl <= 0) {
            exists = false;
            continue;
        }
        target[tl] = '\0';
        loom_str next = LOOM_STR_INIT;
        str_puts(&next, target);
        str_putc(&next, '/');
        str_puts(&next, rest + pos);
        free(rest);
        rest = str_steal(&next);
        pos = 0;
        out.len = target[0] == '/' ? 0 : before;
        if (out.ptr)
            out.ptr[out.len] = '\0';
    }
    result = out.len ? xstrdup(out.ptr) : xstrdup("/");
fail:
    str_free(&out);
    free(rest);
    return result;
}

char *perm_resolve_path(const char *path, const char *cwd)
{
    if (!path)
        return NULL;
    char *abs = join_path(cwd, path);
    char *folded = path_fold(abs);
    char *res = resolve_physical(folded);
    free(abs);
    free(folded);
    return res;
}

static bool has_glob(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (s[i] == '*' || s[i] == '?' || s[i] == '[' || s[i] == '\\')
            return true;
    return false;
}


/* The rule's pattern as an absolute path, as written (folded) and with the
 * literal directories before the first wildcard resolved through symlinks.
 * false when its anchor (home) is unknown. */
static bool rule_patterns(const rule *r, const char *cwd, char **lexical, char **resolved)
{
    const char *base = "/";
    if (r->anc == AN_HOME) {
        base = home_dir();
        if (!base)
            return false;
    } else if (r->anc == AN_CWD) {
        base = cwd;
    }
    loom_str full = LOOM_STR_INIT;
    str_puts(&full, base);
    str_putc(&full, '/');
    if (r->anywhere)
        str_puts(&full, "**/");
    str_puts(&full, r->pattern);
    *lexical = path_fold(str_cstr(&full));
    str_free(&full);

    /* Split at the first segment with a wildcard; resolve what is before. */
    const char *lx = *lexical;
    size_t cut = 0;
    for (const char *s = lx; *s;) {
        while (*s == '/')
            s++;
        const char *e = strchr(s, '/');
        size_t len = e ? (size_t)(e - s) : strlen(s);
        if (!len || has_glob(s, len))
            break;
        cut = (size_t)(s - lx) + len;
        s += len;
    }
    char *prefix = xstrndup(lx, cut ? cut : 1);
    char *rp = resolve_physical(prefix);
    free(prefix);
    if (!rp) {
        *resolved = xstrdup(lx);
        return true;
    }
    loom_str res = LOOM_STR_INIT;
    str_puts(&res, rp);
    str_puts(&res, lx + cut);
    free(rp);
    *resolved = path_fold(str_cstr(&res));
    str_free(&res);
    return true;
}

/* The forms a file path takes: as the tools fold it, that resolved through
 * symlinks, and as the kernel resolves it unfolded (".." after a symlink).
 * The resolved forms are NULL when a symlink loop hides the answer. */
typedef struct path_forms {
    char *lexical, *resolved, *physical;
} path_forms;

static void path_forms_make(path_forms *f, const char *path, const char *cwd)
{
    char *abs = join_path(cwd, path);
    f->lexical = path_fold(abs);
    f->resolved = resolve_physical(f->lexical);
    f->physical = resolve_physical(abs);
    free(abs);
}

static void path_forms_free(path_forms *f)
{
    free(f->lexical);
    free(f->resolved);
    free(f->physical);
}

/* strict (allow): every way the path resolves must fall under the rule as
 * resolved. Otherwise (deny, ask): any form under any form of the rule. */
static bool patterns_match(const char *lx, const char *rs, const path_forms *f, bool strict)
{
    if (strict)
        return f->resolved && f->physical && glob_path_covers(rs, f->resolved) &&
               glob_path_covers(rs, f->physical);
    const char *forms[3] = {f->lexical, f->resolved, f->physical};
    for (int k = 0; k < 3; k++)
        if (forms[k] && (glob_path_covers(lx, forms[k]) || glob_path_covers(rs, forms[k])))
            return true;
    return false;
}

static bool path_rule_matches(const rule *r, const path_forms *f, const char *cwd, bool strict)
{
    char *lx, *rs;
    if (!rule_patterns(r, cwd, &lx, &rs))
        return false;
    bool m = patterns_match(lx, rs, f, strict);
    free(lx);
    free(rs);
    return m;
}

/* ---- web domains ----------------------------------------------------- */

/* The host of an http(s)-style URL, lowercased; NULL when the URL is not
 * plain enough to be sure which host a client would contact. */
static char *url_host(const char *url)
{
    const char *s = strstr(url, "://");
    if (!s)
        return NULL;
    for (const char *c = url; c < s; c++)
        if (!isalnum((unsigned char)*c) && *c != '+' && *c != '-' && *c != '.')
            return NULL;
    s += 3;
    size_t alen = strcspn(s, "/?#");
    const char *at = NULL;
    for (size_t i = 0; i < alen; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c <= ' ' || c == '\\' || c == '%' || c >= 0x7f)
            return NULL;
        if (c == '@')
            at = s + i;
    }
    const char *h = at ? at + 1 : s;
    size_t hl = alen - (size_t)(h - s);
    if (hl && h[0] == '[') {
        const char *close = memchr(h, ']', hl);
        if (!close)
            return NULL;
        hl = (size_t)(close - h) + 1;
    } else {
        const char *colon = memchr(h, ':', hl);
        if (colon)
            hl = (size_t)(colon - h);
    }
    while (hl && h[hl - 1] == '.')
        hl--;
    if (!hl)
        return NULL;
    char *host = xstrndup(h, hl);
    for (char *c = host; *c; c++)
        *c = (char)tolower((unsigned char)*c);
    return host;
}

static bool domain_matches(const rule *r, const char *host)
{
    size_t hl = strlen(host), dl = strlen(r->domain);
    if (!r->sub_only && !strcmp(host, r->domain))
        return true;
    return hl > dl && host[hl - dl - 1] == '.' && !strcmp(host + hl - dl, r->domain);
}

/* ---- Bash words ------------------------------------------------------ */

/* '*' matches any run of characters, everything else itself. */
static bool wild_match(const char *p, const char *s)
{
    const char *star = NULL, *ss = NULL;
    while (*s) {
        if (*p == '*') {
            star = ++p;
            ss = s;
        } else if (*p == *s) {
            p++;
            s++;
        } else if (star) {
            p = star;
            s = ++ss;
        } else {
            return false;
        }
    }
    while (*p == '*')
        p++;
    return !*p;
}

static bool bash_rule_matches(const rule *r, const char *const *w, size_t n, const char *joined)
{
    switch (r->bmode) {
    case BM_EXACT:
    case BM_PREFIX:
        if (n < r->nwords || (r->bmode == BM_EXACT && n != r->nwords))
            return false;
        for (size_t k = 0; k < r->nwords; k++)
            if (strcmp(w[k], r->words[k]))
                return false;
        return true;
    case BM_GLOB:
        return wild_match(r->glob, joined);
    }
    return false;
}

/* Options the user wrote in a deny or ask rule are a set, not a spelling:
 * Bash(rm -rf:*) also means `rm -r -f x`, `rm -fr x`, `rm -Rf x`,
 * `rm --recursive --force x`, `rm x -rf`; Bash(git push --force:*) also
 * `git push origin main -f`. A rule qualifies when its words are some
 * fixed words (the program and subcommand) followed only by options, and
 * is a prefix rule or exact with nothing after the options. The command
 * must start with the fixed words and carry every option somewhere before
 * "--" (short options in any cluster, long ones also as --opt=VALUE or a
 * unique abbreviation of at least four letters); OPT_SAME maps the long
 * and alternative spellings of a few programs onto one short letter. */
static const struct {
    const char *prog, *sub;   /* sub: "" for the program itself */
    const char *spelling;     /* a long option or another short one */
    char letter;
} OPT_SAME[] = {
    {"rm", "", "--recursive", 'r'}, {"rm", "", "-R", 'r'}, {"rm", "", "--force", 'f'},
    {"cp", "", "--recursive", 'r'}, {"cp", "", "-R", 'r'}, {"cp", "", "--force", 'f'},
    {"chmod", "", "--recursive", 'R'}, {"chown", "", "--recursive", 'R'},
    {"chgrp", "", "--recursive", 'R'}, {"git", "push", "--force", 'f'},
    {"git", "clean", "--force", 'f'}, {"git", "branch", "--force", 'f'},
    {"git", "checkout", "--force", 'f'}, {"git", "add", "--force", 'f'},
    {"git", "rm", "--force", 'f'}, {"git", "rm", "-r", 'r'},
    {"docker", "rm", "--force", 'f'}, {"docker", "rmi", "--force", 'f'},
};

/* The letter the first len bytes of spelling stand for under the fixed
 * words w0 w1, or '\0'. A long option may be abbreviated (getopt takes
 * any unique start: --recur), down to five bytes ("--for"). */
static char opt_letter(const char *w0, const char *w1, const char *spelling, size_t len)
{
    for (size_t k = 0; k < sizeof OPT_SAME / sizeof OPT_SAME[0]; k++) {
        const char *sp = OPT_SAME[k].spelling;
        if (strcmp(OPT_SAME[k].prog, w0) ||
            (OPT_SAME[k].sub[0] && (!w1 || strcmp(OPT_SAME[k].sub, w1))))
            continue;
        if (strlen(sp) == len ? !strncmp(sp, spelling, len)
                              : sp[1] == '-' && len >= 5 && len < strlen(sp) &&
                                    !strncmp(sp, spelling, len))
            return OPT_SAME[k].letter;
    }
    return '\0';
}

static bool is_short_cluster(const char *a)
{
    return a[0] == '-' && a[1] && a[1] != '-';
}

/* Does the command w[0..n) (words after "--" are operands) carry the rule
 * option o, under the fixed words f0 f1? */
static bool cmd_has_option(const char *const *w, size_t from, size_t n, const char *f0,
                           const char *f1, const char *o)
{
    char want = opt_letter(f0, f1, o, strlen(o));
    bool long_opt = o[0] == '-' && o[1] == '-';
    for (size_t k = from; k < n; k++) {
        const char *a = w[k];
        if (!strcmp(a, "--"))
            break;
        if (a[0] != '-' || !a[1])
            continue;
        if (!strcmp(a, o))
            return true;
        if (a[1] == '-') {
            size_t al = strcspn(a, "=");
            if (long_opt && al >= 5 && !strncmp(a, o, al) && (!o[al] || al < strlen(o)))
                return true;   /* --force, --force=x, --forc */
            char l = opt_letter(f0, f1, a, al);
            if (l && (l == want || (!long_opt && !o[2] && l == o[1])))
                return true;
            continue;
        }
        if (is_short_cluster(a)) {
            char alt[3] = {'-', 0, 0};
            for (const char *c = a + 1; *c; c++) {
                alt[1] = *c;
                char l = opt_letter(f0, f1, alt, 2);
                if (!l)
                    l = *c;
                if (want && l == want)
                    return true;
                if (!long_opt && !o[2] && (l == o[1] || *c == o[1]))
                    return true;
            }
        }
    }
    return false;
}

static bool option_set_matches(const rule *r, const char *const *w, size_t n)
{
    if (r->bmode == BM_GLOB || r->nwords < 2)
        return false;
    size_t nfix = 0;
    while (nfix < r->nwords && !(r->words[nfix][0] == '-' && r->words[nfix][1]))
        nfix++;
    if (nfix == 0 || nfix == r->nwords || n < nfix)
        return false;
    for (size_t k = nfix; k < r->nwords; k++)
        if (r->words[k][0] != '-' || !strcmp(r->words[k], "--"))
            return false;   /* an operand after the options: a spelling, keep it */
    for (size_t k = 0; k < nfix; k++)
        if (strcmp(w[k], r->words[k]))
            return false;
    const char *f1 = nfix > 1 ? r->words[1] : NULL;
    for (size_t k = nfix; k < r->nwords; k++) {
        const char *o = r->words[k];
        if (is_short_cluster(o) && o[2]) {   /* -rf: each letter */
            char one[3] = {'-', 0, 0};
            for (const char *c = o + 1; *c; c++) {
                one[1] = *c;
                if (!cmd_has_option(w, nfix, n, r->words[0], f1, one))
                    return false;
            }
        } else if (!cmd_has_option(w, nfix, n, r->words[0], f1, o)) {
            return false;
        }
    }
    if (r->bmode == BM_EXACT)
        for (size_t k = nfix; k < n; k++)
            if (w[k][0] != '-')
                return false;   /* exact: options only, no operand */
    return true;
}

/* Could some text that starts with s match the '*' pattern p? True when
 * all of s is consumed by a prefix of p: what the shell adds after s
 * (an expansion's value, more words) can then supply the rest. */
static bool wild_prefix(const char *p, const char *s)
{
    const char *star = NULL, *ss = NULL;
    while (*s) {
        if (*p == '*') {
            star = ++p;
            ss = s;
        } else if (*p && *p == *s) {
            p++;
            s++;
        } else if (star) {
            p = star;
            s = ++ss;
        } else {
            return false;
        }
    }
    return true;
}

/* A word the shell turns into something the text does not show: an
 * expansion ($x, $(…)) or an unquoted glob. */
static bool vague_word(unsigned flags)
{
    return (flags & (BASH_WORD_EXPANDS | BASH_WORD_GLOB)) != 0;
}


/* The bytes of a vague word before its first expansion or glob character
 * are fixed text: whatever the word becomes, its first resulting word
 * starts with them ("P=$PATH" can never become "tight"). A quoted '$' or
 * '*' also stops the prefix, which only makes it shorter (stricter). */
static size_t fixed_prefix_len(const char *w, unsigned flags)
{
    /* A run-time placeholder (xargs -I %, find -exec {}) is flagged as an
     * expansion without a '$' to show where: nothing of it is fixed. */
    if ((flags & BASH_WORD_EXPANDS) && !strpbrk(w, "$`"))
        return 0;
    return strcspn(w, "$`*?[{");
}

/* Could the command w[0..n) (flags per word) be one that rule r matches,
 * once its vague words are expanded? The words before the first vague one
 * must match as written; the vague word may become anything (several words
 * too, or none), except that a glob without expansions can only become
 * names it matches. more: arguments are appended at run time (xargs). */
static bool could_match(const rule *r, const char *const *w, const unsigned *fl, size_t n,
                        bool more)
{
    size_t v = 0;
    while (v < n && !vague_word(fl[v]))
        v++;
    if (v == n && !more)
        return false;
    if (r->bmode == BM_GLOB) {
        loom_str pre = LOOM_STR_INIT;
        str_puts(&pre, "");
        for (size_t k = 0; k < v; k++) {
            str_puts(&pre, w[k]);
            str_putc(&pre, ' ');
        }
        if (v < n)
            str_append(&pre, w[v], fixed_prefix_len(w[v], fl[v]));
        /* "git " + anything: the rule could match if it could continue
         * what is known; at the very start (v == 0) everything could. */
        if (v == n && pre.len)
            pre.ptr[--pre.len] = '\0';
        bool m = wild_prefix(r->glob, pre.ptr);
        str_free(&pre);
        return m;
    }
    for (size_t k = 0; k < v && k < r->nwords; k++)
        if (strcmp(w[k], r->words[k]))
            return false;
    if (v < n && v < r->nwords && !(fl[v] & BASH_WORD_EXPANDS) &&
        !glob_segment_match(w[v], strlen(w[v]), r->words[v], strlen(r->words[v])))
        return false;   /* a plain glob that cannot name the rule's word */
    if (v < n && v < r->nwords && !strchr(r->words[v], '*')) {
        size_t fp = fixed_prefix_len(w[v], fl[v]), rl = strlen(r->words[v]);
        if (strncmp(w[v], r->words[v], fp < rl ? fp : rl) != 0 || fp > rl)
            return false;   /* its fixed start already differs from the rule's word */
    }
    if (v >= r->nwords && r->bmode == BM_EXACT) {
        /* Exact: the rest must be able to vanish or to be the rule. */
        for (size_t k = r->nwords; k < n; k++)
            if (!vague_word(fl[k]))
                return false;
        if (v == n && more)
            return true;
    }
    return v < n || more;
}

/* The program a Bash rule is about ("git" for Bash(git push:*)), for
 * "any subcommand of it"; NULL when the rule starts with a wildcard. */
static bool rule_is_for_program(const rule *r, const char *name)
{
    if (r->bmode == BM_GLOB) {
        loom_str pre = LOOM_STR_INIT;
        str_puts(&pre, name);
        str_putc(&pre, ' ');
        bool m = wild_prefix(r->glob, pre.ptr);
        str_free(&pre);
        return m;
    }
    return r->nwords > 0 && !strcmp(r->words[0], name);
}

typedef struct cmd_form {
    const char **w;
    size_t n;
    char *joined;
} cmd_form;

static void form_make(cmd_form *f, const bash_cmd *c, bool with_assign, bool basename0)
{
    f->n = (with_assign ? c->nassign : 0) + c->argc;
    f->w = xmalloc((f->n + 1) * sizeof *f->w);
    size_t k = 0;
    if (with_assign)
        for (size_t a = 0; a < c->nassign; a++)
            f->w[k++] = c->assign[a];
    for (size_t a = 0; a < c->argc; a++)
        f->w[k++] = a == 0 && basename0 ? bash_cmd_name(c) : c->argv[a];
    f->w[k] = NULL;
    loom_str j = LOOM_STR_INIT;
    for (size_t a = 0; a < f->n; a++) {
        if (a)
            str_putc(&j, ' ');
        str_puts(&j, f->w[a]);
    }
    f->joined = str_steal(&j);
}

static void form_free(cmd_form *f)
{
    free(f->w);
    free(f->joined);
}

/* ---- adding rules ---------------------------------------------------- */

perm_rules *perm_rules_new(void)
{
    return xcalloc(1, sizeof(perm_rules));
}

static void rule_free(rule *r)
{
    free(r->text);
    free(r->tool);
    for (size_t k = 0; k < r->nwords; k++)
        free(r->words[k]);
    free(r->words);
    free(r->glob);
    free(r->pattern);
    free(r->domain);
    free(r->spec);
}

void perm_rules_free(perm_rules *r)
{
    if (!r)
        return;
    for (size_t k = 0; k < r->n; k++)
        rule_free(&r->v[k]);
    free(r->v);
    free(r);
}

size_t perm_rules_count(const perm_rules *r)
{
    return r ? r->n : 0;
}

static int bad(loom_error *err, const char *text, const char *why)
{
    return loom_error_set(err, LOOM_ERR_CONFIG, "permission rule \"%s\": %s", text, why);
}

static bool valid_tool_name(const char *s, size_t n)
{
    if (!n || !isalpha((unsigned char)s[0]))
        return false;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (!isalnum((unsigned char)c) && c != '_' && c != '-' && c != '.')
            return (c == '*' && i == n - 1 && n > 7 && !strncmp(s, "mcp__", 5) &&
                    s[n - 2] == '_' && s[n - 3] == '_');
    }
    return true;
}

static int parse_bash_spec(rule *r, const char *spec, const char *text, loom_error *err)
{
    size_t sl = strlen(spec);
    bool prefix = sl >= 2 && !strcmp(spec + sl - 2, ":*");
    char *body = xstrndup(spec, prefix ? sl - 2 : sl);
    /* "ls *": the legacy spelling of "ls:*" */
    size_t bl = strlen(body);
    if (!prefix && bl >= 2 && !strcmp(body + bl - 2, " *") && strchr(body, '*') == body + bl - 1) {
        body[bl - 2] = '\0';
        prefix = true;
    }
    int rc = 0;
    bash_cmds *pc = bash_parse(body);
    const bash_cmd *first = NULL;
    size_t top = 0;
    for (size_t k = 0; k < bash_cmds_count(pc); k++)
        if (!(bash_cmds_at(pc, k)->flags & (BASH_CMD_DERIVED | BASH_CMD_SUBST))) {
            top++;
            if (!first)
                first = bash_cmds_at(pc, k);
        }
    bool uncertain_ok = bash_cmds_uncertain(pc) && bash_cmds_why(pc) &&
                        !strcmp(bash_cmds_why(pc), "the command name is an expansion");
    if (!*body || !first) {
        rc = bad(err, text, "the command is empty");
    } else if (bash_cmds_uncertain(pc) && !uncertain_ok) {
        char why[200];
        snprintf(why, sizeof why, "cannot read the command (%s)", bash_cmds_why(pc));
        rc = bad(err, text, why);
    } else if (top != 1 || first->nredir) {
        rc = bad(err, text,
                 "a Bash rule matches one simple command: no ;, &&, ||, |, & or "
                 "redirections (write one rule per command)");
    } else {
        cmd_form f;
        form_make(&f, first, true, false);
        if (strchr(f.joined, '*') && !prefix) {
            r->bmode = BM_GLOB;
            r->glob = xstrdup(f.joined);
        } else if (strchr(f.joined, '*')) {
            rc = bad(err, text, "use either a ':*' suffix or '*' wildcards, not both");
        } else {
            r->bmode = prefix ? BM_PREFIX : BM_EXACT;
            r->nwords = f.n;
            r->words = xmalloc((f.n ? f.n : 1) * sizeof *r->words);
            for (size_t k = 0; k < f.n; k++)
                r->words[k] = xstrdup(f.w[k]);
        }
        form_free(&f);
    }
    bash_cmds_free(pc);
    free(body);
    return rc;
}

static int parse_path_spec(rule *r, const char *spec, const char *text, loom_error *err)
{
    const char *p = spec;
    bool dot_anchored = false;
    if (p[0] == '~') {
        if (p[1] && p[1] != '/')
            return bad(err, text, "only ~ and ~/ are understood, not ~user");
        r->anc = AN_HOME;
        p++;
    } else if (p[0] == '/') {
        /* Both /x and //x are absolute here; Claude Code reads /x as
         * relative to the settings file, which a rule set does not know. */
        r->anc = AN_ABS;
    } else {
        r->anc = AN_CWD;
        if (p[0] == '.' && (p[1] == '/' || !p[1])) {
            p++;
            dot_anchored = true;
        }
    }
    while (*p == '/')
        p++;
    size_t n = strlen(p);
    while (n && p[n - 1] == '/')
        n--;
    r->pattern = xstrndup(p, n);
    /* gitignore: a pattern without a slash matches at any depth below the
     * directory; "./name" is anchored to it. */
    r->anywhere = r->anc == AN_CWD && !dot_anchored && n && !memchr(p, '/', n) &&
                  strcmp(r->pattern, "..");
    (void)text;
    (void)err;
    return 0;
}

static int parse_domain_spec(rule *r, const char *spec, const char *text, loom_error *err)
{
    if (strncmp(spec, "domain:", 7))
        return bad(err, text, "WebFetch rules take domain:HOST, e.g. WebFetch(domain:example.com)");
    const char *d = spec + 7;
    if (!strncmp(d, "*.", 2)) {
        r->sub_only = true;
        d += 2;
    }
    if (!*d)
        return bad(err, text, "the domain is empty");
    for (const char *c = d; *c; c++)
        if (!isalnum((unsigned char)*c) && *c != '-' && *c != '.' && *c != '_')
            return bad(err, text, "a domain is a host name such as example.com (no scheme, port "
                                  "or path)");
    r->domain = xstrdup(d);
    for (char *c = r->domain; *c; c++)
        *c = (char)tolower((unsigned char)*c);
    return 0;
}

static bool is_path_tool(const char *t)
{
    return in_set(READ_TOOLS, t) || in_set(EDIT_TOOLS, t);
}

int perm_rules_add(perm_rules *rs, perm_verdict verdict, const char *rule_text, rule_source source,
                   loom_error *err)
{
    if (!rule_text)
        return loom_error_set(err, LOOM_ERR_CONFIG, "permission rule: missing text");
    if (verdict != PERM_ALLOW && verdict != PERM_ASK && verdict != PERM_DENY)
        return bad(err, rule_text, "a rule belongs to allow, ask or deny");
    size_t n = strlen(rule_text);
    const char *s = rule_text;
    while (n && isspace((unsigned char)*s)) {
        s++;
        n--;
    }
    while (n && isspace((unsigned char)s[n - 1]))
        n--;
    if (!n)
        return bad(err, rule_text, "the rule is empty");
    char *text = xstrndup(s, n);
    rule r = {0};
    r.verdict = verdict;
    r.source = source;
    r.text = text;
    const char *paren = strchr(text, '(');
    size_t tn = paren ? (size_t)(paren - text) : n;
    int rc = 0;
    char *spec = NULL;
    if (!valid_tool_name(text, tn)) {
        rc = bad(err, text, paren ? "the tool name before ( is not a valid name"
                                  : "not a tool name or Tool(specifier)");
        goto out;
    }
    r.tool = xstrndup(text, tn);
    if (paren) {
        if (text[n - 1] != ')') {
            rc = bad(err, text, "missing ) at the end");
            goto out;
        }
        const char *a = paren + 1, *b = text + n - 1;
        while (a < b && isspace((unsigned char)*a))
            a++;
        while (b > a && isspace((unsigned char)b[-1]))
            b--;
        spec = xstrndup(a, (size_t)(b - a));
        if (!*spec) {
            rc = bad(err, text, "empty () — write the tool name alone to match all its calls");
            goto out;
        }
    }
    bool mcp = !strncmp(r.tool, "mcp__", 5);
    if (mcp) {
        if (spec) {
            rc = bad(err, text, "MCP rules take no (specifier): use mcp__server or "
                                "mcp__server__tool");
            goto out;
        }
        const char *rest = r.tool + 5;
        const char *sep = strstr(rest, "__");
        if (!*rest || rest[0] == '_') {
            rc = bad(err, text, "the MCP server name is missing");
            goto out;
        }
        if (!sep || !strcmp(sep, "__*")) {
            r.kind = RK_MCP_SERVER;
            if (sep)
                r.tool[sep - r.tool] = '\0';
        } else {
            r.kind = RK_TOOL;
        }
    } else if (!spec || !strcmp(spec, "*")) {
        r.kind = RK_TOOL;
    } else if (!strcmp(r.tool, "Bash")) {
        r.kind = RK_BASH;
        rc = parse_bash_spec(&r, spec, text, err);
    } else if (is_path_tool(r.tool)) {
        r.kind = RK_PATH;
        r.fam = family_of(r.tool);
        rc = parse_path_spec(&r, spec, text, err);
    } else if (!strcmp(r.tool, "WebFetch")) {
        r.kind = RK_DOMAIN;
        rc = parse_domain_spec(&r, spec, text, err);
    } else {
        r.kind = RK_GENERIC;
        r.spec = xstrdup(spec);
    }
out:
    free(spec);
    if (rc) {
        rule_free(&r);
        return rc;
    }
    if (rs->n == rs->cap) {
        rs->cap = rs->cap ? rs->cap * 2 : 16;
        rs->v = xrealloc(rs->v, rs->cap * sizeof *rs->v);
    }
    r.order = rs->n;
    rs->v[rs->n++] = r;
    return 0;
}

/* ---- checking a call ------------------------------------------------- */

/* The path argument of a file tool; Glob/Grep/LS default to the cwd. */
static const char *tool_path(const char *tool, const json_t *input, const char *cwd)
{
    const char *p = NULL;
    if (!strcmp(tool, "NotebookEdit") || !strcmp(tool, "NotebookRead"))
        p = json_string_value(json_object_get(input, "notebook_path"));
    else if (!strcmp(tool, "Glob") || !strcmp(tool, "Grep") || !strcmp(tool, "LS"))
        p = json_string_value(json_object_get(input, "path"));
    else
        p = json_string_value(json_object_get(input, "file_path"));
    if (!p && (!strcmp(tool, "Glob") || !strcmp(tool, "Grep") || !strcmp(tool, "LS")))
        p = cwd;
    return p && *p ? p : NULL;
}

static bool generic_matches(const rule *r, const json_t *input)
{
    const char *key;
    json_t *v;
    json_object_foreach((json_t *)input, key, v)
        if (json_is_string(v) && wild_match(r->spec, json_string_value(v)))
            return true;
    return false;
}

/* Does rule r match a call of a non-Bash tool? strict for allow rules. */
static bool rule_matches_call(const rule *r, const char *tool, const json_t *input,
                              const char *cwd, const path_forms *pf, const char *host)
{
    switch (r->kind) {
    case RK_TOOL:
        return tool_applies(r, tool);
    case RK_MCP_SERVER: {
        size_t n = strlen(r->tool);
        return !strncmp(tool, r->tool, n) && tool[n] == '_' && tool[n + 1] == '_';
    }
    case RK_PATH:
        return tool_applies(r, tool) && pf && path_rule_matches(r, pf, cwd, r->verdict == PERM_ALLOW);
    case RK_DOMAIN:
        return !strcmp(tool, "WebFetch") && host && domain_matches(r, host);
    case RK_GENERIC:
        return !strcmp(r->tool, tool) && input && generic_matches(r, input);
    case RK_BASH:
        return false;
    }
    return false;
}

static void check_plain(const perm_rules *rs, const char *tool, const json_t *input,
                        const char *cwd, perm_check_detail *out)
{
    path_forms pf = {0};
    bool have_pf = false;
    const char *path = is_path_tool(tool) ? tool_path(tool, input, cwd) : NULL;
    if (path) {
        path_forms_make(&pf, path, cwd);
        have_pf = true;
    }
    char *host = NULL;
    if (!strcmp(tool, "WebFetch")) {
        const char *url = json_string_value(json_object_get(input, "url"));
        host = url ? url_host(url) : NULL;
    }
    const rule *best[4] = {0};
    for (size_t k = 0; k < rs->n; k++) {
        const rule *r = &rs->v[k];
        if (rule_matches_call(r, tool, input, cwd, have_pf ? &pf : NULL, host))
            best[r->verdict] = better(best[r->verdict], r);
    }
    if (best[PERM_DENY])
        set_match(&out->match, PERM_DENY, best[PERM_DENY]);
    else if (best[PERM_ASK])
        set_match(&out->match, PERM_ASK, best[PERM_ASK]);
    else if (best[PERM_ALLOW])
        set_match(&out->match, PERM_ALLOW, best[PERM_ALLOW]);
    if (have_pf && !pf.resolved)
        snprintf(out->uncovered, sizeof out->uncovered, "%.200s: symlink loop", path);
    free(host);
    if (have_pf)
        path_forms_free(&pf);
}

/* Where relative redirections of a compound command may land: the session
 * directory and every literal directory a `cd` went to before them. */
typedef struct dirset {
    char *d[CD_MAX_DIRS];
    size_t n;
    bool unknown;   /* a cd to somewhere not known in advance */
} dirset;

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
    const char *h = home_dir();
    if (!h)
        return NULL;
    loom_str s = LOOM_STR_INIT;
    str_puts(&s, h);
    str_puts(&s, w + 1);
    return str_steal(&s);
}

static void track_cd(dirset *ds, const bash_cmd *c)
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
        const char *h = home_dir();
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
            char *j = join_path(ds->d[k], target);
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

typedef struct bash_state {
    const perm_rules *rs;
    const char *cwd;
    const rule *deny, *ask;
    bool has_path_rules[2];   /* deny/ask path rules exist for READ / EDIT */
    char blocked[256];        /* why a file the command writes stops an allow */
    char outside[256];        /* a file it writes outside the workspace */
    char *cwd_real;           /* the workspace, resolved (NULL: unknown) */
    char deny_why[300], ask_why[300]; /* how the command could be the rule's */
    /* Each path rule's patterns, resolved once per check (index = rule). */
    signed char *pat_state;   /* 0 not yet, 1 ready, -1 unknown anchor */
    char **pat_lx, **pat_rs;
} bash_state;

static bool st_patterns(bash_state *st, const rule *r, const char **lx, const char **rs)
{
    size_t q = (size_t)(r - st->rs->v);
    if (!st->pat_state) {
        st->pat_state = xcalloc(st->rs->n, 1);
        st->pat_lx = xcalloc(st->rs->n, sizeof *st->pat_lx);
        st->pat_rs = xcalloc(st->rs->n, sizeof *st->pat_rs);
    }
    if (!st->pat_state[q])
        st->pat_state[q] = rule_patterns(r, st->cwd, &st->pat_lx[q], &st->pat_rs[q]) ? 1 : -1;
    *lx = st->pat_lx[q];
    *rs = st->pat_rs[q];
    return st->pat_state[q] == 1;
}

static void st_free(bash_state *st)
{
    free(st->cwd_real);
    for (size_t q = 0; st->pat_state && q < st->rs->n; q++) {
        free(st->pat_lx[q]);
        free(st->pat_rs[q]);
    }
    free(st->pat_state);
    free(st->pat_lx);
    free(st->pat_rs);
}

static bool path_rule_in_family(const rule *r, path_family fam)
{
    if (r->verdict == PERM_ALLOW)
        return false;
    if (r->kind != RK_PATH && r->kind != RK_TOOL)
        return false;
    if (r->kind == RK_TOOL && !in_set(fam == FAM_EDIT ? EDIT_TOOLS : READ_TOOLS, r->tool))
        return false;
    path_family f = family_of(r->tool);
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
    char *rdir = resolve_physical(dir);
    for (int k = 0; k < 2 && !hit; k++) {
        const char *pt = pats[k];
        size_t cut = 0;
        for (const char *q = pt; *q;) {
            while (*q == '/')
                q++;
            const char *e = strchr(q, '/');
            size_t len = e ? (size_t)(e - q) : strlen(q);
            if (!len || has_glob(q, len))
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

static void note(bash_state *st, const rule *r, perm_verdict as)
{
    if (as == PERM_DENY)
        st->deny = better(st->deny, r);
    else
        st->ask = better(st->ask, r);
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
static bool write_inside(bash_state *st, const path_forms *pf)
{
    if (st->cwd_real && pf->resolved && pf->physical && under(st->cwd_real, pf->resolved) &&
        under(st->cwd_real, pf->physical))
        return true;
    for (size_t q = 0; q < st->rs->n; q++) {
        const rule *r = &st->rs->v[q];
        if (r->verdict != PERM_ALLOW || family_of(r->tool) != FAM_EDIT)
            continue;
        if (r->kind == RK_TOOL)
            return true;
        if (r->kind == RK_PATH && path_rule_matches(r, pf, st->cwd, true))
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
        path_forms pf;
        path_forms_make(&pf, lit, ds->d[k]);
        if (!write_inside(st, &pf))
            snprintf(st->outside, sizeof st->outside,
                     "the command writes %s, outside the workspace (%s)", w, st->cwd);
        path_forms_free(&pf);
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
        for (size_t q = 0; q < st->rs->n; q++) {
            const rule *r = &st->rs->v[q];
            if (!path_rule_in_family(r, fam))
                continue;
            bool touch = r->kind == RK_TOOL || !lit || ds->unknown;
            const char *plx, *prs;
            if (!touch && !st_patterns(st, r, &plx, &prs))
                continue;
            for (size_t k = 0; k < ds->n && !touch; k++) {
                char *j = join_path(ds->d[k], lit);
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
        path_forms pf;
        path_forms_make(&pf, t, ds->d[k]);
        if (fam == FAM_EDIT && !st->outside[0] && !write_inside(st, &pf))
            snprintf(st->outside, sizeof st->outside,
                     "the command writes %s, outside the workspace (%s)", w, st->cwd);
        for (size_t q = 0; q < st->rs->n; q++) {
            const rule *r = &st->rs->v[q];
            const char *plx, *prs;
            if (!path_rule_in_family(r, fam))
                continue;
            if (r->kind == RK_TOOL ||
                (st_patterns(st, r, &plx, &prs) && patterns_match(plx, prs, &pf, false)))
                note(st, r, r->verdict);
        }
        path_forms_free(&pf);
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
        char *abs = join_path(ds->d[k], t);
        char *f = path_fold(abs);
        for (size_t q = 0; q < st->rs->n; q++) {
            const rule *r = &st->rs->v[q];
            const char *plx, *prs;
            if (r->kind == RK_PATH && path_rule_in_family(r, FAM_EDIT) &&
                st_patterns(st, r, &plx, &prs) &&
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

static void check_cmd_files(bash_state *st, const dirset *ds, const bash_cmd *c)
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
    bool reader = c->argc && in_set(FILE_READERS, bash_cmd_name(c));
    for (size_t k = 1; k < c->argc; k++)
        if (c->argv[k][0] != '-')
            check_file_word(st, ds, c->argv[k], c->argv_flags[k], FAM_READ, reader);
}

/* Records that deny/ask rule r matches; why says how, when the command
 * only could be the one it names (kept for the rule that decides). */
static void hit_rule(bash_state *st, const rule *r, const char *why)
{
    const rule **slot = r->verdict == PERM_DENY ? &st->deny : &st->ask;
    char *buf = r->verdict == PERM_DENY ? st->deny_why : st->ask_why;
    const rule *was = *slot;
    *slot = better(*slot, r);
    if (*slot != was || (was == r && why == NULL))
        snprintf(buf, sizeof st->deny_why, "%s", why ? why : "");
}

/* The rule's text, and when the command only could be what it names, why. */
static void set_match_why(rule_match *m, perm_verdict v, const rule *r, const char *why)
{
    set_match(m, v, r);
    if (why && *why) {
        size_t n = strlen(m->rule);
        snprintf(m->rule + n, sizeof m->rule - n, " (%s)", why);
        /* Cut short, the text may end inside a UTF-8 sequence (the command
         * is the model's text); it goes into JSON, so the piece goes. */
        size_t len = strlen(m->rule);
        if (len + 1 == sizeof m->rule) {
            size_t i = len;
            while (i > 0 && ((unsigned char)m->rule[i - 1] & 0xC0) == 0x80)
                i--;
            if (i > 0 && (unsigned char)m->rule[i - 1] >= 0xC0) {
                unsigned char lead = (unsigned char)m->rule[i - 1];
                size_t want = lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : 2;
                if (len - (i - 1) < want)
                    m->rule[i - 1] = '\0';
            }
        }
    }
}

/* Does text spell the most specific literal part of path rule r's pattern
 * (".env" of Edit(.env), "secrets" of Write(secrets/<anything>), ".pem" of
 * a Read rule for every *.pem)? The longest run without wildcards in the
 * last segment that has one of at least two bytes. */
static bool path_rule_named_in(const rule *r, const char *text)
{
    const char *pat = r->pattern ? r->pattern : "";
    size_t end = strlen(pat);
    while (end > 0) {
        size_t start = end;
        while (start > 0 && pat[start - 1] != '/')
            start--;
        size_t best = 0, best_at = 0;
        for (size_t i = start; i < end;) {
            size_t n = strcspn(pat + i, "*?[]{}/");
            if (i + n > end)
                n = end - i;
            if (n > best) {
                best = n;
                best_at = i;
            }
            i += n ? n : 1;
        }
        if (best >= 2) {
            char tok[256];
            snprintf(tok, sizeof tok, "%.*s", (int)(best < 255 ? best : 255), pat + best_at);
            return strstr(text, tok) != NULL;
        }
        end = start ? start - 1 : 0;
    }
    return false;
}

static void check_bash(const perm_rules *rs, const char *command, const char *cwd,
                       perm_check_detail *out)
{
    bash_state st = {.rs = rs, .cwd = cwd};
    st.cwd_real = perm_resolve_path(".", cwd);
    bool specific_denies = false;   /* Bash(...) deny/ask rules exist */
    const rule *bare_allow = NULL;
    for (size_t q = 0; q < rs->n; q++) {
        const rule *r = &rs->v[q];
        if (path_rule_in_family(r, FAM_EDIT))
            st.has_path_rules[1] = true;
        if (path_rule_in_family(r, FAM_READ))
            st.has_path_rules[0] = true;
        if (r->kind == RK_BASH && r->verdict != PERM_ALLOW)
            specific_denies = true;
        if (r->kind == RK_TOOL && !strcmp(r->tool, "Bash") && r->verdict == PERM_ALLOW)
            bare_allow = better(bare_allow, r);
    }

    bash_cmds *pc = bash_parse(command);
    size_t n = bash_cmds_count(pc);
    const rule **direct = xcalloc(n ? n : 1, sizeof *direct);
    dirset ds = {0};
    ds.d[ds.n++] = xstrdup(cwd);
    for (size_t i = 0; i < n; i++) {
        const bash_cmd *c = bash_cmds_at(pc, i);
        cmd_form full, bare, base;
        form_make(&full, c, true, false);
        form_make(&base, c, false, true);
        form_make(&bare, c, false, false);
        /* Global options of known programs dropped: git -C . push reads
         * as git push for deny and ask rules. */
        prog_norm pn;
        program_options_normalize(bash_cmd_name(c), c->argv, c->argc, c->assign, c->nassign,
                                  &pn);
        const char **nw = xmalloc((pn.n + 1) * sizeof *nw);
        unsigned *nf = xmalloc((pn.n + 1) * sizeof *nf);
        loom_str nj = LOOM_STR_INIT;
        str_puts(&nj, "");
        for (size_t k = 0; k < pn.n; k++) {
            nw[k] = base.w[pn.keep[k]];
            nf[k] = c->argv_flags[pn.keep[k]];
            if (k)
                str_putc(&nj, ' ');
            str_puts(&nj, nw[k]);
        }
        bool more = (c->flags & BASH_CMD_MORE_ARGS) != 0;
        char whybuf[300];
        for (size_t q = 0; q < rs->n; q++) {
            const rule *r = &rs->v[q];
            bool hit;
            const char *why = NULL;
            if (r->kind == RK_TOOL && !strcmp(r->tool, "Bash"))
                hit = true;
            else if (r->kind != RK_BASH)
                continue;
            else if (r->verdict == PERM_ALLOW)
                hit = bash_rule_matches(r, full.w, full.n, full.joined);
            else {
                hit = bash_rule_matches(r, full.w, full.n, full.joined) ||
                      bash_rule_matches(r, bare.w, bare.n, bare.joined) ||
                      bash_rule_matches(r, base.w, base.n, base.joined) ||
                      (pn.changed && bash_rule_matches(r, nw, pn.n, str_cstr(&nj))) ||
                      option_set_matches(r, base.w, base.n) ||
                      (pn.changed && option_set_matches(r, nw, pn.n));
                if (!hit && (could_match(r, base.w, c->argv_flags, base.n, more) ||
                             could_match(r, nw, nf, pn.n, more))) {
                    hit = true;
                    char *t = bash_cmd_text(c);
                    snprintf(whybuf, sizeof whybuf, "%s could be it: %s", t,
                             more ? "its wrapper adds arguments at run time"
                                  : "a word is expanded at run time");
                    free(t);
                    why = whybuf;
                }
                if (!hit && pn.unsure && rule_is_for_program(r, bash_cmd_name(c))) {
                    hit = true;
                    snprintf(whybuf, sizeof whybuf, "%s could be any %s subcommand: %s",
                             bash_cmd_name(c), bash_cmd_name(c), pn.why);
                    why = whybuf;
                }
            }
            if (!hit)
                continue;
            if (r->verdict == PERM_DENY || r->verdict == PERM_ASK)
                hit_rule(&st, r, why);
            else
                direct[i] = better(direct[i], r);
        }
        str_free(&nj);
        free(nw);
        free(nf);
        prog_norm_free(&pn);
        form_free(&full);
        form_free(&bare);
        form_free(&base);
        check_cmd_files(&st, &ds, c);
        track_cd(&ds, c);
    }
    /* Fail closed: a command the parser cannot follow could be any of
     * the commands the deny and ask rules name. */
    if (bash_cmds_uncertain(pc)) {
        char whybuf[300];
        snprintf(whybuf, sizeof whybuf, "the command could run it: cannot parse it for sure, %s",
                 bash_cmds_why(pc) ? bash_cmds_why(pc) : "unknown reason");
        for (size_t q = 0; q < rs->n; q++) {
            const rule *r = &rs->v[q];
            if (r->kind == RK_BASH && r->verdict != PERM_ALLOW)
                hit_rule(&st, r, whybuf);
        }
        /* A path deny/ask rule whose name the unparsed text spells out
         * (`echo 'rm .env' | sh` with Edit(.env) denied) could be what it
         * touches: the rule applies, in every mode. */
        char pwhy[300];
        snprintf(pwhy, sizeof pwhy, "the command names it and cannot be parsed for sure, %s",
                 bash_cmds_why(pc) ? bash_cmds_why(pc) : "unknown reason");
        for (size_t q = 0; q < rs->n; q++) {
            const rule *r = &rs->v[q];
            if (r->kind == RK_PATH && r->verdict != PERM_ALLOW && r->fam != FAM_SELF &&
                path_rule_named_in(r, command))
                hit_rule(&st, r, pwhy);
        }
    }

    out->uncertain = bash_cmds_uncertain(pc);
    if (st.deny) {
        set_match_why(&out->match, PERM_DENY, st.deny, st.deny_why);
    } else if (st.ask) {
        set_match_why(&out->match, PERM_ASK, st.ask, st.ask_why);
    } else {
        /* A command is covered when a rule allows it, when a rule allows
         * the wrapper it came from (sudo X allowed ⇒ X), or when it is a
         * transparent wrapper around an allowed command (timeout 5 X). */
        bool *down = xcalloc(n ? n : 1, sizeof *down), *up = xcalloc(n ? n : 1, sizeof *up);
        for (size_t i = 0; i < n; i++) {
            const bash_cmd *c = bash_cmds_at(pc, i);
            down[i] = direct[i] || (c->parent >= 0 && down[c->parent]);
        }
        for (size_t i = n; i-- > 0;) {
            const bash_cmd *c = bash_cmds_at(pc, i);
            up[i] = up[i] || direct[i];
            if (up[i] && c->parent >= 0 && (c->flags & BASH_CMD_TRANSPARENT))
                up[c->parent] = true;
        }
        long first_uncovered = -1;
        loom_str used = LOOM_STR_INIT;
        const rule *first_rule = NULL;
        bool any = false;
        for (size_t i = 0; i < n; i++) {
            const bash_cmd *c = bash_cmds_at(pc, i);
            bool empty = c->argc == 0 && c->nassign == 0;
            if (!(empty || down[i] || up[i]) && first_uncovered < 0)
                first_uncovered = (long)i;
            if (!direct[i])
                continue;
            any = true;
            if (!first_rule)
                first_rule = direct[i];
            bool seen = false;
            for (size_t j = 0; j < i && !seen; j++)
                seen = direct[j] && !strcmp(direct[j]->text, direct[i]->text);
            if (!seen) {
                if (used.len)
                    str_puts(&used, " + ");
                str_puts(&used, direct[i]->text);
            }
        }
        /* A write outside the workspace is not covered by a rule about the
         * command (only the bare Bash rule, or an Edit/Write allow rule for
         * that path, allows it), the same as for the Write tool. */
        bool outside = st.outside[0] && !bare_allow;
        bool all = n > 0 && first_uncovered < 0 && !out->uncertain && !st.blocked[0] && !outside;
        /* The bare Bash rule allows everything, unparseable text too, as
         * long as no Bash(...) or path deny/ask rule could hide in it. */
        if (!all && bare_allow && !specific_denies && !st.has_path_rules[0] &&
            !st.has_path_rules[1] && n > 0) {
            all = true;
            str_clear(&used);
            str_puts(&used, bare_allow->text);
            first_rule = bare_allow;
        }
        out->match.verdict = all ? PERM_ALLOW : PERM_NONE;
        out->match.source = first_rule ? first_rule->source : RULE_SRC_USER;
        snprintf(out->match.rule, sizeof out->match.rule, "%s", str_cstr(&used));
        out->partial = !all && any;
        if (!all) {
            if (first_uncovered >= 0) {
                char *t = bash_cmd_text(bash_cmds_at(pc, (size_t)first_uncovered));
                snprintf(out->uncovered, sizeof out->uncovered, "%s", t);
                free(t);
            } else if (out->uncertain) {
                snprintf(out->uncovered, sizeof out->uncovered, "cannot parse the command for sure: %s",
                         bash_cmds_why(pc));
            } else if (st.blocked[0]) {
                snprintf(out->uncovered, sizeof out->uncovered, "%s", st.blocked);
            } else if (outside) {
                snprintf(out->uncovered, sizeof out->uncovered, "%s", st.outside);
            } else if (n == 0) {
                snprintf(out->uncovered, sizeof out->uncovered, "no command");
            }
        }
        str_free(&used);
        free(down);
        free(up);
    }
    for (size_t k = 0; k < ds.n; k++)
        free(ds.d[k]);
    st_free(&st);
    free(direct);
    bash_cmds_free(pc);
}

void perm_rules_check_detail(const perm_rules *rs, const char *tool_name, const json_t *input,
                             const char *cwd, perm_check_detail *out)
{
    memset(out, 0, sizeof *out);
    out->match.verdict = PERM_NONE;
    if (!rs || !tool_name)
        return;
    char cwdbuf[PATH_MAX];
    if (!cwd || !*cwd)
        cwd = getcwd(cwdbuf, sizeof cwdbuf) ? cwdbuf : "/";
    if (!strcmp(tool_name, "Bash")) {
        const char *cmd = json_string_value(json_object_get(input, "command"));
        if (cmd) {
            check_bash(rs, cmd, cwd, out);
            return;
        }
    }
    check_plain(rs, tool_name, input, cwd, out);
}

rule_match perm_rules_check(const perm_rules *rs, const char *tool_name, const json_t *input,
                            const char *cwd)
{
    perm_check_detail d;
    perm_rules_check_detail(rs, tool_name, input, cwd, &d);
    return d.match;
}

perm_rules *perm_rule_compile(const char *rule_text, loom_error *err)
{
    perm_rules *one = perm_rules_new();
    if (perm_rules_add(one, PERM_DENY, rule_text, RULE_SRC_USER, err) < 0) {
        perm_rules_free(one);
        return NULL;
    }
    return one;
}

bool perm_rule_matches(const perm_rules *one, const char *tool_name, const json_t *input,
                       const char *cwd)
{
    return perm_rules_check(one, tool_name, input, cwd).verdict == PERM_DENY;
}
