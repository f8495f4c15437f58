/* bash_wrappers.c — the commands that run their arguments, for the shell
 * parser (bash_parse.c): sudo X, env X, timeout X, xargs X, find -exec X,
 * sh -c 'X', eval X, npm exec X, git rebase --exec X, … Each command the
 * parser records goes through bp_derive, which records what the command
 * runs as commands of their own, derived from it (bash_parse.h: a rule on
 * `rm` sees `sudo rm`). Where the arguments do not tell what runs (env -S,
 * an unknown wrapper option, a script on a pipe) the parse is uncertain.
 *
 * Owns the wrapper table and the readers of shells, interpreters, find,
 * eval and the like; programs whose subcommands run a command (git, npm
 * exec, tmux, at) are read in bash_runners.c. The parser state and the
 * result it writes into belong to bash_parse.c (bash_parse_internal.h).
 * Threading: as the parser — one parse on one thread.
 */
#include "shell/bash_parse.h"
#include "shell/bash_parse_internal.h"

#include <ctype.h>
#include <string.h>

#include "base/str.h"

/* sudo sudo env nice X: each wrapper level is one derived command; past
 * this many the rest is not unwrapped and the parse is uncertain. */
#define DERIVE_MAX 8

/* Options of a wrapper: letters that take a value (in the same word or the
 * next one), letters that do not, long options that take a value when not
 * written with '='. Anything else is an option the parser does not know:
 * uncertain. positional: words between the options and the command (the
 * duration of timeout, the mask of taskset, the lock file of flock).
 * nocmd: option letters after which no command of the arguments runs
 * (taskset -p PID, chrt -p). */
typedef struct wrapper {
    const char *name;
    const char *with_arg;
    const char *flags;
    const char *const *long_with_arg;
    bool transparent;
    int kind;   /* 0 plain, W_ENV, W_TIMEOUT, W_COMMAND, W_SUDO, W_XARGS */
    unsigned positional;
    const char *nocmd;
} wrapper;

enum { W_PLAIN, W_ENV, W_TIMEOUT, W_COMMAND, W_SUDO, W_XARGS, W_NICE, W_PARALLEL };

static const char *const SUDO_LONG[] = {"--user", "--group", "--close-from", "--chdir", "--host",
                                        "--prompt", "--role", "--type", "--command-timeout",
                                        "--other-user", NULL};
static const char *const ENV_LONG[] = {"--unset", "--chdir", NULL};
static const char *const TIMEOUT_LONG[] = {"--signal", "--kill-after", NULL};
static const char *const NICE_LONG[] = {"--adjustment", NULL};
static const char *const STDBUF_LONG[] = {"--input", "--output", "--error", NULL};
static const char *const XARGS_LONG[] = {"--arg-file", "--delimiter", "--eof", "--replace",
                                         "--max-lines", "--max-args", "--max-procs",
                                         "--max-chars", "--process-slot-var", NULL};
static const char *const IONICE_LONG[] = {"--class", "--classdata", NULL};
static const char *const CHRT_LONG[] = {"--sched-runtime", "--sched-period", "--sched-deadline",
                                        NULL};
static const char *const FLOCK_LONG[] = {"--timeout", "--wait", "--conflict-exit-code", NULL};
static const char *const UNSHARE_LONG[] = {"--setuid", "--setgid", "--root", "--wd",
                                           "--propagation", "--map-user", "--map-group",
                                           "--map-users", "--map-groups", NULL};
static const char *const STRACE_LONG[] = {"--output", "--trace", "--signal", "--attach",
                                          "--user", "--env", "--string-limit", "--columns",
                                          "--summary-sort-by", "--trace-path", "--inject",
                                          "--fault", "--status", "--quiet", "--decode-fds",
                                          NULL};
static const char *const CPULIMIT_LONG[] = {"--limit", "--pid", "--exe", "--cpu", NULL};
static const char *const CHROOT_LONG[] = {"--userspec", "--groups", NULL};
static const char *const NSENTER_LONG[] = {"--target", "--setuid", "--setgid", NULL};
static const char *const SETPRIV_LONG[] = {"--reuid", "--regid", "--ruid", "--rgid", "--euid",
                                           "--egid", "--groups", "--inh-caps", "--ambient-caps",
                                           "--bounding-set", "--securebits", "--pdeathsig",
                                           "--selinux-label", "--apparmor-profile",
                                           "--landlock-access", "--landlock-rule", NULL};
static const char *const PRLIMIT_LONG[] = {"--pid", "--output", NULL};
static const char *const SYSTEMD_RUN_LONG[] = {"--unit", "--property", "--description",
                                               "--slice", "--uid", "--gid", "--setenv",
                                               "--working-directory", "--nice", "--host",
                                               "--machine", "--service-type", "--on-calendar",
                                               "--on-active", "--timer-property",
                                               "--path-property", "--socket-property", NULL};
