/* tamper.c — the settings tamper guard's patterns and where they are looked
 * for (tamper.h has the contract; docs/permissions-rules.md the table).
 *
 * The pattern ids follow seed 001 §14.4 (settings-json, bypass-permissions,
 * dangerously-skip-permissions, permissions-allow-deny,
 * system-reminder-tag). Paths are checked as written, folded and resolved
 * through symlinks, so `ln -s .loom/settings.json x` followed by a Write to
 * x is still a write to the settings.
 */
#include "policy/tamper.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <limits.h>
#include <pcre2.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/settings.h"
#include "base/str.h"
#include "shell/bash_parse.h"
#include "policy/risk.h"
#include "policy/rules.h"

/* Nesting of input JSON walked for strings; deeper values are not read. */
#define WALK_MAX_DEPTH 32

enum {
    P_SETTINGS, P_DOTDIR, P_SETTINGS_FILE, P_BYPASS, P_SKIP, P_ALLOW_DENY, P_REMINDER,
    P_STARTUP, P_CREDENTIALS, P_PERSIST, P__COUNT
};

typedef struct pattern {
    const char *id;
    const char *re;
    const char *what;
} pattern;

static const pattern PATTERNS[P__COUNT] = {
    [P_SETTINGS] = {"settings-json",
                    "\\.(?:loom|claude|codebuddy|workbuddy)[\\\\/]+settings(?:\\.local)?\\.json"
                    "|managed-settings\\.json",
                    "changes the permission settings"},
    /* `cd .loom && sed -i … settings.json`: the directory and the file
     * named apart; both must appear. */
    [P_DOTDIR] = {"settings-json", "\\.(?:loom|claude|codebuddy|workbuddy)\\b",
                  "changes the permission settings"},
    [P_SETTINGS_FILE] = {"settings-json", "\\bsettings(?:\\.local)?\\.json\\b",
                         "changes the permission settings"},
    [P_BYPASS] = {"bypass-permissions", "\\bbypassPermissions",
                  "tries to switch permission checks off (bypassPermissions)"},
    [P_SKIP] = {"dangerously-skip-permissions", "--dangerously-skip-permissions\\b",
                "tries to switch permission checks off (--dangerously-skip-permissions)"},
    [P_ALLOW_DENY] = {"permissions-allow-deny",
                      "permissions\\s*[.\\[]\\s*[\"']?(?:allow|deny|ask|defaultMode)\\b"
                      "|\"permissions\"\\s*:\\s*\\{[^{}]*\"(?:allow|deny|ask|defaultMode)\"",
                      "edits permission rules"},
    [P_REMINDER] = {"system-reminder-tag", "(?i)<\\s*/?\\s*system-reminder\\b",
                    "holds a <system-reminder> tag (a prompt injection trying to pass as the "
                    "harness)"},
    /* issue #10: files a shell runs at start-up (code that runs in every
     * later shell, outside any permission check) and files holding
     * credentials. Matched on the path's tail, so $HOME/.bashrc and
     * ../../.bashrc are caught as written. */
    [P_STARTUP] = {"shell-startup",
                   "(?:^|/)\\.(?:bashrc|bash_profile|bash_login|bash_logout|bash_aliases|profile|zshrc|zprofile"
                   "|zshenv|zlogin|zlogout|kshrc|mkshrc|cshrc|tcshrc|login|xprofile|xsessionrc)/*$"
                   "|(?:^|/)\\.bashrc\\.d/|(?:^|/)\\.config/fish/(?:config\\.fish/*$|conf\\.d/|functions/)"
                   "|(?:^|/)\\.config/(?:environment\\.d|autostart)/"
                   "|^/+etc/+(?:profile/*$|profile\\.d/|bash\\.bashrc/*$|bashrc/*$|zsh/|zshrc/*$"
                   "|zprofile/*$|zshenv/*$|zlogin/*$|environment/*$|bash_completion\\.d/)",
                   "writes a shell start-up file (code every later shell runs)"},
    [P_CREDENTIALS] = {"credentials",
                       "(?:^|/)\\.ssh(?:/|$)|(?:^|/)\\.aws/+(?:credentials|config)/*$"
                       "|(?:^|/)\\.(?:netrc|npmrc|pypirc|git-credentials|vault-token|pgpass"
                       "|my\\.cnf)/*$"
                       "|(?:^|/)\\.docker/+config\\.json/*$|(?:^|/)\\.gnupg(?:/|$)"
                       "|(?:^|/)\\.kube/+config/*$|(?:^|/)\\.config/+git/+credentials/*$"
                       "|(?:^|/)\\.config/+gh/+hosts\\.yml/*$"
                       "|(?:^|/)\\.cargo/+credentials(?:\\.toml)?/*$|(?:^|/)\\.gem/+credentials/*$"
                       "|(?:^|/)\\.config/+gcloud/|(?:^|/)\\.azure/"
                       "|(?:^|/)\\.terraform\\.d/+credentials\\.tfrc\\.json/*$",
                       "writes a credentials file"},
    /* Other files whose contents run later, outside any permission check:
     * git's own config (aliases, core.pager, hooksPath run on every git
     * call), editor start-up files, user services and autostart entries,
     * cron jobs, the dynamic loader's preload list, sudoers. */
    [P_PERSIST] = {"persistence",
                   "(?:^|/)\\.gitconfig/*$|(?:^|/)\\.config/+git/+config/*$"
                   "|(?:^|/)\\.(?:vimrc|gvimrc|exrc|emacs|xinitrc|xsession|pam_environment)/*$"
                   "|(?:^|/)\\.emacs\\.d/+(?:init|early-init)\\.el/*$|(?:^|/)\\.config/+nvim/"
                   "|(?:^|/)\\.config/+systemd/+user/|(?:^|/)\\.local/+share/+systemd/+user/"
                   "|(?:^|/)\\.local/+share/+applications/"
                   "|^/+etc/+(?:cron[^/]*|systemd|sudoers\\.d)(?:/|$)|^/+etc/+(?:crontab|sudoers"
                   "|ld\\.so\\.preload|rc\\.local)/*$|^/+var/+spool/+cron/",
                   "writes a file whose contents run later (git or editor config, a user "
                   "service, a cron job, the loader's preload list)"},
};

