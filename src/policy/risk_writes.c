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
 * Brace expansion is risk_expand.c, option scanning risk_args.c; the
 * commands whose writes these rules cannot name are risk_unknown.c, and
 * whether a glob target can be a given file is risk_target_match.c.
 *
 * Stateless and reentrant: every call owns its scratch memory.
 */
#include "policy/risk.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/glob.h"
#include "base/path.h"
#include "base/str.h"
#include "policy/risk_args.h"
#include "policy/risk_expand.h"
#include "policy/risk_writes_impl.h"

bool rw_in_set(const char *s, const char *const *set)
{
    for (; *set; set++)
        if (!strcmp(s, *set))
            return true;
    return false;
}

const char *rw_base_of(const char *p)
{
    size_t n = strlen(p);
    while (n > 1 && p[n - 1] == '/')
        n--;
    const char *s = p + n;
    while (s > p && s[-1] != '/')
        s--;
    return s;
}

/* ---- the emitter ----------------------------------------------------- */

static bool harmless(const char *t)
{
    return !*t || !strcmp(t, "-") || !strcmp(t, "/dev/null") || !strcmp(t, "/dev/stdout") ||
           !strcmp(t, "/dev/stderr") || !strcmp(t, "/dev/tty") || !strncmp(t, "/dev/fd/", 8);
}

void rw_put(void *ctx, const char *path)
{
    rw_sink *s = ctx;
    /* "{}" is find -exec's placeholder: find itself reports what it hands over. */
    if (!harmless(path) && strcmp(path, "{}"))
        s->fn(s->ctx, path);
}

/* dir/name for each name (a directory destination of cp/mv …). */
static void put_in(rw_sink *s, const char *dir, const char *name)
{
    const char *b = rw_base_of(name);
    if (!*dir || !*b || !strcmp(b, "/"))
        return;
    char *p = path_join(dir, b);
    rw_put(s, p);
    free(p);
}

void rw_put_ops(rw_sink *s, const risk_args *a, size_t from)
{
    for (size_t k = from; k < a->nops; k++)
        rw_put(s, a->ops[k]);
}

/* "Any file under dir": the pseudo-target for writers whose file names
 * the command line does not give. "**" as the target's last segment means
 * any depth, dotfiles included (risk_target_could_match), unlike the
 * shell's own "**", which without globstar is "*". */
static void put_any_in(rw_sink *s, const char *dir)
{
    const char *d = dir && *dir ? dir : ".";
    char *p = path_join(d, "**");
    rw_put(s, p);
    free(p);
}

/* ---- per program ------------------------------------------------------ */

static const char *const NO_LONG[] = {NULL};

/* rm, unlink, rmdir, shred, truncate, touch, mkdir, mkfifo, mknod, mktemp:
 * every operand is written or deleted. */
static bool w_operands(const bash_cmd *c, const char *name, rw_sink *s)
{
    static const char *const SHRED_L[] = {"iterations", "size", "random-source", NULL};
    static const char *const TRUNC_L[] = {"size", "reference", NULL};
    static const char *const TOUCH_L[] = {"date", "reference", "time", NULL};
    static const char *const MODE_L[] = {"mode", "context", NULL};
    static const char *const MKTEMP_L[] = {"tmpdir", "suffix", NULL};
    risk_argspec sp = {"", NULL, NO_LONG};
    if (!strcmp(name, "shred"))
        sp = (risk_argspec){"ns", NULL, SHRED_L};
    else if (!strcmp(name, "truncate"))
        sp = (risk_argspec){"sr", NULL, TRUNC_L};
    else if (!strcmp(name, "touch"))
        sp = (risk_argspec){"drt", NULL, TOUCH_L};
    else if (!strcmp(name, "mkdir") || !strcmp(name, "mkfifo") || !strcmp(name, "mknod"))
        sp = (risk_argspec){"m", NULL, MODE_L};
    else if (!strcmp(name, "mktemp"))
        sp = (risk_argspec){"p", NULL, MKTEMP_L};
    else if (strcmp(name, "rm") && strcmp(name, "unlink") && strcmp(name, "rmdir") &&
             strcmp(name, "srm"))
        return false;
    risk_args a;
    risk_scan_args(c, 1, &sp, &a);
    rw_put_ops(s, &a, 0);
    if (!strcmp(name, "mktemp")) {
        const char *dir = risk_opt_last(&a, 'p', "tmpdir");
        for (size_t k = 0; dir && k < a.nops; k++)
            put_in(s, dir, a.ops[k]);
    }
    return true;
}