static const char *const FAKEROOT_LONG[] = {"--lib", "--faked", NULL};
static const char *const PKEXEC_LONG[] = {"--user", NULL};
static const char *const PARALLEL_LONG[] = {"--jobs", "--arg-file", "--delimiter", "--sshlogin",
                                            "--max-args", "--max-lines", "--joblog", "--results",
                                            "--tmpdir", NULL};
static const char *const NONE_LONG[] = {NULL};

static const wrapper WRAPPERS[] = {
    {"sudo", "ugCDhprtTU", "AbEHnPSkK", SUDO_LONG, false, W_SUDO, 0, ""},
    {"doas", "uC", "ns", NONE_LONG, false, W_SUDO, 0, ""},
    {"pkexec", "", "", PKEXEC_LONG, false, W_PLAIN, 0, ""},
    {"env", "uCS", "i0v", ENV_LONG, true, W_ENV, 0, ""},
    {"nice", "n", "", NICE_LONG, true, W_NICE, 0, ""},
    {"ionice", "cn", "t", IONICE_LONG, true, W_PLAIN, 0, "p"},
    {"nohup", "", "", NONE_LONG, true, W_PLAIN, 0, ""},
    {"time", "fo", "pavq", NONE_LONG, true, W_PLAIN, 0, ""},
    {"timeout", "sk", "v", TIMEOUT_LONG, true, W_TIMEOUT, 1, ""},
    {"stdbuf", "ioe", "", STDBUF_LONG, true, W_PLAIN, 0, ""},
    {"command", "", "p", NONE_LONG, true, W_COMMAND, 0, ""},
    {"builtin", "", "", NONE_LONG, true, W_PLAIN, 0, ""},
    {"exec", "a", "cl", NONE_LONG, true, W_PLAIN, 0, ""},
    {"setsid", "", "cfw", NONE_LONG, true, W_PLAIN, 0, ""},
    {"xargs", "adEILnPs", "0rtpxo", XARGS_LONG, false, W_XARGS, 0, ""},
    {"taskset", "", "ac", NONE_LONG, true, W_PLAIN, 1, "p"},
    {"flock", "Ew", "sxunoFv", FLOCK_LONG, false, W_PLAIN, 1, ""},   /* creates its lock file */
    {"chrt", "TPD", "abdfiorRve", CHRT_LONG, true, W_PLAIN, 1, "pm"},
    {"unshare", "SGRw", "muinpUCTfrcl", UNSHARE_LONG, false, W_PLAIN, 0, ""},
    {"strace", "eopsuEabIOPSXU", "cCdDfFhikqrtTvVwxyzZn", STRACE_LONG, false, W_PLAIN, 0, ""},
    {"ltrace", "eopsuaADFlnxLw", "bcCfhirStTV", STRACE_LONG, false, W_PLAIN, 0, ""},
    {"cpulimit", "lc", "zikrvqbf", CPULIMIT_LONG, false, W_PLAIN, 0, "pe"},
    {"firejail", "", "", NONE_LONG, false, W_PLAIN, 0, ""},
    {"proot", "rbmqwkvRSip", "0hVn", NONE_LONG, false, W_PLAIN, 0, ""},
    {"chroot", "", "", CHROOT_LONG, false, W_PLAIN, 1, ""},
    {"nsenter", "tSG", "amuinpUCTrwFZ", NSENTER_LONG, false, W_PLAIN, 0, ""},
    {"dbus-launch", "", "", NONE_LONG, false, W_PLAIN, 0, ""},
    {"busybox", "", "", NONE_LONG, false, W_PLAIN, 0, ""},
    {"setpriv", "", "d", SETPRIV_LONG, false, W_PLAIN, 0, ""},
    {"prlimit", "o", "", PRLIMIT_LONG, true, W_PLAIN, 0, "p"},
    {"numactl", "imNCpP", "l", NONE_LONG, true, W_PLAIN, 0, ""},
    {"systemd-run", "pEMH", "tPqGrhdu", SYSTEMD_RUN_LONG, false, W_PLAIN, 0, ""},
    {"fakeroot", "lisb", "uhv", FAKEROOT_LONG, false, W_PLAIN, 0, ""},
    {"faketime", "p", "fm", NONE_LONG, true, W_PLAIN, 1, ""},
    {"eatmydata", "", "", NONE_LONG, true, W_PLAIN, 0, ""},
    {"nocache", "n", "", NONE_LONG, true, W_PLAIN, 0, ""},
    {"chronic", "", "ev", NONE_LONG, true, W_PLAIN, 0, ""},
    {"ifne", "", "n", NONE_LONG, true, W_PLAIN, 0, ""},
    {"valgrind", "", "qvh", NONE_LONG, false, W_PLAIN, 0, ""},
    {"catchsegv", "", "", NONE_LONG, true, W_PLAIN, 0, ""},
    {"torsocks", "uapP", "idqh", NONE_LONG, false, W_PLAIN, 0, ""},
    {"proxychains", "f", "q", NONE_LONG, false, W_PLAIN, 0, ""},
    {"proxychains4", "f", "q", NONE_LONG, false, W_PLAIN, 0, ""},
    {"unbuffer", "", "p", NONE_LONG, true, W_PLAIN, 0, ""},
    {"gosu", "", "", NONE_LONG, false, W_PLAIN, 1, ""},
    {"su-exec", "", "", NONE_LONG, false, W_PLAIN, 1, ""},
    {"setarch", "", "vRFZLXBIST3", NONE_LONG, true, W_PLAIN, 1, ""},
    {"linux32", "", "vRFZLXBIST3", NONE_LONG, true, W_PLAIN, 0, ""},
    {"linux64", "", "vRFZLXBIST3", NONE_LONG, true, W_PLAIN, 0, ""},
    {"runcon", "turl", "c", NONE_LONG, false, W_PLAIN, 0, ""},
    {"tini", "", "sgvwl", NONE_LONG, true, W_PLAIN, 0, ""},
    {"dumb-init", "r", "cv", NONE_LONG, true, W_PLAIN, 0, ""},
    {"parallel", "jaIdEnNsLP", "kqvtX0r", PARALLEL_LONG, false, W_PARALLEL, 0, ""},
    /* package runners and session tools that run their arguments */
    {"npx", "p", "yq", NONE_LONG, false, W_PLAIN, 0, ""},   /* npx -c: unknown, uncertain */
    {"bunx", "p", "", NONE_LONG, false, W_PLAIN, 0, ""},
    {"uvx", "", "q", NONE_LONG, false, W_PLAIN, 0, ""},
    {"caffeinate", "tw", "dimsu", NONE_LONG, true, W_PLAIN, 0, ""},
    {"run0", "uDg", "", NONE_LONG, false, W_PLAIN, 0, ""},
    {"screen", "Scs", "dmDRrAaLlOiqUx", NONE_LONG, false, W_PLAIN, 0, ""},
    {NULL, NULL, NULL, NULL, false, 0, 0, NULL},
};

