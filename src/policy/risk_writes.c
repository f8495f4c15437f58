/* risk_writes.c — which files a simple shell command writes, deletes or
 * changes the metadata of, as far as Loom knows the program (risk.h has the
 * contract). The permission rules check these paths against Edit/Write
 * deny and ask rules (rules.c), the risk classifier against system and
 * start-up files (risk.c), the tamper guard against settings files.
 *
 * Everything here reads the parsed words only (bash_parse.h); nothing is
 * expanded against the file system. Where a program writes files whose
 * names the words do not give (tar -x without members, patch without a
 * file operand, find -delete), a pseudo-target with a glob (DIR, a slash, a star) is
 * reported, which callers treat as "could be any file there" — fail
 * closed. Brace expansion ({.env,}) is done textually, since the shell
 * does it without looking at the disk.
 *
 * Stateless and reentrant: every call owns its scratch memory.
 */
#include "policy/risk.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/glob.h"
#include "base/str.h"
#include "policy/risk_expand.h"

/* More words than this in one command are not looked at one by one (the
 * command is then an unknown writer: fail closed). */
#define RW_MAX_WORDS 256
/* Brace expansion stops at this many words per word; beyond it the word is
 * reported unexpanded as well (it still holds '{', so it reads as a glob). */
#define RW_MAX_BRACE 64
/* Longer words are not brace-expanded (bounds the work on hostile input);
 * they keep their braces, so they read as globs: vague, never allowed
 * unseen. */
#define RW_MAX_EXPAND_LEN 1024

typedef void (*emit_fn)(void *ctx, const char *path);

/* ---- owned strings --------------------------------------------------- */

typedef struct strlist {
    char **v;
    size_t n, cap;
} strlist;

static void sl_push(strlist *l, char *s)
{
    if (l->n == l->cap) {
        l->cap = l->cap ? 2 * l->cap : 16;
        l->v = xrealloc(l->v, l->cap * sizeof *l->v);
    }
    l->v[l->n++] = s;
}

static void sl_free(strlist *l)
{
    for (size_t k = 0; k < l->n; k++)
        free(l->v[k]);
    free(l->v);
    l->v = NULL;
    l->n = l->cap = 0;
}

static char *join3(const char *a, const char *b, const char *c)
{
    size_t na = strlen(a), nb = strlen(b), nc = strlen(c);
    char *s = xmalloc(na + nb + nc + 1);
    memcpy(s, a, na);
    memcpy(s + na, b, nb);
    memcpy(s + na + nb, c, nc + 1);
    return s;
}

static bool in_set(const char *s, const char *const *set)
{
    for (; *set; set++)
        if (!strcmp(s, *set))
            return true;
    return false;
}

static const char *base_of(const char *p)
{
    size_t n = strlen(p);
    while (n > 1 && p[n - 1] == '/')
        n--;
    const char *s = p + n;
    while (s > p && s[-1] != '/')
        s--;
    return s;
}

/* ---- brace expansion ------------------------------------------------- */

/* The '}' closing the '{' at w[i], or 0; *comma tells whether a top-level
 * ',' lies between (else it may be a sequence {a..b}). */
static size_t brace_close(const char *w, size_t i, bool *comma)
{
    int depth = 0;
    *comma = false;
    for (size_t k = i; w[k]; k++) {
        if (w[k] == '\\' && w[k + 1]) {
            k++;
            continue;
        }
        if (w[k] == '{')
            depth++;
        else if (w[k] == '}' && --depth == 0)
            return k;
        else if (w[k] == ',' && depth == 1)
            *comma = true;
    }
    return 0;
}

static void brace_expand(const char *w, strlist *out, size_t *budget);

/* {a..e} and {1..10}: the alternatives of a sequence, or false. */
static bool brace_sequence(const char *in, size_t len, strlist *alts)
{
    char buf[64];
    if (len >= sizeof buf)
        return false;
    memcpy(buf, in, len);
    buf[len] = '\0';
    char *dots = strstr(buf, "..");
    if (!dots)
        return false;
    *dots = '\0';
    const char *a = buf, *b = dots + 2;   /* a step ({1..9..2}) is ignored: every value counts */
    char *bend;
    char *aend;
    long x = strtol(a, &aend, 10), y = strtol(b, &bend, 10);
    if (*a && !*aend && *b && (!*bend || *bend == '.')) {
        long step = x <= y ? 1 : -1;
        for (long k = x, n = 0; n < RW_MAX_BRACE; k += step, n++) {
            char num[32];
            snprintf(num, sizeof num, "%ld", k);
            sl_push(alts, xstrdup(num));
            if (k == y)
                break;
        }
        return true;
    }
    if (strlen(a) == 1 && (strlen(b) == 1 || b[1] == '.')) {
        int step = a[0] <= b[0] ? 1 : -1;
        for (int k = a[0]; ; k += step) {
            char ch[2] = {(char)k, 0};
            sl_push(alts, xstrdup(ch));
            if (k == b[0])
                break;
        }
        return true;
    }
    return false;
}

static void brace_expand(const char *w, strlist *out, size_t *budget)
{
    for (size_t i = 0; w[i]; i++) {
        if (w[i] == '\\' && w[i + 1]) {
            i++;
            continue;
        }
        if (w[i] != '{' || (i > 0 && w[i - 1] == '$'))
            continue;
        bool comma;
        size_t j = brace_close(w, i, &comma);
        if (!j)
            continue;
        strlist alts = {0};
        if (comma) {
            int depth = 0;
            size_t from = i + 1;
            for (size_t k = i + 1; k <= j; k++) {
                if (w[k] == '\\' && k + 1 < j) {
                    k++;
                    continue;
                }
                if (w[k] == '{')
                    depth++;
                else if (w[k] == '}' && depth > 0)
                    depth--;
                else if ((w[k] == ',' && depth == 0) || k == j) {
                    char *alt = xmalloc(k - from + 1);
                    memcpy(alt, w + from, k - from);
                    alt[k - from] = '\0';
                    sl_push(&alts, alt);
                    from = k + 1;
                }
            }
        } else if (!brace_sequence(w + i + 1, j - i - 1, &alts)) {
            sl_free(&alts);
            continue;
        }
        char *pre = xmalloc(i + 1);
        memcpy(pre, w, i);
        pre[i] = '\0';
        for (size_t a = 0; a < alts.n; a++) {
            if (*budget == 0)
                break;
            char *word = join3(pre, alts.v[a], w + j + 1);
            brace_expand(word, out, budget);
            free(word);
        }
        free(pre);
        sl_free(&alts);
        return;
    }
    if (*budget == 0)
        return;
    (*budget)--;
    if (*w)   /* an empty unquoted word disappears */
        sl_push(out, xstrdup(w));
}

/* Expands one word: into out, or the word itself when nothing expands (or
 * the budget runs out, then also the original, which still reads vague). */
static void expand_word(const char *w, unsigned flags, strlist *out)
{
    if (!(flags & BASH_WORD_GLOB) || !strchr(w, '{') || strlen(w) > RW_MAX_EXPAND_LEN) {
        sl_push(out, xstrdup(w));
        return;
    }
    size_t budget = RW_MAX_BRACE;
    size_t before = out->n;
    brace_expand(w, out, &budget);
    if (budget == 0 || out->n == before)
        sl_push(out, xstrdup(w));
}

/* ---- argument scanning ----------------------------------------------- */

typedef struct argspec {
    const char *short_val;          /* short options taking a value */
    const char *short_tail;         /* short options whose value, if any, is
                                       the rest of the word (sed -i.bak) */
    const char *const *long_val;    /* long options (no "--") taking a value */
} argspec;

typedef struct opt_seen {
    char s;            /* short letter, or 0 */
    const char *l;     /* long name (points into the word), or NULL */
    size_t llen;
    const char *v;     /* value, or NULL */
} opt_seen;

typedef struct args {
    const char *ops[RW_MAX_WORDS];
    size_t nops;
    opt_seen opt[RW_MAX_WORDS];
    size_t nopt;
} args;

