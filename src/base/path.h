/* path.h — lexical path folding, the one way Loom turns a path argument
 * into the absolute path it will touch (file tools and permission rules
 * must agree on it). */
#ifndef LOOM_BASE_PATH_H
#define LOOM_BASE_PATH_H

/* abs must start with '/'. "." and ".." are folded and "//" collapsed
 * without touching the filesystem; ".." at the root stays at the root.
 * Caller frees. */
char *path_fold(const char *abs);

#endif