/* chmod MODE FILE…, chown OWNER FILE…, chgrp GROUP FILE…: the metadata of
 * the files changes. */
static bool w_attrs(const bash_cmd *c, const char *name, rw_sink *s)
{
    static const char *const L[] = {"reference", "from", NULL};
    if (strcmp(name, "chmod") && strcmp(name, "chown") && strcmp(name, "chgrp") &&
        strcmp(name, "chattr") && strcmp(name, "setfacl") && strcmp(name, "setfattr"))
        return false;
    risk_args a;
    risk_scan_args(c, 1, &(risk_argspec){"", NULL, L}, &a);
    bool mode_given = !risk_opt_has(&a, 0, "reference");
    /* chmod -w f: the mode was read as an option cluster. */
    for (size_t i = 1; i < c->argc && !strcmp(name, "chmod"); i++) {
        const char *w = c->argv[i];
        if (w[0] == '-' && w[1] && strspn(w + 1, "rwxXst") == strlen(w + 1))
            mode_given = false;
    }
    if (!strcmp(name, "chattr") || !strcmp(name, "setfacl") || !strcmp(name, "setfattr"))
        mode_given = false;   /* their options carry the change; all operands are files */
    rw_put_ops(s, &a, mode_given ? 1 : 0);
    return true;
}

/* cp, mv, ln, install, rsync, scp: the destination, DEST/name of each
 * source (DEST may be a directory), -t DIR; mv also deletes its sources. */
static bool w_copy(const bash_cmd *c, const char *name, rw_sink *s)
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
    risk_argspec sp;
    if (!strcmp(name, "cp") || !strcmp(name, "mv") || !strcmp(name, "ln"))
        sp = (risk_argspec){"tS", NULL, CP_L};
    else if (!strcmp(name, "install"))
        sp = (risk_argspec){"mogtS", NULL, INSTALL_L};
    else if (!strcmp(name, "rsync"))
        sp = (risk_argspec){"eTfBM", NULL, RSYNC_L};
    else if (!strcmp(name, "scp"))
        sp = (risk_argspec){"cFiJloPSDX", NULL, NO_LONG};
    else
        return false;
    risk_args a;
    risk_scan_args(c, 1, &sp, &a);
    if (!strcmp(name, "rsync")) {
        risk_opt_values(&a, 0, "log-file", rw_put, s);
        risk_opt_values(&a, 0, "write-batch", rw_put, s);
        risk_opt_values(&a, 0, "only-write-batch", rw_put, s);
    }
    bool deletes_sources = !strcmp(name, "mv") ||
                           (!strcmp(name, "rsync") && (risk_opt_has(&a, 0, "remove-source-files") ||
                                                       risk_opt_has(&a, 0, "remove-sent-files")));
    if (!strcmp(name, "install") && risk_opt_has(&a, 'd', "directory")) {
        rw_put_ops(s, &a, 0);
        return true;
    }
    /* A link to a file is a way to write it (a hard link is the file; a
     * later write through a symlink made in the same command line cannot
     * be resolved when it is checked): ln's sources count as written, and
     * cp's with -l/-s. */
    bool links = !strcmp(name, "ln") ||
                 (!strcmp(name, "cp") && (risk_opt_has(&a, 'l', "link") ||
                                          risk_opt_has(&a, 's', "symbolic-link")));
    /* A recursive copy writes whatever the source tree holds: any file
     * under the destination. */
    bool tree = (!strcmp(name, "cp") && (risk_opt_has(&a, 'r', "recursive") ||
                                         risk_opt_has(&a, 'R', NULL) || risk_opt_has(&a, 'a', "archive"))) ||
                (!strcmp(name, "rsync") && (risk_opt_has(&a, 'r', "recursive") ||
                                            risk_opt_has(&a, 'a', "archive"))) ||
                (!strcmp(name, "scp") && risk_opt_has(&a, 'r', NULL));
    const char *tdir = risk_opt_last(&a, 't', "target-directory");
    if (!strcmp(name, "rsync") || !strcmp(name, "scp"))
        tdir = NULL;   /* their -t/-T mean other things */
    if (tdir) {
        risk_opt_values(&a, 't', "target-directory", rw_put, s);
        for (size_t k = 0; k < a.nops; k++)
            put_in(s, tdir, a.ops[k]);
        if (deletes_sources || links)
            rw_put_ops(s, &a, 0);
        if (tree)
            put_any_in(s, tdir);
        return true;
    }
    if (a.nops == 1 && !strcmp(name, "ln")) {
        rw_put(s, rw_base_of(a.ops[0]));   /* ln -s /x/y makes ./y */
        rw_put(s, a.ops[0]);
        return true;
    }
    if (a.nops >= 2) {
        const char *dest = a.ops[a.nops - 1];
        rw_put(s, dest);
        for (size_t k = 0; k + 1 < a.nops; k++)
            put_in(s, dest, a.ops[k]);
        if (deletes_sources || links)
            for (size_t k = 0; k + 1 < a.nops; k++)
                rw_put(s, a.ops[k]);
        if (tree)
            put_any_in(s, dest);
    }
    return true;
}