/* Is the long option as written (name, len) a spelling of full? GNU
 * getopt takes any unambiguous prefix; a prefix of at least two letters
 * is counted, which can only find more, never fewer. */
static bool long_is(const char *name, size_t len, const char *full)
{
    size_t fl = strlen(full);
    if (len > fl || strncmp(name, full, len))
        return false;
    return len == fl || len >= 2;
}

static bool long_takes_value(const argspec *sp, const char *name, size_t len)
{
    for (const char *const *l = sp->long_val; l && *l; l++)
        if (long_is(name, len, *l))
            return true;
    return false;
}

static void scan_args(const bash_cmd *c, size_t from, const argspec *sp, args *a)
{
    a->nops = a->nopt = 0;
    bool ended = false;
    for (size_t i = from; i < c->argc; i++) {
        const char *w = c->argv[i];
        if (!ended && !strcmp(w, "--")) {
            ended = true;
            continue;
        }
        if (ended || w[0] != '-' || !w[1]) {
            if (a->nops < RW_MAX_WORDS)
                a->ops[a->nops++] = w;
            continue;
        }
        if (w[1] == '-') {
            const char *name = w + 2, *eq = strchr(name, '=');
            size_t len = eq ? (size_t)(eq - name) : strlen(name);
            const char *v = eq ? eq + 1 : NULL;
            if (!eq && long_takes_value(sp, name, len) && i + 1 < c->argc)
                v = c->argv[++i];
            if (a->nopt < RW_MAX_WORDS)
                a->opt[a->nopt++] = (opt_seen){0, name, len, v};
            continue;
        }
        for (size_t k = 1; w[k]; k++) {
            char s = w[k];
            const char *v = NULL;
            bool stop = false;
            if (sp->short_tail && strchr(sp->short_tail, s)) {
                v = w[k + 1] ? w + k + 1 : NULL;
                stop = true;
            } else if (sp->short_val && strchr(sp->short_val, s)) {
                v = w[k + 1] ? w + k + 1 : (i + 1 < c->argc ? c->argv[++i] : NULL);
                stop = true;
            }
            if (a->nopt < RW_MAX_WORDS)
                a->opt[a->nopt++] = (opt_seen){s, NULL, 0, v};
            if (stop)
                break;
        }
    }
}

/* Does option (short s or long full) occur? */
static bool opt_has(const args *a, char s, const char *full)
{
    for (size_t k = 0; k < a->nopt; k++)
        if ((s && a->opt[k].s == s) || (full && a->opt[k].l && long_is(a->opt[k].l, a->opt[k].llen, full)))
            return true;
    return false;
}

/* Calls emit for the value of every occurrence of the option. */
static void opt_values(const args *a, char s, const char *full, emit_fn emit, void *ctx)
{
    for (size_t k = 0; k < a->nopt; k++)
        if (a->opt[k].v && ((s && a->opt[k].s == s) ||
                            (full && a->opt[k].l && long_is(a->opt[k].l, a->opt[k].llen, full))))
            emit(ctx, a->opt[k].v);
}

static const char *opt_last(const args *a, char s, const char *full)
{
    const char *v = NULL;
    for (size_t k = 0; k < a->nopt; k++)
        if (a->opt[k].v && ((s && a->opt[k].s == s) ||
                            (full && a->opt[k].l && long_is(a->opt[k].l, a->opt[k].llen, full))))
            v = a->opt[k].v;
    return v;
}

/* ---- the emitter ----------------------------------------------------- */

typedef struct sink {
    emit_fn fn;
    void *ctx;
} sink;

static bool harmless(const char *t)
{
    return !*t || !strcmp(t, "-") || !strcmp(t, "/dev/null") || !strcmp(t, "/dev/stdout") ||
           !strcmp(t, "/dev/stderr") || !strcmp(t, "/dev/tty") || !strncmp(t, "/dev/fd/", 8);
}

static void put(void *ctx, const char *path)
{
    sink *s = ctx;
    /* "{}" is find -exec's placeholder: find itself reports what it hands over. */
    if (!harmless(path) && strcmp(path, "{}"))
        s->fn(s->ctx, path);
}

/* dir/name for each name (a directory destination of cp/mv …). */
static void put_in(sink *s, const char *dir, const char *name)
{
    const char *b = base_of(name);
    if (!*dir || !*b || !strcmp(b, "/"))
        return;
    char *p = join3(dir, (dir[0] && dir[strlen(dir) - 1] == '/') ? "" : "/", b);
    put(s, p);
    free(p);
}

static void put_ops(sink *s, const args *a, size_t from)
{
    for (size_t k = from; k < a->nops; k++)
        put(s, a->ops[k]);
}

/* "Any file under dir": the pseudo-target for writers whose file names
 * the command line does not give. "**" as the target's last segment means
 * any depth, dotfiles included (risk_target_could_match), unlike the
 * shell's own "**", which without globstar is "*". */
static void put_any_in(sink *s, const char *dir)
{
    const char *d = dir && *dir ? dir : ".";
    char *p = join3(d, d[strlen(d) - 1] == '/' ? "" : "/", "**");
    put(s, p);
    free(p);
}

/* ---- per program ------------------------------------------------------ */

static const char *const NO_LONG[] = {NULL};

/* rm, unlink, rmdir, shred, truncate, touch, mkdir, mkfifo, mknod, mktemp:
 * every operand is written or deleted. */
static bool w_operands(const bash_cmd *c, const char *name, sink *s)
{
    static const char *const SHRED_L[] = {"iterations", "size", "random-source", NULL};
    static const char *const TRUNC_L[] = {"size", "reference", NULL};
    static const char *const TOUCH_L[] = {"date", "reference", "time", NULL};
    static const char *const MODE_L[] = {"mode", "context", NULL};
    static const char *const MKTEMP_L[] = {"tmpdir", "suffix", NULL};
    argspec sp = {"", NULL, NO_LONG};
    if (!strcmp(name, "shred"))
        sp = (argspec){"ns", NULL, SHRED_L};
    else if (!strcmp(name, "truncate"))
        sp = (argspec){"sr", NULL, TRUNC_L};
    else if (!strcmp(name, "touch"))
        sp = (argspec){"drt", NULL, TOUCH_L};
    else if (!strcmp(name, "mkdir") || !strcmp(name, "mkfifo") || !strcmp(name, "mknod"))
        sp = (argspec){"m", NULL, MODE_L};
    else if (!strcmp(name, "mktemp"))
        sp = (argspec){"p", NULL, MKTEMP_L};
    else if (strcmp(name, "rm") && strcmp(name, "unlink") && strcmp(name, "rmdir") &&
             strcmp(name, "srm"))
        return false;
    args a;
    scan_args(c, 1, &sp, &a);
    put_ops(s, &a, 0);
    if (!strcmp(name, "mktemp")) {
        const char *dir = opt_last(&a, 'p', "tmpdir");
        for (size_t k = 0; dir && k < a.nops; k++)
            put_in(s, dir, a.ops[k]);
    }
    return true;
}

/* chmod MODE FILE…, chown OWNER FILE…, chgrp GROUP FILE…: the metadata of
 * the files changes. */
static bool w_attrs(const bash_cmd *c, const char *name, sink *s)
{
    static const char *const L[] = {"reference", "from", NULL};
    if (strcmp(name, "chmod") && strcmp(name, "chown") && strcmp(name, "chgrp") &&
        strcmp(name, "chattr") && strcmp(name, "setfacl") && strcmp(name, "setfattr"))
        return false;
    args a;
    scan_args(c, 1, &(argspec){"", NULL, L}, &a);
    bool mode_given = !opt_has(&a, 0, "reference");
    /* chmod -w f: the mode was read as an option cluster. */
    for (size_t i = 1; i < c->argc && !strcmp(name, "chmod"); i++) {
        const char *w = c->argv[i];
        if (w[0] == '-' && w[1] && strspn(w + 1, "rwxXst") == strlen(w + 1))
            mode_given = false;
    }
    if (!strcmp(name, "chattr") || !strcmp(name, "setfacl") || !strcmp(name, "setfattr"))
        mode_given = false;   /* their options carry the change; all operands are files */
    put_ops(s, &a, mode_given ? 1 : 0);
    return true;
}