static bool in_list(const char *const *list, const char *s, size_t n)
{
    for (; *list; list++)
        if (strlen(*list) == n && !strncmp(*list, s, n))
            return true;
    return false;
}

/* bp_emit_derived, with extra flags for the derived command and the
 * placeholder the wrapper replaces at run time (xargs -I{}, find -exec {}). */
static void emit_derived_x(parser *p, size_t idx, size_t from, size_t to, const vec *assign,
                           bool transparent, unsigned level, unsigned extra,
                           const char *placeholder)
{
    bash_cmd c = p->out->cmds[idx];
    vec av = {0};
    /* A word holding the placeholder (xargs -I{}, find -exec {}) becomes
     * what the wrapper reads at run time: as good as an expansion. */
    for (size_t k = from; k < to; k++)
        bp_vec_push(&av, (void *)c.argv[k],
                    c.argv_flags[k] |
                        (placeholder && *placeholder && strstr(c.argv[k], placeholder)
                             ? BASH_WORD_EXPANDS
                             : 0));
    vec none = {0};
    const char *func = p->func;
    bool subst = p->subst;
    unsigned pl = p->pipeline, pp = p->pipe_pos, nest = p->nest;
    p->func = c.function;
    p->subst = (c.flags & BASH_CMD_SUBST) != 0;
    p->pipeline = c.pipeline;
    p->pipe_pos = c.pipe_pos;
    p->nest = c.depth;
    long d = bp_emit(p, &av, assign ? assign : &none, NULL, 0, 0);
    p->func = func;
    p->subst = subst;
    p->pipeline = pl;
    p->pipe_pos = pp;
    p->nest = nest;
    bp_vec_free(&av);
    if (d < 0)
        return;
    bash_cmd *dc = &p->out->cmds[d];
    dc->flags |= BASH_CMD_DERIVED | extra |
                 (c.flags & (BASH_CMD_PIPE_IN | BASH_CMD_PIPE_OUT | BASH_CMD_BACKGROUND |
                             BASH_CMD_FUNCTION | BASH_CMD_MORE_ARGS));
    if (transparent)
        dc->flags |= BASH_CMD_TRANSPARENT;
    dc->parent = (long)idx;
    bp_derive(p, (size_t)d, level + 1);
}

void bp_emit_derived(parser *p, size_t idx, size_t from, size_t to, const vec *assign,
                     bool transparent, unsigned level)
{
    emit_derived_x(p, idx, from, to, assign, transparent, level, 0, NULL);
}

