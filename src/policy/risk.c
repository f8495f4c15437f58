/* risk.c — the Bash risk rules: which simple commands are forbidden, need
 * confirming, or are plainly read-only (risk.h has the contract; the table
 * with every rule_id is in docs/permissions-rules.md).
 *
 * The rules look at parsed commands (bash_parse.h), not at the text, so
 * `echo "rm -rf /"` is harmless and `sudo nice rm -rf /` is not; words are
 * brace-expanded first (risk_expand.h: `rm -rf /{,}` is `rm -rf /`), and
 * options are read in any order, cluster and abbreviation, since the
 * FORBIDDEN level is the last fence in bypassPermissions. What a command
 * writes is risk_writes.c's business. Only when
 * the parse is uncertain do a few patterns run over the raw text as a
 * backstop, since then the parts cannot be trusted.
 */
#include "policy/risk.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/str.h"
#include "policy/risk_expand.h"

static const int RANK[] = {[RISK_SAFE] = 0, [RISK_UNKNOWN] = 1, [RISK_CONFIRM] = 2,
                                  [RISK_FORBIDDEN] = 3};

/* Keeps the most severe verdict; among equals the first, except that an
 * UNKNOWN with advice beats a bare UNKNOWN. */
static void raise_to(risk_verdict *v, risk_level l, const char *id, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void raise_to(risk_verdict *v, risk_level l, const char *id, const char *fmt, ...)
{
    if (RANK[l] < RANK[v->level] || (RANK[l] == RANK[v->level] && v->rule_id[0]))
        return;
    v->level = l;
    snprintf(v->rule_id, sizeof v->rule_id, "%s", id);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(v->reason, sizeof v->reason, fmt, ap);
    va_end(ap);
}

static bool is_one_of(const char *s, const char *const *set)
{
    for (; *set; set++)
        if (!strcmp(s, *set))
            return true;
    return false;
}

/* A short option letter anywhere in a "-abc" cluster, or a long option
 * (exact, or followed by '='), before a "--". */
static bool has_opt(const bash_cmd *c, size_t from, char letter, const char *longopt)
{
    for (size_t i = from; i < c->argc; i++) {
        const char *a = c->argv[i];
        if (!strcmp(a, "--"))
            return false;
        if (a[0] != '-' || !a[1])
            continue;
        if (a[1] == '-') {
            size_t n = longopt ? strlen(longopt) : 0;
            if (longopt && !strncmp(a, longopt, n) && (a[n] == '\0' || a[n] == '='))
                return true;
        } else if (letter && strchr(a + 1, letter)) {
            return true;
        }
    }
    return false;
}

/* Is the long option a (possibly abbreviated) spelling of full? git and
 * GNU tools take unambiguous prefixes; any prefix of three letters or more
 * counts here (min counts the dashes), which only errs towards more
 * danger. */
static bool long_spells_min(const char *a, const char *full, size_t min)
{
    if (strncmp(a, "--", 2) || strncmp(full, "--", 2))
        return false;
    size_t n = strcspn(a, "=");
    if (n > strlen(full) || strncmp(a, full, n))
        return false;
    return n == strlen(full) || n >= min;
}

static bool long_spells(const char *a, const char *full)
{
    return long_spells_min(a, full, 5);
}

/* Does a long option before "--" spell full (abbreviations of min chars
 * or more included)? */
static bool has_long(const bash_cmd *c, size_t from, const char *full, size_t min)
{
    for (size_t i = from; i < c->argc; i++) {
        if (!strcmp(c->argv[i], "--"))
            return false;
        if (long_spells_min(c->argv[i], full, min))
            return true;
    }
    return false;
}

static bool has_arg(const bash_cmd *c, size_t from, const char *word)
{
    for (size_t i = from; i < c->argc; i++)
        if (!strcmp(c->argv[i], word))
            return true;
    return false;
}

/* ---- paths ----------------------------------------------------------- */

static const char *const SYSTEM_DIRS[] = {
    "bin", "boot", "dev", "etc", "home", "lib", "lib32", "lib64", "libx32", "opt", "proc",
    "root", "run", "sbin", "srv", "sys", "usr", "var", "snap", "Users", "System", "Library",
    "Applications", "private", NULL,
};

typedef enum { T_OTHER, T_ROOT, T_HOME, T_SYSTEM, T_UNSET_VAR, T_CWD } target_kind;

/* What an rm/chmod operand names, after dropping a trailing slash, slash
 * star or slash dot (rm -rf of "/" and of "/" + "*" are the same disaster). */
static target_kind classify_target(const char *w)
{
    /* "$DIR/" (or with a star after the slash) with DIR empty is the root:
     * the classic way a script's rm -rf ends up there. */
    if (w[0] == '$' && strncmp(w, "$HOME", 5) && strncmp(w, "${HOME}", 7)) {
        const char *e = w + 1;
        if (*e == '{') {
            e = strchr(e, '}');
            e = e ? e + 1 : w + strlen(w);
        } else {
            while (*e == '_' || (*e >= 'a' && *e <= 'z') || (*e >= 'A' && *e <= 'Z') ||
                   (*e >= '0' && *e <= '9'))
                e++;
        }
        if (!strcmp(e, "/") || !strcmp(e, "/*"))
            return T_UNSET_VAR;
    }
    /* ~/.. and $HOME/../.. climb out of home: with home's real place put
     * in, "~/../.." is the root wherever home sits two levels deep. */
    size_t hl = !strncmp(w, "~/", 2) ? 1 : !strncmp(w, "$HOME/", 6) ? 5
              : !strncmp(w, "${HOME}/", 8) ? 7 : 0;
    const char *home = getenv("HOME");
    if (hl && strstr(w + hl, "..") && home && home[0] == '/' && strlen(home) < 256) {
        char abs[600];
        snprintf(abs, sizeof abs, "%s%s", home, w + hl);
        return classify_target(abs);
    }
    char buf[512];
    snprintf(buf, sizeof buf, "%s", w);
    size_t n = strlen(buf);
    for (;;) {
        if (n > 1 && buf[n - 1] == '/')
            n--;
        else if (n > 2 && buf[n - 1] == '*' && buf[n - 2] == '/')
            n -= 2;
        else if (n > 2 && buf[n - 1] == '.' && buf[n - 2] == '/')
            n -= 2;
        else
            break;
        buf[n] = '\0';
    }
    /* Collapse repeated slashes: "//" and "///etc" are "/" and "/etc". */
    size_t o = 0;
    for (size_t i = 0; i < n; i++)
        if (!(buf[i] == '/' && o > 0 && buf[o - 1] == '/'))
            buf[o++] = buf[i];
    buf[o] = '\0';
    n = o;
    if (n > 1 && buf[n - 1] == '/')
        buf[--n] = '\0';
    /* "/." "/.." "/usr/../": resolve . and .. by the text (at the root,
     * .. stays the root), as the kernel would for these absolute paths. */
    if (buf[0] == '/') {
        char out[512];
        size_t on = 0;
        for (const char *p = buf; *p;) {
            while (*p == '/')
                p++;
            size_t len = strcspn(p, "/");
            if (!len)
                break;
            if (len == 2 && p[0] == '.' && p[1] == '.') {
                while (on > 0 && out[on - 1] != '/')
                    on--;
                if (on > 0)
                    on--;
            } else if (!(len == 1 && p[0] == '.') && on + len + 2 < sizeof out) {
                out[on++] = '/';
                memcpy(out + on, p, len);
                on += len;
            }
            p += len;
        }
        if (!on)
            out[on++] = '/';
        out[on] = '\0';
        memcpy(buf, out, on + 1);
        n = on;
    }
    if (!strcmp(buf, "/") || !strcmp(buf, "/*"))
        return T_ROOT;
    if (!strcmp(buf, "~") || !strcmp(buf, "~/*") || !strcmp(buf, "$HOME") ||
        !strcmp(buf, "${HOME}") || !strcmp(buf, "$HOME/*") || !strcmp(buf, "${HOME}/*"))
        return T_HOME;
    const char *hd = getenv("HOME");
    size_t hdl = hd ? strlen(hd) : 0;
    while (hdl > 1 && hd[hdl - 1] == '/')
        hdl--;
    if (hdl > 1 && hd[0] == '/' && !strncmp(buf, hd, hdl) &&
        (!buf[hdl] || !strcmp(buf + hdl, "/*")))
        return T_HOME;   /* home by its real place: /home/me, ~/x/.. */
    if (!strcmp(buf, ".") || !strcmp(buf, "..") || !strcmp(buf, "*") || !strcmp(buf, "./*") ||
        !strcmp(buf, "../*"))
        return T_CWD;
    if (buf[0] == '/' && is_one_of(buf + 1, SYSTEM_DIRS))
        return T_SYSTEM;
    if (buf[0] == '/' && buf[n - 1] == '*' && strchr(buf + 1, '/') == buf + n - 2) {
        char top[256];
        snprintf(top, sizeof top, "%.*s", (int)(n - 3), buf + 1);
        if (is_one_of(top, SYSTEM_DIRS))
            return T_SYSTEM;
    }
    return T_OTHER;
}

static bool is_block_device(const char *p)
{
    static const char *const DEV[] = {"sd", "hd", "vd", "xvd", "nvme", "mmcblk", "dm-", "md",
                                      "disk", "rdisk", "mapper/", "loop", "nbd", "zd", NULL};
    if (strncmp(p, "/dev/", 5))
        return false;
    for (size_t k = 0; DEV[k]; k++)
        if (!strncmp(p + 5, DEV[k], strlen(DEV[k])))
            return true;
    return false;
}

static const char *base_name(const char *p)
{
    const char *s = strrchr(p, '/');
    return s && s[1] ? s + 1 : p;
}

static bool is_startup_file(const char *p)
{
    static const char *const NAMES[] = {
        ".bashrc", ".bash_profile", ".bash_login", ".bash_logout", ".profile", ".zshrc",
        ".zprofile", ".zshenv", ".zlogin", ".zlogout", ".kshrc", ".mkshrc", ".cshrc",
        ".tcshrc", ".login", ".xprofile", ".xinitrc", ".inputrc", NULL,
    };
    size_t n = strlen(p);
    if (is_one_of(base_name(p), NAMES))
        return true;
    if (n >= 16 && !strcmp(p + n - 16, "fish/config.fish"))
        return true;
    return !strncmp(p, "/etc/profile", 12) || !strncmp(p, "/etc/bash.bashrc", 16) ||
           !strncmp(p, "/etc/zsh", 8) || !strcmp(p, "/etc/environment") ||
           !strncmp(p, "/etc/bashrc", 11);
}

static bool is_history_file(const char *p)
{
    static const char *const NAMES[] = {".bash_history", ".zsh_history", ".history",
                                        ".sh_history", NULL};
    return is_one_of(base_name(p), NAMES) || strstr(p, "fish_history");
}

static bool is_system_path(const char *p)
{
    static const char *const PRE[] = {"/etc/", "/usr/", "/bin/", "/sbin/", "/boot/", "/lib/",
                                      "/lib64/", "/opt/", "/var/lib/", "/sys/", "/proc/",
                                      "/System/", "/Library/", NULL};
    for (size_t k = 0; PRE[k]; k++)
        if (!strncmp(p, PRE[k], strlen(PRE[k])))
            return true;
    return false;
}

/* ---- write targets --------------------------------------------------- */

static bool harmless_sink(const char *t)
{
    return !strcmp(t, "/dev/null") || !strcmp(t, "/dev/stdout") || !strcmp(t, "/dev/stderr") ||
           !strcmp(t, "/dev/tty") || !strncmp(t, "/dev/fd/", 8);
}

/* Operands: words after the command that are not options (all of them
 * after "--"). value_opts lists short options that take the next word. */
static size_t operands(const bash_cmd *c, const char *value_opts, const char **out, size_t cap)
{
    size_t n = 0;
    bool ended = false;
    for (size_t i = 1; i < c->argc; i++) {
        const char *a = c->argv[i];
        if (!ended && !strcmp(a, "--")) {
            ended = true;
            continue;
        }
        if (!ended && a[0] == '-' && a[1]) {
            if (a[1] != '-' && value_opts && !a[2] && strchr(value_opts, a[1]))
                i++;
            continue;
        }
        if (n < cap)
            out[n] = a;
        n++;
    }
    return n;
}

typedef struct write_scan {
    risk_verdict *v;
} write_scan;

static void on_write(void *ctx, const char *path)
{
    write_scan *w = ctx;
    if (is_block_device(path))
        raise_to(w->v, RISK_FORBIDDEN, "disk.write_device",
                 "writes straight to the block device %s: destroys the file system on it", path);
    else if (is_startup_file(path))
        raise_to(w->v, RISK_CONFIRM, "shell.startup_write",
                 "changes the shell start-up file %s: runs in every future shell", path);
    else if (is_history_file(path))
        raise_to(w->v, RISK_CONFIRM, "shell.history_rewrite",
                 "rewrites the shell history file %s", path);
    else if (is_system_path(path))
        raise_to(w->v, RISK_CONFIRM, "fs.write_system", "writes the system file %s", path);
}

/* ---- per-command rules ----------------------------------------------- */

static void rule_rm(const bash_cmd *c, risk_verdict *v)
{
    /* rm's long options abbreviate down to one letter (--r, --n are
     * unambiguous); "-" letters in a cluster count wherever they stand. */
    bool recursive = has_opt(c, 1, 'r', "--recursive") || has_opt(c, 1, 'R', NULL) ||
                     has_long(c, 1, "--recursive", 3);
    if (has_arg(c, 1, "--no-preserve-root") || has_long(c, 1, "--no-preserve-root", 3)) {
        raise_to(v, RISK_FORBIDDEN, "fs.rm_root",
                 "rm --no-preserve-root exists only to delete the whole file system");
        return;
    }
    if (!recursive)
        return;
    const char *ops[64];
    size_t n = operands(c, "", ops, 64);
    for (size_t k = 0; k < n && k < 64; k++) {
        switch (classify_target(ops[k])) {
        case T_ROOT:
            raise_to(v, RISK_FORBIDDEN, "fs.rm_root", "rm -r %s deletes the whole file system",
                     ops[k]);
            break;
        case T_HOME:
            raise_to(v, RISK_FORBIDDEN, "fs.rm_home", "rm -r %s deletes the home directory",
                     ops[k]);
            break;
        case T_SYSTEM:
            raise_to(v, RISK_FORBIDDEN, "fs.rm_system", "rm -r %s deletes a system directory",
                     ops[k]);
            break;
        case T_UNSET_VAR:
            raise_to(v, RISK_CONFIRM, "fs.rm_var_path",
                     "rm -r %s: if the variable is empty this reaches the root; check it or "
                     "use ${VAR:?}", ops[k]);
            break;
        case T_CWD:
            raise_to(v, RISK_CONFIRM, "fs.rm_cwd",
                     "rm -r %s deletes everything in the working directory", ops[k]);
            break;
        case T_OTHER:
            break;
        }
    }
}

/* The first starting point of find that is the root, the home directory
 * or a system directory (after -H/-L/-P/-D/-O), or NULL. */
static const char *find_system_root(const bash_cmd *c)
{
    size_t i = 1;
    while (i < c->argc && (!strcmp(c->argv[i], "-H") || !strcmp(c->argv[i], "-L") ||
                           !strcmp(c->argv[i], "-P") || !strncmp(c->argv[i], "-O", 2) ||
                           !strcmp(c->argv[i], "-D")))
        i += !strcmp(c->argv[i], "-D") ? 2 : 1;
    for (; i < c->argc && c->argv[i][0] != '-' && strcmp(c->argv[i], "(") &&
           strcmp(c->argv[i], "!");
         i++) {
        target_kind t = classify_target(c->argv[i]);
        if (t == T_ROOT || t == T_HOME || t == T_SYSTEM)
            return c->argv[i];
    }
    return NULL;
}

/* Programs that delete or destroy the files they are handed. */
static const char *const DELETERS[] = {"rm", "unlink", "rmdir", "shred", "srm", "truncate",
                                       "wipe", NULL};

static const char *const FIND_WRAPPERS[] = {"sudo", "doas", "env", "nice", "nohup", "command",
                                            "timeout", "stdbuf", "ionice", "xargs", NULL};

static void rule_find(const bash_cmd *c, risk_verdict *v)
{
    const char *root = find_system_root(c);
    if (!root)
        return;
    for (size_t i = 1; i < c->argc; i++) {
        const char *a = c->argv[i];
        bool exec = !strcmp(a, "-exec") || !strcmp(a, "-execdir") || !strcmp(a, "-ok") ||
                    !strcmp(a, "-okdir");
        size_t e = i + 1;
        while (exec && e < c->argc && (is_one_of(base_name(c->argv[e]), FIND_WRAPPERS) ||
                                       c->argv[e][0] == '-'))
            e++;   /* find / -exec sudo -n rm {} + */
        if (!strcmp(a, "-delete") ||
            (exec && e < c->argc && is_one_of(base_name(c->argv[e]), DELETERS))) {
            raise_to(v, RISK_FORBIDDEN, "fs.find_delete_root",
                     "find %s %s deletes a whole tree of the system", root,
                     exec ? "-exec rm" : "-delete");
            return;
        }
    }
}

/* Does this simple command delete everything in its working directory
 * (rm -r of a star, ".", "./" + star; find . -delete; find . -exec rm)? */
static bool deletes_cwd(const bash_cmd *c)
{
    const char *name = bash_cmd_name(c);
    if (!strcmp(name, "rm")) {
        bool recursive = has_opt(c, 1, 'r', "--recursive") || has_opt(c, 1, 'R', NULL) ||
                         has_long(c, 1, "--recursive", 3);
        const char *ops[64];
        size_t n = operands(c, "", ops, 64);
        for (size_t k = 0; recursive && k < n && k < 64; k++)
            if (classify_target(ops[k]) == T_CWD)
                return true;
        return false;
    }
    if (!strcmp(name, "find")) {
        size_t i = 1;
        while (i < c->argc && (!strcmp(c->argv[i], "-H") || !strcmp(c->argv[i], "-L") ||
                               !strcmp(c->argv[i], "-P")))
            i++;
        bool dot = i >= c->argc || c->argv[i][0] == '-' || classify_target(c->argv[i]) == T_CWD;
        for (size_t k = i; dot && k < c->argc; k++)
            if (!strcmp(c->argv[k], "-delete") ||
                ((!strcmp(c->argv[k], "-exec") || !strcmp(c->argv[k], "-execdir")) &&
                 k + 1 < c->argc && is_one_of(base_name(c->argv[k + 1]), DELETERS)))
                return true;
    }
    return false;
}

/* cd / && rm -rf *: the working directory a literal cd (or pushd, or a
 * bare cd: home) moved to, then a delete of "everything here". */
static void cd_then_delete(const bash_cmds *pc, risk_verdict *v)
{
    const char *at = NULL;
    for (size_t i = 0; i < bash_cmds_count(pc); i++) {
        const bash_cmd *c = bash_cmds_at(pc, i);
        const char *name = bash_cmd_name(c);
        if (!strcmp(name, "cd") || !strcmp(name, "pushd")) {
            const char *ops[4];
            size_t n = operands(c, "", ops, 4);
            const char *dir = n ? ops[0] : "~";
            target_kind t = classify_target(dir);
            at = t == T_ROOT || t == T_HOME || t == T_SYSTEM ? dir : NULL;
            continue;
        }
        if (at && deletes_cwd(c))
            raise_to(v, RISK_FORBIDDEN, "fs.rm_root",
                     "after cd %s, %s deletes everything there", at, name);
    }
}

/* mv of the root, the home directory or a system directory takes it away
 * as surely as rm -r; rsync --delete onto one empties it. */
static void rule_mv_rsync(const bash_cmd *c, risk_verdict *v)
{
    const char *name = bash_cmd_name(c);
    const char *ops[64];
    size_t n = operands(c, !strcmp(name, "mv") ? "tS" : "eTfBM", ops, 64);
    if (n > 64)
        n = 64;
    if (!strcmp(name, "mv")) {
        bool tdir = has_opt(c, 1, 't', "--target-directory");
        for (size_t k = 0; k < n && (tdir || k + 1 < n); k++) {
            target_kind t = classify_target(ops[k]);
            if (t == T_ROOT || t == T_HOME || t == T_SYSTEM)
                raise_to(v, RISK_FORBIDDEN, "fs.mv_system",
                         "mv %s moves a system directory away: the system breaks", ops[k]);
        }
        return;
    }
    bool del = false;
    for (size_t i = 1; i < c->argc; i++)
        if (!strncmp(c->argv[i], "--delete", 8) || long_spells(c->argv[i], "--delete"))
            del = true;
    if (del && n >= 2) {
        target_kind t = classify_target(ops[n - 1]);
        if (t == T_ROOT || t == T_HOME || t == T_SYSTEM)
            raise_to(v, RISK_FORBIDDEN, "fs.rsync_delete_root",
                     "rsync --delete onto %s deletes everything there the source lacks",
                     ops[n - 1]);
    }
}

/* chmod modes that give every user write access: 777, 0666, a+w, o+rwx … */
static bool world_writable(const char *mode)
{
    size_t n = strlen(mode);
    if (n >= 3 && n <= 4 && strspn(mode, "01234567") == n)
        return ((mode[n - 1] - '0') & 2) != 0;
    char buf[128];
    snprintf(buf, sizeof buf, "%s", mode);
    for (char *save = NULL, *cl = strtok_r(buf, ",", &save); cl; cl = strtok_r(NULL, ",", &save)) {
        size_t who = strspn(cl, "ugoa");
        bool others = memchr(cl, 'o', who) || memchr(cl, 'a', who);
        if (others && (cl[who] == '+' || cl[who] == '=') && strchr(cl + who, 'w'))
            return true;
    }
    return false;
}

static void rule_chmod(const bash_cmd *c, risk_verdict *v, bool is_chmod)
{
    const char *name = bash_cmd_name(c);
    bool recursive = has_opt(c, 1, 'R', "--recursive") || has_long(c, 1, "--recursive", 5);
    const char *ops[64];
    size_t n = operands(c, "", ops, 64);
    /* chmod's mode may itself look like an option (-w): take it raw. */
    size_t first = 0;
    const char *mode = NULL;
    if (is_chmod) {
        for (size_t i = 1; i < c->argc; i++) {
            const char *a = c->argv[i];
            if (a[0] == '-' && (a[1] == 'R' || a[1] == '-' || a[1] == 'v' || a[1] == 'c' ||
                                a[1] == 'f'))
                continue;
            mode = a;
            break;
        }
        first = n && mode == ops[0] ? 1 : 0;
    }
    if (recursive)
        for (size_t k = first; k < n && k < 64; k++) {
            target_kind t = classify_target(ops[k]);
            if (t == T_ROOT || t == T_HOME || t == T_SYSTEM)
                raise_to(v, RISK_FORBIDDEN, is_chmod ? "perm.chmod_root" : "perm.chown_root",
                         "%s -R on %s changes every file of the system", name, ops[k]);
        }
    if (is_chmod && mode && world_writable(mode))
        raise_to(v, RISK_CONFIRM, "perm.chmod_777",
                 "chmod %s makes files writable by every user%s; prefer 755/644 or u+x", mode,
                 recursive ? " (recursively)" : "");
}

static const char *const SHELLS[] = {"sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "fish",
                                     "yash", "rbash", NULL};
static const char *const INTERPRETERS[] = {"python", "python2", "python3", "perl", "ruby",
                                           "node", "php", "lua", "tclsh", NULL};
static const char *const DOWNLOADERS[] = {"curl", "wget", "fetch", "aria2c", "http", "https",
                                          "lwp-request", NULL};

/* Does this shell or interpreter take its program from stdin? Not when
 * given -c/-e/-m or a script file. */
static bool program_from_stdin(const bash_cmd *c)
{
    const char *name = bash_cmd_name(c);
    bool shell = is_one_of(name, SHELLS);
    for (size_t i = 1; i < c->argc; i++) {
        const char *a = c->argv[i];
        if (!strcmp(a, "-"))
            return true;
        if (!strcmp(a, "--"))
            return i + 1 >= c->argc;
        if (a[0] != '-' && a[0] != '+')
            return false;   /* a script file */
        if (a[1] == '-') {
            if (!strcmp(a, "--eval") || !strcmp(a, "--command"))
                return false;
            continue;
        }
        if (shell) {
            if (strchr(a + 1, 'c'))
                return false;
            if (strchr(a + 1, 's'))
                return true;
            if (!strcmp(a + 1, "o") || !strcmp(a + 1, "O"))
                i++;
        } else if (strchr(a + 1, 'c') || strchr(a + 1, 'e') || strchr(a + 1, 'E') ||
                   strchr(a + 1, 'm') || strchr(a + 1, 'p') || strchr(a + 1, 'r')) {
            return false;
        }
    }
    return true;
}

static bool mentions_download(const char *w)
{
    static const char *const PAT[] = {"$(curl", "$(wget", "`curl", "`wget", "<(curl", "<(wget",
                                      "$( curl", "$( wget", NULL};
    for (size_t k = 0; PAT[k]; k++)
        if (strstr(w, PAT[k]))
            return true;
    return false;
}

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
            } else if (long_spells(a, "--force") && strcspn(a, "=") <= 7) {
                plain_force = true;
            } else if (long_spells(a, "--force-with-lease") ||
                       long_spells(a, "--force-if-includes")) {
                lease = true;
            } else if (long_spells(a, "--all") || long_spells(a, "--branches")) {
                all = true;
            } else if (long_spells(a, "--mirror")) {
                mirror = true;
            } else if (long_spells(a, "--delete")) {
                del = true;
            } else if (long_spells(a, "--repo")) {
                repo_given = true;
                if (!strchr(a, '='))
                    k++;
            } else if (long_spells(a, "--push-option") || long_spells(a, "--receive-pack") ||
                       long_spells(a, "--exec")) {
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
        raise_to(v, RISK_FORBIDDEN, "git.push_force_main",
                 "git push --mirror force-updates and deletes every ref on the remote, main "
                 "included; never done automatically");
    else if (force && (protected_ref || all))
        raise_to(v, RISK_FORBIDDEN, "git.push_force_main",
                 "force-pushing %s rewrites the shared history of the main branch; never "
                 "done automatically",
                 all ? "every branch (main included)" : "main/master (or the current branch)");
    else if (force && implicit)
        raise_to(v, RISK_FORBIDDEN, "git.push_force_main",
                 "a force push that names no branch pushes the current one, which may be "
                 "main; name the branch: git push --force-with-lease origin <branch>");
    else if (del && protected_ref)
        raise_to(v, RISK_FORBIDDEN, "git.push_delete_main",
                 "deletes the main branch on the remote");
    else if (lease)
        raise_to(v, RISK_CONFIRM, "git.push_force_lease",
                 "force-pushes (with lease): rewrites the remote branch's history");
    else if (force)
        raise_to(v, RISK_CONFIRM, "git.push_force",
                 "git push --force overwrites the remote branch; use --force-with-lease, "
                 "which refuses to drop commits you have not seen");
    else if (del)
        raise_to(v, RISK_CONFIRM, "git.push_delete", "deletes a branch or tag on the remote");
    else
        raise_to(v, RISK_CONFIRM, "git.push", "publishes commits to a remote");
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
    if (!strcmp(sub, "push") || (!alias && is_one_of(sub, GIT_NOT_PUSH)))
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
        raise_to(v, pv.level, pv.rule_id, "git %s may be git push: %s", sub, pv.reason);
        return true;
    }
    if (alias || !strcmp(sub, "send-pack")) {
        raise_to(v, pv.level, pv.rule_id, "git %s is git push: %s", sub, pv.reason);
        return true;
    }
    return false;
}

