/* git_config.h — whether a repository's own git configuration makes a git
 * command run code of the repository's choosing.
 *
 * A folder can arrive with its .git (an archive, a shared directory) and
 * its .git/config can name programs git runs on its own: core.fsmonitor on
 * `git status`, a diff driver's textconv on `git diff`, a pager, hooks,
 * aliases starting with "!", … Git's read-only commands are then not
 * read-only. In a workspace the user has not trusted, a Bash command that
 * runs git in such a repository is therefore put before a person (headless:
 * denied), whatever the rules and the risk classifier say (fail closed).
 *
 * Pure functions over files; no state; thread-safe. */
#ifndef LOOM_POLICY_GIT_CONFIG_H
#define LOOM_POLICY_GIT_CONFIG_H

#include <stdbool.h>
#include <stddef.h>

/* Whether the repository holding cwd has, in .git/config or
 * .git/config.worktree, a key that makes git run a program (the first one
 * found is named in why: "core.fsmonitor"). False when cwd is in no
 * repository or the files cannot be read. */
bool git_config_runs_code(const char *cwd, char *why, size_t cap);

/* The same over one config file's text (the first such key is named). */
bool git_config_text_runs_code(const char *text, char *why, size_t cap);

/* Whether a Bash command line runs git: a word of any of its simple
 * commands is "git" or a path ending in "/git" (so `env git`, `xargs git`
 * and wrappers count too). */
bool git_command_runs_git(const char *command);

#endif