static pcre2_code *g_re[P__COUNT];
static pthread_once_t g_once = PTHREAD_ONCE_INIT;

static void compile_all(void)
{
    for (int k = 0; k < P__COUNT; k++) {
        int ec;
        PCRE2_SIZE off;
        g_re[k] = pcre2_compile((PCRE2_SPTR)PATTERNS[k].re, PCRE2_ZERO_TERMINATED,
                                PCRE2_MATCH_INVALID_UTF, &ec, &off, NULL);
    }
}

static bool re_match(int k, const char *text, size_t len)
{
    pthread_once(&g_once, compile_all);
    if (!g_re[k] || !text)
        return false;
    pcre2_match_data *md = pcre2_match_data_create_from_pattern(g_re[k], NULL);
    int rc = pcre2_match(g_re[k], (PCRE2_SPTR)text, len, 0, 0, md, NULL);
    pcre2_match_data_free(md);
    return rc >= 0;
}

static bool flag(char *why, size_t cap, int k, const char *context)
{
    if (why && cap)
        snprintf(why, cap, "%s: %s%s%s", PATTERNS[k].id, context ? context : "",
                 context ? " " : "", PATTERNS[k].what);
    return true;
}

/* Is path (as written, folded or resolved) one of the settings files? */
static bool is_settings_path(const char *path, const char *wd)
{
    if (re_match(P_SETTINGS, path, strlen(path)))
        return true;
    char cwd[PATH_MAX];
    const char *dir = wd ? wd : getcwd(cwd, sizeof cwd) ? cwd : "/";
    char *res = perm_resolve_path(path, dir);
    bool hit = res && re_match(P_SETTINGS, res, strlen(res));
    if (!hit && res) {
        /* A relative LOOM_HOME is Loom's own cwd's, not the tool's. */
        char *user = settings_user_path();
        char here[PATH_MAX];
        char *mine = perm_resolve_path(user, getcwd(here, sizeof here) ? here : "/");
        hit = mine && !strcmp(mine, res);
        free(mine);
        free(user);
    }
    free(res);
    return hit;
}

