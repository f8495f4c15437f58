/* delete_guard.h — delete protection for Bash (issue 25, item 6): a command
 * that deletes recursively the workspace root (or everything in it), a
 * `.git` (or anything inside one), or a path outside the workspace needs a
 * person, in every mode but fullAccess — acceptEdits, auto and
 * bypassPermissions included — and is denied headless; the pipeline feeds
 * it to the decision as "needs a person" (docs/permissions.md, "Delete
 * protection").
 *
 * What counts as a recursive delete, read from the parsed command
 * (shell/bash_parse.h, so wrappers — sudo, env, timeout, xargs, sh -c,
 * find -exec — are seen through, and braces are expanded): `rm -r/-R`;
 * `find ROOTS … -delete` or `-exec rm|rmdir|shred|unlink`; `git clean -f`
 * (its pathspecs, or the directory it runs in, -C included); `rsync
 * --delete…` onto its destination. Targets are taken against the working
 * directory the command line has reached (a literal `cd DIR` moves it),
 * `~` and `$HOME` spelled out, symlinks of the parent resolved (removing a
 * link does not touch its target). A target whose place cannot be known —
 * another variable, a command substitution, after `cd -` or `cd $X` — asks
 * too. In the additional directories (--add-dir, additionalDirectories)
 * deletes are the workspace's business; a temp dir is outside like any
 * other place (a workspace under /tmp has its siblings there).
 * Threading: none; reentrant. */
#ifndef LOOM_GOVERNANCE_DELETE_GUARD_H
#define LOOM_GOVERNANCE_DELETE_GUARD_H

#include <stdbool.h>
#include <stddef.h>

/* true, with why (cap bytes: "it deletes the workspace root (rm -rf .)")
 * filled, when command deletes something protected. workspace is the
 * session's directory (absolute); dirs (ndirs) the additional ones. */
bool delete_guard_check(const char *command, const char *workspace, const char *const *dirs,
                        size_t ndirs, char *why, size_t cap);

#endif