/* cp, mv, ln, install, rsync, scp: the destination, DEST/name of each
 * source (DEST may be a directory), -t DIR; mv also deletes its sources. */
static bool w_copy(const bash_cmd *c, const char *name, sink *s)
{
    static const char *const CP_L[] = {"target-directory", "suffix", NULL};
    static const char *const INSTALL_L[] = {"mode", "owner", "group", "target-directory",
                                            "suffix", "strip-program", NULL};
    static const char *const RSYNC_L[] = {
        "rsh", "temp-dir", "filter", "exclude", "include", "exclude-from", "include-from",
        "files-from", "partial-dir", "backup-dir", "suffix", "compare-dest", "copy-dest",
        "link-dest", "log-file", "password-file", "rsync-path", "chmod", "chown", "out-format",
        "block-size", "max-size", "min-size", "timeout", "bwlimit", "port", "sockopts", "info",
        "debug", "usermap", "groupmap", "compress-level", "skip-compress", "modify-window",
        "max-delete", "protocol", "iconv", "checksum-choice", "write-batch", "only-write-batch",
        "read-batch", "log-file-format", "contimeout", "address", "outbuf", "remote-option",
        NULL};
    argspec sp;
    if (!strcmp(name, "cp") || !strcmp(name, "mv") || !strcmp(name, "ln"))
        sp = (argspec){"tS", NULL, CP_L};
    else if (!strcmp(name, "install"))
        sp = (argspec){"mogtS", NULL, INSTALL_L};
    else if (!strcmp(name, "rsync"))
        sp = (argspec){"eTfBM", NULL, RSYNC_L};
    else if (!strcmp(name, "scp"))
        sp = (argspec){"cFiJloPSDX", NULL, NO_LONG};
    else
        return false;
    args a;
    scan_args(c, 1, &sp, &a);
    if (!strcmp(name, "rsync")) {
        opt_values(&a, 0, "log-file", put, s);
        opt_values(&a, 0, "write-batch", put, s);
        opt_values(&a, 0, "only-write-batch", put, s);
    }
    bool deletes_sources = !strcmp(name, "mv") ||
                           (!strcmp(name, "rsync") && (opt_has(&a, 0, "remove-source-files") ||
                                                       opt_has(&a, 0, "remove-sent-files")));
    if (!strcmp(name, "install") && opt_has(&a, 'd', "directory")) {
        put_ops(s, &a, 0);
        return true;
    }
    /* A link to a file is a way to write it (a hard link is the file; a
     * later write through a symlink made in the same command line cannot
     * be resolved when it is checked): ln's sources count as written, and
     * cp's with -l/-s. */
    bool links = !strcmp(name, "ln") ||
                 (!strcmp(name, "cp") && (opt_has(&a, 'l', "link") ||
                                          opt_has(&a, 's', "symbolic-link")));
    /* A recursive copy writes whatever the source tree holds: any file
     * under the destination. */
    bool tree = (!strcmp(name, "cp") && (opt_has(&a, 'r', "recursive") ||
                                         opt_has(&a, 'R', NULL) || opt_has(&a, 'a', "archive"))) ||
                (!strcmp(name, "rsync") && (opt_has(&a, 'r', "recursive") ||
                                            opt_has(&a, 'a', "archive"))) ||
                (!strcmp(name, "scp") && opt_has(&a, 'r', NULL));
    const char *tdir = opt_last(&a, 't', "target-directory");
    if (!strcmp(name, "rsync") || !strcmp(name, "scp"))
        tdir = NULL;   /* their -t/-T mean other things */
    if (tdir) {
        opt_values(&a, 't', "target-directory", put, s);
        for (size_t k = 0; k < a.nops; k++)
            put_in(s, tdir, a.ops[k]);
        if (deletes_sources || links)
            put_ops(s, &a, 0);
        if (tree)
            put_any_in(s, tdir);
        return true;
    }
    if (a.nops == 1 && !strcmp(name, "ln")) {
        put(s, base_of(a.ops[0]));   /* ln -s /x/y makes ./y */
        put(s, a.ops[0]);
        return true;
    }
    if (a.nops >= 2) {
        const char *dest = a.ops[a.nops - 1];
        put(s, dest);
        for (size_t k = 0; k + 1 < a.nops; k++)
            put_in(s, dest, a.ops[k]);
        if (deletes_sources || links)
            for (size_t k = 0; k + 1 < a.nops; k++)
                put(s, a.ops[k]);
        if (tree)
            put_any_in(s, dest);
    }
    return true;
}

/* sort -o FILE, uniq IN OUT, tee FILE…, dd of=FILE. */
static bool w_filters(const bash_cmd *c, const char *name, sink *s)
{
    static const char *const SORT_L[] = {
        "key", "output", "field-separator", "temporary-directory", "buffer-size", "files0-from",
        "compress-program", "parallel", "batch-size", "random-source", NULL};
    static const char *const UNIQ_L[] = {"skip-fields", "skip-chars", "check-chars", NULL};
    static const char *const TEE_L[] = {NULL};
    args a;
    if (!strcmp(name, "sort")) {
        scan_args(c, 1, &(argspec){"kotTS", NULL, SORT_L}, &a);
        opt_values(&a, 'o', "output", put, s);
        return true;
    }
    if (!strcmp(name, "uniq")) {
        scan_args(c, 1, &(argspec){"fsw", NULL, UNIQ_L}, &a);
        put_ops(s, &a, 1);
        return true;
    }
    if (!strcmp(name, "tee")) {
        scan_args(c, 1, &(argspec){"", NULL, TEE_L}, &a);
        put_ops(s, &a, 0);
        return true;
    }
    if (!strcmp(name, "dd")) {
        for (size_t i = 1; i < c->argc; i++)
            if (!strncmp(c->argv[i], "of=", 3))
                put(s, c->argv[i] + 3);
        return true;
    }
    return false;
}

/* The file a sed w/W command or s///w flag writes: the rest of the line. */
static void sed_put_rest(sink *s, const char *p, const char *end)
{
    while (p < end && (*p == ' ' || *p == '\t'))
        p++;
    if (p < end) {
        char *f = xmalloc((size_t)(end - p) + 1);
        memcpy(f, p, (size_t)(end - p));
        f[end - p] = '\0';
        put(s, f);
        free(f);
    }
}

/* Skips a delimited part (regex or replacement) starting after the
 * delimiter; returns the position after the closing delimiter. */
static const char *sed_skip_part(const char *p, const char *end, char delim)
{
    while (p < end && *p != delim) {
        if (*p == '\\' && p + 1 < end)
            p++;
        p++;
    }
    return p < end ? p + 1 : end;
}

/* Walks a sed script for the commands that write files (w, W, s///w) and
 * the ones that run commands (e, s///e). Returns false when it runs
 * commands: then nothing is known about what it writes. */
