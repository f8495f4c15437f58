/* tmpdir.h — a unit test's temporary folder and the files it writes there,
 * for the tests of the loaders that read folders (agents, commands, skills,
 * styles, plugins, settings, extension sources):
 *   tmpdir_make    a new $TMPDIR/<prefix>-XXXXXX (/tmp without TMPDIR)
 *   tmpdir_remove  rm -r, never following a link out of it
 *   tmpdir_write   root/rel with the folders above it; a failure fails the test
 *   tmpdir_loom_home  a folder that is LOOM_HOME (and Claude Code's folder) for
 *                  the tests that go through loom.h, with a work/ folder in it
 * Header-only (static inline), included after cmocka.h. One thread. */
#ifndef LOOM_TESTS_TMPDIR_H
#define LOOM_TESTS_TMPDIR_H

#include <ftw.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/fileio.h"
#include "base/str.h"

/* Makes the folder into dir (cap bytes); with resolve, its real path (for
 * tests that compare resolved paths). 0, or -1 when it cannot be made. */
static inline int tmpdir_make(char *dir, size_t cap, const char *prefix, bool resolve)
{
    const char *base = getenv("TMPDIR");
    char made[PATH_MAX];
    snprintf(made, sizeof made, "%s/%s-XXXXXX", base && *base ? base : "/tmp", prefix);
    if (!mkdtemp(made))
        return -1;
    char real[PATH_MAX];
    if (resolve && !realpath(made, real))
        return -1;
    const char *got = resolve ? real : made;
    size_t n = strlen(got);
    if (n >= cap)
        return -1;
    memcpy(dir, got, n + 1);
    return 0;
}

static inline int tmpdir_rm_entry(const char *path, const struct stat *sb, int flag,
                                  struct FTW *ftw)
{
    (void)sb, (void)flag, (void)ftw;
    return remove(path);
}

/* Removes dir and everything in it (links are removed, not followed). 0 or -1. */
static inline int tmpdir_remove(const char *dir)
{
    return nftw(dir, tmpdir_rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* Writes text to root/rel (mode 0644, replacing it), making the folders
 * above it (0700). */
static inline void tmpdir_write(const char *root, const char *rel, const char *text)
{
    loom_str path = LOOM_STR_INIT;
    str_printf(&path, "%s/%s", root, rel);
    loom_error err;
    char *slash = strrchr(path.ptr, '/');
    *slash = '\0';
    assert_int_equal(file_mkdirs(path.ptr, 0700, &err), 0);
    *slash = '/';
    assert_int_equal(file_write_atomic(path.ptr, text, strlen(text), 0644, &err), 0);
    str_free(&path);
}

/* Makes a $TMPDIR/<prefix>-XXXXXX folder into home and <home>/work into work,
 * and points LOOM_HOME and CLAUDE_CONFIG_DIR (<home>/claude) at it, so the
 * user's own ~/.loom and ~/.claude never count in a test; the model keys of
 * the environment are unset. A failure fails the test. */
static inline void tmpdir_loom_home(char *home, size_t cap, char *work, size_t work_cap,
                                    const char *prefix)
{
    assert_int_equal(tmpdir_make(home, cap, prefix, false), 0);
    assert_true((size_t)snprintf(work, work_cap, "%s/work", home) < work_cap);
    assert_int_equal(mkdir(work, 0700), 0);
    setenv("LOOM_HOME", home, 1);
    char claude[PATH_MAX];
    snprintf(claude, sizeof claude, "%s/claude", home);
    setenv("CLAUDE_CONFIG_DIR", claude, 1);
    unsetenv("ANTHROPIC_API_KEY");
    unsetenv("OPENAI_API_KEY");
}

#endif