static void rule_git(const bash_cmd *c, risk_verdict *v, bool *safe)
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
    if (is_one_of(sub, READ_ONLY)) {
        /* --output writes a file; --ext-diff, textconv and grep -O run
         * programs. */
        *safe = !configured && !has_opt(c, a0, 0, "--output") &&
                !has_opt(c, a0, 0, "--ext-diff") && !has_opt(c, a0, 0, "--textconv") &&
                !(!strcmp(sub, "grep") && (has_opt(c, a0, 'O', "--open-files-in-pager")));
        return;
    }
    if (configured)
        *safe = false;
    if (!strcmp(sub, "branch")) {
        bool del = has_opt(c, a0, 'd', "--delete"), force = has_opt(c, a0, 'f', "--force");
        if (has_opt(c, a0, 'D', NULL) || (del && force))
            raise_to(v, RISK_CONFIRM, "git.branch_force_delete",
                     "git branch -D deletes a branch even when it is not merged; git branch -d "
                     "refuses to lose commits");
        size_t n = 0;
        for (size_t k = a0; k < c->argc; k++)
            n += c->argv[k][0] != '-';
        *safe = n == 0 && !del && !force && !has_opt(c, a0, 'm', "--move") &&
                !has_opt(c, a0, 'M', NULL) && !has_opt(c, a0, 'c', "--copy") &&
                !has_opt(c, a0, 'C', NULL) && !has_opt(c, a0, 'u', "--set-upstream-to") &&
                !has_opt(c, a0, 0, "--unset-upstream") && !has_opt(c, a0, 0, "--edit-description");
        return;
    }
    if (!strcmp(sub, "remote") || !strcmp(sub, "tag") || !strcmp(sub, "stash") ||
        !strcmp(sub, "config") || !strcmp(sub, "reflog")) {
        bool listing = a0 >= c->argc || !strcmp(c->argv[a0], "-v") ||
                       !strcmp(c->argv[a0], "--verbose") || !strcmp(c->argv[a0], "-l") ||
                       !strcmp(c->argv[a0], "--list") || !strcmp(c->argv[a0], "list") ||
                       !strcmp(c->argv[a0], "show") || !strcmp(c->argv[a0], "get-url") ||
                       !strcmp(c->argv[a0], "--get") || !strcmp(c->argv[a0], "--get-all");
        if (!strcmp(sub, "stash") && a0 < c->argc &&
            (!strcmp(c->argv[a0], "drop") || !strcmp(c->argv[a0], "clear")))
            raise_to(v, RISK_CONFIRM, "git.stash_drop",
                     "git stash %s deletes stashed changes for good", c->argv[a0]);
        if (!strcmp(sub, "reflog") && a0 < c->argc &&
            (!strcmp(c->argv[a0], "expire") || !strcmp(c->argv[a0], "delete")))
            raise_to(v, RISK_CONFIRM, "git.reflog_expire",
                     "git reflog %s drops the record that lets lost commits be recovered",
                     c->argv[a0]);
        *safe = listing && strcmp(sub, "stash");
        if (!strcmp(sub, "stash") && a0 < c->argc && !strcmp(c->argv[a0], "list"))
            *safe = true;
        if (!strcmp(sub, "stash") && a0 < c->argc && !strcmp(c->argv[a0], "show"))
            *safe = true;
        return;
    }
    if (!strcmp(sub, "push")) {
        rule_git_push(c, a0, v);
        return;
    }
    if (!strcmp(sub, "reset") && has_opt(c, a0, 0, "--hard")) {
        raise_to(v, RISK_CONFIRM, "git.reset_hard",
                 "git reset --hard throws away uncommitted changes; git stash keeps them");
        return;
    }
    if (!strcmp(sub, "clean")) {
        bool dry = has_opt(c, a0, 'n', "--dry-run");
        if (!dry && has_opt(c, a0, 'f', "--force"))
            raise_to(v, RISK_CONFIRM, "git.clean",
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
        if (dashdash || dot || has_opt(c, a0, 'f', "--force"))
            raise_to(v, RISK_CONFIRM, "git.checkout_discard",
                     "git checkout -- <paths> / -f throws away uncommitted changes");
        return;
    }
    if (!strcmp(sub, "restore")) {
        bool staged = has_opt(c, a0, 'S', "--staged"), work = has_opt(c, a0, 'W', "--worktree");
        if (!staged || work)
            raise_to(v, RISK_CONFIRM, "git.restore_discard",
                     "git restore throws away uncommitted changes to the files");
        return;
    }
    if (!strcmp(sub, "switch") &&
        (has_opt(c, a0, 'f', "--force") || has_opt(c, a0, 0, "--discard-changes"))) {
        raise_to(v, RISK_CONFIRM, "git.checkout_discard",
                 "git switch --discard-changes throws away uncommitted changes");
        return;
    }
    if (!strcmp(sub, "rebase") && has_opt(c, a0, 'i', "--interactive")) {
        raise_to(v, RISK_CONFIRM, "git.rebase_interactive",
                 "git rebase -i rewrites history and needs an editor; use a non-interactive "
                 "rebase");
        return;
    }
    if (!strcmp(sub, "commit") && has_opt(c, a0, 0, "--amend")) {
        raise_to(v, RISK_CONFIRM, "git.commit_amend",
                 "git commit --amend rewrites the last commit, which may already be pushed; a "
                 "new commit is safer");
        return;
    }
    if (!strcmp(sub, "filter-branch") || !strcmp(sub, "filter-repo")) {
        raise_to(v, RISK_CONFIRM, "git.filter_branch", "git %s rewrites the whole history", sub);
        return;
    }
    if (!strcmp(sub, "gc") && has_opt(c, a0, 0, "--prune")) {
        raise_to(v, RISK_CONFIRM, "git.reflog_expire",
                 "git gc --prune deletes unreachable commits for good");
        return;
    }
    if (!strcmp(sub, "add")) {
        for (size_t k = a0; k < c->argc; k++)
            if (!strcmp(c->argv[k], ".") || !strcmp(c->argv[k], "-A") ||
                !strcmp(c->argv[k], "--all") || !strcmp(c->argv[k], ":/")) {
                raise_to(v, RISK_UNKNOWN, "git.add_all",
                         "git add %s stages everything, secrets and build output included; "
                         "prefer git add <specific-files>", c->argv[k]);
                break;
            }
    }
}