static bool sed_script(const char *script, sink *s)
{
    const char *p = script, *end = script + strlen(script);
    while (p < end) {
        /* one command: address(es), optional '!', the command letter */
        while (p < end && strchr(" \t\n;{}!", *p))
            p++;
        if (p >= end)
            break;
        for (int addr = 0; addr < 2 && p < end; addr++) {
            if (*p == '/' || *p == '\\') {
                char d = *p == '\\' && p + 1 < end ? *++p : '/';
                p = sed_skip_part(p + 1, end, d);
                while (p < end && (*p == 'I' || *p == 'M'))
                    p++;
            } else {
                while (p < end && strchr("0123456789$~+", *p))
                    p++;
            }
            while (p < end && (*p == ' ' || *p == '\t'))
                p++;
            if (p < end && *p == ',')
                p++;
            else
                break;
        }
        while (p < end && (*p == ' ' || *p == '\t' || *p == '!'))
            p++;
        if (p >= end)
            break;
        char cmd = *p++;
        const char *eol = memchr(p, '\n', (size_t)(end - p));
        if (!eol)
            eol = end;
        switch (cmd) {
        case 'w':
        case 'W':
            sed_put_rest(s, p, eol);
            p = eol;
            break;
        case 'e':
            return false;
        case 's':
        case 'y': {
            if (p >= end)
                return true;
            char d = *p++;
            p = sed_skip_part(p, end, d);
            p = sed_skip_part(p, end, d);
            if (cmd == 's')
                while (p < end && *p != '\n' && *p != ';' && *p != '}') {
                    if (*p == 'e')
                        return false;
                    if (*p == 'w') {
                        sed_put_rest(s, p + 1, eol);
                        p = eol;
                        break;
                    }
                    p++;
                }
            break;
        }
        case 'a':
        case 'i':
        case 'c':
        case 'r':
        case 'R':
        case 'b':
        case 't':
        case 'T':
        case ':':
            /* text, a file read, or a label: the rest of the line (GNU
             * ends labels at ';' too, which only matters for reading on) */
            if (cmd == 'b' || cmd == 't' || cmd == 'T') {
                const char *semi = memchr(p, ';', (size_t)(eol - p));
                p = semi ? semi : eol;
            } else {
                p = eol;
            }
            break;
        default:
            break;
        }
    }
    return true;
}

/* sed: -i edits the file operands; w/W commands write files; -f hides the
 * script and e runs commands (both: not known). */
static bool w_sed(const bash_cmd *c, sink *s, bool *known)
{
    static const char *const L[] = {"expression", "file", "line-length", NULL};
    args a;
    scan_args(c, 1, &(argspec){"efl", "i", L}, &a);
    bool inplace = opt_has(&a, 'i', "in-place");
    bool given = false;
    for (size_t k = 0; k < a.nopt; k++) {
        const opt_seen *o = &a.opt[k];
        bool e = o->s == 'e' || (o->l && long_is(o->l, o->llen, "expression"));
        bool f = o->s == 'f' || (o->l && long_is(o->l, o->llen, "file"));
        if (e || f)
            given = true;
        if (f)
            *known = false;
        if (e && o->v && !sed_script(o->v, s))
            *known = false;
    }
    if (!given && a.nops && !sed_script(a.ops[0], s))
        *known = false;
    if (inplace)
        put_ops(s, &a, given ? 0 : 1);
    return true;
}

/* perl -i / -pi: the file operands. (perl is still an interpreter: its
 * code may write anything, see risk_unknown_write_candidates.) */
static bool w_perl(const bash_cmd *c, sink *s)
{
    static const char *const L[] = {NULL};
    args a;
    scan_args(c, 1, &(argspec){"eEI", "i0lMmxFCdD", L}, &a);
    if (!opt_has(&a, 'i', NULL))
        return true;
    bool code = opt_has(&a, 'e', NULL) || opt_has(&a, 'E', NULL);
    put_ops(s, &a, code ? 0 : 1);
    return true;
}

/* The file name curl -O / wget take from a URL. */
static void put_url_name(sink *s, const char *dir, const char *url)
{
    const char *p = strstr(url, "://");
    p = p ? p + 3 : url;
    p = strchr(p, '/');
    if (!p)
        return;
    size_t n = strcspn(p, "?#");
    char *path = xmalloc(n + 1);
    memcpy(path, p, n);
    path[n] = '\0';
    const char *b = base_of(path);
    if (*b && strcmp(b, "/")) {
        if (dir)
            put_in(s, dir, b);
        else
            put(s, b);
    }
    free(path);
}

static bool w_download(const bash_cmd *c, const char *name, sink *s, bool *known)
{
    static const char *const CURL_L[] = {
        "output", "dump-header", "cookie-jar", "trace", "trace-ascii", "stderr", "etag-save",
        "output-dir", "libcurl", "hsts", "alt-svc", "config", "data", "data-raw", "data-binary",
        "data-ascii", "data-urlencode", "header", "user-agent", "url", "request", "user",
        "proxy", "referer", "cookie", "form", "form-string", "upload-file", "write-out",
        "max-time", "connect-timeout", "range", "cert", "key", "cacert", "capath", "resolve",
        "connect-to", "retry", "limit-rate", "continue-at", "time-cond", "quote", "proxy-user",
        "telnet-option", "ftp-port", "speed-limit", "speed-time", "interface", "max-filesize",
        "oauth2-bearer", "json", NULL};
    static const char *const WGET_L[] = {
        "output-file", "append-output", "output-document", "directory-prefix", "input-file",
        "base", "execute", "timeout", "tries", "wait", "quota", "user-agent", "level",
        "domains", "accept", "reject", "exclude-directories", "include-directories", "header",
        "save-cookies", "load-cookies", "warc-file", "post-data", "post-file", "user",
        "password", "referer", "config", "rejected-log", NULL};
    args a;
    if (!strcmp(name, "curl")) {
        scan_args(c, 1, &(argspec){"odDcbCeEFHKTuUxXArwYyzmQtP", NULL, CURL_L}, &a);
        opt_values(&a, 'o', "output", put, s);
        opt_values(&a, 'D', "dump-header", put, s);
        opt_values(&a, 'c', "cookie-jar", put, s);
        opt_values(&a, 0, "trace", put, s);
        opt_values(&a, 0, "trace-ascii", put, s);
        opt_values(&a, 0, "stderr", put, s);
        opt_values(&a, 0, "etag-save", put, s);
        opt_values(&a, 0, "libcurl", put, s);
        opt_values(&a, 0, "hsts", put, s);
        opt_values(&a, 0, "alt-svc", put, s);
        const char *dir = opt_last(&a, 0, "output-dir");
        if (opt_has(&a, 'J', "remote-header-name"))
            put_any_in(s, dir);
        if (opt_has(&a, 'O', "remote-name") || opt_has(&a, 0, "remote-name-all")) {
            for (size_t k = 0; k < a.nops; k++)
                put_url_name(s, dir, a.ops[k]);
            opt_values(&a, 0, "url", put, s);
        }
        if (opt_has(&a, 'K', "config"))
            *known = false;   /* a config file can name outputs */
        return true;
    }
    if (!strcmp(name, "wget")) {
        scan_args(c, 1, &(argspec){"oaOPiBeTtwQUlDAXRIh", NULL, WGET_L}, &a);
        opt_values(&a, 'o', "output-file", put, s);
        opt_values(&a, 'a', "append-output", put, s);
        opt_values(&a, 0, "save-cookies", put, s);
        opt_values(&a, 0, "rejected-log", put, s);
        bool named = false;
        for (size_t k = 0; k < a.nopt; k++) {
            const opt_seen *o = &a.opt[k];
            if (o->v && (o->s == 'O' || (o->l && long_is(o->l, o->llen, "output-document")))) {
                put(s, o->v);
                named = true;
            }
        }
        const char *dir = opt_last(&a, 'P', "directory-prefix");
        if (!named) {
            for (size_t k = 0; k < a.nops; k++)
                put_url_name(s, dir, a.ops[k]);
            if (opt_has(&a, 'r', "recursive") || opt_has(&a, 'm', "mirror") ||
                opt_has(&a, 'i', "input-file") || opt_has(&a, 'p', "page-requisites"))
                put_any_in(s, dir);
        }
        if (opt_has(&a, 'e', "execute") || opt_has(&a, 0, "config"))
            *known = false;
        return true;
    }
    return false;
}

/* patch [FILE [PATCHFILE]]: FILE, -o OUT, -r REJECTS; without FILE the
 * patch names its targets (any file). */