/* sort -o FILE, uniq IN OUT, tee FILE…, dd of=FILE. */
static bool w_filters(const bash_cmd *c, const char *name, rw_sink *s)
{
    static const char *const SORT_L[] = {
        "key", "output", "field-separator", "temporary-directory", "buffer-size", "files0-from",
        "compress-program", "parallel", "batch-size", "random-source", NULL};
    static const char *const UNIQ_L[] = {"skip-fields", "skip-chars", "check-chars", NULL};
    static const char *const TEE_L[] = {NULL};
    risk_args a;
    if (!strcmp(name, "sort")) {
        risk_scan_args(c, 1, &(risk_argspec){"kotTS", NULL, SORT_L}, &a);
        risk_opt_values(&a, 'o', "output", rw_put, s);
        return true;
    }
    if (!strcmp(name, "uniq")) {
        risk_scan_args(c, 1, &(risk_argspec){"fsw", NULL, UNIQ_L}, &a);
        rw_put_ops(s, &a, 1);
        return true;
    }
    if (!strcmp(name, "tee")) {
        risk_scan_args(c, 1, &(risk_argspec){"", NULL, TEE_L}, &a);
        rw_put_ops(s, &a, 0);
        return true;
    }
    if (!strcmp(name, "dd")) {
        for (size_t i = 1; i < c->argc; i++)
            if (!strncmp(c->argv[i], "of=", 3))
                rw_put(s, c->argv[i] + 3);
        return true;
    }
    return false;
}