/* The plainly read-only commands (SAFE when nothing else about them
 * writes or runs something). */
static bool read_only_command(const bash_cmd *c)
{
    static const char *const PLAIN[] = {
        "ls", "cat", "head", "tail", "grep", "egrep", "fgrep", "pwd", "echo", "printf", "wc",
        "true", "false", "which", "type", "stat", "du", "df", "whoami", "id",
        "uname", "basename", "dirname", "realpath", "readlink", "cut", "tr", "diff", "cmp",
        "test", "[", "printenv", "nl", "od", "sha256sum", "sha1sum", "sha512sum", "md5sum",
        "cksum", "cd", "jq", "column", "comm", "seq", "sleep", "ps", "tac", "rev", "fold",
        "expand", "unexpand", "paste", "join", "locale", "groups", "nproc", "uptime", "cal",
        "lsb_release", "hexdump", "xxd", "strings", "env", NULL,
    };
    const char *name = bash_cmd_name(c);
    if (!strcmp(name, "env") && c->argc > 1)
        return false;   /* env CMD runs CMD: judged through the derived command */
    if (!strcmp(name, "xxd") && (has_opt(c, 1, 'r', NULL) || operands(c, "", NULL, 0) > 1))
        return false;
    if (is_one_of(name, PLAIN))
        return true;
    if (!strcmp(name, "find")) {
        static const char *const ACT[] = {"-delete", "-exec", "-execdir", "-ok", "-okdir",
                                          "-fprint", "-fprint0", "-fprintf", "-fls", NULL};
        for (size_t i = 1; i < c->argc; i++)
            if (is_one_of(c->argv[i], ACT))
                return false;
        return true;
    }
    if (!strcmp(name, "rg"))
        return !has_opt(c, 1, 0, "--pre");
    if (!strcmp(name, "sort"))
        return !has_opt(c, 1, 'o', "--output") && !has_opt(c, 1, 0, "--compress-program");
    if (!strcmp(name, "file"))
        return !has_opt(c, 1, 'C', "--compile");
    if (!strcmp(name, "uniq"))
        return operands(c, "fsw", NULL, 0) <= 1;
    if (!strcmp(name, "tree"))
        return !has_opt(c, 1, 'o', NULL);
    if (!strcmp(name, "date"))
        return !has_opt(c, 1, 's', "--set");
    if (!strcmp(name, "hostname"))
        return c->argc == 1;
    return false;
}

