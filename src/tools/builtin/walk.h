/* walk.h — the file set Glob and Grep see: a directory walk that honours
 * .gitignore files the way ripgrep does. Patterns (.gitignore lines, --glob
 * overrides, type globs) are base/glob's glob_path_match, the matcher the
 * Glob tool applies to what the walk reports.
 *
 * Rules (chosen so that Grep's ripgrep engine, run with --hidden
 * --no-require-git --no-ignore-dot --no-ignore-exclude --no-ignore-global
 * --glob '!.git', and its PCRE2 fallback search exactly the same files):
 *   - hidden files are included; anything named .git is always skipped;
 *   - every .gitignore from the filesystem root down to the walk root, and
 *     every .gitignore below it, applies to the paths under its directory,
 *     whether or not the tree is a git repository; a deeper file wins, and
 *     within a file the last matching line wins;
 *   - symbolic links are reported but never followed;
 *   - FIFOs, sockets and devices are never reported (opening one can block
 *     for ever), and /proc, /sys, /dev (or any procfs/sysfs mount) are not
 *     entered unless the walk root is inside one;
 *   - optional ripgrep-style --glob overrides and --type filters, with
 *     ripgrep's precedence (an override match decides alone; then ignore
 *     files; then the type).
 */
#ifndef LOOM_TOOLS_BUILTIN_WALK_H
#define LOOM_TOOLS_BUILTIN_WALK_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>

#include "base/cancel.h"
#include "base/error.h"

typedef struct walk_entry {
    const char *path;       /* absolute */
    const char *rel;        /* relative to the walk root, '/'-separated */
    const char *name;       /* last component */
    const struct stat *st;  /* lstat() of the entry */
    bool is_dir;            /* a real directory, not a link to one */
} walk_entry;

enum { WALK_CONTINUE = 0, WALK_SKIP = 1, WALK_STOP = 2 };

typedef struct walk_opts {
    const char *root;            /* absolute path of an existing directory */
    const char *const *globs;    /* ripgrep --glob overrides, NULL-terminated, or NULL;
                                    braces are expanded, '!' excludes */
    const char *type;            /* a ripgrep --type name, or NULL */
    const loom_cancel *cancel;
    /* Called for every entry that passes the filters, directories before
     * their contents, names in byte order. Returns WALK_CONTINUE, WALK_SKIP
     * (do not descend into this directory) or WALK_STOP. */
    int (*visit)(void *ud, const walk_entry *e);
    void *ud;
} walk_opts;

/* Walks the tree. 0 when done (also when visit stopped it); -code with err
 * set for an unknown type (invalid_request), an unreadable root (io) or a
 * cancel (run_cancelled). Unreadable subdirectories are skipped silently,
 * as ripgrep does with its warnings off. */
int walk_tree(const walk_opts *o, loom_error *err);

/* True when abs is in /proc, /sys or /dev, or on a procfs or sysfs mount:
 * trees whose "files" may block, never end, or number in the hundreds of
 * thousands. */
bool walk_pseudo_fs(const char *abs);

/* True when name is a file type the walker knows (a subset of ripgrep's
 * built-in table; see docs/tools-shell-search.md). */
bool walk_type_known(const char *type);

#endif
