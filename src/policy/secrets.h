/* secrets.h — the credential stores that no tool reads (or writes) without a
 * person seeing the call: ~/.ssh, ~/.aws, ~/.gnupg, ~/.netrc, … — one list,
 * shared by the command sandbox (its default denyRead) and the permission
 * check of every file tool (docs/permissions.md §1, "secret paths").
 *
 * A path is secret when it is one of these stores or lies beneath one, in
 * its lexical form or after its symlinks are resolved, or when the sandbox's
 * configured denyRead list covers it. The sandbox sits above this module
 * (DESIGN §1: sandbox → policy), so the caller hands that list in as a
 * secrets_deny (sandbox_secrets_deny builds one from the session's policy);
 * NULL means no sandbox: the default stores only. Pure functions over the
 * filesystem (realpath, lstat); nothing is cached, so they are safe on any
 * thread.
 */
#ifndef LOOM_POLICY_SECRETS_H
#define LOOM_POLICY_SECRETS_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

/* The command sandbox's denyRead list, as the checks below see it. */
typedef struct secrets_deny {
    /* path (absolute) is under denyRead, the sandbox's carve-outs applied */
    bool (*read_denied)(const void *ctx, const char *path);
    const void *ctx;
    char *const *paths;     /* the denyRead entries (absolute), for fences */
    size_t n;
    bool confines_commands; /* Bash commands run confined: the kernel enforces the list */
} secrets_deny;

/* The default list, relative to $HOME (static strings); NULL past the end. */
const char *secrets_default_at(size_t i);
size_t secrets_default_count(void);

/* Is path (absolute or relative to cwd; a leading "~/" means $HOME) a
 * secret path? Checks the lexical form and the form with every existing
 * symlink followed, against the default stores (themselves taken both as
 * written and resolved) and deny's list (may be NULL). When why is non-NULL it gets the store that matched
 * ("~/.ssh"). NULL path: false. */
bool secrets_path_is_secret(const char *path, const char *cwd, const secrets_deny *deny,
                            char *why, size_t cap);

/* Does the directory dir (absolute, resolved) hold a secret path somewhere
 * beneath it? A search rooted there must skip what secrets_path_is_secret()
 * says of each entry. */
bool secrets_dir_holds_secret(const char *dir, const secrets_deny *deny);

/* The secret paths beneath one directory, for a search rooted there (Grep,
 * Glob): the walk skips what secrets_fence_hit() names. Walks never follow
 * symlinks, so the stores' own paths (as written and resolved) suffice. */
typedef struct secrets_fence {
    char **v;   /* absolute paths, owned */
    size_t n;
} secrets_fence;

/* Fills f with the stores (and deny's paths) beneath dir; f->n is
 * 0 when there are none. Free with secrets_fence_free. */
void secrets_fence_init(secrets_fence *f, const char *dir, const secrets_deny *deny);
/* path (absolute, as the walk spells it) is one of f's paths or beneath one. */
bool secrets_fence_hit(const secrets_fence *f, const char *path);
void secrets_fence_free(secrets_fence *f);

/* The secret path a tool call names, if any: the file_path / notebook_path
 * / path argument of a file tool, Glob's base joined with its pattern's
 * literal directories, and for Bash every argument word and redirection
 * target (after "~" expansion) — a heuristic for Bash, which also has the
 * sandbox (skipped when deny says commands run confined and the call does
 * not ask to leave the sandbox). Writes the path and the store into why. */
bool secrets_call_touches(const char *tool, const json_t *input, const char *cwd,
                          const secrets_deny *deny, char *why, size_t cap);

#endif