bool risk_cmd_reads_only(const bash_cmd *c)
{
    return c && c->argc && read_only_command(c);
}

/* Judges one simple command; *safe tells whether it is plainly read-only. */
static void classify_one(const bash_cmd *c, risk_verdict *v, bool *safe)
{
    *safe = false;
    write_scan ws = {v};
    risk_write_targets(c, on_write, &ws);
    bool writes = false;
    for (size_t k = 0; k < c->nredir; k++)
        if (bash_redir_writes(&c->redir[k]) && !harmless_sink(c->redir[k].target))
            writes = true;
    if (!c->argc) {
        *safe = !writes && !c->nassign;
        return;
    }
    const char *name = bash_cmd_name(c);
    if (!strcmp(name, "rm"))
        rule_rm(c, v);
    else if (!strcmp(name, "mv") || !strcmp(name, "rsync"))
        rule_mv_rsync(c, v);
    else if (!strcmp(name, "find"))
        rule_find(c, v);
    else if (!strcmp(name, "chmod"))
        rule_chmod(c, v, true);
    else if (!strcmp(name, "chown") || !strcmp(name, "chgrp"))
        rule_chmod(c, v, false);
    else if (!strcmp(name, "sudo") || !strcmp(name, "doas") || !strcmp(name, "su") ||
             !strcmp(name, "pkexec") || !strcmp(name, "run0"))
        raise_to(v, RISK_CONFIRM, "priv.sudo", "%s runs a command with raised privileges", name);
    else if (!strncmp(name, "mkfs", 4) || !strcmp(name, "mke2fs") || !strcmp(name, "mkswap") ||
             !strcmp(name, "mkntfs") || !strcmp(name, "mkdosfs") || !strcmp(name, "newfs"))
        raise_to(v, RISK_FORBIDDEN, "disk.mkfs", "%s creates a file system, erasing the device",
                 name);
    else if (!strcmp(name, "wipefs") || !strcmp(name, "blkdiscard"))
        raise_to(v, RISK_FORBIDDEN, "disk.wipe", "%s erases a device", name);
    else if (!strcmp(name, "shred") || !strcmp(name, "badblocks")) {
        for (size_t i = 1; i < c->argc; i++)
            if (is_block_device(c->argv[i]))
                raise_to(v, RISK_FORBIDDEN, "disk.write_device", "%s overwrites the device %s",
                         name, c->argv[i]);
    } else if (!strcmp(name, "fdisk") || !strcmp(name, "sfdisk") || !strcmp(name, "parted") ||
               !strcmp(name, "gdisk") || !strcmp(name, "sgdisk") || !strcmp(name, "cfdisk"))
        raise_to(v, RISK_CONFIRM, "disk.partition", "%s changes a partition table", name);
    else if (!strcmp(name, "git"))
        rule_git(c, v, safe);
    else if (!strcmp(name, "history") && (has_opt(c, 1, 'c', NULL) || has_opt(c, 1, 'd', NULL)))
        raise_to(v, RISK_CONFIRM, "shell.history_clear", "history -c/-d rewrites the shell history");
    else if (!strcmp(name, "shutdown") || !strcmp(name, "reboot") || !strcmp(name, "halt") ||
             !strcmp(name, "poweroff") ||
             (!strcmp(name, "init") && c->argc > 1 && (!strcmp(c->argv[1], "0") ||
                                                       !strcmp(c->argv[1], "6"))) ||
             (!strcmp(name, "systemctl") && c->argc > 1 &&
              (!strcmp(c->argv[1], "poweroff") || !strcmp(c->argv[1], "reboot") ||
               !strcmp(c->argv[1], "halt"))))
        raise_to(v, RISK_CONFIRM, "sys.shutdown", "%s stops or restarts the machine", name);

    if (is_one_of(name, INTERPRETERS)) {
        for (size_t i = 1; i < c->argc; i++)
            if (strstr(c->argv[i], "fork") &&
                (strstr(c->argv[i], "while") || strstr(c->argv[i], "for(;;)") ||
                 strstr(c->argv[i], "for (;;)") || strstr(c->argv[i], "loop")))
                raise_to(v, RISK_FORBIDDEN, "proc.fork_bomb",
                         "%s forks in an endless loop (a fork bomb)", name);
    }
    if (is_one_of(name, SHELLS) || is_one_of(name, INTERPRETERS) || !strcmp(name, "source") ||
        !strcmp(name, ".") || !strcmp(name, "eval")) {
        for (size_t i = 1; i < c->argc; i++)
            if (mentions_download(c->argv[i]))
                raise_to(v, RISK_FORBIDDEN, "net.pipe_to_shell",
                         "runs a script downloaded from the network (%s)", name);
    }
    if (c->function && !strcmp(name, c->function) &&
        (c->flags & (BASH_CMD_PIPE_IN | BASH_CMD_PIPE_OUT | BASH_CMD_BACKGROUND)))
        raise_to(v, RISK_FORBIDDEN, "proc.fork_bomb",
                 "the function %s starts copies of itself in a pipe or the background (a fork "
                 "bomb)", c->function);

    if (!strcmp(name, "git"))
        *safe = *safe && !writes && !c->nassign;
    else
        *safe = !writes && !c->nassign && read_only_command(c);
}