/* Is path a shell start-up, credentials or persistence file — as written,
 * with ~ expanded, or resolved through symlinks? Returns the pattern, or -1. */
static int sensitive_path(const char *path, const char *wd)
{
    static const int KINDS[] = {P_STARTUP, P_CREDENTIALS, P_PERSIST};
    char *forms[3] = {xstrdup(path), NULL, NULL};
    const char *home = getenv("HOME");
    if (path[0] == '~' && (path[1] == '/' || !path[1]) && home && *home) {
        loom_str s = LOOM_STR_INIT;
        str_puts(&s, home);
        str_puts(&s, path + 1);
        forms[1] = str_steal(&s);
    }
    char cwd[PATH_MAX];
    const char *dir = wd ? wd : getcwd(cwd, sizeof cwd) ? cwd : "/";
    forms[2] = perm_resolve_path(forms[1] ? forms[1] : path, dir);
    int hit = -1;
    for (size_t f = 0; f < 3 && hit < 0; f++)
        for (size_t k = 0; k < sizeof KINDS / sizeof KINDS[0] && hit < 0 && forms[f]; k++)
            if (re_match(KINDS[k], forms[f], strlen(forms[f])))
                hit = KINDS[k];
    for (size_t f = 0; f < 3; f++)
        free(forms[f]);
    return hit;
}

/* The mention patterns over every string (keys too) of a JSON value. */
static int scan_json(const json_t *v, int depth)
{
    if (!v || depth > WALK_MAX_DEPTH)
        return -1;
    if (json_is_string(v)) {
        const char *s = json_string_value(v);
        size_t n = json_string_length(v);
        static const int MENTIONS[] = {P_BYPASS, P_SKIP, P_ALLOW_DENY};
        for (size_t k = 0; k < sizeof MENTIONS / sizeof MENTIONS[0]; k++)
            if (re_match(MENTIONS[k], s, n))
                return MENTIONS[k];
        return -1;
    }
    if (json_is_array(v)) {
        size_t i;
        const json_t *e;
        json_array_foreach(v, i, e) {
            int r = scan_json(e, depth + 1);
            if (r >= 0)
                return r;
        }
    } else if (json_is_object(v)) {
        const char *key;
        json_t *e;
        json_object_foreach((json_t *)v, key, e) {
            json_t *k = json_string(key);
            int r = scan_json(k, depth + 1);
            json_decref(k);
            if (r < 0)
                r = scan_json(e, depth + 1);
            if (r >= 0)
                return r;
        }
    }
    return -1;
}

/* Any string of the input naming a settings file (for tools this guard
 * knows nothing about: MCP tools and the like). */
static bool json_names_settings(const json_t *v, int depth)
{
    if (!v || depth > WALK_MAX_DEPTH)
        return false;
    if (json_is_string(v))
        return re_match(P_SETTINGS, json_string_value(v), json_string_length(v));
    size_t i;
    const char *key;
    json_t *e;
    if (json_is_array(v)) {
        json_array_foreach(v, i, e)
            if (json_names_settings(e, depth + 1))
                return true;
    } else if (json_is_object(v)) {
        json_object_foreach((json_t *)v, key, e)
            if (json_names_settings(e, depth + 1))
                return true;
    }
    return false;
}

/* Directories a literal cd/pushd of the command went to, so that
 * `cd ~/.ssh && echo k >> authorized_keys` is seen as the file it is. */
#define TAMPER_CD_MAX 8

typedef struct target_scan {
    const char *cwd;      /* the session directory; NULL: the process's */
    bool xargs;           /* the command being scanned is xargs */
    bool hit;
    int kind;
    char path[256];
    char *dirs[TAMPER_CD_MAX];
    size_t ndirs;
} target_scan;

