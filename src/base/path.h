/* path.h — lexical path handling: joining, making absolute and folding,
 * the one way Loom turns a path argument into the absolute path it will
 * touch (file tools and permission rules must agree on it). Nothing here
 * touches the filesystem except path_make_absolute's getcwd when no base is
 * given, and path_repo_root. Thread-safe. */
#ifndef LOOM_BASE_PATH_H
#define LOOM_BASE_PATH_H

/* abs must start with '/'. "." and ".." are folded and "//" collapsed
 * without touching the filesystem; ".." at the root stays at the root.
 * Caller frees. */
char *path_fold(const char *abs);

/* name relative to dir: an absolute name is returned as is, otherwise
 * dir + "/" + name with one '/' at the seam (dir "/" or "dir/" gives no
 * "//"; an empty or NULL dir stands for "/"). Not folded. Caller frees. */
char *path_join(const char *dir, const char *name);

/* path made absolute and folded: "~" and "~/x" from $HOME (when it is an
 * absolute path), a relative path from base (NULL: the process's working
 * directory). Caller frees. */
char *path_make_absolute(const char *path, const char *base);

/* The nearest ancestor of dir (absolute; itself included) holding a .git
 * entry — a directory or, in worktrees and submodules, a file — or NULL
 * when there is none. Reads the filesystem (stat). Caller frees. */
char *path_repo_root(const char *dir);

#endif