/* The same after brace expansion: rm -rf /{,} is rm -rf /. */
static void classify_cmd(const bash_cmd *c, risk_verdict *v, bool *safe)
{
    risk_expanded x;
    risk_expand_cmd(c, &x);
    classify_one(&x.cmd, v, safe);
    risk_expanded_free(&x);
}

/* ---- the raw-text backstop ------------------------------------------- */

typedef struct text_rule {
    const char *id;
    risk_level level;
    const char *pattern;
    const char *reason;
} text_rule;

static const text_rule TEXT_RULES[] = {
    {"fs.rm_root", RISK_FORBIDDEN,
     "\\brm\\s+(?:-\\S+\\s+)*-[a-zA-Z]*[rR][a-zA-Z]*\\s+(?:-\\S+\\s+)*[\"']?(?:/\\*?|~/?\\*?|"
     "\\$\\{?HOME\\}?/?\\*?)[\"']?(?:[\\s;&|)\\\\]|$)",
     "rm -r of the root or home directory"},
    {"fs.rm_root", RISK_FORBIDDEN, "--no-preserve-root", "rm --no-preserve-root"},
    {"fs.rm_root", RISK_FORBIDDEN,
     "\\brm\\s(?=(?:[^;&|\\n]*\\s)?(?:-[a-zA-Z]*[rR][a-zA-Z]*|--r[a-z]*)(?:\\s|$))"
     "[^;&|\\n]*\\s[\"']?(?:/|~|\\$\\{?HOME\\}?)"
     "[\"']?/?[\"']?(?:\\*|\\.)?[\"']?(?:[\\s;&|)\\\\]|$)",
     "rm -r of the root or home directory"},
    {"git.push_force_main", RISK_FORBIDDEN,
     "\\bgit\\b[^;&|\\n]*\\spush\\b(?=[^;&|\\n]*(?:\\s-[a-zA-Z]*f|\\s--forc|\\s[\"']?\\+|--mirror))"
     "(?=[^;&|\\n]*(?:[\\s:/+]main\\b|[\\s:/+]master\\b|--mirror|\\sHEAD\\b))",
     "a force push of main"},
    {"disk.write_device", RISK_FORBIDDEN,
     "(?:>|\\bof=)\\s*/dev/(?:sd|hd|vd|xvd|nvme|mmcblk|disk)", "a write to a block device"},
    {"disk.mkfs", RISK_FORBIDDEN, "\\bmkfs(?:\\.\\w+)?\\b", "mkfs"},
    {"net.pipe_to_shell", RISK_FORBIDDEN,
     "\\b(?:curl|wget)\\b[^|;&]*\\|\\s*(?:sudo\\s+)?(?:ba|z|da|k)?sh\\b",
     "a download piped into a shell"},
    {"proc.fork_bomb", RISK_FORBIDDEN, "(\\w+|:)\\s*\\(\\s*\\)\\s*\\{[^}]*\\1\\s*\\|\\s*\\1\\s*&",
     "a fork bomb"},
};
#define N_TEXT_RULES (sizeof TEXT_RULES / sizeof TEXT_RULES[0])