/* The files the patterns above name, as tails under home ("etc/…" under
 * /; the settings also under the working directory), for a written glob
 * — risk_writes' "any file under DIR" included: `tar -C ~ -x`, `cp -r
 * dotfiles/. ~`, `unzip -d ~/.ssh`, `rm ~/.ba*`. A trailing "x" stands for
 * any file in that directory. */
static const char *const SENSITIVE_TAILS[] = {
    ".bashrc", ".bash_profile", ".bash_login", ".bash_logout", ".bash_aliases", ".profile",
    ".zshrc", ".zprofile", ".zshenv", ".zlogin", ".zlogout", ".kshrc", ".mkshrc", ".cshrc",
    ".tcshrc", ".login", ".xprofile", ".xsessionrc", ".bashrc.d/x",
    ".config/fish/config.fish", ".config/fish/conf.d/x", ".config/fish/functions/x",
    ".config/environment.d/x", ".config/autostart/x", ".ssh/x", ".aws/credentials",
    ".aws/config", ".netrc", ".npmrc", ".pypirc", ".git-credentials", ".vault-token", ".pgpass",
    ".my.cnf", ".docker/config.json", ".gnupg/x", ".kube/config", ".config/git/credentials",
    ".config/gh/hosts.yml", ".cargo/credentials.toml", ".gem/credentials", ".config/gcloud/x",
    ".azure/x", ".terraform.d/credentials.tfrc.json", "etc/profile", "etc/profile.d/x",
    "etc/bash.bashrc", "etc/bashrc", "etc/zsh/x", "etc/zshrc", "etc/zprofile", "etc/zshenv",
    "etc/zlogin", "etc/environment", "etc/bash_completion.d/x", ".loom/settings.json",
    ".loom/settings.local.json", ".claude/settings.json", ".claude/settings.local.json",
    ".gitconfig", ".config/git/config", ".vimrc", ".emacs", ".xinitrc", ".pam_environment",
    ".config/nvim/x", ".config/systemd/user/x", ".local/share/systemd/user/x",
    ".local/share/applications/x", "etc/crontab", "etc/cron.d/x", "etc/systemd/x",
    "etc/sudoers", "etc/sudoers.d/x", "etc/ld.so.preload", NULL,
};

static int path_kind(const char *path, const char *wd)
{
    return is_settings_path(path, wd) ? P_SETTINGS : sensitive_path(path, wd);
}

/* The kind of the first sensitive file the written glob path could name
 * (its literal directory resolved and compared with the real places, so
 * `tar -C build -x` or a glob under the project is no hit), or -1. */
static int glob_kind(const char *path, const char *wd_in)
{
    size_t g = strcspn(path, "*?[");
    if (!path[g])
        return -1;
    size_t dl = g;
    while (dl > 0 && path[dl - 1] != '/')
        dl--;   /* path[0..dl) is the literal directory before the glob */
    loom_str dir = LOOM_STR_INIT;
    const char *home = getenv("HOME");
    size_t hl = path[0] == '~' ? 1 : !strncmp(path, "$HOME", 5) ? 5
                                 : !strncmp(path, "${HOME}", 7) ? 7 : 0;
    if (hl && hl <= dl && (path[hl] == '/' || !path[hl]) && home && *home) {
        str_puts(&dir, home);   /* ~, $HOME, ${HOME} */
        str_append(&dir, path + hl, dl - hl);
    } else {
        str_append(&dir, path, dl);
    }
    if (!dir.len)
        str_puts(&dir, ".");
    char cwd[PATH_MAX];
    const char *wd = wd_in ? wd_in : getcwd(cwd, sizeof cwd) ? cwd : "/";
    char *d = perm_resolve_path(str_cstr(&dir), wd);
    char *h = home && *home ? perm_resolve_path(home, "/") : NULL;
    char *w = perm_resolve_path(".", wd);
    str_free(&dir);
    int hit = -1;
    for (size_t k = 0; d && SENSITIVE_TAILS[k] && hit < 0; k++) {
        const char *t = SENSITIVE_TAILS[k];
        bool etc = !strncmp(t, "etc/", 4), settings = strstr(t, "settings") != NULL;
        const char *bases[2] = {etc ? "" : h, settings ? w : NULL};
        for (size_t b = 0; b < 2 && hit < 0; b++) {
            if (!bases[b])
                continue;
            /* d must be base/ + a leading part of t: then the glob stands
             * for the rest of t. */
            for (const char *rest = t; rest && hit < 0;) {
                loom_str want = LOOM_STR_INIT;
                str_puts(&want, bases[b]);
                if (rest > t) {
                    str_putc(&want, '/');
                    str_append(&want, t, (size_t)(rest - t) - 1);
                }
                if (!want.len)
                    str_putc(&want, '/');
                if (!strcmp(str_cstr(&want), d)) {
                    loom_str c = LOOM_STR_INIT;
                    str_append(&c, path, dl);
                    str_puts(&c, rest);
                    if (risk_target_could_match(path, str_cstr(&c))) {
                        loom_str full = LOOM_STR_INIT;   /* the real file */
                        str_puts(&full, bases[b]);
                        str_putc(&full, '/');
                        str_puts(&full, t);
                        hit = path_kind(str_cstr(&full), wd);
                        str_free(&full);
                    }
                    str_free(&c);
                }
                str_free(&want);
                rest = strchr(rest, '/');
                if (rest)
                    rest++;
            }
        }
    }
    free(d);
    free(h);
    free(w);
    return hit;
}