/* The file a sed w/W command or s///w flag writes: the rest of the line. */
static void sed_put_rest(rw_sink *s, const char *p, const char *end)
{
    while (p < end && (*p == ' ' || *p == '\t'))
        p++;
    if (p < end) {
        char *f = xmalloc((size_t)(end - p) + 1);
        memcpy(f, p, (size_t)(end - p));
        f[end - p] = '\0';
        rw_put(s, f);
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
static bool sed_script(const char *script, rw_sink *s)
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
static bool w_sed(const bash_cmd *c, rw_sink *s, bool *known)
{
    static const char *const L[] = {"expression", "file", "line-length", NULL};
    risk_args a;
    risk_scan_args(c, 1, &(risk_argspec){"efl", "i", L}, &a);
    bool inplace = risk_opt_has(&a, 'i', "in-place");
    bool given = false;
    for (size_t k = 0; k < a.nopt; k++) {
        const risk_opt_seen *o = &a.opt[k];
        bool e = o->s == 'e' || (o->l && risk_long_is(o->l, o->llen, "expression"));
        bool f = o->s == 'f' || (o->l && risk_long_is(o->l, o->llen, "file"));
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
        rw_put_ops(s, &a, given ? 0 : 1);
    return true;
}

/* perl -i / -pi: the file operands. (perl is still an interpreter: its
 * code may write anything, see risk_unknown_write_candidates.) */
static bool w_perl(const bash_cmd *c, rw_sink *s)
{
    static const char *const L[] = {NULL};
    risk_args a;
    risk_scan_args(c, 1, &(risk_argspec){"eEI", "i0lMmxFCdD", L}, &a);
    if (!risk_opt_has(&a, 'i', NULL))
        return true;
    bool code = risk_opt_has(&a, 'e', NULL) || risk_opt_has(&a, 'E', NULL);
    rw_put_ops(s, &a, code ? 0 : 1);
    return true;
}

/* The file name curl -O / wget take from a URL. */
static void put_url_name(rw_sink *s, const char *dir, const char *url)
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
    const char *b = rw_base_of(path);
    if (*b && strcmp(b, "/")) {
        if (dir)
            put_in(s, dir, b);
        else
            rw_put(s, b);
    }
    free(path);
}

static bool w_download(const bash_cmd *c, const char *name, rw_sink *s, bool *known)
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
    risk_args a;
    if (!strcmp(name, "curl")) {
        risk_scan_args(c, 1, &(risk_argspec){"odDcbCeEFHKTuUxXArwYyzmQtP", NULL, CURL_L}, &a);
        risk_opt_values(&a, 'o', "output", rw_put, s);
        risk_opt_values(&a, 'D', "dump-header", rw_put, s);
        risk_opt_values(&a, 'c', "cookie-jar", rw_put, s);
        risk_opt_values(&a, 0, "trace", rw_put, s);
        risk_opt_values(&a, 0, "trace-ascii", rw_put, s);
        risk_opt_values(&a, 0, "stderr", rw_put, s);
        risk_opt_values(&a, 0, "etag-save", rw_put, s);
        risk_opt_values(&a, 0, "libcurl", rw_put, s);
        risk_opt_values(&a, 0, "hsts", rw_put, s);
        risk_opt_values(&a, 0, "alt-svc", rw_put, s);
        const char *dir = risk_opt_last(&a, 0, "output-dir");
        if (risk_opt_has(&a, 'J', "remote-header-name"))
            put_any_in(s, dir);
        if (risk_opt_has(&a, 'O', "remote-name") || risk_opt_has(&a, 0, "remote-name-all")) {
            for (size_t k = 0; k < a.nops; k++)
                put_url_name(s, dir, a.ops[k]);
            risk_opt_values(&a, 0, "url", rw_put, s);
        }
        if (risk_opt_has(&a, 'K', "config"))
            *known = false;   /* a config file can name outputs */
        return true;
    }
    if (!strcmp(name, "wget")) {
        risk_scan_args(c, 1, &(risk_argspec){"oaOPiBeTtwQUlDAXRIh", NULL, WGET_L}, &a);
        risk_opt_values(&a, 'o', "output-file", rw_put, s);
        risk_opt_values(&a, 'a', "append-output", rw_put, s);
        risk_opt_values(&a, 0, "save-cookies", rw_put, s);
        risk_opt_values(&a, 0, "rejected-log", rw_put, s);
        bool named = false;
        for (size_t k = 0; k < a.nopt; k++) {
            const risk_opt_seen *o = &a.opt[k];
            if (o->v && (o->s == 'O' || (o->l && risk_long_is(o->l, o->llen, "output-document")))) {
                rw_put(s, o->v);
                named = true;
            }
        }
        const char *dir = risk_opt_last(&a, 'P', "directory-prefix");
        if (!named) {
            for (size_t k = 0; k < a.nops; k++)
                put_url_name(s, dir, a.ops[k]);
            if (risk_opt_has(&a, 'r', "recursive") || risk_opt_has(&a, 'm', "mirror") ||
                risk_opt_has(&a, 'i', "input-file") || risk_opt_has(&a, 'p', "page-requisites"))
                put_any_in(s, dir);
        }
        if (risk_opt_has(&a, 'e', "execute") || risk_opt_has(&a, 0, "config"))
            *known = false;
        return true;
    }
    return false;
}

/* patch [FILE [PATCHFILE]]: FILE, -o OUT, -r REJECTS; without FILE the
 * patch names its targets (any file). */
static bool w_patch(const bash_cmd *c, rw_sink *s)
{
    static const char *const L[] = {"input", "output", "strip", "directory", "ifdef", "fuzz",
                                    "reject-file", "prefix", "suffix", "version-control",
                                    "basename-prefix", "get", "quoting-style", "reject-format",
                                    NULL};
    risk_args a;
    risk_scan_args(c, 1, &(risk_argspec){"iopdDFrBzVYg", NULL, L}, &a);
    if (risk_opt_has(&a, 0, "dry-run"))
        return true;
    risk_opt_values(&a, 'o', "output", rw_put, s);
    risk_opt_values(&a, 'r', "reject-file", rw_put, s);
    if (a.nops)
        rw_put(s, a.ops[0]);
    else if (!risk_opt_has(&a, 'o', "output"))
        put_any_in(s, risk_opt_last(&a, 'd', "directory"));
    return true;
}

/* tar: creating writes -f FILE; extracting writes the members (or any
 * file) under -C DIR. The old "tar xf a.tar" spelling is rewritten to
 * dashed options first. */
static bool w_tar(const bash_cmd *c, rw_sink *s, bool *known)
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
    risk_args a;
    risk_scan_args(&e, 1, &(risk_argspec){vals, NULL, L}, &a);
    bool create = risk_opt_has(&a, 'c', "create") || risk_opt_has(&a, 'r', "append") ||
                  risk_opt_has(&a, 'u', "update") || risk_opt_has(&a, 'A', "catenate") ||
                  risk_opt_has(&a, 0, "concatenate") || risk_opt_has(&a, 0, "delete");
    bool extract = risk_opt_has(&a, 'x', "extract") || risk_opt_has(&a, 0, "get");
    if (create)
        risk_opt_values(&a, 'f', "file", rw_put, s);
    if (create && risk_opt_has(&a, 0, "remove-files")) {
        /* --remove-files deletes what it archived: each member, and
         * everything under a directory member */
        const char *dir = risk_opt_last(&a, 'C', "directory");
        for (size_t k = 0; k < a.nops; k++) {
            const char *m = a.ops[k];
            char *p = dir ? path_join(dir, m) : xstrdup(m);
            rw_put(s, p);
            put_any_in(s, p);
            free(p);
        }
    }
    if (extract) {
        const char *dir = risk_opt_last(&a, 'C', "directory");
        if (a.nops)
            for (size_t k = 0; k < a.nops; k++)
                put_in(s, dir ? dir : ".", a.ops[k]);
        else
            put_any_in(s, dir);
    }
    if (risk_opt_has(&a, 0, "to-command") || risk_opt_has(&a, 'I', "use-compress-program") ||
        risk_opt_has(&a, 0, "info-script") || risk_opt_has(&a, 0, "new-volume-script"))
        *known = false;
    free(argv);
    free(letters);
    return true;
}