/* sudo, env, timeout, … : skips the wrapper's options and returns the index
 * of the command word, or argc when there is none. *transparent is cleared
 * when options or assignments change how the command runs. */
static size_t skip_wrapper(parser *p, const bash_cmd *c, const wrapper *w, vec *assign,
                           bool *transparent)
{
    size_t i = 1;
    while (i < c->argc) {
        const char *a = c->argv[i];
        if (w->kind == W_ENV || w->kind == W_SUDO) {
            const char *eq = strchr(a, '=');
            if (a[0] != '-' && eq && bp_assign_prefix(a, (size_t)(eq - a))) {
                bp_vec_push(assign, (void *)a, c->argv_flags[i]);
                *transparent = false;
                i++;
                continue;
            }
        }
        if (a[0] != '-' || !a[1])
            break;
        if (w->kind == W_NICE && isdigit((unsigned char)a[1])) { /* nice -10 */
            i++;
            continue;
        }
        if (!strcmp(a, "--")) {
            i++;
            break;
        }
        if (a[1] == '-') {
            const char *eq = strchr(a, '=');
            size_t nl = eq ? (size_t)(eq - a) : strlen(a);
            if (w->kind == W_ENV && (!strncmp(a, "--split-string", nl) && nl > 2)) {
                bp_uncertain(p, "env -S");
                return c->argc;
            }
            if (in_list(w->long_with_arg, a, nl) && !eq)
                i++;
            i++;
            /* Long flags without values (--preserve-status, --null, …)
             * are accepted: none of them changes which command runs. */
            continue;
        }
        bool took_arg = false;
        for (size_t k = 1; a[k]; k++) {
            char o = a[k];
            if (w->kind == W_ENV && o == 'S') {
                bp_uncertain(p, "env -S");
                return c->argc;
            }
            if (w->kind == W_COMMAND && (o == 'v' || o == 'V'))
                return c->argc;   /* command -v only looks the name up */
            if (w->kind == W_SUDO && strchr("eilsvV", o) && !strchr(w->flags, o)) {
                /* sudo -e edits files, -i/-s start a shell, -l/-v list or
                 * validate: no command of the arguments runs as given. */
                if (o == 'i' || o == 's')
                    continue;
                return c->argc;
            }
            if (w->kind == W_XARGS && (o == 'i' || o == 'l'))
                break;   /* optional value glued to the letter */
            if (w->nocmd && strchr(w->nocmd, o))
                return c->argc;   /* taskset -p PID: no command runs */
            if (strchr(w->with_arg, o)) {
                if (!a[k + 1])
                    took_arg = true;
                break;
            }
            if (!strchr(w->flags, o)) {
                bp_uncertain(p, "unknown option of a command wrapper");
                return c->argc;
            }
        }
        /* Options of nice, timeout, stdbuf … change how, not what, runs;
         * env's change the environment the command sees. */
        if (w->kind == W_ENV)
            *transparent = false;
        i += took_arg ? 2 : 1;
    }
    for (unsigned k = 0; k < w->positional && i < c->argc; k++)
        i++;   /* timeout's duration, taskset's mask, flock's file … */
    return i;
}

/* sh -c SCRIPT, bash -lc SCRIPT, …: returns the index of SCRIPT, or 0. */
static size_t shell_script_arg(const bash_cmd *c)
{
    bool has_c = false;
    size_t i = 1;
    for (; i < c->argc; i++) {
        const char *a = c->argv[i];
        if (!strcmp(a, "--")) {
            i++;
            break;
        }
        if (a[0] != '-' && a[0] != '+')
            break;
        if (a[1] == '-') {
            if (!strcmp(a, "--rcfile") || !strcmp(a, "--init-file"))
                i++;
            continue;
        }
        if (!strcmp(a + 1, "o") || !strcmp(a + 1, "O"))
            i++;
        else if (a[0] == '-' && strchr(a + 1, 'c'))
            has_c = true;
    }
    return has_c && i < c->argc ? i : 0;
}

static bool is_shell(const char *name)
{
    static const char *const SHELLS[] = {"sh", "bash", "zsh", "dash", "ksh", "mksh", "ash",
                                         "yash", "rbash", NULL};
    for (size_t k = 0; SHELLS[k]; k++)
        if (!strcmp(name, SHELLS[k]))
            return true;
    return false;
}

/* The file a shell or `source` operand names when it means standard input. */
static bool is_stdin_path(const char *a)
{
    return !strcmp(a, "-") || !strcmp(a, "/dev/stdin") || !strcmp(a, "/dev/fd/0") ||
           !strcmp(a, "/proc/self/fd/0");
}

/* True when the shell command c (no -c script) reads its script from
 * standard input: -s, no script operand, or an operand that is stdin. */
