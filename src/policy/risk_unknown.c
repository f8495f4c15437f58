/* risk_unknown.c — the paths a command might write when the write-target
 * rules do not know all it writes (risk_unknown_write_candidates in
 * risk.h): a program these rules have no table for, a shell or awk given
 * code to run. What it reports are candidates — every operand and every
 * quoted literal that could be a file name — for the callers that must
 * fail closed on a protected path. Stateless and reentrant.
 */
#include "policy/risk.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "base/str.h"
#include "policy/risk_args.h"
#include "policy/risk_expand.h"
#include "policy/risk_writes_impl.h"

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
    if (rw_in_set(name, WRITERS) || rw_in_set(name, WRAPPERS) || rw_in_set(name, QUIET) ||
        risk_cmd_reads_only(c))
        return true;
    if (rw_in_set(name, SHELLS)) {
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
        return i < c->argc && rw_in_set(c->argv[i], GIT_READ);
    }
    return false;
}

/* Quoted literals inside a word ("open('.env','w')" → .env). */
static void put_quoted_literals(rw_sink *s, const char *w)
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
            rw_put(s, lit);
            free(lit);
        }
        p = e;
    }
}

/* awk writes only where its program says (print > "f"): the literals of
 * the program and of -v values, not the input files — unless gawk's
 * in-place extension is loaded, which rewrites every input. */
static bool awk_candidates(const bash_cmd *c, rw_sink *s)
{
    static const char *const AWKS[] = {"awk", "gawk", "mawk", "nawk", "busybox-awk", NULL};
    static const char *const L[] = {"file", "assign", "include", "load", "field-separator",
                                    NULL};
    if (!rw_in_set(bash_cmd_name(c), AWKS))
        return false;
    risk_args a;
    risk_scan_args(c, 1, &(risk_argspec){"fvFilE", NULL, L}, &a);
    for (size_t k = 0; k < a.nopt; k++) {
        const risk_opt_seen *o = &a.opt[k];
        bool inc = o->s == 'i' || (o->l && risk_long_is(o->l, o->llen, "include"));
        if (inc && o->v && strstr(o->v, "inplace")) {
            rw_put_ops(s, &a, risk_opt_has(&a, 'f', "file") ? 0 : 1);
            break;
        }
    }
    bool from_file = risk_opt_has(&a, 'f', "file") || risk_opt_has(&a, 'E', NULL);
    if (!from_file && a.nops)
        put_quoted_literals(s, a.ops[0]);
    for (size_t k = 0; k < a.nopt; k++)
        if (a.opt[k].v)
            put_quoted_literals(s, a.opt[k].v);
    if (from_file)
        rw_put_ops(s, &a, 0);   /* the program is unseen: any operand may be written */
    return true;
}

void risk_unknown_write_candidates(const bash_cmd *c, void (*fn)(void *ctx, const char *path),
                                   void *ctx)
{
    if (!c || !fn || !c->argc)
        return;
    bool known = rw_write_targets(c, ignore, NULL);
    if (known && program_known(c))
        return;
    rw_sink s = {fn, ctx};
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
                rw_put(&s, eq + 1);          /* --out=FILE */
            else if (w[1] != '-' && w[2])
                rw_put(&s, w + 2);           /* -oFILE */
        } else {
            rw_put(&s, w);
        }
        put_quoted_literals(&s, w);       /* code given with -c / -e / awk */
    }
    risk_expanded_free(&x);
}
