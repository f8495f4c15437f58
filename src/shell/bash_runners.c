/* bash_runners.c — programs whose subcommands run a command given in their
 * arguments, for the shell parser's unwrapping (bash_wrappers.c): package
 * runners (npm/pnpm/yarn exec, uv/pipx/poetry run, bundle exec, …), git
 * (submodule foreach, config alias.X / core.pager, bisect run, rebase
 * --exec, filter-branch --*-filter, difftool -x), tmux's window-making
 * subcommands and at / batch. What they run is recorded as commands derived
 * from them; what cannot be followed makes the parse uncertain.
 *
 * Owns the per-program tables; everything else is bash_parse_internal.h's.
 * Threading: as the parser — one parse on one thread.
 */
#include "shell/bash_parse.h"
#include "shell/bash_parse_internal.h"

#include <stdbool.h>
#include <stddef.h>
#include <string.h>
#include <strings.h>

#include "base/str.h"

/* at / batch: the commands come on standard input, unless -f names a
 * script file (as `bash FILE`). */
static void derive_at(parser *p, const bash_cmd *c, size_t idx)
{
    for (size_t k = 1; k < c->argc; k++)
        if (!strcmp(c->argv[k], "-f") || !strncmp(c->argv[k], "-f", 2))
            return;   /* a script file, as `bash FILE` */
    bp_derive_stdin_script(p, idx, "at reads the commands it runs from standard input");
}

/* tmux: its window-making subcommands run a shell command the parser does
 * not follow (tmux's own quoting): uncertain. */
static void derive_tmux(parser *p, const bash_cmd *c)
{
    static const char *const MAKE_WIN[] = {"new-session", "new", "new-window", "neww",
                                           "split-window", "splitw", "respawn-pane",
                                           "respawnp", "respawn-window", "respawnw",
                                           "run-shell", "run", "if-shell", "if",
                                           "display-popup", "popup", "pipe-pane",
                                           "pipep", NULL};
    for (size_t k = 1; k < c->argc; k++)
        for (size_t m = 0; MAKE_WIN[m]; m++)
            if (!strcmp(c->argv[k], MAKE_WIN[m])) {
                bp_uncertain(p, "tmux runs a shell command");
                return;
            }
}

/* Package managers and environment runners: npm/pnpm/yarn exec CMD,
 * pnpm/yarn dlx CMD, pipx/uv/poetry run CMD, bundle exec CMD, … (words),
 * npm exec -c / --call CMD (shell text). True when c was one of them and
 * has been handled. */
static bool derive_package_runner(parser *p, const bash_cmd *c, size_t idx, const char *name,
                                  unsigned level)
{
    static const struct {
        const char *prog, *sub;
    } RUNS[] = {{"npm", "exec"},  {"npm", "x"},      {"pnpm", "exec"}, {"pnpm", "dlx"},
                {"yarn", "exec"}, {"yarn", "dlx"},   {"pipx", "run"},  {"uv", "run"},
                {"poetry", "run"}, {"bundle", "exec"}, {"pdm", "run"},  {"hatch", "run"},
                {"rye", "run"},   {"conda", "run"},  {"mamba", "run"}, {"bun", "x"},
                {"bun", "exec"}};
    for (size_t r = 0; r < sizeof RUNS / sizeof RUNS[0]; r++) {
        if (strcmp(name, RUNS[r].prog))
            continue;
        size_t i = 1;
        while (i < c->argc && c->argv[i][0] == '-')
            i++;   /* the manager's own options (npm --yes exec …) */
        if (i >= c->argc || strcmp(c->argv[i], RUNS[r].sub))
            continue;
        for (i++; i < c->argc && c->argv[i][0] == '-'; i++) {
            const char *a = c->argv[i];
            if (!strcmp(a, "--")) {
                i++;
                break;
            }
            if ((!strcmp(a, "-c") || !strcmp(a, "--call")) && i + 1 < c->argc) {
                bp_derive_script(p, c, idx, ++i);   /* npm exec -c 'CMD' */
                continue;
            }
            if (!strncmp(a, "--call=", 7)) {
                bp_sub_parse(p, a + 7, strlen(a + 7), false, (long)idx);
                continue;
            }
            if (!strchr(a, '=') && a[1] == '-' && i + 1 < c->argc &&
                (!strcmp(a, "--package") || !strcmp(a, "--spec") || !strcmp(a, "--with") ||
                 !strcmp(a, "--python") || !strcmp(a, "--directory") || !strcmp(a, "--project") ||
                 !strcmp(a, "--from") || !strcmp(a, "--name") || !strcmp(a, "--prefix") ||
                 !strcmp(a, "--workspace") || !strcmp(a, "--filter") || !strcmp(a, "--env")))
                i++;
            else if (!strcmp(a, "-p") || !strcmp(a, "-w") || !strcmp(a, "-n") ||
                     !strcmp(a, "-C") || !strcmp(a, "-e"))
                i++;
        }
        if (i < c->argc)
            bp_emit_derived(p, idx, i, c->argc, NULL, false, level);
        return true;
    }
    return false;
}