static bool shell_reads_stdin(const bash_cmd *c)
{
    for (size_t i = 1; i < c->argc; i++) {
        const char *a = c->argv[i];
        if (!strcmp(a, "--"))
            return i + 1 >= c->argc || is_stdin_path(c->argv[i + 1]);
        if (is_stdin_path(a))
            return true;
        if (a[0] != '-' && a[0] != '+')
            return false;   /* a script file: its text is not on the line */
        if (a[1] == '-') {
            if (!strcmp(a, "--rcfile") || !strcmp(a, "--init-file"))
                i++;
            continue;
        }
        if (!strcmp(a + 1, "o") || !strcmp(a + 1, "O"))
            i++;
        else if (a[0] == '-' && strchr(a + 1, 's'))
            return true;    /* -s: the rest are positional parameters */
    }
    return true;
}

void bp_derive_stdin_script(parser *p, size_t idx, const char *what)
{
    for (long at = (long)idx; at >= 0; at = p->out->cmds[at].parent) {
        const bash_cmd *o = &p->out->cmds[at];
        /* Of several redirections of stdin the last one wins. */
        const bash_redir *r = NULL;
        for (size_t k = 0; k < o->nredir; k++)
            if (o->redir[k].fd <= 0 &&
                (o->redir[k].kind == BASH_REDIR_HERESTRING ||
                 o->redir[k].kind == BASH_REDIR_HEREDOC || o->redir[k].kind == BASH_REDIR_IN ||
                 o->redir[k].kind == BASH_REDIR_INOUT))
                r = &o->redir[k];
        if (r) {
            if (r->kind == BASH_REDIR_HERESTRING) {
                if (r->target_flags & BASH_WORD_EXPANDS)
                    bp_uncertain(p, "a script built at run time on standard input");
                bp_sub_parse(p, r->target, strlen(r->target), false, (long)idx);
                return;
            }
            if (r->kind == BASH_REDIR_HEREDOC) {
                bp_uncertain(p, what);
                return;
            }
            if (r->kind == BASH_REDIR_IN || r->kind == BASH_REDIR_INOUT)
                return;   /* a script file, as `bash FILE` is */
        }
        if ((o->flags & BASH_CMD_PIPE_IN) || o->pipe_pos > 0) {
            bp_uncertain(p, what);
            return;
        }
        if (!(o->flags & BASH_CMD_DERIVED))
            return;
    }
}

void bp_derive_script(parser *p, const bash_cmd *c, size_t idx, size_t k)
{
    if (c->argv_flags[k] & BASH_WORD_EXPANDS)
        bp_uncertain(p, "a command built at run time");
    bp_sub_parse(p, c->argv[k], strlen(c->argv[k]), false, (long)idx);
}

/* Commands that take a shell script as an option or argument:
 * flock … -c SCRIPT, script -c SCRIPT, runuser/sg … -c SCRIPT, and trap
 * 'SCRIPT' SIGNAL (run later, but run all the same). True when c was one
 * of them and has been handled. */
static bool derive_script_option(parser *p, const bash_cmd *c, size_t idx, const char *name,
                                 unsigned level)
{
    bool flock = !strcmp(name, "flock"), script = !strcmp(name, "script");
    bool runuser = !strcmp(name, "runuser") || !strcmp(name, "sg");
    if (!strcmp(name, "trap")) {
        size_t i = 1;
        while (i < c->argc && c->argv[i][0] == '-' && c->argv[i][1] && strcmp(c->argv[i], "--") &&
               strcmp(c->argv[i], "-"))
            i++;
        if (i < c->argc && !strcmp(c->argv[i], "--"))
            i++;
        /* trap ACTION SIGNAL…; a single word only resets that signal. */
        if (i + 1 < c->argc && strcmp(c->argv[i], "-"))
            bp_derive_script(p, c, idx, i);
        return true;
    }
    if (!flock && !script && !runuser)
        return false;
    for (size_t k = 1; k + 1 < c->argc; k++) {
        const char *a = c->argv[k];
        size_t al = strlen(a);
        bool cluster_c = a[0] == '-' && al > 2 && a[1] != '-' && a[al - 1] == 'c' &&
                         strspn(a + 1, "aefqkEIOBTmxsunoFlgGwp") == al - 2; /* script -qc */
        if (!strcmp(a, "-c") || !strcmp(a, "--command") || cluster_c) {
            bp_derive_script(p, c, idx, k + 1);
            return true;
        }
        if (!strncmp(a, "--command=", 10)) {
            bp_sub_parse(p, a + 10, strlen(a + 10), false, (long)idx);
            return true;
        }
    }
    if (script)
        return true;   /* no -c: an interactive shell; the argument is the log file */
    if (runuser) {
        /* runuser -u USER CMD…, sg GROUP CMD… (sg hands its words to sh -c) */
        size_t from = c->argc;
        if (!strcmp(name, "sg")) {
            from = 2;
        } else {
            for (size_t k = 1; k + 1 < c->argc; k++)
                if (!strcmp(c->argv[k], "-u") || !strcmp(c->argv[k], "--user")) {
                    from = k + 2;
                    break;
                }
            if (from < c->argc && !strcmp(c->argv[from], "--"))
                from++;
        }
        if (from < c->argc)
            bp_emit_derived(p, idx, from, c->argc, NULL, false, level);
        return true;
    }
    return false;   /* flock without -c: the wrapper table handles it */
}