static void scan_one(target_scan *t, const char *path, const char *shown)
{
    if (t->hit)
        return;
    int k = path_kind(path, t->cwd);
    /* xargs CMD's "any file at all" (the root glob) is no named place: the deny
     * rules fail closed on it; here it would make every `… | xargs rm`
     * a start-up file write. */
    if (k < 0 && !(t->xargs && !strcmp(path, "/**")))
        k = glob_kind(path, t->cwd);
    if (k >= 0) {
        t->hit = true;
        t->kind = k;
        snprintf(t->path, sizeof t->path, "%s", shown);
    }
}

static void on_target(void *ctx, const char *path)
{
    target_scan *t = ctx;
    scan_one(t, path, path);
    if (path[0] == '/' || path[0] == '~')
        return;
    for (size_t k = 0; k < t->ndirs && !t->hit; k++) {
        loom_str j = LOOM_STR_INIT;
        str_puts(&j, t->dirs[k]);
        str_putc(&j, '/');
        str_puts(&j, path);
        scan_one(t, str_cstr(&j), path);
        str_free(&j);
    }
}

static void track_cd(target_scan *t, const bash_cmd *c)
{
    const char *name = bash_cmd_name(c);
    if ((strcmp(name, "cd") && strcmp(name, "pushd")) || t->ndirs >= TAMPER_CD_MAX)
        return;
    size_t i = 1;
    while (i < c->argc && c->argv[i][0] == '-' && c->argv[i][1])
        i++;
    const char *home = getenv("HOME");
    const char *d = i < c->argc ? c->argv[i] : (home ? home : NULL);
    if (!d || (i < c->argc && (c->argv_flags[i] & (BASH_WORD_EXPANDS | BASH_WORD_GLOB))))
        return;
    loom_str s = LOOM_STR_INIT;
    if (d[0] == '~' && (d[1] == '/' || !d[1]) && home) {
        str_puts(&s, home);
        str_puts(&s, d + 1);
    } else if (d[0] != '/' && t->ndirs) {
        str_puts(&s, t->dirs[t->ndirs - 1]);
        str_putc(&s, '/');
        str_puts(&s, d);
    } else {
        str_puts(&s, d);
    }
    t->dirs[t->ndirs++] = str_steal(&s);
}