static pcre2_code *g_text_re[N_TEXT_RULES];
static pthread_once_t g_text_once = PTHREAD_ONCE_INIT;

static void compile_text_rules(void)
{
    for (size_t k = 0; k < N_TEXT_RULES; k++) {
        int ec;
        PCRE2_SIZE off;
        g_text_re[k] = pcre2_compile((PCRE2_SPTR)TEXT_RULES[k].pattern, PCRE2_ZERO_TERMINATED,
                                     PCRE2_MATCH_INVALID_UTF, &ec, &off, NULL);
    }
}

static void text_backstop(const char *command, risk_verdict *v)
{
    pthread_once(&g_text_once, compile_text_rules);
    for (size_t k = 0; k < N_TEXT_RULES; k++) {
        if (!g_text_re[k])
            continue;
        pcre2_match_data *md = pcre2_match_data_create_from_pattern(g_text_re[k], NULL);
        int rc = pcre2_match(g_text_re[k], (PCRE2_SPTR)command, strlen(command), 0, 0, md, NULL);
        pcre2_match_data_free(md);
        if (rc >= 0)
            raise_to(v, TEXT_RULES[k].level, TEXT_RULES[k].id,
                     "%s (matched in a command that could not be parsed for sure)",
                     TEXT_RULES[k].reason);
    }
}