/* git submodule foreach [--recursive] CMD…: the words joined, run by sh.
 * i is the index of "submodule". */
static void derive_git_submodule(parser *p, const bash_cmd *c, size_t idx, size_t i)
{
    size_t k = i + 1;
    while (k < c->argc && c->argv[k][0] == '-')
        k++;
    if (k >= c->argc || strcmp(c->argv[k], "foreach"))
        return;
    loom_str script = LOOM_STR_INIT;
    for (k++; k < c->argc && c->argv[k][0] == '-' && strcmp(c->argv[k], "--"); k++)
        ;
    if (k < c->argc && !strcmp(c->argv[k], "--"))
        k++;
    for (; k < c->argc; k++) {
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

/* git config [set] alias.NAME TEXT / core.pager CMD …: a later git runs
 * TEXT (an alias: "!shell" or git words), so it is read as if it ran here
 * — as `alias NAME=TEXT` is. i is the index of "config". */
static void derive_git_config(parser *p, const bash_cmd *c, size_t idx, size_t i)
{
    static const char *const RUN_KEYS[] = {"core.pager", "core.sshcommand", "core.editor",
                                           "sequence.editor", "core.fsmonitor",
                                           "core.askpass", "core.gitproxy",
                                           "diff.external", NULL};
    const char *key = NULL, *val = NULL;
    size_t valk = 0;
    for (size_t k = i + 1; k < c->argc; k++) {
        const char *a = c->argv[k];
        if (!strcmp(a, "set") && !key)
            continue;
        if (a[0] == '-') {
            if (!strcmp(a, "-f") || !strcmp(a, "--file") || !strcmp(a, "--blob") ||
                !strcmp(a, "--type") || !strcmp(a, "--comment") || !strcmp(a, "--value"))
                k++;
            continue;
        }
        if (!key) {
            key = a;
        } else {
            val = a;
            valk = k;
            break;
        }
    }
    if (!key || !val)
        return;
    bool alias = !strncasecmp(key, "alias.", 6);
    bool runs = false;
    for (size_t r = 0; RUN_KEYS[r] && !runs; r++)
        runs = !strcasecmp(key, RUN_KEYS[r]);
    if (c->argv_flags[valk] & BASH_WORD_EXPANDS && (alias || runs))
        bp_uncertain(p, "a git command built at run time");
    if (alias && val[0] == '!') {
        bp_sub_parse(p, val + 1, strlen(val + 1), false, (long)idx);
    } else if (alias) {
        loom_str t = LOOM_STR_INIT;
        str_puts(&t, "git ");
        str_puts(&t, val);
        bp_sub_parse(p, t.ptr, t.len, false, (long)idx);
        str_free(&t);
    } else if (runs) {
        bp_sub_parse(p, val, strlen(val), false, (long)idx);
    }
}

/* git rebase --exec/-x CMD, git difftool -x/--extcmd CMD, git
 * filter-branch --*-filter CMD: shell text given to an option. i is the
 * index of the subcommand. */
static void derive_git_option_scripts(parser *p, const bash_cmd *c, size_t idx, size_t i)
{
    static const char *const FILTERS[] = {"--env-filter", "--tree-filter", "--index-filter",
                                          "--parent-filter", "--msg-filter", "--commit-filter",
                                          "--tag-name-filter", NULL};
    const char *sub = c->argv[i];
    bool rebase = !strcmp(sub, "rebase"), difftool = !strcmp(sub, "difftool"),
         filter = !strcmp(sub, "filter-branch");
    if (!rebase && !difftool && !filter)
        return;
    for (size_t k = i + 1; k < c->argc; k++) {
        const char *a = c->argv[k];
        if (!strcmp(a, "--"))
            break;
        const char *opt = NULL;   /* the option name that takes a command */
        if (rebase && (!strcmp(a, "--exec") || !strcmp(a, "-x")))
            opt = a;
        else if (difftool && (!strcmp(a, "--extcmd") || !strcmp(a, "-x")))
            opt = a;
        for (size_t f = 0; filter && FILTERS[f] && !opt; f++)
            if (!strcmp(a, FILTERS[f]))
                opt = a;
        if (opt) {
            if (k + 1 < c->argc)
                bp_derive_script(p, c, idx, ++k);
            continue;
        }
        const char *eq = strchr(a, '=');
        bool glued = (rebase && !strncmp(a, "--exec=", 7)) ||
                     (difftool && !strncmp(a, "--extcmd=", 9));
        for (size_t f = 0; filter && FILTERS[f] && !glued; f++)
            glued = eq && (size_t)(eq - a) == strlen(FILTERS[f]) && !strncmp(a, FILTERS[f], eq - a);
        if (rebase && !strncmp(a, "-x", 2) && a[2] && a[1] != '-')
            bp_sub_parse(p, a + 2, strlen(a + 2), false, (long)idx);
        else if (glued)
            bp_sub_parse(p, eq + 1, strlen(eq + 1), false, (long)idx);
    }
}

/* git: past its global options, the subcommands that run a command
 * (submodule foreach, config of an alias or a pager, bisect run, rebase
 * --exec, …). */
static void derive_git(parser *p, const bash_cmd *c, size_t idx, unsigned level)
{
    size_t i = 1;
    while (i < c->argc && c->argv[i][0] == '-') {
        const char *a = c->argv[i];
        if (!strcmp(a, "-C") || !strcmp(a, "-c") || !strcmp(a, "--git-dir") ||
            !strcmp(a, "--work-tree") || !strcmp(a, "--namespace") ||
            !strcmp(a, "--config-env") || !strcmp(a, "--super-prefix") ||
            !strcmp(a, "--exec-path") || !strcmp(a, "--attr-source"))
            i++;
        i++;
    }
    if (i >= c->argc)
        return;
    const char *sub = c->argv[i];
    if (!strcmp(sub, "submodule"))
        derive_git_submodule(p, c, idx, i);
    else if (!strcmp(sub, "config"))
        derive_git_config(p, c, idx, i);
    else if (!strcmp(sub, "bisect")) {
        if (i + 2 < c->argc && !strcmp(c->argv[i + 1], "run"))
            bp_emit_derived(p, idx, i + 2, c->argc, NULL, false, level);
    } else
        derive_git_option_scripts(p, c, idx, i);
}

/* git is never handled here alone: the git rules still see `git …`. */
bool bp_derive_runner(parser *p, const bash_cmd *c, size_t idx, const char *name,
                      unsigned level)
{
    if (!strcmp(name, "at") || !strcmp(name, "batch")) {
        derive_at(p, c, idx);
        return true;
    }
    if (!strcmp(name, "tmux")) {
        derive_tmux(p, c);
        return true;
    }
    if (derive_package_runner(p, c, idx, name, level))
        return true;
    if (!strcmp(name, "git"))
        derive_git(p, c, idx, level);
    return false;
}
