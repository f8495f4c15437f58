/* risk.c — the Bash risk rules: which simple commands are forbidden, need
 * confirming, or are plainly read-only (risk.h has the contract; the table
 * with every rule_id is in docs/permissions-rules.md).
 *
 * The rules look at parsed commands (bash_parse.h), not at the text, so
 * `echo "rm -rf /"` is harmless and `sudo nice rm -rf /` is not; words are
 * brace-expanded first (risk_expand.h: `rm -rf /{,}` is `rm -rf /`), and
 * options are read in any order, cluster and abbreviation, since the
 * FORBIDDEN level is the last fence in bypassPermissions. The git rules
 * are risk_git.c; what a command writes is risk_writes.c's business. Only when
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
#include "policy/risk_impl.h"

static const int RANK[] = {[RISK_SAFE] = 0, [RISK_UNKNOWN] = 1, [RISK_CONFIRM] = 2,
                                  [RISK_FORBIDDEN] = 3};

/* Keeps the most severe verdict; among equals the first, except that an
 * UNKNOWN with advice beats a bare UNKNOWN. */
void risk_raise(risk_verdict *v, risk_level l, const char *id, const char *fmt, ...)
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

bool risk_one_of(const char *s, const char *const *set)
{
    for (; *set; set++)
        if (!strcmp(s, *set))
            return true;
    return false;
}

/* A short option letter anywhere in a "-abc" cluster, or a long option
 * (exact, or followed by '='), before a "--". */
bool risk_has_opt(const bash_cmd *c, size_t from, char letter, const char *longopt)
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

bool risk_long_spells(const char *a, const char *full)
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
    if (buf[0] == '/' && risk_one_of(buf + 1, SYSTEM_DIRS))
        return T_SYSTEM;
    if (buf[0] == '/' && buf[n - 1] == '*' && strchr(buf + 1, '/') == buf + n - 2) {
        char top[256];
        snprintf(top, sizeof top, "%.*s", (int)(n - 3), buf + 1);
        if (risk_one_of(top, SYSTEM_DIRS))
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
    if (risk_one_of(base_name(p), NAMES))
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
    return risk_one_of(base_name(p), NAMES) || strstr(p, "fish_history");
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
        risk_raise(w->v, RISK_FORBIDDEN, "disk.write_device",
                 "writes straight to the block device %s: destroys the file system on it", path);
    else if (is_startup_file(path))
        risk_raise(w->v, RISK_CONFIRM, "shell.startup_write",
                 "changes the shell start-up file %s: runs in every future shell", path);
    else if (is_history_file(path))
        risk_raise(w->v, RISK_CONFIRM, "shell.history_rewrite",
                 "rewrites the shell history file %s", path);
    else if (is_system_path(path))
        risk_raise(w->v, RISK_CONFIRM, "fs.write_system", "writes the system file %s", path);
}

/* ---- per-command rules ----------------------------------------------- */