static bool w_patch(const bash_cmd *c, sink *s)
{
    static const char *const L[] = {"input", "output", "strip", "directory", "ifdef", "fuzz",
                                    "reject-file", "prefix", "suffix", "version-control",
                                    "basename-prefix", "get", "quoting-style", "reject-format",
                                    NULL};
    args a;
    scan_args(c, 1, &(argspec){"iopdDFrBzVYg", NULL, L}, &a);
    if (opt_has(&a, 0, "dry-run"))
        return true;
    opt_values(&a, 'o', "output", put, s);
    opt_values(&a, 'r', "reject-file", put, s);
    if (a.nops)
        put(s, a.ops[0]);
    else if (!opt_has(&a, 'o', "output"))
        put_any_in(s, opt_last(&a, 'd', "directory"));
    return true;
}

/* tar: creating writes -f FILE; extracting writes the members (or any
 * file) under -C DIR. The old "tar xf a.tar" spelling is rewritten to
 * dashed options first. */
static bool w_tar(const bash_cmd *c, sink *s, bool *known)
{
    static const char *const L[] = {
        "file", "directory", "blocking-factor", "files-from", "exclude-from", "newer",
        "starting-file", "listed-incremental", "label", "tape-length", "format",
        "use-compress-program", "to-command", "transform", "xform", "exclude", "owner", "group",
        "mode", "mtime", "info-script", "new-volume-script", "rsh-command", "suffix",
        "backup", "newer-mtime", "after-date", "occurrence", "strip-components", NULL};
    const char *vals = "fCbTXNKgVLHI";
    bash_cmd e = *c;
    const char **argv = NULL;
    char *letters = NULL;
    if (c->argc > 1 && c->argv[1][0] && c->argv[1][0] != '-') {
        /* old style: each value letter takes the next word, in order */
        const char *b = c->argv[1];
        size_t bl = strlen(b);
        argv = xcalloc(2 * bl + c->argc + 2, sizeof *argv);
        letters = xmalloc(3 * bl + 1);
        size_t n = 0, next = 2;
        argv[n++] = c->argv[0];
        for (size_t k = 0; k < bl; k++) {
            char *lp = letters + 3 * k;
            lp[0] = '-';
            lp[1] = b[k];
            lp[2] = '\0';
            argv[n++] = lp;
            if (strchr(vals, b[k]) && next < c->argc)
                argv[n++] = c->argv[next++];
        }
        for (; next < c->argc; next++)
            argv[n++] = c->argv[next];
        argv[n] = NULL;
        e.argc = n;
        e.argv = argv;
    }
    args a;
    scan_args(&e, 1, &(argspec){vals, NULL, L}, &a);
    bool create = opt_has(&a, 'c', "create") || opt_has(&a, 'r', "append") ||
                  opt_has(&a, 'u', "update") || opt_has(&a, 'A', "catenate") ||
                  opt_has(&a, 0, "concatenate") || opt_has(&a, 0, "delete");
    bool extract = opt_has(&a, 'x', "extract") || opt_has(&a, 0, "get");
    if (create)
        opt_values(&a, 'f', "file", put, s);
    if (create && opt_has(&a, 0, "remove-files")) {
        /* --remove-files deletes what it archived: each member, and
         * everything under a directory member */
        const char *dir = opt_last(&a, 'C', "directory");
        for (size_t k = 0; k < a.nops; k++) {
            const char *m = a.ops[k];
            char *p = dir && m[0] != '/' ? join3(dir, "/", m) : xstrdup(m);
            put(s, p);
            put_any_in(s, p);
            free(p);
        }
    }
    if (extract) {
        const char *dir = opt_last(&a, 'C', "directory");
        if (a.nops)
            for (size_t k = 0; k < a.nops; k++)
                put_in(s, dir ? dir : ".", a.ops[k]);
        else
            put_any_in(s, dir);
    }
    if (opt_has(&a, 0, "to-command") || opt_has(&a, 'I', "use-compress-program") ||
        opt_has(&a, 0, "info-script") || opt_has(&a, 0, "new-volume-script"))
        *known = false;
    free(argv);
    free(letters);
    return true;
}

static bool w_unzip(const bash_cmd *c, const char *name, sink *s)
{
    args a;
    if (!strcmp(name, "unzip")) {
        scan_args(c, 1, &(argspec){"dxP", NULL, NO_LONG}, &a);
        if (opt_has(&a, 'l', NULL) || opt_has(&a, 't', NULL) || opt_has(&a, 'p', NULL) ||
            opt_has(&a, 'v', NULL) || opt_has(&a, 'Z', NULL))
            return true;
        const char *dir = opt_last(&a, 'd', NULL);
        if (a.nops > 1)
            for (size_t k = 1; k < a.nops; k++)
                put_in(s, dir ? dir : ".", a.ops[k]);
        else
            put_any_in(s, dir);
        return true;
    }
    static const char *const COMP[] = {"gzip", "gunzip", "bzip2", "bunzip2", "xz", "unxz",
                                       "lzma", "unlzma", "zstd", "unzstd", "compress",
                                       "uncompress", "lzip", "lz4", NULL};
    if (!in_set(name, COMP))
        return false;
    static const char *const L[] = {"suffix", NULL};
    scan_args(c, 1, &(argspec){"S", NULL, L}, &a);
    if (opt_has(&a, 'c', "stdout") || opt_has(&a, 0, "to-stdout") || opt_has(&a, 'l', "list") ||
        opt_has(&a, 't', "test"))
        return true;
    static const char *const SUFFIX[] = {".gz", ".bz2", ".xz", ".lzma", ".zst", ".Z", ".lz",
                                         ".lz4", ".tgz", NULL};
    for (size_t k = 0; k < a.nops; k++) {
        put(s, a.ops[k]);   /* replaced by its (un)compressed form */
        size_t n = strlen(a.ops[k]);
        for (size_t q = 0; SUFFIX[q]; q++) {
            size_t m = strlen(SUFFIX[q]);
            if (n > m && !strcmp(a.ops[k] + n - m, SUFFIX[q])) {
                char *stem = xstrdup(a.ops[k]);
                stem[n - m] = '\0';
                put(s, stem);
                free(stem);
            }
        }
        if (!strcmp(name, "lz4") && k == 1)
            break;
    }
    return true;
}

/* Commands find hands its files to that only read them. */
static bool find_exec_reads(const bash_cmd *c, size_t i)
{
    static const char *const READERS[] = {
        "cat", "head", "tail", "grep", "egrep", "fgrep", "rg", "wc", "ls", "stat", "file",
        "md5sum", "sha1sum", "sha256sum", "sha512sum", "cksum", "echo", "printf", "basename",
        "dirname", "realpath", "readlink", "du", "test", "[", "diff", "cmp", "od", "xxd",
        "strings", "nl", "less", "more", NULL};
    return i < c->argc && in_set(base_of(c->argv[i]), READERS);
}

/* find: -fprint/-fprint0/-fls/-fprintf FILE; -delete and -exec/-ok of a
 * command that may change what it is given: the files found (ROOT/NAME for
 * each -name, or any file under each root). */