static bool w_unzip(const bash_cmd *c, const char *name, rw_sink *s)
{
    risk_args a;
    if (!strcmp(name, "unzip")) {
        risk_scan_args(c, 1, &(risk_argspec){"dxP", NULL, NO_LONG}, &a);
        if (risk_opt_has(&a, 'l', NULL) || risk_opt_has(&a, 't', NULL) || risk_opt_has(&a, 'p', NULL) ||
            risk_opt_has(&a, 'v', NULL) || risk_opt_has(&a, 'Z', NULL))
            return true;
        const char *dir = risk_opt_last(&a, 'd', NULL);
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
    if (!rw_in_set(name, COMP))
        return false;
    static const char *const L[] = {"suffix", NULL};
    risk_scan_args(c, 1, &(risk_argspec){"S", NULL, L}, &a);
    if (risk_opt_has(&a, 'c', "stdout") || risk_opt_has(&a, 0, "to-stdout") || risk_opt_has(&a, 'l', "list") ||
        risk_opt_has(&a, 't', "test"))
        return true;
    static const char *const SUFFIX[] = {".gz", ".bz2", ".xz", ".lzma", ".zst", ".Z", ".lz",
                                         ".lz4", ".tgz", NULL};
    for (size_t k = 0; k < a.nops; k++) {
        rw_put(s, a.ops[k]);   /* replaced by its (un)compressed form */
        size_t n = strlen(a.ops[k]);
        for (size_t q = 0; SUFFIX[q]; q++) {
            size_t m = strlen(SUFFIX[q]);
            if (n > m && !strcmp(a.ops[k] + n - m, SUFFIX[q])) {
                char *stem = xstrdup(a.ops[k]);
                stem[n - m] = '\0';
                rw_put(s, stem);
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
    return i < c->argc && rw_in_set(rw_base_of(c->argv[i]), READERS);
}

/* find: -fprint/-fprint0/-fls/-fprintf FILE; -delete and -exec/-ok of a
 * command that may change what it is given: the files found (ROOT/NAME for
 * each -name, or any file under each root). */
static bool w_find(const bash_cmd *c, rw_sink *s)
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
            rw_put(s, c->argv[++i]);
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
        rw_put(s, roots[r]);
        if (!nnames) {
            put_any_in(s, roots[r]);
            continue;
        }
        for (size_t k = 0; k < nnames; k++) {
            const char *nm = names[k];
            if (!strncmp(nm, "./", 2) || nm[0] == '/' || nm[0] == '*') {
                rw_put(s, nm);   /* -path patterns hold the root already */
                continue;
            }
            put_in(s, roots[r], nm);
            loom_str rel = LOOM_STR_INIT;
            str_printf(&rel, "**/%s", nm);
            char *deep = path_join(roots[r], rel.ptr);
            rw_put(s, deep);
            free(deep);
            str_free(&rel);
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
    return rw_in_set(sub, READ);
}

static void w_git(const bash_cmd *c, rw_sink *s)
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
            char *g = path_join(dir_c, ".git");
            rw_put(s, g);
            free(g);
        }
        if (git_dir)
            rw_put(s, git_dir);
        if (work_tree)
            rw_put(s, work_tree);
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
                rw_put(s, c->argv[++k]);
            else if (!strcmp(sub, "archive") && !strncmp(a, "--output=", 9))
                rw_put(s, a + 9);
            else if ((!strcmp(sub, "init") || !strcmp(sub, "clone")) &&
                     !strncmp(a, "--separate-git-dir=", 19))
                rw_put(s, a + 19);
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
        rw_put(s, ops[0]);
    else if (!strcmp(sub, "clone") && nops >= 2)
        rw_put(s, ops[1]);
    else if (!strcmp(sub, "worktree") && nops >= 2 && !strcmp(ops[0], "add"))
        rw_put(s, ops[1]);
    else if (!strcmp(sub, "bundle") && nops >= 2 && !strcmp(ops[0], "create"))
        rw_put(s, ops[1]);
    /* Files git writes through options: diff/log/show/format-patch
     * --output F, format-patch -o DIR, config -f/--file F, --global
     * (~/.gitconfig), --system (/etc/gitconfig). */
    bool config = !strcmp(sub, "config");
    for (size_t k = i + 1; k < c->argc; k++) {
        const char *a = c->argv[k];
        if (!strcmp(a, "--"))
            break;
        if (!strncmp(a, "--output=", 9))
            rw_put(s, a + 9);
        else if (!strcmp(a, "--output") && k + 1 < c->argc)
            rw_put(s, c->argv[++k]);
        else if (!strcmp(sub, "format-patch") && !strncmp(a, "--output-directory=", 19))
            put_any_in(s, a + 19);
        else if (!strcmp(sub, "format-patch") &&
                 (!strcmp(a, "-o") || !strcmp(a, "--output-directory")) && k + 1 < c->argc)
            put_any_in(s, c->argv[++k]);
        else if (config && !strncmp(a, "--file=", 7))
            rw_put(s, a + 7);
        else if (config && (!strcmp(a, "-f") || !strcmp(a, "--file")) && k + 1 < c->argc)
            rw_put(s, c->argv[++k]);
        else if (config && !strncmp(a, "-f", 2) && a[2])
            rw_put(s, a + 2);
        else if (config && !strcmp(a, "--global"))
            rw_put(s, "~/.gitconfig");
        else if (config && !strcmp(a, "--system"))
            rw_put(s, "/etc/gitconfig");
    }
    if (!strcmp(sub, "checkout") || !strcmp(sub, "restore")) {
        bool after = false;
        for (size_t k = i + 1; k < c->argc; k++) {
            if (after)
                rw_put(s, c->argv[k]);
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
static bool w_xargs(const bash_cmd *c, const char *name, rw_sink *s)
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
        else if (a[1] == '-' && !strchr(a, '=') && risk_long_takes_value(&(risk_argspec){"", NULL, L},
                                                                          a + 2, strlen(a + 2)))
            i++;
        i++;
    }
    if (i >= c->argc || find_exec_reads(c, i) || rw_in_set(rw_base_of(c->argv[i]), QUIET))
        return true;
    put_any_in(s, "/");
    return true;
}

/* Runs the per-program rules over one (brace-expanded) command; *known
 * is cleared when the command may write files these rules cannot name. */
static void targets_of(const bash_cmd *c, rw_sink *s, bool *known)
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

bool rw_write_targets(const bash_cmd *c, risk_emit_fn fn, void *ctx)
{
    rw_sink s = {fn, ctx};
    for (size_t k = 0; k < c->nredir; k++) {
        if (!bash_redir_writes(&c->redir[k]))
            continue;
        risk_words l = {0};
        risk_expand_word(c->redir[k].target, c->redir[k].target_flags, &l);
        for (size_t q = 0; q < l.n; q++)
            rw_put(&s, l.v[q]);
        risk_words_free(&l);
    }
    bool known = true;
    if (!c->argc)
        return true;
    if (c->argc > RISK_ARGS_MAX)
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
        rw_write_targets(c, fn, ctx);
}