/* Interpreters given code on the command line (python -c, perl -e, node
 * -e, …): the parser cannot follow the code, but when it can start
 * programs (os.system, subprocess, child_process, backticks, …) the
 * command may run anything — uncertain, so deny rules apply to it. */
static void interpreter_code(parser *p, const bash_cmd *c, long idx, const char *name)
{
    static const struct {
        const char *prefix;   /* program name, or its prefix ("python") */
        const char *opts;     /* option letters followed by code */
    } INTERP[] = {{"python", "c"}, {"pypy", "c"}, {"perl", "eE"}, {"ruby", "e"},
                  {"node", "ep"}, {"nodejs", "ep"}, {"bun", "e"}, {"deno", ""},
                  {"php", "r"},    {"lua", "e"},    {"Rscript", "e"}, {"awk", ""},
                  {"gawk", ""},    {"mawk", ""},    {"nawk", ""}};
    static const char *const SHELL_OUT[] = {
        "system", "exec", "popen", "spawn", "subprocess", "child_process", "`", "pty",
        "shell_exec", "passthru", "proc_open", "Open3", "%x", "qx", "fork", "os.", "Deno.",
        "Bun.", "|", NULL,
    };
    bool awk = false;
    const char *opts = NULL;
    for (size_t k = 0; k < sizeof INTERP / sizeof INTERP[0]; k++)
        if (!strncmp(name, INTERP[k].prefix, strlen(INTERP[k].prefix)) &&
            (!name[strlen(INTERP[k].prefix)] || isdigit((unsigned char)name[strlen(INTERP[k].prefix)]))) {
            opts = INTERP[k].opts;
            awk = strstr(INTERP[k].prefix, "awk") != NULL;
        }
    if (!opts)
        return;
    if (!awk && (c->argc == 1 || (c->argc == 2 && !strcmp(c->argv[1], "-")))) {
        /* The code comes on standard input: a pipe or here-document is
         * not followed; a here-string is looked at like -c code. */
        for (long at = idx; at >= 0; at = p->out->cmds[at].parent) {
            const bash_cmd *o = &p->out->cmds[at];
            for (size_t k = 0; k < o->nredir; k++) {
                const bash_redir *r = &o->redir[k];
                if (r->fd > 0)
                    continue;
                if (r->kind == BASH_REDIR_HEREDOC)
                    bp_uncertain(p, "interpreter code on standard input");
                else if (r->kind == BASH_REDIR_HERESTRING)
                    for (size_t m = 0; SHELL_OUT[m]; m++)
                        if (strstr(r->target, SHELL_OUT[m])) {
                            bp_uncertain(p, "interpreter code that can start programs");
                            return;
                        }
            }
            if ((o->flags & BASH_CMD_PIPE_IN) || o->pipe_pos > 0)
                bp_uncertain(p, "interpreter code on standard input");
            if (!(o->flags & BASH_CMD_DERIVED))
                break;
        }
        return;
    }
    for (size_t k = 1; k < c->argc; k++) {
        const char *a = c->argv[k];
        const char *code = NULL;
        if (awk) {
            if (a[0] == '-' && (a[1] == 'v' || a[1] == 'F' || a[1] == 'f') && !a[2])
                k++;   /* -v var=x, -F sep, -f file */
            else if (a[0] != '-')
                code = a;   /* the program text */
        } else if (a[0] == '-' && a[1] && a[1] != '-' && strchr(opts, a[strlen(a) - 1]) &&
                   k + 1 < c->argc) {
            code = c->argv[++k];
        } else if (!strcmp(a, "--eval") || !strcmp(a, "--print") || !strcmp(a, "eval")) {
            code = k + 1 < c->argc ? c->argv[++k] : NULL;
        }
        if (!code)
            continue;
        for (size_t m = 0; SHELL_OUT[m]; m++)
            if (strstr(code, SHELL_OUT[m])) {
                bp_uncertain(p, "interpreter code that can start programs");
                return;
            }
        if (awk)
            return;
    }
}

/* Variables whose value a program runs as a shell command: GIT_EDITOR=X
 * git commit runs X. Their values are parsed as commands of their own. */