static bool w_find(const bash_cmd *c, sink *s)
{
    size_t i = 1;
    while (i < c->argc && (!strcmp(c->argv[i], "-H") || !strcmp(c->argv[i], "-L") ||
                           !strcmp(c->argv[i], "-P") || !strncmp(c->argv[i], "-O", 2) ||
                           !strcmp(c->argv[i], "-D"))) {
        if (!strcmp(c->argv[i], "-D"))
            i++;
        i++;
    }
    size_t root0 = i;
    while (i < c->argc && c->argv[i][0] != '-' && strcmp(c->argv[i], "(") &&
           strcmp(c->argv[i], "!"))
        i++;
    size_t root1 = i;
    bool changes = false;
    const char *names[32];
    size_t nnames = 0;
    for (; i < c->argc; i++) {
        const char *w = c->argv[i];
        if ((!strcmp(w, "-fprint") || !strcmp(w, "-fprint0") || !strcmp(w, "-fls") ||
             !strcmp(w, "-fprintf")) && i + 1 < c->argc)
            put(s, c->argv[++i]);
        else if (!strcmp(w, "-delete"))
            changes = true;
        else if (!strcmp(w, "-exec") || !strcmp(w, "-execdir") || !strcmp(w, "-ok") ||
                 !strcmp(w, "-okdir")) {
            if (!find_exec_reads(c, i + 1))
                changes = true;
        } else if ((!strcmp(w, "-name") || !strcmp(w, "-iname") || !strcmp(w, "-path") ||
                    !strcmp(w, "-ipath") || !strcmp(w, "-wholename")) && i + 1 < c->argc) {
            if (nnames < 32)
                names[nnames++] = c->argv[i + 1];
            i++;
        }
    }
    if (!changes)
        return true;
    static const char *const DOT[] = {".", NULL};
    const char *const *roots = root1 > root0 ? (const char *const *)c->argv + root0 : DOT;
    size_t nroots = root1 > root0 ? root1 - root0 : 1;
    for (size_t r = 0; r < nroots; r++) {
        put(s, roots[r]);
        if (!nnames) {
            put_any_in(s, roots[r]);
            continue;
        }
        for (size_t k = 0; k < nnames; k++) {
            const char *nm = names[k];
            if (!strncmp(nm, "./", 2) || nm[0] == '/' || nm[0] == '*') {
                put(s, nm);   /* -path patterns hold the root already */
                continue;
            }
            put_in(s, roots[r], nm);
            char *deep = join3(roots[r], "/**/", nm);
            put(s, deep);
            free(deep);
        }
    }
    return true;
}

/* git: the few subcommands whose file operands are written by name. The
 * rest of git is an unknown writer (risk_unknown_write_candidates). */
/* git subcommands that change neither the repository nor the work tree. */
static bool git_sub_reads(const char *sub)
{
    static const char *const READ[] = {
        "status", "log", "diff", "show", "blame", "rev-parse", "ls-files", "ls-tree",
        "describe", "shortlog", "grep", "cat-file", "rev-list", "merge-base", "name-rev",
        "whatchanged", "count-objects", "version", "show-ref", "for-each-ref", "check-ignore",
        "help", NULL};
    return in_set(sub, READ);
}

static void w_git(const bash_cmd *c, sink *s)
{
    size_t i = 1;
    const char *dir_c = NULL, *git_dir = NULL, *work_tree = NULL;
    while (i < c->argc && c->argv[i][0] == '-') {
        const char *a = c->argv[i];
        const char *next = i + 1 < c->argc ? c->argv[i + 1] : NULL;
        if (!strcmp(a, "-C"))
            dir_c = next;
        else if (!strcmp(a, "--git-dir"))
            git_dir = next;
        else if (!strcmp(a, "--work-tree"))
            work_tree = next;
        else if (!strncmp(a, "--git-dir=", 10))
            git_dir = a + 10;
        else if (!strncmp(a, "--work-tree=", 12))
            work_tree = a + 12;
        else if (!strncmp(a, "-C", 2) && a[2])
            dir_c = a + 2;
        if (!strcmp(a, "-C") || !strcmp(a, "-c") || !strcmp(a, "--git-dir") ||
            !strcmp(a, "--work-tree") || !strcmp(a, "--namespace") ||
            !strcmp(a, "--config-env") || !strcmp(a, "--super-prefix"))
            i++;
        i++;
    }
    if (i >= c->argc)
        return;
    const char *sub = c->argv[i];
    /* Where a changing subcommand writes, when the options move it: the
     * repository of -C DIR (DIR/.git) or --git-dir, the --work-tree. Named
     * as the directory itself, so that a write outside the workspace is
     * seen without every file under it meeting every deny rule. */
    if (!git_sub_reads(sub)) {
        if (dir_c) {
            char *g = join3(dir_c, "/", ".git");
            put(s, g);
            free(g);
        }
        if (git_dir)
            put(s, git_dir);
        if (work_tree)
            put(s, work_tree);
    }
    /* init [DIR], clone URL [DIR], worktree add DIR, archive -o F,
     * bundle create F: the place they create. */
    size_t nops = 0;
    const char *ops[3] = {NULL, NULL, NULL};
    for (size_t k = i + 1; k < c->argc; k++) {
        const char *a = c->argv[k];
        if (a[0] == '-' && a[1]) {
            if (!strcmp(sub, "archive") && (!strcmp(a, "-o") || !strcmp(a, "--output")) &&
                k + 1 < c->argc)
                put(s, c->argv[++k]);
            else if (!strcmp(sub, "archive") && !strncmp(a, "--output=", 9))
                put(s, a + 9);
            else if ((!strcmp(sub, "init") || !strcmp(sub, "clone")) &&
                     !strncmp(a, "--separate-git-dir=", 19))
                put(s, a + 19);
            else if (!strcmp(sub, "clone") &&
                     (!strcmp(a, "-o") || !strcmp(a, "-b") || !strcmp(a, "--origin") ||
                      !strcmp(a, "--branch") || !strcmp(a, "--depth") || !strcmp(a, "-u") ||
                      !strcmp(a, "--upload-pack") || !strcmp(a, "--reference") ||
                      !strcmp(a, "-c") || !strcmp(a, "--config") || !strcmp(a, "-j") ||
                      !strcmp(a, "--template") || !strcmp(a, "--separate-git-dir")))
                k++;
            continue;
        }
        if (nops < 3)
            ops[nops] = a;
        nops++;
    }
    if (!strcmp(sub, "init") && nops >= 1)
        put(s, ops[0]);
    else if (!strcmp(sub, "clone") && nops >= 2)
        put(s, ops[1]);
    else if (!strcmp(sub, "worktree") && nops >= 2 && !strcmp(ops[0], "add"))
        put(s, ops[1]);
    else if (!strcmp(sub, "bundle") && nops >= 2 && !strcmp(ops[0], "create"))
        put(s, ops[1]);
    /* Files git writes through options: diff/log/show/format-patch
     * --output F, format-patch -o DIR, config -f/--file F, --global
     * (~/.gitconfig), --system (/etc/gitconfig). */
    bool config = !strcmp(sub, "config");
    for (size_t k = i + 1; k < c->argc; k++) {
        const char *a = c->argv[k];
        if (!strcmp(a, "--"))
            break;
        if (!strncmp(a, "--output=", 9))
            put(s, a + 9);
        else if (!strcmp(a, "--output") && k + 1 < c->argc)
            put(s, c->argv[++k]);
        else if (!strcmp(sub, "format-patch") && !strncmp(a, "--output-directory=", 19))
            put_any_in(s, a + 19);
        else if (!strcmp(sub, "format-patch") &&
                 (!strcmp(a, "-o") || !strcmp(a, "--output-directory")) && k + 1 < c->argc)
            put_any_in(s, c->argv[++k]);
        else if (config && !strncmp(a, "--file=", 7))
            put(s, a + 7);
        else if (config && (!strcmp(a, "-f") || !strcmp(a, "--file")) && k + 1 < c->argc)
            put(s, c->argv[++k]);
        else if (config && !strncmp(a, "-f", 2) && a[2])
            put(s, a + 2);
        else if (config && !strcmp(a, "--global"))
            put(s, "~/.gitconfig");
        else if (config && !strcmp(a, "--system"))
            put(s, "/etc/gitconfig");
    }
    if (!strcmp(sub, "checkout") || !strcmp(sub, "restore")) {
        bool after = false;
        for (size_t k = i + 1; k < c->argc; k++) {
            if (after)
                put(s, c->argv[k]);
            else if (!strcmp(c->argv[k], "--"))
                after = true;
        }
    } else if (!strcmp(sub, "clean")) {
        bool dry = false, force = false;
        for (size_t k = i + 1; k < c->argc; k++) {
            const char *a = c->argv[k];
            if (a[0] == '-' && a[1] != '-' && strchr(a, 'n'))
                dry = true;
            if (a[0] == '-' && a[1] != '-' && strchr(a, 'f'))
                force = true;
            if (!strcmp(a, "--dry-run"))
                dry = true;
            if (!strcmp(a, "--force"))
                force = true;
        }
        if (force && !dry)
            put_any_in(s, ".");
    } else if (!strcmp(sub, "apply") || !strcmp(sub, "am")) {
        bool check = false;
        for (size_t k = i + 1; k < c->argc; k++)
            if (!strcmp(c->argv[k], "--check") || !strcmp(c->argv[k], "--stat") ||
                !strcmp(c->argv[k], "--numstat") || !strcmp(c->argv[k], "--summary") ||
                !strcmp(c->argv[k], "--cached"))
                check = true;
        if (!check)
            put_any_in(s, ".");
    }
}

