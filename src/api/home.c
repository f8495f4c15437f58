/* home.c — the check that Loom's home (LOOM_HOME, else ~/.loom) is a
 * folder Loom can write, made before the settings are read: sessions,
 * history and plugins all live there, and a home that is a file or a
 * read-only folder would otherwise fail later with an error naming some
 * file below it. The message names LOOM_HOME and the path, so the fix is
 * one step. Reads the file system only; thread-safe. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "api/internal.h"
#include "base/settings.h"
#include "base/str.h"

/* 0 when path is (or can be created as) a writable folder, else errno. */
static int writable_folder(const char *path)
{
    struct stat st;
    if (stat(path, &st) == 0)
        return !S_ISDIR(st.st_mode) ? ENOTDIR : access(path, W_OK | X_OK) == 0 ? 0 : errno;
    if (errno != ENOENT)
        return errno;
    /* Not there yet: it is made on first use, so its nearest existing
     * ancestor must be a folder Loom can write. */
    char *up = xstrdup(path);
    int rc = 0;
    for (;;) {
        char *slash = strrchr(up, '/');
        if (!slash || slash == up) {
            rc = access("/", W_OK | X_OK) == 0 ? 0 : errno;
            break;
        }
        *slash = '\0';
        if (stat(up, &st) == 0) {
            rc = !S_ISDIR(st.st_mode) ? ENOTDIR : access(up, W_OK | X_OK) == 0 ? 0 : errno;
            break;
        }
        if (errno != ENOENT) {
            rc = errno;
            break;
        }
    }
    free(up);
    return rc;
}

int api_home_check(loom_status *st)
{
    char *home = loom_home();
    int e = writable_folder(home);
    if (e) {
        const char *env = getenv("LOOM_HOME");
        if (env && *env)
            api_status_set(st, LOOM_ERR_CONFIG,
                           "LOOM_HOME=%s is not a folder Loom can write (%s): set LOOM_HOME to a "
                           "writable folder, or unset it to use ~/.loom", home, strerror(e));
        else
            api_status_set(st, LOOM_ERR_CONFIG,
                           "Loom's home %s is not a folder Loom can write (%s): fix it, or set "
                           "LOOM_HOME to a writable folder", home, strerror(e));
    }
    free(home);
    return e ? -1 : 0;
}
