/* program_options.h — the global options of well-known programs (git, npm,
 * docker, kubectl, cargo, …), so that a rule written for a subcommand
 * (Bash(git push:*)) also meets `git -C . push`, `git --no-pager push` or
 * `kubectl -n prod --context c delete pod x`.
 *
 * The table says, per program, which options before the subcommand take a
 * value (in the next word or after '='), which take none, and which define
 * an inline alias (git -c alias.pp=push pp): after such an option, or after
 * an option the table does not know, nobody can say which subcommand runs,
 * and the answer is "unsure" — callers then treat the command as possibly
 * any subcommand of the program (fail closed).
 *
 * Pure functions over static data: safe from any thread.
 */
#ifndef LOOM_SHELL_PROGRAM_OPTIONS_H
#define LOOM_SHELL_PROGRAM_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>

typedef struct prog_norm {
    bool known;         /* the program is in the table */
    bool changed;       /* some global option was dropped */
    bool unsure;        /* an unknown option or an inline alias: any subcommand */
    char why[160];      /* why unsure ("" otherwise) */
    size_t n;           /* words kept: keep[0..n) index argv */
    size_t *keep;       /* owned: free with prog_norm_free */
} prog_norm;

/* Normalizes argv (argc words, argv[0] the program as written; name is its
 * basename) by dropping the program's global options and their values.
 * assign (nassign words "NAME=value" written before the command, and those
 * of env/sudo) is looked at for variables that define aliases or commands
 * (GIT_CONFIG_KEY_0=alias.x). When the program is not in the table,
 * out->known is false and keep lists every word. out must be freed with
 * prog_norm_free. */
void program_options_normalize(const char *name, const char *const *argv, size_t argc,
                               const char *const *assign, size_t nassign, prog_norm *out);
void prog_norm_free(prog_norm *n);

/* True when name is a program in the table (for "any subcommand of it"). */
bool program_options_known(const char *name);

#endif