/* xargs CMD: CMD gets file names from stdin, so whatever CMD writes by
 * its operands could be any file at all — stdin may name /etc/passwd as
 * well as ./x — unless CMD only reads. */
static bool w_xargs(const bash_cmd *c, const char *name, sink *s)
{
    static const char *const L[] = {"arg-file", "delimiter", "eof", "replace", "max-lines",
                                    "max-args", "max-procs", "max-chars",
                                    "process-slot-var", NULL};
    static const char *const QUIET[] = {"echo", "printf", "sleep", "test", "[", "true",
                                        "false", "kill", NULL};
    if (strcmp(name, "xargs"))
        return false;
    /* xargs stops reading options at its command */
    size_t i = 1;
    while (i < c->argc && c->argv[i][0] == '-') {
        const char *a = c->argv[i];
        if (a[1] != '-' && a[1] && !a[2] && strchr("adEILnPs", a[1]))
            i++;
        else if (a[1] == '-' && !strchr(a, '=') && long_takes_value(&(argspec){"", NULL, L},
                                                                     a + 2, strlen(a + 2)))
            i++;
        i++;
    }
    if (i >= c->argc || find_exec_reads(c, i) || in_set(base_of(c->argv[i]), QUIET))
        return true;
    put_any_in(s, "/");
    return true;
}

/* Runs the per-program rules over one (brace-expanded) command; *known
 * is cleared when the command may write files these rules cannot name. */
static void targets_of(const bash_cmd *c, sink *s, bool *known)
{
    const char *name = bash_cmd_name(c);
    if (w_operands(c, name, s) || w_attrs(c, name, s) || w_copy(c, name, s) ||
        w_filters(c, name, s) || w_download(c, name, s, known) || w_unzip(c, name, s) ||
        w_xargs(c, name, s))
        return;
    if (!strcmp(name, "sed"))
        w_sed(c, s, known);
    else if (!strcmp(name, "perl"))
        w_perl(c, s);
    else if (!strcmp(name, "patch"))
        w_patch(c, s);
    else if (!strcmp(name, "tar"))
        w_tar(c, s, known);
    else if (!strcmp(name, "find"))
        w_find(c, s);
    else if (!strcmp(name, "git"))
        w_git(c, s);
}

void risk_expand_cmd(const bash_cmd *c, risk_expanded *x)
{
    memset(x, 0, sizeof *x);
    x->cmd = *c;
    bool any = false;
    for (size_t i = 0; i < c->argc && !any; i++)
        any = (c->argv_flags[i] & BASH_WORD_GLOB) && strchr(c->argv[i], '{');
    if (!any)
        return;
    strlist words = {0};
    size_t *origin = NULL;
    for (size_t i = 0; i < c->argc; i++) {
        size_t before = words.n;
        expand_word(c->argv[i], c->argv_flags[i], &words);
        origin = xrealloc(origin, (words.n + 1) * sizeof *origin);
        for (size_t k = before; k < words.n; k++)
            origin[k] = i;
    }
    x->argv = xcalloc(words.n + 1, sizeof *x->argv);
    x->flags = xcalloc(words.n + 1, sizeof *x->flags);
    for (size_t k = 0; k < words.n; k++) {
        x->argv[k] = words.v[k];
        x->flags[k] = c->argv_flags[origin[k]];
    }
    free(origin);
    x->words = words.v;
    x->nwords = words.n;
    x->cap = words.cap;
    x->cmd.argc = words.n;
    x->cmd.argv = x->argv;
    x->cmd.argv_flags = x->flags;
}

void risk_expanded_free(risk_expanded *x)
{
    strlist l = {x->words, x->nwords, x->cap};
    sl_free(&l);
    free(x->argv);
    free(x->flags);
    memset(x, 0, sizeof *x);
}

/* Reports the targets of c; returns whether they are all there is. */
static bool write_targets(const bash_cmd *c, emit_fn fn, void *ctx)
{
    sink s = {fn, ctx};
    for (size_t k = 0; k < c->nredir; k++) {
        if (!bash_redir_writes(&c->redir[k]))
            continue;
        strlist l = {0};
        expand_word(c->redir[k].target, c->redir[k].target_flags, &l);
        for (size_t q = 0; q < l.n; q++)
            put(&s, l.v[q]);
        sl_free(&l);
    }
    bool known = true;
    if (!c->argc)
        return true;
    if (c->argc > RW_MAX_WORDS)
        return false;
    risk_expanded x;
    risk_expand_cmd(c, &x);
    targets_of(&x.cmd, &s, &known);
    risk_expanded_free(&x);
    return known;
}

void risk_write_targets(const bash_cmd *c, void (*fn)(void *ctx, const char *path), void *ctx)
{
    if (c && fn)
        write_targets(c, fn, ctx);
}

/* ---- unknown writers -------------------------------------------------- */

static void ignore(void *ctx, const char *path)
{
    (void)ctx;
    (void)path;
}

/* Programs whose every write risk_write_targets names (or that write
 * nothing but what they are told to: the wrappers, whose inner command is
 * parsed and judged on its own). */
static bool program_known(const bash_cmd *c)
{
    static const char *const WRITERS[] = {
        "rm", "unlink", "rmdir", "srm", "shred", "truncate", "touch", "mkdir", "mkfifo",
        "mknod", "mktemp", "chmod", "chown", "chgrp", "chattr", "setfacl", "setfattr", "cp",
        "mv", "ln", "install", "rsync", "scp", "sort", "uniq", "tee", "dd", "sed", "curl",
        "wget", "patch", "tar", "unzip", "gzip", "gunzip", "bzip2", "bunzip2", "xz", "unxz",
        "lzma", "unlzma", "zstd", "unzstd", "compress", "uncompress", "lzip", "lz4", "find",
        NULL};
    static const char *const WRAPPERS[] = {
        "sudo", "doas", "env", "timeout", "nice", "nohup", "time", "stdbuf", "command",
        "builtin", "exec", "setsid", "ionice", "chrt", "taskset", "xargs", "eval", NULL};
    /* Builtins and readers that never write a file they are given (what a
     * sourced script does is judged as the unknown it is: not by name). */
    static const char *const QUIET[] = {
        "source", ".", "export", "set", "unset", "local", "declare", "typeset", "readonly",
        "read", "alias", "unalias", "exit", "return", "shift", "wait", "kill", "trap",
        "ulimit", "umask", "pushd", "popd", "dirs", "hash", "help", "jobs", "fg", "bg",
        "disown", "getopts", "let", ":", "less", "more", "base64", "zcat", "bat", "sum",
        "look", "tput", "clear", NULL};
    static const char *const SHELLS[] = {"sh", "bash", "zsh", "dash", "ksh", "mksh", "ash",
                                         NULL};
    static const char *const GIT_READ[] = {
        "status", "log", "diff", "show", "blame", "rev-parse", "ls-files", "ls-tree",
        "describe", "shortlog", "grep", "cat-file", "rev-list", "merge-base", "name-rev",
        "whatchanged", "count-objects", "version", "show-ref", "for-each-ref", "check-ignore",
        "fetch", NULL};
    const char *name = bash_cmd_name(c);
    if (in_set(name, WRITERS) || in_set(name, WRAPPERS) || in_set(name, QUIET) ||
        risk_cmd_reads_only(c))
        return true;
    if (in_set(name, SHELLS)) {
        for (size_t i = 1; i < c->argc; i++)
            if (c->argv[i][0] == '-' && c->argv[i][1] != '-' && strchr(c->argv[i], 'c'))
                return true;   /* sh -c TEXT: TEXT is parsed as commands */
        return false;
    }
    if (!strcmp(name, "git")) {
        size_t i = 1;
        while (i < c->argc && c->argv[i][0] == '-') {
            const char *a = c->argv[i];
            if (!strcmp(a, "-C") || !strcmp(a, "-c") || !strcmp(a, "--git-dir") ||
                !strcmp(a, "--work-tree"))
                i++;
            i++;
        }
        return i < c->argc && in_set(c->argv[i], GIT_READ);
    }
    return false;
}