static void derive_assign_commands(parser *p, const bash_cmd *c, size_t idx)
{
    static const char *const RUN_VARS[] = {
        "GIT_EDITOR", "GIT_SEQUENCE_EDITOR", "EDITOR", "VISUAL", "PAGER", "GIT_PAGER",
        "MANPAGER", "SYSTEMD_PAGER", "GIT_SSH_COMMAND", "GIT_EXTERNAL_DIFF", "GIT_ASKPASS",
        "SSH_ASKPASS", "SUDO_ASKPASS", "PROMPT_COMMAND", "LESSOPEN", "LESSCLOSE", NULL};
    const char *name = bash_cmd_name(c);
    bool exports = !strcmp(name, "export") || !strcmp(name, "declare") ||
                   !strcmp(name, "typeset") || !strcmp(name, "readonly");
    size_t n = c->nassign + (exports ? c->argc : 0);
    for (size_t k = 0; k < n; k++) {
        /* export GIT_EDITOR=X: the later commands of the line get it */
        const char *a = k < c->nassign ? c->assign[k] : c->argv[k - c->nassign];
        const char *eq = strchr(a, '=');
        if (!eq || !eq[1])
            continue;
        bool run = false;
        for (size_t v = 0; RUN_VARS[v] && !run; v++)
            run = strlen(RUN_VARS[v]) == (size_t)(eq - a) && !strncmp(a, RUN_VARS[v], eq - a);
        if (!run)
            continue;
        if (strpbrk(eq + 1, "$`"))
            bp_uncertain(p, "a command built at run time in a variable a program runs");
        bp_sub_parse(p, eq + 1, strlen(eq + 1), false, (long)idx);
    }
}

/* xargs / parallel at index at: the command gets words read at run time, in
 * the place of the replace string (-I{}, parallel's {}), else appended. */
static void derive_xargs(parser *p, const bash_cmd *c, size_t idx, const wrapper *w, size_t at,
                         const vec *assign, unsigned level)
{
    const char *ph = w->kind == W_PARALLEL ? "{" : NULL;
    for (size_t k = 1; k < at && w->kind == W_XARGS; k++) {
        const char *a = c->argv[k];
        if (!strcmp(a, "-I") && k + 1 < at)
            ph = c->argv[k + 1];
        else if (!strncmp(a, "-I", 2) && a[2])
            ph = a + 2;
        else if (!strncmp(a, "-i", 2))
            ph = a[2] ? a + 2 : "{}";
        else if (!strncmp(a, "--replace", 9))
            ph = a[9] == '=' ? a + 10 : "{}";
    }
    size_t end = at;
    while (end < c->argc && strncmp(c->argv[end], ":::", 3))
        end++;
    if (w->kind == W_XARGS)
        end = c->argc;
    bool placed = false;
    for (size_t k = at; k < end && ph && *ph; k++)
        placed = placed || strstr(c->argv[k], ph) != NULL;
    if (end == at)
        bp_uncertain(p, "parallel runs its arguments as commands");
    else
        emit_derived_x(p, idx, at, end, assign, false, level, placed ? 0 : BASH_CMD_MORE_ARGS,
                       placed ? ph : NULL);
}

/* c is the wrapper w (sudo, env, timeout, xargs, …): the command after its
 * options is derived from it. */
static void derive_wrapper(parser *p, const bash_cmd *c, size_t idx, const wrapper *w,
                           unsigned level)
{
    vec assign = {0};
    bool transparent = w->transparent;
    size_t at = skip_wrapper(p, c, w, &assign, &transparent);
    if (at < c->argc && (w->kind == W_XARGS || w->kind == W_PARALLEL))
        derive_xargs(p, c, idx, w, at, &assign, level);
    else if (at >= c->argc && w->kind == W_PARALLEL)
        bp_uncertain(p, "parallel runs its arguments as commands");
    else if (at < c->argc)
        bp_emit_derived(p, idx, at, c->argc, &assign, transparent, level);
    else if (w->kind == W_SUDO && assign.n)
        bp_uncertain(p, "sudo with assignments and no command");
    bp_vec_free(&assign);
}

/* find … -exec/-execdir/-ok/-okdir CMD… ; or +: each CMD, {} as a word
 * read at run time. */
static void derive_find(parser *p, const bash_cmd *c, size_t idx, unsigned level)
{
    for (size_t k = 1; k < c->argc; k++) {
        const char *a = c->argv[k];
        if (strcmp(a, "-exec") && strcmp(a, "-execdir") && strcmp(a, "-ok") &&
            strcmp(a, "-okdir"))
            continue;
        size_t e = k + 1;
        while (e < c->argc && strcmp(c->argv[e], ";") && strcmp(c->argv[e], "+"))
            e++;
        if (e >= c->argc) {
            bp_uncertain(p, "find -exec without ; or +");
            return;
        }
        if (e > k + 1)
            emit_derived_x(p, idx, k + 1, e, NULL, false, level, 0, "{}");
        k = e;
    }
}