/* ---- the API --------------------------------------------------------- */

risk_verdict risk_classify_bash(const char *command)
{
    risk_verdict v = {.level = RISK_UNKNOWN};
    if (!command)
        return v;
    bash_cmds *pc = bash_parse(command);
    size_t n = bash_cmds_count(pc);
    bool *safe = calloc(n ? n : 1, sizeof *safe);
    if (!safe)
        abort();
    for (size_t i = 0; i < n; i++)
        classify_cmd(bash_cmds_at(pc, i), &v, &safe[i]);

    /* A download piped into something that runs its stdin as a program. */
    for (size_t i = 0; i < n; i++) {
        const bash_cmd *d = bash_cmds_at(pc, i);
        if (!(d->flags & BASH_CMD_PIPE_OUT) || !is_one_of(bash_cmd_name(d), DOWNLOADERS))
            continue;
        for (size_t j = 0; j < n; j++) {
            const bash_cmd *s = bash_cmds_at(pc, j);
            const char *sn = bash_cmd_name(s);
            if (j == i || !(s->flags & BASH_CMD_PIPE_IN) ||
                (s->pipeline == d->pipeline && s->pipe_pos <= d->pipe_pos) ||
                !(is_one_of(sn, SHELLS) || is_one_of(sn, INTERPRETERS)) || !program_from_stdin(s))
                continue;
            raise_to(&v, RISK_FORBIDDEN, "net.pipe_to_shell",
                     "%s output piped into %s runs a script from the network unseen; download "
                     "it to a file and read it first", bash_cmd_name(d), sn);
        }
    }

    /* find / … | xargs rm: the deleter gets the whole tree on stdin. */
    cd_then_delete(pc, &v);
    for (size_t i = 0; i < n; i++) {
        const bash_cmd *d = bash_cmds_at(pc, i);
        const char *root = NULL;
        if (!(d->flags & BASH_CMD_PIPE_OUT))
            continue;
        if (!strcmp(bash_cmd_name(d), "find"))
            root = find_system_root(d);
        else if (!strcmp(bash_cmd_name(d), "echo") || !strcmp(bash_cmd_name(d), "printf"))
            for (size_t k = 1; k < d->argc && !root; k++) {
                target_kind t = classify_target(d->argv[k]);
                if (t == T_ROOT || t == T_HOME || t == T_SYSTEM)
                    root = d->argv[k];   /* echo / | xargs rm -rf */
            }
        if (!root)
            continue;
        for (size_t j = 0; j < n; j++) {
            const bash_cmd *s = bash_cmds_at(pc, j);
            if (s->pipeline != d->pipeline || s->pipe_pos <= d->pipe_pos ||
                strcmp(bash_cmd_name(s), "xargs"))
                continue;
            for (size_t k = 1; k < s->argc; k++)
                if (is_one_of(base_name(s->argv[k]), DELETERS))
                    raise_to(&v, RISK_FORBIDDEN, "fs.find_delete_root",
                             "%s %s piped into xargs %s deletes a whole tree of the system",
                             bash_cmd_name(d), root, s->argv[k]);
        }
    }

    /* A transparent wrapper (timeout 5 ls) is as safe as what it runs. */
    for (size_t i = n; i-- > 0;) {
        const bash_cmd *c = bash_cmds_at(pc, i);
        if ((c->flags & BASH_CMD_TRANSPARENT) && c->parent >= 0 && safe[i]) {
            const bash_cmd *p = bash_cmds_at(pc, (size_t)c->parent);
            bool writes = false;
            for (size_t k = 0; k < p->nredir; k++)
                if (bash_redir_writes(&p->redir[k]) && !harmless_sink(p->redir[k].target))
                    writes = true;
            if (!writes && !p->nassign)
                safe[c->parent] = true;
        }
    }
    bool uncertain = bash_cmds_uncertain(pc);
    if (uncertain)
        text_backstop(command, &v);
    bool all_safe = n > 0 && !uncertain;
    for (size_t i = 0; i < n && all_safe; i++)
        all_safe = safe[i];
    if (all_safe && v.level == RISK_UNKNOWN && !v.rule_id[0]) {
        v.level = RISK_SAFE;
        snprintf(v.rule_id, sizeof v.rule_id, "read_only");
        snprintf(v.reason, sizeof v.reason, "only reads: every part is a read-only command");
    } else if (v.level == RISK_UNKNOWN && !v.rule_id[0] && uncertain) {
        snprintf(v.rule_id, sizeof v.rule_id, "parse.uncertain");
        snprintf(v.reason, sizeof v.reason, "cannot parse the command for sure: %s",
                 bash_cmds_why(pc));
    }
    free(safe);
    bash_cmds_free(pc);
    return v;
}

risk_verdict risk_classify_call(const char *tool, const json_t *input)
{
    risk_verdict v = {.level = RISK_UNKNOWN};
    if (!tool)
        return v;
    if (!strcmp(tool, "Bash"))
        return risk_classify_bash(json_string_value(json_object_get(input, "command")));
    if (!strcmp(tool, "Read") || !strcmp(tool, "Glob") || !strcmp(tool, "Grep") ||
        !strcmp(tool, "LS") || !strcmp(tool, "NotebookRead")) {
        v.level = RISK_SAFE;
        snprintf(v.rule_id, sizeof v.rule_id, "read_only_tool");
        snprintf(v.reason, sizeof v.reason, "%s only reads", tool);
        return v;
    }
    if (!strcmp(tool, "Write") || !strcmp(tool, "Edit") || !strcmp(tool, "MultiEdit") ||
        !strcmp(tool, "NotebookEdit")) {
        const char *p = json_string_value(json_object_get(input, "file_path"));
        if (!p)
            p = json_string_value(json_object_get(input, "notebook_path"));
        if (p && is_startup_file(p))
            raise_to(&v, RISK_CONFIRM, "shell.startup_write",
                     "changes the shell start-up file %s: runs in every future shell", p);
    }
    return v;
}