static bool check_bash(const char *cmd, const char *cwd, char *why, size_t cap)
{
    size_t len = strlen(cmd);
    bash_cmds *pc = bash_parse(cmd);
    target_scan ts = {.cwd = cwd};
    for (size_t i = 0; i < bash_cmds_count(pc) && !ts.hit; i++) {
        const bash_cmd *c = bash_cmds_at(pc, i);
        ts.xargs = !strcmp(bash_cmd_name(c), "xargs");
        risk_write_targets(c, on_target, &ts);
        perm_wrapper_write_targets(c, on_target, &ts);
        /* A program these rules do not know the writes of may write any
         * file it is given (vim ~/.bashrc, git config -f ~/.bashrc, git
         * clone x ~/.ssh). ssh and ssh-add only read the keys they name. */
        if (strcmp(bash_cmd_name(c), "ssh") && strcmp(bash_cmd_name(c), "ssh-add"))
            risk_unknown_write_candidates(c, on_target, &ts);
        track_cd(&ts, bash_cmds_at(pc, i));
    }
    for (size_t k = 0; k < ts.ndirs; k++)
        free(ts.dirs[k]);
    bash_cmds_free(pc);
    if (ts.hit) {
        char ctx[300];
        snprintf(ctx, sizeof ctx, "the command writes %s:", ts.path);
        return flag(why, cap, ts.kind, ctx);
    }
    /* A plainly read-only command (cat, grep, git diff …) changes nothing,
     * whatever it mentions. */
    if (risk_classify_bash(cmd).level == RISK_SAFE)
        return false;
    if (re_match(P_SETTINGS, cmd, len) ||
        (re_match(P_DOTDIR, cmd, len) && re_match(P_SETTINGS_FILE, cmd, len)))
        return flag(why, cap, P_SETTINGS, "a command that is not read-only names a settings "
                                          "file:");
    static const int MENTIONS[] = {P_BYPASS, P_SKIP, P_ALLOW_DENY};
    for (size_t k = 0; k < sizeof MENTIONS / sizeof MENTIONS[0]; k++)
        if (re_match(MENTIONS[k], cmd, len))
            return flag(why, cap, MENTIONS[k], "the command");
    return false;
}

bool tamper_check_call_at(const char *tool, const json_t *input, const char *cwd, char *why,
                          size_t cap)
{
    static const char *const READ_ONLY[] = {"Read", "Glob", "Grep", "LS", "NotebookRead",
                                            "WebFetch", "WebSearch", "TodoWrite", "TaskOutput",
                                            "TaskStop", "AskUserQuestion", NULL};
    if (why && cap)
        why[0] = '\0';
    if (!tool)
        return false;
    for (size_t k = 0; READ_ONLY[k]; k++)
        if (!strcmp(tool, READ_ONLY[k]))
            return false;
    if (!strcmp(tool, "Bash")) {
        const char *cmd = json_string_value(json_object_get(input, "command"));
        return cmd && check_bash(cmd, cwd, why, cap);
    }
    if (!strcmp(tool, "Write") || !strcmp(tool, "Edit") || !strcmp(tool, "MultiEdit") ||
        !strcmp(tool, "NotebookEdit")) {
        const char *p = json_string_value(json_object_get(input, "file_path"));
        if (!p)
            p = json_string_value(json_object_get(input, "notebook_path"));
        int k = !p ? -1 : is_settings_path(p, cwd) ? P_SETTINGS : sensitive_path(p, cwd);
        if (k >= 0) {
            char ctx[300];
            snprintf(ctx, sizeof ctx, "%s of %s", tool, p);
            return flag(why, cap, k, ctx);
        }
    } else if (json_names_settings(input, 0)) {
        char ctx[200];
        snprintf(ctx, sizeof ctx, "%s with a settings file in its input", tool);
        return flag(why, cap, P_SETTINGS, ctx);
    }
    int k = scan_json(input, 0);
    if (k >= 0) {
        char ctx[200];
        snprintf(ctx, sizeof ctx, "the input of %s", tool);
        return flag(why, cap, k, ctx);
    }
    return false;
}

bool tamper_check_call(const char *tool, const json_t *input, char *why, size_t cap)
{
    return tamper_check_call_at(tool, input, NULL, why, cap);
}

bool tamper_check_output(const char *text, char *why, size_t cap)
{
    if (why && cap)
        why[0] = '\0';
    if (!text || !re_match(P_REMINDER, text, strlen(text)))
        return false;
    return flag(why, cap, P_REMINDER, "tool output");
}