/* sh -c SCRIPT (parsed as a script of its own), or a shell reading its
 * script from standard input. */
static void derive_shell(parser *p, const bash_cmd *c, size_t idx)
{
    size_t s = shell_script_arg(c);
    if (!s) {
        if (shell_reads_stdin(c))
            bp_derive_stdin_script(p, idx, "a shell reads its script from standard input");
        return;
    }
    if (c->argv_flags[s] & BASH_WORD_EXPANDS)
        bp_uncertain(p, "sh -c with a script built at run time");
    bp_sub_parse(p, c->argv[s], strlen(c->argv[s]), false, (long)idx);
}

/* alias NAME=TEXT: a later line (with expand_aliases) runs TEXT under the
 * name, so TEXT is read as if it ran here. */
static void derive_alias(parser *p, const bash_cmd *c, size_t idx)
{
    for (size_t k = 1; k < c->argc; k++) {
        const char *eq = strchr(c->argv[k], '=');
        if (!eq || eq == c->argv[k] || c->argv[k][0] == '-')
            continue;
        if (c->argv_flags[k] & BASH_WORD_EXPANDS)
            bp_uncertain(p, "an alias built at run time");
        bp_sub_parse(p, eq + 1, strlen(eq + 1), false, (long)idx);
    }
}

/* eval WORDS…, su … -c SCRIPT, watch [opts] WORDS…: the words joined with
 * spaces are a script of their own (watch runs them through sh -c). */
static void derive_joined_words(parser *p, const bash_cmd *c, size_t idx, const char *name)
{
    loom_str script = LOOM_STR_INIT;
    size_t from = 1;
    if (!strcmp(name, "eval")) {
        /* eval is used almost only for text built at run time: even
         * when its words are literal, the parse is not trusted. */
        bp_uncertain(p, "eval");
    } else if (!strcmp(name, "su")) {
        from = c->argc;
        for (size_t k = 1; k + 1 < c->argc; k++)
            if (!strcmp(c->argv[k], "-c") || !strcmp(c->argv[k], "--command")) {
                if (c->argv_flags[k + 1] & BASH_WORD_EXPANDS)
                    bp_uncertain(p, "a command built at run time");
                str_puts(&script, c->argv[k + 1]);
                break;
            }
    } else { /* watch [opts] command… run through sh -c */
        while (from < c->argc && c->argv[from][0] == '-') {
            const char *a = c->argv[from];
            if (!strcmp(a, "-n") || !strcmp(a, "--interval") || !strcmp(a, "-q") ||
                !strcmp(a, "--equexit"))
                from++;
            else if (!strcmp(a, "-x") || !strcmp(a, "--exec"))
                bp_uncertain(p, "watch -x");
            from++;
        }
    }
    for (size_t k = from; k < c->argc; k++) {
        if (c->argv_flags[k] & BASH_WORD_EXPANDS)
            bp_uncertain(p, "a command built at run time");
        if (script.len)
            str_putc(&script, ' ');
        str_puts(&script, c->argv[k]);
    }
    if (script.len)
        bp_sub_parse(p, script.ptr, script.len, false, (long)idx);
    str_free(&script);
}

void bp_derive(parser *p, size_t idx, unsigned level)
{
    if (p->out->aborted)
        return;
    /* A copy: deriving appends to p->out->cmds, which may move it. */
    bash_cmd c = p->out->cmds[idx];
    if (c.argc == 0)
        return;
    const char *name = bash_cmd_name(&c);
    if (level >= DERIVE_MAX) {
        bp_uncertain(p, "too many nested command wrappers");
        return;
    }
    derive_assign_commands(p, &c, idx);
    if (derive_script_option(p, &c, idx, name, level))
        return;
    interpreter_code(p, &c, (long)idx, name);
    for (const wrapper *w = WRAPPERS; w->name; w++)
        if (!strcmp(name, w->name)) {
            derive_wrapper(p, &c, idx, w, level);
            return;
        }
    if (!strcmp(name, "find")) {
        derive_find(p, &c, idx, level);
    } else if (is_shell(name)) {
        derive_shell(p, &c, idx);
    } else if (bp_derive_runner(p, &c, idx, name, level)) {
        return;
    } else if (!strcmp(name, "alias")) {
        derive_alias(p, &c, idx);
    } else if ((!strcmp(name, "source") || !strcmp(name, ".")) && c.argc >= 2 &&
               is_stdin_path(c.argv[1])) {
        bp_derive_stdin_script(p, idx, "source reads its script from standard input");
    } else if (!strcmp(name, "eval") || !strcmp(name, "su") || !strcmp(name, "watch")) {
        derive_joined_words(p, &c, idx, name);
    }
}