/* Quoted literals inside a word ("open('.env','w')" → .env). */
static void put_quoted_literals(sink *s, const char *w)
{
    for (const char *p = w; *p; p++) {
        if (*p != '\'' && *p != '"')
            continue;
        const char *e = strchr(p + 1, *p);
        if (!e)
            break;
        if (e > p + 1 && (size_t)(e - p) < 1024) {
            char *lit = xmalloc((size_t)(e - p));
            memcpy(lit, p + 1, (size_t)(e - p - 1));
            lit[e - p - 1] = '\0';
            put(s, lit);
            free(lit);
        }
        p = e;
    }
}

/* awk writes only where its program says (print > "f"): the literals of
 * the program and of -v values, not the input files — unless gawk's
 * in-place extension is loaded, which rewrites every input. */
static bool awk_candidates(const bash_cmd *c, sink *s)
{
    static const char *const AWKS[] = {"awk", "gawk", "mawk", "nawk", "busybox-awk", NULL};
    static const char *const L[] = {"file", "assign", "include", "load", "field-separator",
                                    NULL};
    if (!in_set(bash_cmd_name(c), AWKS))
        return false;
    args a;
    scan_args(c, 1, &(argspec){"fvFilE", NULL, L}, &a);
    for (size_t k = 0; k < a.nopt; k++) {
        const opt_seen *o = &a.opt[k];
        bool inc = o->s == 'i' || (o->l && long_is(o->l, o->llen, "include"));
        if (inc && o->v && strstr(o->v, "inplace")) {
            put_ops(s, &a, opt_has(&a, 'f', "file") ? 0 : 1);
            break;
        }
    }
    bool from_file = opt_has(&a, 'f', "file") || opt_has(&a, 'E', NULL);
    if (!from_file && a.nops)
        put_quoted_literals(s, a.ops[0]);
    for (size_t k = 0; k < a.nopt; k++)
        if (a.opt[k].v)
            put_quoted_literals(s, a.opt[k].v);
    if (from_file)
        put_ops(s, &a, 0);   /* the program is unseen: any operand may be written */
    return true;
}

void risk_unknown_write_candidates(const bash_cmd *c, void (*fn)(void *ctx, const char *path),
                                   void *ctx)
{
    if (!c || !fn || !c->argc)
        return;
    bool known = write_targets(c, ignore, NULL);
    if (known && program_known(c))
        return;
    sink s = {fn, ctx};
    risk_expanded x;
    risk_expand_cmd(c, &x);
    const bash_cmd *e = &x.cmd;
    if (awk_candidates(e, &s)) {
        risk_expanded_free(&x);
        return;
    }
    for (size_t i = 1; i < e->argc; i++) {
        const char *w = e->argv[i];
        if (w[0] == '-' && w[1]) {
            const char *eq = strchr(w, '=');
            if (eq)
                put(&s, eq + 1);          /* --out=FILE */
            else if (w[1] != '-' && w[2])
                put(&s, w + 2);           /* -oFILE */
        } else {
            put(&s, w);
        }
        put_quoted_literals(&s, w);       /* code given with -c / -e / awk */
    }
    risk_expanded_free(&x);
}

/* ---- could a glob target be a given file? ----------------------------- */

typedef struct segv {
    const char *s[128];
    size_t len[128];
    size_t n;
    bool overflow;
} segv;

static void split_path(const char *p, segv *v)
{
    v->n = 0;
    v->overflow = false;
    while (*p) {
        while (*p == '/')
            p++;
        size_t len = strcspn(p, "/");
        if (!len)
            break;
        if (v->n == 128) {
            v->overflow = true;
            return;
        }
        v->s[v->n] = p;
        v->len[v->n++] = len;
        p += len;
    }
}

static bool seg_has_glob(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (s[i] == '*' || s[i] == '?' || s[i] == '[' || s[i] == '\\')
            return true;
    return false;
}

/* Matches the shell's way for one segment: * ? [set] \x, and a leading
 * '.' only by a literal '.' (no dotglob). */
static bool seg_glob(const char *p, size_t pn, const char *s, size_t sn, bool first)
{
    if (first && sn && s[0] == '.' && !(pn && p[0] == '.'))
        return false;
    return glob_segment_match(p, pn, s, sn);
}

/* Could one segment of the target (a) and one of the rule (b) name the
 * same file name? Exact when at most one holds a wildcard; when both do,
 * their literal heads and tails must agree (an over-estimate, which errs
 * towards the rule applying). */
static bool seg_meet(const char *a, size_t an, const char *b, size_t bn)
{
    bool ga = seg_has_glob(a, an), gb = seg_has_glob(b, bn);
    if (!ga && !gb)
        return an == bn && !memcmp(a, b, an);
    if (ga && !gb)
        return seg_glob(a, an, b, bn, true);
    if (!ga && gb)
        return seg_glob(b, bn, a, an, false);
    size_t ha = strcspn(a, "*?[\\"), hb = strcspn(b, "*?[\\");
    if (ha > an)
        ha = an;
    if (hb > bn)
        hb = bn;
    size_t h = ha < hb ? ha : hb;
    if (memcmp(a, b, h))
        return false;
    size_t ta = 0, tb = 0;
    while (ta < an && !strchr("*?]\\", a[an - 1 - ta]))
        ta++;
    while (tb < bn && !strchr("*?]\\", b[bn - 1 - tb]))
        tb++;
    size_t t = ta < tb ? ta : tb;
    return !memcmp(a + an - t, b + bn - t, t);
}

static bool segs_meet(const segv *a, size_t i, const segv *b, size_t j, unsigned char *memo)
{
    unsigned char *m = &memo[i * (b->n + 1) + j];
    if (*m)
        return *m == 1;
    bool r;
    if (j < b->n && b->len[j] == 2 && !memcmp(b->s[j], "**", 2))
        r = segs_meet(a, i, b, j + 1, memo) || (i < a->n && segs_meet(a, i + 1, b, j, memo));
    else if (i < a->n && a->len[i] == 2 && !memcmp(a->s[i], "**", 2))
        r = segs_meet(a, i + 1, b, j, memo) || (j < b->n && segs_meet(a, i, b, j + 1, memo));
    else if (i == a->n || j == b->n)
        r = i == a->n && j == b->n;
    else
        r = seg_meet(a->s[i], a->len[i], b->s[j], b->len[j]) &&
            segs_meet(a, i + 1, b, j + 1, memo);
    *m = r ? 1 : 2;
    return r;
}

bool risk_target_could_match(const char *target, const char *pattern)
{
    if (!target || !pattern)
        return false;
    segv *a = xmalloc(sizeof *a), *b = xmalloc(sizeof *b);
    split_path(target, a);
    split_path(pattern, b);
    bool r = true;   /* too deep to tell: it could */
    if (!a->overflow && !b->overflow) {
        unsigned char *memo = xcalloc((a->n + 1) * (b->n + 1), 1);
        r = segs_meet(a, 0, b, 0, memo);
        free(memo);
    }
    free(a);
    free(b);
    return r;
}