static void rule_rm(const bash_cmd *c, risk_verdict *v)
{
    /* rm's long options abbreviate down to one letter (--r, --n are
     * unambiguous); "-" letters in a cluster count wherever they stand. */
    bool recursive = risk_has_opt(c, 1, 'r', "--recursive") || risk_has_opt(c, 1, 'R', NULL) ||
                     has_long(c, 1, "--recursive", 3);
    if (has_arg(c, 1, "--no-preserve-root") || has_long(c, 1, "--no-preserve-root", 3)) {
        risk_raise(v, RISK_FORBIDDEN, "fs.rm_root",
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
            risk_raise(v, RISK_FORBIDDEN, "fs.rm_root", "rm -r %s deletes the whole file system",
                     ops[k]);
            break;
        case T_HOME:
            risk_raise(v, RISK_FORBIDDEN, "fs.rm_home", "rm -r %s deletes the home directory",
                     ops[k]);
            break;
        case T_SYSTEM:
            risk_raise(v, RISK_FORBIDDEN, "fs.rm_system", "rm -r %s deletes a system directory",
                     ops[k]);
            break;
        case T_UNSET_VAR:
            risk_raise(v, RISK_CONFIRM, "fs.rm_var_path",
                     "rm -r %s: if the variable is empty this reaches the root; check it or "
                     "use ${VAR:?}", ops[k]);
            break;
        case T_CWD:
            risk_raise(v, RISK_CONFIRM, "fs.rm_cwd",
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
        while (exec && e < c->argc && (risk_one_of(base_name(c->argv[e]), FIND_WRAPPERS) ||
                                       c->argv[e][0] == '-'))
            e++;   /* find / -exec sudo -n rm {} + */
        if (!strcmp(a, "-delete") ||
            (exec && e < c->argc && risk_one_of(base_name(c->argv[e]), DELETERS))) {
            risk_raise(v, RISK_FORBIDDEN, "fs.find_delete_root",
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
        bool recursive = risk_has_opt(c, 1, 'r', "--recursive") || risk_has_opt(c, 1, 'R', NULL) ||
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
                 k + 1 < c->argc && risk_one_of(base_name(c->argv[k + 1]), DELETERS)))
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
            risk_raise(v, RISK_FORBIDDEN, "fs.rm_root",
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
        bool tdir = risk_has_opt(c, 1, 't', "--target-directory");
        for (size_t k = 0; k < n && (tdir || k + 1 < n); k++) {
            target_kind t = classify_target(ops[k]);
            if (t == T_ROOT || t == T_HOME || t == T_SYSTEM)
                risk_raise(v, RISK_FORBIDDEN, "fs.mv_system",
                         "mv %s moves a system directory away: the system breaks", ops[k]);
        }
        return;
    }
    bool del = false;
    for (size_t i = 1; i < c->argc; i++)
        if (!strncmp(c->argv[i], "--delete", 8) || risk_long_spells(c->argv[i], "--delete"))
            del = true;
    if (del && n >= 2) {
        target_kind t = classify_target(ops[n - 1]);
        if (t == T_ROOT || t == T_HOME || t == T_SYSTEM)
            risk_raise(v, RISK_FORBIDDEN, "fs.rsync_delete_root",
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
    bool recursive = risk_has_opt(c, 1, 'R', "--recursive") || has_long(c, 1, "--recursive", 5);
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
                risk_raise(v, RISK_FORBIDDEN, is_chmod ? "perm.chmod_root" : "perm.chown_root",
                         "%s -R on %s changes every file of the system", name, ops[k]);
        }
    if (is_chmod && mode && world_writable(mode))
        risk_raise(v, RISK_CONFIRM, "perm.chmod_777",
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
    bool shell = risk_one_of(name, SHELLS);
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
    if (!strcmp(name, "xxd") && (risk_has_opt(c, 1, 'r', NULL) || operands(c, "", NULL, 0) > 1))
        return false;
    if (risk_one_of(name, PLAIN))
        return true;
    if (!strcmp(name, "find")) {
        static const char *const ACT[] = {"-delete", "-exec", "-execdir", "-ok", "-okdir",
                                          "-fprint", "-fprint0", "-fprintf", "-fls", NULL};
        for (size_t i = 1; i < c->argc; i++)
            if (risk_one_of(c->argv[i], ACT))
                return false;
        return true;
    }
    if (!strcmp(name, "rg"))
        return !risk_has_opt(c, 1, 0, "--pre");
    if (!strcmp(name, "sort"))
        return !risk_has_opt(c, 1, 'o', "--output") && !risk_has_opt(c, 1, 0, "--compress-program");
    if (!strcmp(name, "file"))
        return !risk_has_opt(c, 1, 'C', "--compile");
    if (!strcmp(name, "uniq"))
        return operands(c, "fsw", NULL, 0) <= 1;
    if (!strcmp(name, "tree"))
        return !risk_has_opt(c, 1, 'o', NULL);
    if (!strcmp(name, "date"))
        return !risk_has_opt(c, 1, 's', "--set");
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
        risk_raise(v, RISK_CONFIRM, "priv.sudo", "%s runs a command with raised privileges", name);
    else if (!strncmp(name, "mkfs", 4) || !strcmp(name, "mke2fs") || !strcmp(name, "mkswap") ||
             !strcmp(name, "mkntfs") || !strcmp(name, "mkdosfs") || !strcmp(name, "newfs"))
        risk_raise(v, RISK_FORBIDDEN, "disk.mkfs", "%s creates a file system, erasing the device",
                 name);
    else if (!strcmp(name, "wipefs") || !strcmp(name, "blkdiscard"))
        risk_raise(v, RISK_FORBIDDEN, "disk.wipe", "%s erases a device", name);
    else if (!strcmp(name, "shred") || !strcmp(name, "badblocks")) {
        for (size_t i = 1; i < c->argc; i++)
            if (is_block_device(c->argv[i]))
                risk_raise(v, RISK_FORBIDDEN, "disk.write_device", "%s overwrites the device %s",
                         name, c->argv[i]);
    } else if (!strcmp(name, "fdisk") || !strcmp(name, "sfdisk") || !strcmp(name, "parted") ||
               !strcmp(name, "gdisk") || !strcmp(name, "sgdisk") || !strcmp(name, "cfdisk"))
        risk_raise(v, RISK_CONFIRM, "disk.partition", "%s changes a partition table", name);
    else if (!strcmp(name, "git"))
        risk_rule_git(c, v, safe);
    else if (!strcmp(name, "history") && (risk_has_opt(c, 1, 'c', NULL) || risk_has_opt(c, 1, 'd', NULL)))
        risk_raise(v, RISK_CONFIRM, "shell.history_clear", "history -c/-d rewrites the shell history");
    else if (!strcmp(name, "shutdown") || !strcmp(name, "reboot") || !strcmp(name, "halt") ||
             !strcmp(name, "poweroff") ||
             (!strcmp(name, "init") && c->argc > 1 && (!strcmp(c->argv[1], "0") ||
                                                       !strcmp(c->argv[1], "6"))) ||
             (!strcmp(name, "systemctl") && c->argc > 1 &&
              (!strcmp(c->argv[1], "poweroff") || !strcmp(c->argv[1], "reboot") ||
               !strcmp(c->argv[1], "halt"))))
        risk_raise(v, RISK_CONFIRM, "sys.shutdown", "%s stops or restarts the machine", name);

    if (risk_one_of(name, INTERPRETERS)) {
        for (size_t i = 1; i < c->argc; i++)
            if (strstr(c->argv[i], "fork") &&
                (strstr(c->argv[i], "while") || strstr(c->argv[i], "for(;;)") ||
                 strstr(c->argv[i], "for (;;)") || strstr(c->argv[i], "loop")))
                risk_raise(v, RISK_FORBIDDEN, "proc.fork_bomb",
                         "%s forks in an endless loop (a fork bomb)", name);
    }
    if (risk_one_of(name, SHELLS) || risk_one_of(name, INTERPRETERS) || !strcmp(name, "source") ||
        !strcmp(name, ".") || !strcmp(name, "eval")) {
        for (size_t i = 1; i < c->argc; i++)
            if (mentions_download(c->argv[i]))
                risk_raise(v, RISK_FORBIDDEN, "net.pipe_to_shell",
                         "runs a script downloaded from the network (%s)", name);
    }
    if (c->function && !strcmp(name, c->function) &&
        (c->flags & (BASH_CMD_PIPE_IN | BASH_CMD_PIPE_OUT | BASH_CMD_BACKGROUND)))
        risk_raise(v, RISK_FORBIDDEN, "proc.fork_bomb",
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
            risk_raise(v, TEXT_RULES[k].level, TEXT_RULES[k].id,
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
    bool *safe = xcalloc(n ? n : 1, sizeof *safe);
    for (size_t i = 0; i < n; i++)
        classify_cmd(bash_cmds_at(pc, i), &v, &safe[i]);

    /* A download piped into something that runs its stdin as a program. */
    for (size_t i = 0; i < n; i++) {
        const bash_cmd *d = bash_cmds_at(pc, i);
        if (!(d->flags & BASH_CMD_PIPE_OUT) || !risk_one_of(bash_cmd_name(d), DOWNLOADERS))
            continue;
        for (size_t j = 0; j < n; j++) {
            const bash_cmd *s = bash_cmds_at(pc, j);
            const char *sn = bash_cmd_name(s);
            if (j == i || !(s->flags & BASH_CMD_PIPE_IN) ||
                (s->pipeline == d->pipeline && s->pipe_pos <= d->pipe_pos) ||
                !(risk_one_of(sn, SHELLS) || risk_one_of(sn, INTERPRETERS)) || !program_from_stdin(s))
                continue;
            risk_raise(&v, RISK_FORBIDDEN, "net.pipe_to_shell",
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
                if (risk_one_of(base_name(s->argv[k]), DELETERS))
                    risk_raise(&v, RISK_FORBIDDEN, "fs.find_delete_root",
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
            risk_raise(&v, RISK_CONFIRM, "shell.startup_write",
                     "changes the shell start-up file %s: runs in every future shell", p);
    }
    return v;
}
